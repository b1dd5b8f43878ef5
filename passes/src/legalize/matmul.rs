//! `MatrixMult` (seed 002 Table B.2): two bottoms; depth 1 on both operands ("depth > 1 is
//! not supported for MatMult"); the output channel equals the left operand's (the verifier's
//! contract); the contraction within the chip's spatial/contraction extent.
//!
//! The seed's "fits the kernel-memory budget" is not expressed: no seed or reference gives
//! the budget (the chip table records only the weight-section size, which is another limit).

use super::cx::{Check, Cx};

/// `anec.matmul`.
pub(super) fn matmul(cx: &Cx<'_>) -> Check {
    let ops = cx.operands();
    if ops.len() != 2 {
        return Err(cx.reject(format!("MatrixMult layer must have 2 inputs, got {}", ops.len())));
    }
    if let Some(t) = ops.iter().chain(cx.result().as_ref()).find(|t| t.d > 1) {
        let rule = "depth > 1 is not supported for MatMult";
        let s = format!("depth {} > 1: fold the depth axis into the batch or height axis with a reshape", t.d);
        return Err(cx.reject(rule).suggest(s));
    }
    contraction(cx)
}

/// The contraction extent K against the chip's `max-spatial-extent`.
fn contraction(cx: &Cx<'_>) -> Check {
    let Some(lhs) = cx.operand(0) else { return Ok(()) };
    let k = if cx.flag("transpose_lhs") { lhs.c } else { lhs.w };
    let max = cx.limits().max_spatial_extent.value;
    if k <= max {
        return Ok(());
    }
    let rule = format!("MatMult contraction K = {k} exceeds the maximum {max} on this ANE architecture");
    let s = format!("contraction {k} > {max}: split K into chunks of at most {max} and add the partial products");
    Err(cx.reject(rule).limit(cx.target, "max-spatial-extent", max).suggest(s))
}
