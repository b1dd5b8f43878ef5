//! The rules with a chosen knot range ([`choose_k`]): sampled tables (knots `fp16(f(u_i))`:
//! sigmoid, tanh, erf, elu, softplus) and the fitted family (least-squares knots: gelu,
//! silu, gelu SIGMOID_APPROXIMATION).

use half::f16;

use super::fit::fitted_knots;
use super::fp16::h;
use super::function::TableFn;
use super::layout::{Layout, Line, Mode, KNOTS};
use super::range::choose_k;
use super::tail::{minimax_tail, Tail};

/// Bounded saturating function, affine mode (sigmoid): sampled knots; both tails minimax
/// lines towards the limits, `[xL, xR]` where they end, `[yL, yR]` the limits.
pub(super) fn bounded_affine(f: TableFn) -> Layout {
    let s = f.shape();
    let mut t = sampled(f, Mode::Affine);
    let left = left_tail(&t, f);
    let last = t.knot_arg(KNOTS - 1);
    let right = minimax_tail(f, last, t.knots[KNOTS - 1].to_f64(), 1.0, s.hi);
    (t.x_left, t.x_right, t.y_left, t.y_right) = (h(left.end), h(right.end), h(s.lo), h(s.hi));
    (t.left, t.right) = (left.line, right.line);
    t
}

/// Odd bounded function, odd mode (tanh, erf): sampled knots on `[0, W]`, no
/// extrapolation: `[xL, xR, yL, yR] = [0, W, f(0), limit]`, lines `(0, 0)`, `(0, limit)`.
pub(super) fn odd(f: TableFn) -> Layout {
    let hi = f.shape().hi;
    let mut t = sampled(f, Mode::Odd);
    let w = t.knot_arg(KNOTS - 1);
    (t.x_left, t.x_right, t.y_left, t.y_right) = (h(0.0), h(w), h(f.eval(0.0)), h(hi));
    t.right = Line::constant(hi);
    t
}

/// Unbounded above, affine mode (elu, softplus; no Apple record): sampled knots; left
/// minimax line towards the lower limit; right line of the asymptotic slope through the
/// last knot; `[xL, xR, yL, yR] = [left end, inf, lo, inf]`.
pub(super) fn unbounded_affine(f: TableFn) -> Layout {
    let mut t = sampled(f, Mode::Affine);
    let left = left_tail(&t, f);
    finish_unbounded(&mut t, f, left);
    t
}

/// The fitted family, affine mode: least-squares knots ([`fitted_knots`]); left line
/// through the first knot towards the lower limit (minimax), or none when that knot is
/// already the limit (`xL` one step left of it); right line of slope 1 through the last
/// knot; `[yL, xR, yR] = [lo, inf, inf]`. Approximate: it does not reproduce Apple's
/// bytes.
pub(super) fn fitted(f: TableFn) -> Layout {
    let mut t = Layout::blank(Mode::Affine, choose_k(f, Mode::Affine));
    t.sample(|u| f.eval(u));
    t.knots = fitted_knots(f, t.k).unwrap_or(t.knots);
    let lo = f.shape().lo;
    let left = if t.knots[0].to_f64() == lo {
        Tail { end: t.knot_arg(0) - t.step(), line: Line::ZERO }
    } else {
        left_tail(&t, f)
    };
    finish_unbounded(&mut t, f, left);
    t
}

/// A table of `f` with sampled knots at the chosen range.
fn sampled(f: TableFn, mode: Mode) -> Layout {
    let mut t = Layout::blank(mode, choose_k(f, mode));
    t.sample(|u| f.eval(u));
    t
}

/// The minimax line left of the first knot, towards the limit at -inf.
fn left_tail(t: &Layout, f: TableFn) -> Tail {
    minimax_tail(f, t.knot_arg(0), t.knots[0].to_f64(), -1.0, f.shape().lo)
}

/// Left tail as given, right line of the asymptotic slope through the last knot, no
/// clamp on the right.
fn finish_unbounded(t: &mut Layout, f: TableFn, left: Tail) {
    let s = f.shape();
    let last = t.knot_arg(KNOTS - 1);
    let y_last = t.knots[KNOTS - 1].to_f64();
    (t.x_left, t.x_right, t.y_left, t.y_right) = (h(left.end), f16::INFINITY, h(s.lo), f16::INFINITY);
    (t.left, t.right) = (left.line, Line::new(s.slope, y_last - s.slope * last));
}
