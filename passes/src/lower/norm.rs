//! Normalizations: `layer_norm`, `batch_norm`, `instance_norm`.
//!
//! - `layer_norm(x, axes, gamma?, beta?, epsilon)` is `anec.layer_norm` over the mapped
//!   axes (groups 1); `gamma`/`beta` are reordered into the anec order of those axes and
//!   keep their source precision. Over the channels alone (or the width alone: the
//!   features of a rank-2/3 tensor, between channel <-> width swaps) they become a
//!   per-channel `anec.gain_offset_control` after the plain normalization (what the engine
//!   runs); two of them, scale then bias, when a zero gamma meets a nonzero beta (the
//!   engine adds the bias before scaling, `affine`).
//! - `batch_norm(x, mean, variance, gamma?, beta?, epsilon)` folds into one per-channel
//!   `anec.gain_offset_control`: `scale = gamma / sqrt(variance + epsilon)`,
//!   `bias = beta - mean * scale` (computed in f32; f32 data when any input is fp32).
//! - `instance_norm(x, gamma?, beta?, epsilon)` normalizes each channel over the spatial
//!   axes (`anec.layer_norm`), then applies `gamma`/`beta` per channel.
//!
//! The channel is MIL axis 1; when the rank mapping puts it elsewhere (rank 3) it is
//! transposed onto C and back.

use super::consts::{blob, weight_dtype};
use super::cx::{attrs, axes_attr, Cx, Fail, LResult, Rt, Val};
use super::elementwise::{goc, rt_with, Goc, V};
use super::layout::{self, anec_order_of, dims_of, dims_type, C, D, H, W};
use super::shape::{axis_to_channel, channel_back, swap};
use super::tensor::Tensor;
use anec_ir::mil::ScalarType;
use anec_ir::{Attr, OpCode};

/// `layer_norm`.
pub(crate) fn layer_norm(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let rank = x.shape.len();
    let raw = cx.ints("axes")?.unwrap_or_else(|| (0..rank as i64).collect());
    let mut axes: Vec<usize> = raw
        .iter()
        .map(|&a| layout::normalize_axis(a, rank).ok_or_else(|| format!("axis {a} is out of range")))
        .collect::<Result<_, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    if axes.is_empty() {
        return Err(Fail::Msg("`axes` is empty".into()));
    }
    let eps = cx.float("epsilon")?.unwrap_or(1e-5);
    let (gamma, beta) = (cx.konst("gamma")?, cx.konst("beta")?);
    let map = layout::axis_map(rank).ok_or("the rank is not supported")?;
    let mut anec_axes: Vec<usize> = axes.iter().map(|&k| map[k]).collect();
    anec_axes.sort_unstable();
    let a =
        attrs([("axes", axes_attr(&anec_axes)), ("epsilon", Attr::Float(f64::from(eps))), ("groups", Attr::Int(1))]);
    let norm_shape: Vec<u64> = axes.iter().map(|&k| x.shape[k]).collect();
    let mut params = Vec::new();
    for (key, t) in [("gamma", gamma), ("beta", beta)] {
        let Some(t) = t else { continue };
        params.push((key, per_axes(&t, &norm_shape, &axes, map, key)?, t.dtype));
    }
    if (anec_axes == [C] || anec_axes == [W]) && !params.is_empty() {
        return Ok(vec![Val::Rt(affine_norm(cx, &x, a, anec_axes[0], params))]);
    }
    let xd = dims_of(&x.ty);
    let mut pd = [1u32; 5];
    for &ax in &anec_axes {
        pd[ax] = xd[ax];
    }
    let mut res = Vec::new();
    for (key, data, source) in params {
        let dtype = weight_dtype(source);
        res.push((key, blob(&data, dtype), dims_type(pd, dtype)?));
    }
    let id = cx.emit_with(OpCode::LayerNorm, &[x.id], x.ty, a, res);
    Ok(vec![Val::Rt(rt_with(&x, (id, x.ty)))])
}

/// A layer_norm over the channels alone, or over the width alone (the features of a
/// rank-2/3 tensor), with `gamma`/`beta` (`params`: name, values along that axis, source
/// type): the plain normalization, then the affine part as a per-channel gain/offset (as
/// `instance_norm` does), between channel <-> width swaps when the axis is W.
fn affine_norm(
    cx: &mut Cx<'_, '_>,
    x: &Rt,
    a: anec_ir::Attrs,
    axis: usize,
    params: Vec<(&str, Vec<f32>, ScalarType)>,
) -> Rt {
    let source = params.first().map(|p| p.2);
    let mut g = Goc { source, ..Goc::default() };
    for (key, data, _) in params {
        match key {
            "gamma" => g.scale_data = Some(data),
            _ => g.bias_data = Some(data),
        }
    }
    let n = (cx.emit(OpCode::LayerNorm, &[x.id], x.ty, a), x.ty);
    if axis == C {
        return rt_with(x, affine(cx, n, g));
    }
    let on_c = swap(cx, n, C, W);
    let scaled = affine(cx, on_c, g);
    rt_with(x, swap(cx, scaled, C, W))
}

