//! Reductions: `reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min` to
//! `anec.reduction`; `reduce_sum_square` (sqr, then sum), `reduce_l1_norm` (abs, then sum)
//! and `reduce_l2_norm` (sqr, sum, sqrt) with neurons around it (`reduce_argmax` and
//! `reduce_argmin` are in `hidden.rs`).
//!
//! `axes` (default: all) map to anec axes; the reduction keeps them with extent 1, and
//! `keep_dims = false` (the default) removes them with a MIL reshape (`shape.rs`). A
//! reduction over axes of extent 1 only is the identity and emits no reduction. Other
//! reductions (`reduce_prod`, `reduce_log_sum`, ...) are errors.

use super::cx::{attrs, axes_attr, Cx, Fail, LResult, Val};
use super::elementwise::{neuron, rt_with, v};
use super::layout;
use super::shape::reshape_rt;
use anec_ir::{Attr, OpCode};

/// `reduce_*`.
pub(crate) fn reduce(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let (pre, kind, post) = match cx.op() {
        "reduce_sum" => (None, "sum", None),
        "reduce_mean" => (None, "mean", None),
        "reduce_max" => (None, "max", None),
        "reduce_min" => (None, "min", None),
        "reduce_sum_square" => (Some("sqr"), "sum", None),
        "reduce_l1_norm" => (Some("abs"), "sum", None),
        "reduce_l2_norm" => (Some("sqr"), "sum", Some("sqrt")),
        other => {
            return Err(Fail::Msg(format!("`{other}` has no engine form (sum, mean, max, min and their norms only)")))
        }
    };
    let x = cx.input("x")?;
    let rank = x.shape.len();
    let raw = cx.ints("axes")?.unwrap_or_else(|| (0..rank as i64).collect());
    let mut axes: Vec<usize> = raw
        .iter()
        .map(|&a| layout::normalize_axis(a, rank).ok_or_else(|| format!("axis {a} is out of range")))
        .collect::<Result<_, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    let keep = cx.boolean("keep_dims")?.unwrap_or(false);
    let map = layout::axis_map(rank).ok_or("the rank is not supported")?;
    let mut anec: Vec<usize> = axes.iter().map(|&k| map[k]).collect();
    anec.sort_unstable();
    let mut cur = v(&x);
    if let Some(mode) = pre {
        cur = neuron(cx, cur, mode, None, None);
    }
    let kept: Vec<u64> = x.shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
    let trivial = axes.iter().all(|&k| x.shape[k] == 1);
    let out = if trivial {
        rt_with(&x, cur)
    } else {
        let a = attrs([("kind", Attr::Str(kind.into())), ("axes", axes_attr(&anec))]);
        cx.emit_rt(OpCode::Reduction, &[cur.0], kept.clone(), a)?
    };
    let out = match post {
        Some(mode) => rt_with(&out, neuron(cx, v(&out), mode, None, None)),
        None => out,
    };
    if keep {
        return Ok(vec![Val::Rt(out)]);
    }
    let dropped: Vec<u64> = x.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect();
    Ok(vec![Val::Rt(reshape_rt(cx, &out, dropped)?)])
}
