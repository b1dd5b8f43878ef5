//! The hidden-layer ops (seed 002 Table B.1/B.2) the reference interpreter evaluates.
//!
//! Implemented (semantics as `docs/ops.md` states them): `flatten` (row-major, no data
//! movement), `dropout` (identity at inference), the six rearrangements, `pad` (all four
//! modes), `gather`, `instance_norm`, `lrn`, `min_max_norm`, and in `hidden_rank.rs`
//! `sort`, `top_k`, `arg_min_max` (stride-1 windows; channel modes with a 1x1 window) and
//! `global_arg_min_max`. The geometry, sampler, random, ring-buffer and NMS ops are not
//! implemented: evaluating one is an error naming it.
//!
//! Rearrangement orders, with `f = fx * fy * fz` and block offsets `(k, i, j)` on
//! (D, H, W): `pixel_shuffle` reads output `(c, d*fz+k, h*fy+i, w*fx+j)` from input
//! channel `((c*fz + k)*fy + i)*fx + j` (channel-major, PyTorch's order);
//! `channel_to_space` from input channel `((k*fy + i)*fx + j)*C' + c` (offset-major,
//! TensorFlow's depth_to_space order); `space_to_batch` writes input
//! `(n, c, d*fz+k, h*fy+i, w*fx+j)` to batch `((k*fy + i)*fx + j)*N + n`. The
//! `pixel_unshuffle`, `space_to_channel` and `batch_to_space` ops are their inverses.

use super::attrs::OpCx;
use super::hidden_rank;
use crate::reference::kernels::elementwise::binary;
use crate::reference::kernels::norm::normalize;
use crate::reference::kernels::shape::{reshape, transpose};
use crate::reference::kernels::{make, next_coord, numel, strides};
use crate::tensor::Tensor;
use anec_ir::OpCode;

/// Evaluates a hidden-layer op; `shape` is the declared result's N, C, D, H, W.
pub(crate) fn eval(cx: &OpCx<'_>, xs: &[&Tensor], shape: &[usize]) -> Result<Tensor, String> {
    let x = xs.first().copied().ok_or_else(|| "the op has no operand".to_string());
    match cx.op.opcode {
        OpCode::Flatten => reshape(x?, shape),
        OpCode::Dropout => Ok(x?.clone()),
        OpCode::PixelShuffle
        | OpCode::PixelUnshuffle
        | OpCode::ChannelToSpace
        | OpCode::SpaceToChannel
        | OpCode::SpaceToBatch
        | OpCode::BatchToSpace => rearrange(cx, x?),
        OpCode::Pad => pad(cx, x?),
        OpCode::Gather => gather(cx, xs),
        OpCode::InstanceNorm => instance_norm(cx, x?),
        OpCode::Lrn => lrn(cx, x?),
        OpCode::MinMaxNorm => min_max_norm(cx, x?),
        OpCode::Sort => hidden_rank::sort(cx, x?),
        OpCode::TopK => hidden_rank::top_k(cx, x?),
        OpCode::ArgMinMax => hidden_rank::arg_min_max(cx, x?, shape),
        OpCode::GlobalArgMinMax => hidden_rank::global_arg_min_max(cx, x?),
        other => Err(format!("the reference interpreter does not implement {other}")),
    }
}

/// The five extents of a 5-D tensor.
pub(crate) fn five(x: &Tensor) -> Result<[usize; 5], String> {
    match x.shape[..] {
        [n, c, d, h, w] => Ok([n, c, d, h, w]),
        _ => Err(format!("internal: operand {:?} is not 5-D", x.shape)),
    }
}

/// A positive integer attribute as `usize`.
pub(crate) fn positive(cx: &OpCx<'_>, name: &str) -> Result<usize, String> {
    let v = cx.int(name)?;
    usize::try_from(v).ok().filter(|&v| v >= 1).ok_or_else(|| format!("`{name}` = {v} must be >= 1"))
}

