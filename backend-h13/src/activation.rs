//! Activation tables for the NE's table-driven nonlinear stage (NonlinearMode 2).
//!
//! A table is 0x80 bytes of fp16, loaded through kernel-DMA channel 0:
//! `[xL, xR, ymin, ymax]`, then 33 knots f(x) at x = -8, -7.5, ..., 8, then the two linear
//! extrapolation lines `[mL, bL, mR, bR]` (y = m x + b) used outside [-8, 8], which reach
//! ymin at xL and ymax at xR, then two words of 1, then zeros. The knots and the lines are
//! derived from the function; see [`tail`] for how the lines are chosen.

use half::f16;

/// Size of a table in `__const`.
pub const TABLE_SIZE: usize = 0x80;
/// Number of knots.
pub const KNOTS: usize = 33;
/// First knot.
pub const X0: f64 = -8.0;
/// Knot spacing.
pub const STEP: f64 = 0.5;

/// A table-driven activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFn {
    /// 1 / (1 + e^-x).
    Sigmoid,
    /// tanh(x).
    Tanh,
}

impl TableFn {
    /// The table function for a neuron mode, if the H13 backend builds one.
    pub fn for_mode(mode: &str) -> Option<TableFn> {
        match mode {
            "sigmoid" => Some(TableFn::Sigmoid),
            "tanh" => Some(TableFn::Tanh),
            _ => None,
        }
    }

    /// Evaluates the function.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            TableFn::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            TableFn::Tanh => x.tanh(),
        }
    }

    /// The function's range [ymin, ymax].
    pub fn range(self) -> (f64, f64) {
        match self {
            TableFn::Sigmoid => (0.0, 1.0),
            TableFn::Tanh => (-1.0, 1.0),
        }
    }
}

fn h(x: f64) -> f16 {
    f16::from_f64(x)
}

/// Every finite fp16 value beyond `knot` in direction `dir` (+1 / -1), nearest first.
fn beyond(knot: f64, dir: f64) -> Vec<f64> {
    let mut xs: Vec<f64> =
        (0..0x7C00u16).map(|b| f16::from_bits(b).to_f64() * dir).filter(|&x| (x - knot) * dir > 0.0).collect();
    xs.sort_by(|a, b| ((a - knot) * dir).total_cmp(&((b - knot) * dir)));
    xs
}

/// One extrapolation line, as stored (fp16 slope and intercept).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tail {
    /// Where the line reaches the range limit.
    end: f64,
    /// Slope.
    m: f16,
    /// Intercept at x = 0.
    b: f16,
}

/// The extrapolation line beyond the knot `(xk, f(xk))`, towards the range limit `limit`.
///
/// The rule reproduces Apple's sigmoid table bit for bit (both sides): the end point is
/// searched among the fp16 values from the knot out to the saturation point (the first
/// fp16 x where fp16(f(x)) equals the limit, subnormals kept); each candidate gives a line
/// through the knot value and (end, limit) with slope and intercept rounded to fp16; the
/// candidate whose line, clamped at the limit, has the smallest largest error against f
/// over every fp16 input beyond the knot wins. Inferred from one table; see
/// `docs/conformance.md`.
fn tail(f: TableFn, xk: f64, dir: f64, limit: f64) -> Tail {
    let yk = h(f.eval(xk)).to_f64();
    let xs = beyond(xk, dir);
    let fx: Vec<f64> = xs.iter().map(|&x| f.eval(x)).collect();
    let sat = xs.iter().zip(&fx).position(|(_, &y)| h(y).to_f64() == limit).unwrap_or(xs.len().saturating_sub(1));
    let mut best: Option<(f64, Tail)> = None;
    for &end in &xs[..=sat.min(xs.len().saturating_sub(1))] {
        let m = h((limit - yk) / (end - xk));
        let b = h(yk - m.to_f64() * xk);
        let err = max_error(&xs, &fx, m.to_f64(), b.to_f64(), limit, dir);
        if best.is_none_or(|(e, _)| err < e) {
            best = Some((err, Tail { end, m, b }));
        }
    }
    best.map(|(_, t)| t).unwrap_or(Tail { end: xk, m: h(0.0), b: h(yk) })
}

/// Largest error of the clamped line against f.
fn max_error(xs: &[f64], fx: &[f64], m: f64, b: f64, limit: f64, dir: f64) -> f64 {
    xs.iter()
        .zip(fx)
        .map(|(&x, &y)| {
            let line = m * x + b;
            let clamped = if dir > 0.0 { line.min(limit) } else { line.max(limit) };
            (clamped - y).abs()
        })
        .fold(0.0, f64::max)
}

/// xL and xR.
pub fn saturation_points(f: TableFn) -> (f64, f64) {
    let (ymin, ymax) = f.range();
    let last = X0 + STEP * (KNOTS - 1) as f64;
    (tail(f, X0, -1.0, ymin).end, tail(f, last, 1.0, ymax).end)
}

/// The 0x80-byte table of `f`.
pub fn table(f: TableFn) -> Vec<u8> {
    let (ymin, ymax) = f.range();
    let knots: Vec<f16> = (0..KNOTS).map(|i| h(f.eval(X0 + STEP * i as f64))).collect();
    let left = tail(f, X0, -1.0, ymin);
    let right = tail(f, X0 + STEP * (KNOTS - 1) as f64, 1.0, ymax);
    let mut vals: Vec<f16> = vec![h(left.end), h(right.end), h(ymin), h(ymax)];
    vals.extend(knots);
    vals.extend([left.m, left.b, right.m, right.b]);
    vals.extend([f16::from_bits(1), f16::from_bits(1)]);
    let mut bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.resize(TABLE_SIZE, 0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigmoid_header_and_tails_match_apple() {
        let t = table(TableFn::Sigmoid);
        let w: Vec<u16> = t.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        assert_eq!(&w[..4], &[0xc8f8, 0x4829, 0x0000, 0x3c00]);
        assert_eq!(&w[37..43], &[0x09ac, 0x170c, 0x163e, 0x3be6, 1, 1]);
    }
}
