//! fp16 helpers: correct rounding from f64 (round to nearest even, overflow to infinity,
//! through `half`) and the finite fp16 values that the rules search and score over.

use half::f16;

/// `x` rounded to fp16.
pub(super) fn h(x: f64) -> f16 {
    f16::from_f64(x)
}

/// `x` rounded to fp16, as f64.
pub(super) fn hv(x: f64) -> f64 {
    h(x).to_f64()
}

/// Every finite fp16 value, ascending, with one zero (+0).
pub(super) fn finite() -> impl Iterator<Item = f64> {
    let negative = (1..0x7c00u16).rev().map(|b| -f16::from_bits(b).to_f64());
    negative.chain((0..0x7c00u16).map(|b| f16::from_bits(b).to_f64()))
}

/// Every finite fp16 value strictly beyond `knot` in direction `dir` (+1 or -1), nearest
/// first.
pub(super) fn beyond(knot: f64, dir: f64) -> Vec<f64> {
    let mut xs: Vec<f64> = finite().filter(|&x| (x - knot) * dir > 0.0).collect();
    if dir < 0.0 {
        xs.reverse();
    }
    xs
}

/// Whether `x` is zero or a normal fp16 value (not subnormal).
pub(super) fn normal_or_zero(x: f64) -> bool {
    x == 0.0 || x.abs() >= f64::from(f16::MIN_POSITIVE)
}
