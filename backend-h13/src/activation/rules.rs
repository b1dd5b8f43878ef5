//! Which rule builds which table, and the rules with a fixed knot range: exp2, the
//! mantissa modes (sqrt, rsqrt, reciprocal, log2) and the piecewise-linear functions. The
//! rules with a chosen range (sampled and fitted) are in [`super::sampled`].

use half::f16;

use super::fp16::{finite, h};
use super::function::TableFn;
use super::layout::{Layout, Line, Mode, KNOTS};
use super::sampled;

/// Knot spacing exponent of the exp2 table (32 segments on [0, 1]).
const K_EXP2: u16 = 5;
/// Knot spacing exponent of sqrt and rsqrt (32 segments on [0, 2]).
const K_SQRT: u16 = 4;
/// Knot spacing exponent of reciprocal and log2 (32 segments on [0.5, 1]).
const K_OCTAVE: u16 = 6;
/// Knot spacing exponent of the piecewise-linear tables: the knot range collapses onto 0.
const K_PWL: u16 = 64;

/// The table of `f`.
pub(super) fn layout(f: TableFn) -> Layout {
    let inf = f64::INFINITY;
    match f {
        TableFn::Sigmoid => sampled::bounded_affine(f),
        TableFn::Tanh | TableFn::Erf => sampled::odd(f),
        TableFn::Elu(_) | TableFn::Softplus => sampled::unbounded_affine(f),
        TableFn::Gelu | TableFn::GeluSigmoid | TableFn::Silu => sampled::fitted(f),
        TableFn::Exp2 => exp2(f),
        TableFn::Sqrt => mantissa(f, Mode::Sqrt, K_SQRT, 0.0, inf),
        TableFn::Rsqrt => mantissa(f, Mode::Rsqrt, K_SQRT, inf, 0.0),
        TableFn::Reciprocal => mantissa(f, Mode::Reciprocal, K_OCTAVE, inf, 0.0),
        // yR = 0, not log2(inf): the analysis's proposal (no Apple record; see the rationale).
        TableFn::Log2 => mantissa(f, Mode::Log2, K_OCTAVE, -inf, 0.0),
        TableFn::LeakyRelu(alpha) => piecewise(f, [-inf, inf, -inf, inf], Line::new(alpha, 0.0)),
        TableFn::Clip(lo, hi) => piecewise(f, [lo, hi, lo, hi], Line::new(1.0, 0.0)),
        TableFn::Sign => sign(f),
    }
}

/// exp2 mode: knots `fp16(2^(i/32))` on [0, 1]; `xL` is the last fp16 x with
/// `fp16(2^x) = 0` (-25), `xR` the first with `fp16(2^x) = inf` (16); `yL = 0`,
/// `yR = inf`; no lines.
fn exp2(f: TableFn) -> Layout {
    let mut t = Layout::blank(Mode::Exp2, K_EXP2);
    t.sample(|u| f.eval(u));
    let rounded = |x: f64| h(f.eval(x));
    t.x_left = h(finite().filter(|&x| rounded(x) == f16::ZERO).last().unwrap_or(f64::NEG_INFINITY));
    t.x_right = h(finite().find(|&x| rounded(x).is_infinite()).unwrap_or(f64::INFINITY));
    t.y_right = f16::INFINITY;
    t
}

/// Mantissa modes: knots `fp16(f(m_i))`, 0 where `m_i < 0.5` (never reached); `[xL, xR]
/// = [0, inf]`, `yL`, `yR` as given (the values at 0 and inf); no lines.
fn mantissa(f: TableFn, mode: Mode, k: u16, y_left: f64, y_right: f64) -> Layout {
    let mut t = Layout::blank(mode, k);
    t.sample(|m| if m < 0.5 { 0.0 } else { f.eval(m) });
    t.x_left = f16::ZERO;
    (t.y_left, t.y_right) = (h(y_left), h(y_right));
    t
}

/// Piecewise-linear functions: affine, `k = 64`, every knot `fp16(f(0))`; the lines are
/// the function's pieces (`left` below 0, slope 1 above), `[xL, xR, yL, yR]` its clamps.
fn piecewise(f: TableFn, clamps: [f64; 4], left: Line) -> Layout {
    let mut t = Layout::blank(Mode::Affine, K_PWL);
    t.knots = [h(f.eval(0.0)); KNOTS];
    (t.left, t.right) = (left, Line::new(1.0, 0.0));
    [t.x_left, t.x_right, t.y_left, t.y_right] = clamps.map(h);
    t
}

/// sign: the piecewise-linear grid sampled (knots -1 left of 0, 0, +1 right of it), lines
/// -1 and +1, `[xL, xR, yL, yR] = [-inf, inf, -1, 1]`.
fn sign(f: TableFn) -> Layout {
    let mut t = Layout::blank(Mode::Affine, K_PWL);
    t.sample(|u| f.eval(u));
    (t.left, t.right) = (Line::constant(-1.0), Line::constant(1.0));
    (t.y_left, t.y_right) = (h(-1.0), h(1.0));
    t
}
