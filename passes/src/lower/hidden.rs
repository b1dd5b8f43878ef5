//! MIL ops with a direct hidden-layer form: ranking (`topk`, `argsort`, `reduce_argmax`,
//! `reduce_argmin`), `pad`, `gather`, `local_response_norm` and
//! `non_maximum_suppression`.
//!
//! - `topk(x, k, axis, ascending, sort)` is one `anec.top_k` per result: `kind = "max"`
//!   (or `"min"` when ascending), `sort_indices = sort`, `indices` false for the values
//!   and true for the indices. `argsort(x, axis, ascending)` is `anec.sort` with
//!   `indices = true`. `reduce_argmax` / `reduce_argmin(x, axis, keep_dims)` is
//!   `anec.global_arg_min_max` over the mapped axis (then a reshape when the axis is
//!   dropped). `sort_dimension` is the mapped axis; `vector_dimension` is the channel axis
//!   (width when sorting along the channel). Integer results are indices the engine
//!   returns fp16-encoded (exact below 2048).
//! - `pad(x, pad, mode, constant_val)` is `anec.pad`: the pairs of `pad` cover the last
//!   `len / 2` MIL axes and move to their anec axes; `mode` stays (`constant`, `reflect`,
//!   `replicate`), `constant_val` becomes `value`.
//! - `gather(x, indices, axis)` (`batch_dims` 0) is `anec.gather` along the mapped axis,
//!   with the indices flattened to one vector; the result is reshaped to
//!   `x.shape[:axis] + indices.shape + x.shape[axis+1:]`.
//! - `local_response_norm(x, size, alpha, beta, k)` (rank 4 or 5, channels on axis 1) is
//!   `anec.lrn` with `kernel_channel = size`, `bias = k`.
//! - `non_maximum_suppression(boxes, scores, iou_threshold, score_threshold, max_boxes,
//!   per_class_suppression)` is one `anec.nms` per result (`output` = `boxes`, `scores`,
//!   `indices`, `count`).

use super::cx::{attrs, axis_attr, ints_attr, Cx, Fail, LResult, Rt, Val};
use super::layout::{self, C, W};
use super::shape::reshape_rt;
use anec_ir::{Attr, OpCode};

/// A possibly negative MIL axis argument `key` (default `default`) of a rank-`rank` input.
fn axis_arg(cx: &Cx<'_, '_>, key: &str, default: i64, rank: usize) -> LResult<usize> {
    let raw = cx.int(key)?.unwrap_or(default);
    layout::normalize_axis(raw, rank).ok_or_else(|| Fail::Msg(format!("`{key}` {raw} is out of range for rank {rank}")))
}

/// The anec axis of MIL axis `k` of `x`.
fn anec_axis(x: &Rt, k: usize) -> LResult<usize> {
    layout::anec_axis(x.shape.len(), k).ok_or_else(|| Fail::Msg("the rank is not supported".into()))
}

/// The ranking attributes shared by `top_k` and `sort`.
fn ranking(axis: usize, sort_indices: bool, indices: bool) -> [(&'static str, Attr); 4] {
    let vector = if axis == C { W } else { C };
    [
        ("sort_dimension", axis_attr(axis)),
        ("vector_dimension", axis_attr(vector)),
        ("sort_indices", Attr::Bool(sort_indices)),
        ("indices", Attr::Bool(indices)),
    ]
}

/// `topk`.
pub(crate) fn topk(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let k_axis = axis_arg(cx, "axis", -1, x.shape.len())?;
    let axis = anec_axis(&x, k_axis)?;
    let k = cx.int("k")?.unwrap_or(1);
    if k < 1 || k as u64 > x.shape[k_axis] {
        return Err(Fail::Msg(format!("`k` = {k} must be in 1..={}", x.shape[k_axis])));
    }
    let ascending = cx.boolean("ascending")?.unwrap_or(false);
    let sort = cx.boolean("sort")?.unwrap_or(true);
    cx.allow_index_results();
    let mut shape = x.shape.clone();
    shape[k_axis] = k as u64;
    let kind = Attr::Str(if ascending { "min" } else { "max" }.into());
    let mut out = Vec::new();
    for indices in [false, true].into_iter().take(cx.stmt.outputs.len()) {
        let [a, b, c, d] = ranking(axis, sort, indices);
        let at = attrs([("kind", kind.clone()), ("k", Attr::Int(k)), a, b, c, d]);
        out.push(Val::Rt(cx.emit_rt(OpCode::TopK, &[x.id], shape.clone(), at)?));
    }
    Ok(out)
}

/// `argsort`.
pub(crate) fn argsort(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let axis = anec_axis(&x, axis_arg(cx, "axis", -1, x.shape.len())?)?;
    let ascending = cx.boolean("ascending")?.unwrap_or(false);
    cx.allow_index_results();
    let direction = Attr::Str(if ascending { "ascending" } else { "descending" }.into());
    let [a, b, c, d] = ranking(axis, true, true);
    let at = attrs([("direction", direction), a, b, c, d]);
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Sort, &[x.id], x.shape.clone(), at)?)])
}