/// The per-channel gain/offset `g`: one op, or (a zero scale with a nonzero bias, which
/// the engine's bias-before-scale form cannot hold) the scale, then the bias.
fn affine(cx: &mut Cx<'_, '_>, v: V, g: Goc) -> V {
    let zero_gain = |g: &Goc| {
        let (Some(s), Some(b)) = (&g.scale_data, &g.bias_data) else { return false };
        s.iter().zip(b).any(|(&s, &b)| s == 0.0 && b != 0.0)
    };
    if !zero_gain(&g) {
        return goc(cx, v, g);
    }
    let bias = Goc { scale_data: None, ..g.clone() };
    let scaled = goc(cx, v, Goc { bias_data: None, ..g });
    goc(cx, scaled, bias)
}

/// `t` (of the normalized shape, MIL order) in the anec order of the normalized axes.
fn per_axes(t: &Tensor, norm_shape: &[u64], axes: &[usize], map: &[usize], key: &str) -> LResult<Vec<f32>> {
    let trimmed: Vec<u64> = t.shape.iter().copied().skip_while(|&d| d == 1).collect();
    let want: Vec<u64> = norm_shape.iter().copied().skip_while(|&d| d == 1).collect();
    if trimmed != want {
        return Err(Fail::Msg(format!("`{key}` has shape {:?}, the normalized axes span {norm_shape:?}", t.shape)));
    }
    let order = anec_order_of(&axes.iter().map(|&k| map[k]).collect::<Vec<_>>());
    let values = t.reshaped(norm_shape.to_vec()).permuted(&order);
    values.as_f32().ok_or_else(|| Fail::Msg(format!("`{key}` must be numeric")))
}

/// `batch_norm`.
pub(crate) fn batch_norm(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    if x.shape.len() < 2 {
        return Err(Fail::Msg("`x` must have rank >= 2 (a channel axis)".into()));
    }
    let c = x.shape[1] as usize;
    let mean = cx.req_konst("mean")?;
    let var = cx.req_konst("variance")?;
    let gamma = cx.konst("gamma")?;
    let beta = cx.konst("beta")?;
    let eps = cx.float("epsilon")?.unwrap_or(1e-5);
    let get = |t: Option<&Tensor>, key: &str, default: f32| -> LResult<Vec<f32>> {
        let Some(t) = t else { return Ok(vec![default; c]) };
        match t.as_f32() {
            Some(v) if v.len() == c => Ok(v),
            _ => Err(Fail::Msg(format!("`{key}` must hold {c} numbers (one per channel)"))),
        }
    };
    let (m, vr) = (get(Some(&mean), "mean", 0.0)?, get(Some(&var), "variance", 1.0)?);
    let (g, b) = (get(gamma.as_deref(), "gamma", 1.0)?, get(beta.as_deref(), "beta", 0.0)?);
    let scale: Vec<f32> = (0..c).map(|i| g[i] / (vr[i] + eps).sqrt()).collect();
    let bias: Vec<f32> = (0..c).map(|i| b[i] - m[i] * scale[i]).collect();
    let any32 =
        [Some(&mean), Some(&var), gamma.as_ref(), beta.as_ref()].iter().flatten().any(|t| t.dtype == ScalarType::Fp32);
    let source = Some(if any32 { ScalarType::Fp32 } else { ScalarType::Fp16 });
    let g = Goc { scale_data: Some(scale), bias_data: Some(bias), source, ..Goc::default() };
    Ok(vec![Val::Rt(per_channel(cx, &x, |cx, v| Ok(goc(cx, v, g)))?)])
}

/// Runs `f` with MIL axis 1 of `x` on the anec channel axis.
fn per_channel(cx: &mut Cx<'_, '_>, x: &Rt, f: impl FnOnce(&mut Cx<'_, '_>, V) -> LResult<V>) -> LResult<Rt> {
    let (v, a) = axis_to_channel(cx, x, 1)?;
    let y = f(cx, v)?;
    Ok(rt_with(x, channel_back(cx, y, a)))
}

/// `instance_norm`.
pub(crate) fn instance_norm(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let spatial: &[usize] = match x.shape.len() {
        3 => &[W],
        4 => &[H, W],
        5 => &[D, H, W],
        r => return Err(Fail::Msg(format!("a rank-{r} input is not supported (ranks 3 to 5)"))),
    };
    let c = x.shape[1] as usize;
    let eps = cx.float("epsilon")?.unwrap_or(1e-5);
    let param = |t: Option<std::rc::Rc<Tensor>>, key: &str| -> LResult<Option<(Vec<f32>, ScalarType)>> {
        match t {
            None => Ok(None),
            Some(t) => match t.as_f32() {
                Some(v) if v.len() == c => Ok(Some((v, t.dtype))),
                _ => Err(Fail::Msg(format!("`{key}` must hold {c} numbers (one per channel)"))),
            },
        }
    };
    let gamma = param(cx.konst("gamma")?, "gamma")?;
    let beta = param(cx.konst("beta")?, "beta")?;
    let y = per_channel(cx, &x, |cx, v| {
        let a =
            attrs([("axes", axes_attr(spatial)), ("epsilon", Attr::Float(f64::from(eps))), ("groups", Attr::Int(1))]);
        let n = (cx.emit(OpCode::LayerNorm, &[v.0], v.1, a), v.1);
        if gamma.is_none() && beta.is_none() {
            return Ok(n);
        }
        let source = gamma.as_ref().or(beta.as_ref()).map(|p| p.1);
        let g = Goc { scale_data: gamma.map(|p| p.0), bias_data: beta.map(|p| p.0), source, ..Goc::default() };
        Ok(affine(cx, n, g))
    })?;
    Ok(vec![Val::Rt(y)])
}