/// `a / b` when it divides exactly.
fn exact(a: usize, b: usize, what: &str) -> Result<usize, String> {
    if b == 0 || !a.is_multiple_of(b) {
        return Err(format!("{what} {a} is not divisible by {b}"));
    }
    Ok(a / b)
}

/// The six rearrangements as one reshape, transpose, reshape.
fn rearrange(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let (fx, fy, fz) = (positive(cx, "factor_x")?, positive(cx, "factor_y")?, positive(cx, "factor_z")?);
    let [n, c, d, h, w] = five(x)?;
    let m = |a: usize, b: usize| a.checked_mul(b).ok_or_else(|| format!("{a} * {b} overflows"));
    let f = m(m(fx, fy)?, fz)?;
    let (dz, hy, wx) = (m(d, fz)?, m(h, fy)?, m(w, fx)?);
    let (split, perm, out): (Vec<usize>, [usize; 8], Vec<usize>) = match cx.op.opcode {
        OpCode::PixelShuffle => {
            let co = exact(c, f, "channel")?;
            (vec![n, co, fz, fy, fx, d, h, w], [0, 1, 5, 2, 6, 3, 7, 4], vec![n, co, dz, hy, wx])
        }
        OpCode::ChannelToSpace => {
            let co = exact(c, f, "channel")?;
            (vec![n, fz, fy, fx, co, d, h, w], [0, 4, 5, 1, 6, 2, 7, 3], vec![n, co, dz, hy, wx])
        }
        OpCode::BatchToSpace => {
            let no = exact(n, f, "batch")?;
            (vec![fz, fy, fx, no, c, d, h, w], [3, 4, 5, 0, 6, 1, 7, 2], vec![no, c, dz, hy, wx])
        }
        op => {
            let (dd, hh, ww) = (exact(d, fz, "depth")?, exact(h, fy, "height")?, exact(w, fx, "width")?);
            let split = vec![n, c, dd, fz, hh, fy, ww, fx];
            match op {
                OpCode::PixelUnshuffle => (split, [0, 1, 3, 5, 7, 2, 4, 6], vec![n, m(c, f)?, dd, hh, ww]),
                OpCode::SpaceToChannel => (split, [0, 3, 5, 7, 1, 2, 4, 6], vec![n, m(c, f)?, dd, hh, ww]),
                _ => (split, [3, 5, 7, 0, 1, 2, 4, 6], vec![m(n, f)?, c, dd, hh, ww]),
            }
        }
    };
    reshape(&transpose(&reshape(x, &split)?, &perm)?, &out)
}

/// The input coordinate an output coordinate `o` reads along an axis of extent `e` padded
/// by `lo` before, or `None` for a constant border.
fn pad_source(mode: &str, o: usize, lo: usize, e: usize) -> Option<usize> {
    let i = o as i64 - lo as i64;
    let e = e as i64;
    if (0..e).contains(&i) {
        return Some(i as usize);
    }
    let src = match mode {
        "replicate" => i.clamp(0, e - 1),
        "reflect" if i < 0 => -i,
        "reflect" => 2 * (e - 1) - i,
        "symmetric" if i < 0 => -i - 1,
        "symmetric" => 2 * e - 1 - i,
        _ => return None,
    };
    (0..e).contains(&src).then_some(src as usize)
}

fn pad(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let mode = cx.str("mode")?;
    let value = cx.float("value")?.unwrap_or(0.0);
    let p = cx.usizes("pad", 10)?;
    let out_shape: Vec<usize> = (0..5)
        .map(|a| x.shape[a].checked_add(p[2 * a]).and_then(|v| v.checked_add(p[2 * a + 1])))
        .collect::<Option<_>>()
        .ok_or("the padded shape overflows")?;
    let st = strides(&x.shape);
    let mut data = Vec::with_capacity(numel(&out_shape)?);
    let mut coord = vec![0usize; 5];
    loop {
        let mut src = Some(0usize);
        for a in 0..5 {
            src = match (src, pad_source(mode, coord[a], p[2 * a], x.shape[a])) {
                (Some(s), Some(i)) => Some(s + i * st[a]),
                (_, None) if mode == "constant" => None,
                (_, None) => return Err(format!("{mode} padding of {:?} exceeds the operand {:?}", p, x.shape)),
                (None, _) => None,
            };
        }
        data.push(match src {
            Some(s) => x.data.get(s).copied().ok_or("internal: pad source out of range")?,
            None => value,
        });
        if !next_coord(&mut coord, &out_shape) {
            break;
        }
    }
    make(out_shape, data)
}