/// `reduce_argmax` / `reduce_argmin`.
pub(crate) fn arg_reduce(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let k = axis_arg(cx, "axis", -1, x.shape.len())?;
    let axis = anec_axis(&x, k)?;
    let keep = cx.boolean("keep_dims")?.unwrap_or(false);
    cx.allow_index_results();
    let kind = if cx.op() == "reduce_argmax" { "max" } else { "min" };
    let mut kept = x.shape.clone();
    kept[k] = 1;
    let a = attrs([("kind", Attr::Str(kind.into())), ("dimension", axis_attr(axis))]);
    let out = cx.emit_rt(OpCode::GlobalArgMinMax, &[x.id], kept, a)?;
    if keep {
        return Ok(vec![Val::Rt(out)]);
    }
    let mut dropped = x.shape.clone();
    dropped.remove(k);
    Ok(vec![Val::Rt(reshape_rt(cx, &out, dropped)?)])
}

/// `pad`.
pub(crate) fn pad(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let raw = cx.ints("pad")?.ok_or("missing input `pad`")?;
    let rank = x.shape.len();
    if raw.len() % 2 != 0 || raw.len() / 2 > rank || raw.iter().any(|&p| p < 0) {
        return Err(Fail::Msg(format!(
            "`pad` {raw:?} must hold a non-negative (before, after) pair per trailing axis"
        )));
    }
    let mode = cx.string("mode")?.unwrap_or_else(|| "constant".into());
    if !matches!(mode.as_str(), "constant" | "reflect" | "replicate") {
        return Err(Fail::Msg(format!("`mode` {mode:?} is not constant, reflect or replicate")));
    }
    let first = rank - raw.len() / 2;
    let mut pads = [0i64; 10];
    let mut shape = x.shape.clone();
    for (i, pair) in raw.chunks(2).enumerate() {
        let k = first + i;
        let a = anec_axis(&x, k)?;
        pads[2 * a] = pair[0];
        pads[2 * a + 1] = pair[1];
        shape[k] += (pair[0] + pair[1]) as u64;
    }
    let mut a = attrs([("mode", Attr::Str(mode.clone())), ("pad", ints_attr(&pads))]);
    if mode == "constant" {
        let value = cx.float("constant_val")?.unwrap_or(0.0);
        a.insert("value".into(), Attr::Float(f64::from(value)));
    }
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Pad, &[x.id], shape, a)?)])
}

/// `gather`.
pub(crate) fn gather(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    if cx.int("batch_dims")?.unwrap_or(0) != 0 {
        return Err(Fail::Msg("`batch_dims` other than 0 is not supported".into()));
    }
    let x = cx.input("x")?;
    let k = axis_arg(cx, "axis", 0, x.shape.len())?;
    let indices = cx.input("indices")?;
    let count = layout::elements(&indices.shape).ok_or("the indices are too many")?;
    let flat = reshape_rt(cx, &indices, vec![count])?;
    let mut kept = x.shape.clone();
    kept[k] = count;
    let a = attrs([("axis", axis_attr(anec_axis(&x, k)?))]);
    let out = cx.emit_rt(OpCode::Gather, &[x.id, flat.id], kept, a)?;
    let mut shape = x.shape[..k].to_vec();
    shape.extend_from_slice(&indices.shape);
    shape.extend_from_slice(&x.shape[k + 1..]);
    Ok(vec![Val::Rt(reshape_rt(cx, &out, shape)?)])
}

/// `local_response_norm`.
pub(crate) fn lrn(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    if !matches!(x.shape.len(), 4 | 5) {
        return Err(Fail::Msg(format!("a rank-{} input is not supported (ranks 4 and 5)", x.shape.len())));
    }
    let size = cx.int("size")?.ok_or("missing input `size`")?;
    if size < 1 {
        return Err(Fail::Msg(format!("`size` {size} must be >= 1")));
    }
    let get = |cx: &Cx<'_, '_>, key: &str, default: f32| cx.float(key).map(|v| f64::from(v.unwrap_or(default)));
    let a = attrs([
        ("kernel_channel", Attr::Int(size)),
        ("alpha", Attr::Float(get(cx, "alpha", 1e-4)?)),
        ("beta", Attr::Float(get(cx, "beta", 0.75)?)),
        ("bias", Attr::Float(get(cx, "k", 1.0)?)),
    ]);
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Lrn, &[x.id], x.shape.clone(), a)?)])
}

/// `non_maximum_suppression`.
pub(crate) fn nms(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let boxes = cx.input("boxes")?;
    let scores = cx.input("scores")?;
    let iou = cx.float("iou_threshold")?.ok_or("missing input `iou_threshold`")?;
    let max_boxes = cx.int("max_boxes")?.ok_or("missing input `max_boxes`")?;
    let mut a = attrs([("iou_threshold", Attr::Float(f64::from(iou))), ("max_boxes", Attr::Int(max_boxes))]);
    if let Some(t) = cx.float("score_threshold")? {
        a.insert("score_threshold".into(), Attr::Float(f64::from(t)));
    }
    if let Some(p) = cx.boolean("per_class_suppression")? {
        a.insert("per_class_suppression".into(), Attr::Bool(p));
    }
    cx.allow_index_results();
    let shapes: Vec<Vec<u64>> = cx.stmt.outputs.iter().map(|o| o.ty.static_shape().unwrap_or_default()).collect();
    let mut out = Vec::new();
    for (which, shape) in ["boxes", "scores", "indices", "count"].into_iter().zip(shapes) {
        let mut at = a.clone();
        at.insert("output".into(), Attr::Str(which.into()));
        out.push(Val::Rt(cx.emit_rt(OpCode::Nms, &[boxes.id, scores.id], shape, at)?));
    }
    Ok(out)
}
