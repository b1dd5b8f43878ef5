//! Activation tables for the NE's table-driven nonlinear stage (NonlinearMode 2).
//!
//! A table is 0x80 bytes of fp16, loaded through kernel-DMA channel 0:
//! `[xL, xR, ymin, ymax]`, then 33 knots f(x) at x = -8, -7.5, ..., 8, then the two linear
//! extrapolation lines `[mL, bL, mR, bR]` (y = m x + b) used outside [-8, 8], which reach
//! ymin at xL and ymax at xR, then two words of 1, then zeros. The knots and the lines are
//! derived from the function; see [`saturation_points`] for how xL and xR are chosen.

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

/// The fp16 numbers after `x` walking away from zero in the direction of `dir` (+1 / -1).
fn next_f16(x: f16, dir: f64) -> f16 {
    let bits = x.to_bits();
    let away = (dir > 0.0) == x.is_sign_positive();
    f16::from_bits(if away { bits + 1 } else { bits - 1 })
}

/// Where the table saturates: the first fp16 x beyond the last knot (walking outward in
/// fp16 steps) at which f(x), rounded to fp16, equals the range limit on that side.
fn saturation(f: TableFn, start: f64, dir: f64, limit: f64) -> f64 {
    let mut x = h(start);
    for _ in 0..4096 {
        x = next_f16(x, dir);
        if h(f.eval(x.to_f64())).to_f64() == limit {
            return x.to_f64();
        }
    }
    x.to_f64()
}

/// xL and xR.
pub fn saturation_points(f: TableFn) -> (f64, f64) {
    let (ymin, ymax) = f.range();
    let last = X0 + STEP * (KNOTS - 1) as f64;
    (saturation(f, X0, -1.0, ymin), saturation(f, last, 1.0, ymax))
}

/// The 0x80-byte table of `f`.
pub fn table(f: TableFn) -> Vec<u8> {
    let (ymin, ymax) = f.range();
    let knots: Vec<f16> = (0..KNOTS).map(|i| h(f.eval(X0 + STEP * i as f64))).collect();
    let (xl, xr) = saturation_points(f);
    let (x_first, x_last) = (X0, X0 + STEP * (KNOTS - 1) as f64);
    let (y_first, y_last) = (knots[0].to_f64(), knots[KNOTS - 1].to_f64());
    let ml = (y_first - ymin) / (x_first - xl);
    let mr = (ymax - y_last) / (xr - x_last);
    let mut vals: Vec<f16> = vec![h(xl), h(xr), h(ymin), h(ymax)];
    vals.extend(knots);
    vals.extend([h(ml), h(y_first - ml * x_first), h(mr), h(y_last - mr * x_last)]);
    vals.extend([f16::from_bits(1), f16::from_bits(1)]);
    let mut bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.resize(TABLE_SIZE, 0);
    bytes
}
