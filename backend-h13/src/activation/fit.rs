//! The least-squares knots of the fitted family (gelu, silu, gelu SIGMOID_APPROXIMATION).
//!
//! The continuous piecewise-linear function on the affine knots of spacing `2^-k` that fits
//! `f` best in the least-squares sense over every normal fp16 input (and 0) in the knot
//! range, all weights 1; each knot then rounded to fp16. The normal equations of the hat
//! basis are tridiagonal and positive definite; they are solved in f64 without pivoting.
//! This is an approximation of Apple's rule, which is a fit of this kind but not this one
//! (its knots differ in the small-magnitude tail; see the rationale document).

use half::f16;

use super::fp16::{finite, h, normal_or_zero};
use super::function::TableFn;
use super::layout::{Layout, Mode, KNOTS};

/// The normal equations: diagonal, off-diagonal (`off[j]` couples `j` and `j + 1`) and
/// right-hand side.
struct Normal {
    diag: [f64; KNOTS],
    off: [f64; KNOTS - 1],
    rhs: [f64; KNOTS],
}

/// The fitted knots of `f` at spacing `2^-k` (affine), or `None` if the system is
/// singular.
pub(super) fn fitted_knots(f: TableFn, k: u16) -> Option<[f16; KNOTS]> {
    let solved = solve(normal_equations(f, k))?;
    let mut knots = [f16::ZERO; KNOTS];
    for (knot, y) in knots.iter_mut().zip(solved) {
        *knot = h(y);
    }
    Some(knots)
}

/// Accumulates the normal equations over the inputs in the knot range.
fn normal_equations(f: TableFn, k: u16) -> Normal {
    let grid = Layout::blank(Mode::Affine, k);
    let (lo, step) = (grid.knot_arg(0), grid.step());
    let hi = grid.knot_arg(KNOTS - 1);
    let mut n = Normal { diag: [0.0; KNOTS], off: [0.0; KNOTS - 1], rhs: [0.0; KNOTS] };
    for x in finite().filter(|&x| normal_or_zero(x) && (lo..=hi).contains(&x)) {
        let t = (x - lo) / step;
        let j = (t.floor().max(0.0) as usize).min(KNOTS - 2);
        let b = t - j as f64;
        let a = 1.0 - b;
        let y = f.eval(x);
        n.diag[j] += a * a;
        n.diag[j + 1] += b * b;
        n.off[j] += a * b;
        n.rhs[j] += a * y;
        n.rhs[j + 1] += b * y;
    }
    n
}

/// Solves the tridiagonal system (Thomas algorithm); `None` on a non-positive pivot.
fn solve(n: Normal) -> Option<[f64; KNOTS]> {
    let (mut c, mut d) = ([0.0; KNOTS], [0.0; KNOTS]);
    for j in 0..KNOTS {
        let (sub, c_prev, d_prev) = if j == 0 { (0.0, 0.0, 0.0) } else { (n.off[j - 1], c[j - 1], d[j - 1]) };
        let pivot = n.diag[j] - sub * c_prev;
        if pivot.is_nan() || pivot <= f64::EPSILON * n.diag[j] {
            return None;
        }
        c[j] = n.off.get(j).map_or(0.0, |o| o / pivot);
        d[j] = (n.rhs[j] - sub * d_prev) / pivot;
    }
    let mut y = [0.0; KNOTS];
    let mut next = 0.0;
    for j in (0..KNOTS).rev() {
        y[j] = d[j] - c[j] * next;
        next = y[j];
    }
    Some(y)
}
