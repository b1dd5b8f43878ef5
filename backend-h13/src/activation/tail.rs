//! The minimax tail: the line beyond a boundary knot towards the function's limit, and
//! where it ends (`xL` / `xR`).
//!
//! The rule reproduces Apple's sigmoid table bit for bit (both sides): the end point is
//! searched among the fp16 values from the knot out to the saturation point (the first
//! fp16 x where fp16(f(x)) equals the limit, subnormals kept); each candidate gives a line
//! through the knot value and (end, limit) with slope and intercept rounded to fp16; the
//! candidate whose line, clamped at the limit, has the smallest largest error against f
//! over every fp16 input beyond the knot wins (ties: the nearer end). The clamp keeps the
//! line on the knot's side of the limit (for sigmoid: at least 0 on the left, at most 1
//! on the right), which also covers tails that approach their limit from below.

use super::fp16::{beyond, h, hv};
use super::function::TableFn;
use super::layout::Line;

/// One extrapolation line and where it reaches the limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Tail {
    /// Where the line reaches the limit (`xL` or `xR`).
    pub end: f64,
    /// The line, as stored.
    pub line: Line,
}

/// The tail beyond the knot `(xk, yk)` (`yk` as stored) in direction `dir` (+1: right,
/// -1: left), towards `limit`.
pub(super) fn minimax_tail(f: TableFn, xk: f64, yk: f64, dir: f64, limit: f64) -> Tail {
    let xs = beyond(xk, dir);
    let fx: Vec<f64> = xs.iter().map(|&x| f.eval(x)).collect();
    let last = xs.len().saturating_sub(1);
    let sat = fx.iter().position(|&y| hv(y) == limit).unwrap_or(last);
    let mut best: Option<(f64, Tail)> = None;
    for &end in xs.iter().take(sat + 1) {
        let m = hv((limit - yk) / (end - xk));
        let line = Line { m: h(m), b: h(yk - m * xk) };
        let err = line_error(&xs, &fx, line, yk, limit);
        if best.is_none_or(|(e, _)| err < e) {
            best = Some((err, Tail { end, line }));
        }
    }
    best.map_or(Tail { end: xk, line: Line::constant(yk) }, |(_, t)| t)
}

/// Largest error of `line`, clamped at `limit` on the side of `yk`, against `f`.
fn line_error(xs: &[f64], fx: &[f64], line: Line, yk: f64, limit: f64) -> f64 {
    let (m, b) = (line.m.to_f64(), line.b.to_f64());
    let clamp = |y: f64| if yk <= limit { y.min(limit) } else { y.max(limit) };
    xs.iter().zip(fx).map(|(&x, &y)| (clamp(m * x + b) - y).abs()).fold(0.0, f64::max)
}
