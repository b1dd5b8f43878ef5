//! The range rule: which knot spacing `2^-k` (hence which knot range) a sampled or fitted
//! table gets.
//!
//! The knot range is a power of two `W`: affine tables span `[-W, W]` (`k = 4 - log2 W`),
//! odd tables `[0, W]` (`k = 5 - log2 W`). The chosen `W` is the one whose trial table has
//! the smallest largest absolute error over every finite fp16 input (as [`max_error`]
//! measures it). The trial table holds the knots `fp16(f(u_i))` and extrapolates to the
//! function's asymptote: the constant limit, or the line of asymptotic slope through the
//! last knot; ties go to the smaller `W`. It gives Apple's range for sigmoid (8), tanh (4),
//! gelu (4) and silu (8), each by a factor of 3.5 or more over the next candidate.
//!
//! [`max_error`]: super::max_error

use super::accuracy::layout_error;
use super::fp16::h;
use super::function::TableFn;
use super::layout::{Layout, Line, Mode, KNOTS};

/// The largest affine `k` searched (`W = 1/4`; odd tables go one further).
const K_MAX_AFFINE: u16 = 6;

/// The `k` of the best trial table of `f` in `mode` (affine or odd), searched from the
/// smallest range (`W = 1/4`) to the largest with `k >= 0` (affine 16, odd 32).
pub(super) fn choose_k(f: TableFn, mode: Mode) -> u16 {
    let k_max = if mode == Mode::Odd { K_MAX_AFFINE + 1 } else { K_MAX_AFFINE };
    let mut best: Option<(f64, u16)> = None;
    for k in (0..=k_max).rev() {
        let err = layout_error(&trial(f, mode, k), f);
        if best.is_none_or(|(e, _)| err < e) {
            best = Some((err, k));
        }
    }
    best.map_or(k_max, |(_, k)| k)
}

/// The trial table of the range rule.
fn trial(f: TableFn, mode: Mode, k: u16) -> Layout {
    let s = f.shape();
    let mut t = Layout::blank(mode, k);
    t.sample(|u| f.eval(u));
    t.y_left = h(s.lo);
    t.left = Line::constant(s.lo);
    t.y_right = h(s.hi);
    t.right = if s.slope == 0.0 {
        Line::constant(s.hi)
    } else {
        let last = t.knot_arg(KNOTS - 1);
        Line::new(s.slope, t.knots[KNOTS - 1].to_f64() - s.slope * last)
    };
    t
}
