//! How far a table is from its function: the largest absolute error over every finite
//! fp16 input, the table evaluated as the engine does ([`Layout::eval`]) and its result
//! rounded to fp16 (the output format), the function in f64.

use super::fp16::{finite, h, hv};
use super::function::TableFn;
use super::layout::Layout;

/// The largest `|fp16(table(x)) - f(x)|` over every finite fp16 `x` in the domain of `f`:
/// the inputs where `f(x)` is real and rounds to a finite fp16 value (so `1/0`, `log2 0`,
/// `sqrt` of a negative, `2^16` are left out).
pub fn max_error(f: TableFn) -> f64 {
    layout_error(&super::layout(f), f)
}

/// [`max_error`] of any layout against `f`.
pub(super) fn layout_error(t: &Layout, f: TableFn) -> f64 {
    finite().filter_map(|x| error_at(t, f, x)).fold(0.0, f64::max)
}

/// `|fp16(table(x)) - f(x)|`, or `None` outside the domain.
fn error_at(t: &Layout, f: TableFn, x: f64) -> Option<f64> {
    let want = f.eval(x);
    if want.is_nan() || !h(want).is_finite() {
        return None;
    }
    let got = hv(f64::from(t.eval(x as f32)));
    // A NaN or infinite result where a finite one is due is an unbounded error.
    Some(if got.is_finite() { (got - want).abs() } else { f64::INFINITY })
}
