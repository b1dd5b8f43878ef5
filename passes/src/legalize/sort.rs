//! `Sort` and `TopK` (seed 002 Tables B.1 and B.2): both validators pass on every chip; the
//! code generator rejects them where the chip's limits say so.
//!
//! - Sort: one bottom; the output fp16 (or uint16, which the anec dialect has not); code
//!   generation per `sort-codegen` (rejected on the M1).
//! - TopK: one bottom; `k` within the sort dimension's extent; code generation per
//!   `topk-codegen` (rejected on the M1), and `k` outside the `topk-forbidden-k` band (3 or
//!   4 on the M5).

use super::cx::{dims5, Check, Cx};
use anec_ir::DType;

/// `anec.sort`.
pub(super) fn sort(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 1 {
        return Err(cx.reject(format!("Sort layer must have one input, got {}", cx.op.operands.len())));
    }
    if let Some(t) = cx.result().filter(|t| t.dtype != DType::F16) {
        return Err(cx.reject(format!("Sort output must be fp16 or uint16, got {}", t.dtype)));
    }
    if cx.limits().sort_codegen.value {
        return Ok(());
    }
    let rule = "Sort is rejected at code generation on this architecture (passes validation)";
    let s = "sort on the CPU, or use top_k with k = the full extent on a chip whose code generator accepts it";
    Err(cx.reject(rule).limit(cx.target, "sort-codegen", "no").suggest(s).at_codegen())
}

/// `anec.top_k`.
pub(super) fn top_k(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 1 {
        return Err(cx.reject(format!("TopK layer must have one input, got {}", cx.op.operands.len())));
    }
    let k = cx.int("k").unwrap_or(1);
    let extent = cx.axis("sort_dimension").and_then(|a| cx.operand(0).map(|x| dims5(&x)[a])).unwrap_or(0);
    if k < 1 || k > i64::from(extent) {
        return Err(cx.reject(format!("TopK k = {k} is outside the sort dimension's range [1, {extent}]")));
    }
    let t = cx.target;
    let limits = cx.limits();
    if !limits.topk_codegen.value {
        let rule = "TopK is rejected at code generation on this architecture (passes validation)";
        return Err(cx.reject(rule).limit(t, "topk-codegen", "no").at_codegen());
    }
    let k = u32::try_from(k).unwrap_or(u32::MAX);
    if limits.topk_k_ok(k) {
        return Ok(());
    }
    let band = limits.topk_forbidden_k.value.map_or_else(String::new, |b| format!("{}..={}", b.min, b.max));
    let rule = format!("TopK with k = {k} fails code generation on this architecture (passes validation)");
    let r = cx.reject(rule).limit(t, "topk-forbidden-k", &band).at_codegen();
    let next = limits.topk_forbidden_k.value.map(|b| b.max + 1).filter(|&n| n <= extent);
    Err(match next {
        Some(n) => {
            r.suggest(format!("k {k} is in the forbidden band {band}: take top_k with k = {n} and slice the first {k}"))
        }
        None => r,
    })
}
