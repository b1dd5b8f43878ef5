//! `Reduction` (seed 002 Table B.2): one bottom; a square fused after the reduction needs
//! feature byte 0x494 (0 through the M1: "square operation after reduction is not
//! supported"); at most four reduced axes.
//!
//! In the anec dialect the square is a separate `anec.neuron` (`sqr`) reading the
//! reduction's result; the compiler fuses it into the reduction, so the reduction is the
//! layer rejected when that neuron is its only user. "Each axis at most 4" is read as at
//! most four of the five N, C, D, H, W axes reduced.

use super::cx::{Check, Cx, AXIS_LETTERS};
use crate::target::FeatureByte;
use anec_ir::{Attr, Op, OpCode};

/// Most axes one reduction reduces.
const MAX_AXES: usize = 4;

/// `anec.reduction`.
pub(super) fn reduction(cx: &Cx<'_>) -> Check {
    let axes = cx.axes("axes");
    if axes.len() > MAX_AXES {
        let names: Vec<&str> = axes.iter().filter_map(|&a| AXIS_LETTERS.get(a).copied()).collect();
        let rule =
            format!("Reduction over {} axes ({}) is not supported: at most {MAX_AXES}", axes.len(), names.join(", "));
        let s = "reduce in two steps (e.g. over C, D, H, W, then over N)";
        return Err(cx.reject(rule).suggest(s));
    }
    if squared_after(cx) {
        let rule = "square operation after reduction is not supported";
        let s = "square outside the reduction's fused stage: square the input first where the math allows \
                 (reduce_sum_square), or move the square after another layer";
        return cx.need_byte(FeatureByte::ReduceThenSquare, rule).map_err(|r| r.suggest(s));
    }
    Ok(())
}

/// Whether the reduction's result is read only by a `sqr` neuron.
fn squared_after(cx: &Cx<'_>) -> bool {
    let Some(&r) = cx.op.results.first() else { return false };
    let users: Vec<_> = cx.m.users(r).collect();
    let output = cx.m.outputs.iter().any(|p| p.value == r);
    let is_sqr = |u: &Op| u.opcode == OpCode::Neuron && u.attr("mode").and_then(Attr::as_str) == Some("sqr");
    matches!(users.as_slice(), [u] if is_sqr(u)) && !output
}
