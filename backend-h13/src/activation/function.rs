//! The table-driven functions ([`TableFn`]): their mathematics in f64, and what the
//! synthesis rules need to know of their shape (limits, asymptotic slope).

use std::f64::consts::SQRT_2;

/// A function the NE computes through a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TableFn {
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `x/2 (1 + erf(x / sqrt 2))` (MIL gelu EXACT; TANH_APPROXIMATION uses the same table).
    Gelu,
    /// `x sigmoid(1.702 x)` (MIL gelu SIGMOID_APPROXIMATION).
    GeluSigmoid,
    /// `x sigmoid(x)`.
    Silu,
    /// `2^x` (MIL exp scales x by log2 e first).
    Exp2,
    /// `sqrt(x)`.
    Sqrt,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `1 / x`.
    Reciprocal,
    /// `log2(x)` (MIL log scales the result by ln 2).
    Log2,
    /// `erf(x)`.
    Erf,
    /// `x` for `x >= 0`, `alpha (e^x - 1)` below.
    Elu(f64),
    /// `ln(1 + e^x)`.
    Softplus,
    /// `x` for `x >= 0`, `alpha x` below.
    LeakyRelu(f64),
    /// `x` clamped to `[lo, hi]`.
    Clip(f64, f64),
    /// -1, 0 or 1.
    Sign,
}

/// The limits of a function at -inf and +inf, and its slope at +inf (0: bounded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Shape {
    /// Limit at -inf.
    pub lo: f64,
    /// Limit at +inf (inf when unbounded).
    pub hi: f64,
    /// Asymptotic slope at +inf.
    pub slope: f64,
}

impl TableFn {
    /// Evaluates the function.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            TableFn::Sigmoid => sigmoid(x),
            TableFn::Tanh => x.tanh(),
            TableFn::Gelu => 0.5 * x * libm::erfc(-x / SQRT_2),
            TableFn::GeluSigmoid => x * sigmoid(1.702 * x),
            TableFn::Silu => x * sigmoid(x),
            TableFn::Exp2 => x.exp2(),
            TableFn::Sqrt => x.sqrt(),
            TableFn::Rsqrt => 1.0 / x.sqrt(),
            TableFn::Reciprocal => 1.0 / x,
            TableFn::Log2 => x.log2(),
            TableFn::Erf => libm::erf(x),
            TableFn::Elu(alpha) => piecewise(x, x, alpha * x.exp_m1()),
            TableFn::Softplus => x.max(0.0) + (-x.abs()).exp().ln_1p(),
            TableFn::LeakyRelu(alpha) => piecewise(x, x, alpha * x),
            TableFn::Clip(lo, hi) => x.max(lo).min(hi),
            TableFn::Sign => sign(x),
        }
    }

    /// Limits and asymptotic slope, for the sampled and fitted families.
    pub(super) fn shape(self) -> Shape {
        let (lo, hi, slope) = match self {
            TableFn::Sigmoid => (0.0, 1.0, 0.0),
            TableFn::Tanh | TableFn::Erf => (-1.0, 1.0, 0.0),
            TableFn::Elu(alpha) => (-alpha, f64::INFINITY, 1.0),
            _ => (0.0, f64::INFINITY, 1.0),
        };
        Shape { lo, hi, slope }
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `pos` for `x >= 0`, `neg` below (NaN stays NaN).
fn piecewise(x: f64, pos: f64, neg: f64) -> f64 {
    if x.is_nan() || x >= 0.0 {
        pos
    } else {
        neg
    }
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x * 0.0
    }
}