fn gather(cx: &OpCx<'_>, xs: &[&Tensor]) -> Result<Tensor, String> {
    let [x, ix] = xs else { return Err(format!("expects 2 operands, got {}", xs.len())) };
    let axis = cx.axis("axis")?;
    let e = x.shape[axis];
    let indices = ix
        .data
        .iter()
        .map(|&v| {
            let i = if v < 0.0 { v + e as f32 } else { v };
            let ok = i.fract() == 0.0 && i >= 0.0 && (i as usize) < e;
            ok.then_some(i as usize).ok_or_else(|| format!("index {v} is not a position along an axis of {e}"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let outer: usize = x.shape[..axis].iter().product();
    let inner: usize = x.shape[axis + 1..].iter().product();
    let mut shape = x.shape.clone();
    shape[axis] = indices.len();
    let mut data = Vec::with_capacity(numel(&shape)?);
    for o in 0..outer {
        for &i in &indices {
            let start = (o * e + i) * inner;
            data.extend_from_slice(x.data.get(start..start + inner).ok_or("internal: gather out of range")?);
        }
    }
    make(shape, data)
}

fn instance_norm(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let eps = cx.float("epsilon")?.ok_or("missing attribute `epsilon`")?;
    let mut y = normalize(x, &cx.axes("axes")?, eps)?;
    let c = x.shape[1];
    for (name, add) in [("gamma", false), ("beta", true)] {
        if let Some(p) = cx.resource(name)? {
            let p = reshape(&p, &[1, c, 1, 1, 1]).map_err(|e| format!("`{name}`: {e}"))?;
            y = binary(&y, &p, move |a, b| if add { a + b } else { a * b })?;
        }
    }
    Ok(y)
}

/// `y = x / (bias + alpha / n * sum x^2)^beta`, the sum over channels
/// `c - n/2 ..= c + (n-1)/2` inside the tensor (`n = kernel_channel`).
fn lrn(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let n = positive(cx, "kernel_channel")?;
    let get = |name: &str| cx.float(name)?.ok_or_else(|| format!("missing attribute `{name}`"));
    let (alpha, beta, bias) = (get("alpha")?, get("beta")?, get("bias")?);
    let [_, c, ..] = five(x)?;
    let plane: usize = x.shape[2..].iter().product();
    let mut data = x.data.clone();
    for (k, v) in data.iter_mut().enumerate() {
        let (batch, ch, p) = (k / (c * plane), (k / plane) % c, k % plane);
        let (lo, hi) = (ch.saturating_sub(n / 2), (ch + (n - 1) / 2).min(c - 1));
        let sum: f32 = (lo..=hi).map(|j| x.data[(batch * c + j) * plane + p].powi(2)).sum();
        *v /= (bias + alpha / n as f32 * sum).powf(beta);
    }
    make(x.shape.clone(), data)
}

/// `(x - min) / (max - min + epsilon)` along `dimension`.
fn min_max_norm(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let axis = cx.axis("dimension")?;
    let eps = cx.float("epsilon")?.ok_or("missing attribute `epsilon`")?;
    hidden_rank::map_lanes(x, axis, x.shape[axis], |lane| {
        let lo = lane.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = lane.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        Ok(lane.iter().map(|v| (v - lo) / (hi - lo + eps)).collect())
    })
}

#[cfg(test)]
#[path = "hidden_tests.rs"]
mod tests;
