//! Ranking hidden-layer ops: `sort`, `top_k`, `arg_min_max`, `global_arg_min_max`.
//!
//! Orders are stable (equal values keep their positions' order); an index result holds
//! the position along the sorted axis as a float (what the engine returns fp16-encoded).
//! `top_k` ranks by value (largest first for `max`, smallest first for `min`); with
//! `sort_indices = false` the k chosen elements come back in position order instead.
//! `sort` ignores `sort_indices` and `vector_dimension` (the seeds do not say what they
//! change in the result). `arg_min_max` slides a stride-1 window; a spatial mode returns
//! the row-major offset `ky * kw + kx` of the extreme inside the window (padding never
//! wins), a channel mode (1x1 window, no padding) the channel index.

use super::attrs::OpCx;
use super::hidden::{five, positive};
use crate::reference::kernels::reduce::arg_reduce;
use crate::reference::kernels::{make, numel};
use crate::tensor::Tensor;
use std::cmp::Ordering;

/// Applies `f` to every lane of `x` along `axis` (a lane maps to `out_len` values, which
/// replace it along that axis).
pub(crate) fn map_lanes(
    x: &Tensor,
    axis: usize,
    out_len: usize,
    mut f: impl FnMut(&[f32]) -> Result<Vec<f32>, String>,
) -> Result<Tensor, String> {
    let e = *x.shape.get(axis).ok_or("internal: axis out of range")?;
    let outer: usize = x.shape[..axis].iter().product();
    let inner: usize = x.shape[axis + 1..].iter().product();
    let mut shape = x.shape.clone();
    shape[axis] = out_len;
    let mut data = vec![0.0f32; numel(&shape)?];
    let mut lane = Vec::with_capacity(e);
    for o in 0..outer {
        for i in 0..inner {
            lane.clear();
            lane.extend((0..e).map(|k| x.data[(o * e + k) * inner + i]));
            let out = f(&lane)?;
            if out.len() != out_len {
                return Err(format!("internal: lane of {} values, expected {out_len}", out.len()));
            }
            for (k, v) in out.into_iter().enumerate() {
                data[(o * out_len + k) * inner + i] = v;
            }
        }
    }
    make(shape, data)
}

/// Positions of `lane` ordered by value, best first (stable).
fn ranked(lane: &[f32], largest_first: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lane.len()).collect();
    order.sort_by(|&a, &b| {
        let o = lane[a].partial_cmp(&lane[b]).unwrap_or(Ordering::Equal);
        if largest_first {
            o.reverse()
        } else {
            o
        }
    });
    order
}

/// The values at `positions`, or the positions themselves.
fn pick(lane: &[f32], positions: &[usize], indices: bool) -> Vec<f32> {
    positions.iter().map(|&p| if indices { p as f32 } else { lane[p] }).collect()
}

pub(crate) fn sort(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let axis = cx.axis("sort_dimension")?;
    let descending = match cx.str("direction")? {
        "ascending" => false,
        "descending" => true,
        other => return Err(format!("unknown direction `{other}`")),
    };
    let indices = cx.bool("indices")?;
    map_lanes(x, axis, x.shape[axis], |lane| Ok(pick(lane, &ranked(lane, descending), indices)))
}

pub(crate) fn top_k(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let axis = cx.axis("sort_dimension")?;
    let k = positive(cx, "k")?;
    if k > x.shape[axis] {
        return Err(format!("k = {k} exceeds the axis extent {}", x.shape[axis]));
    }
    let largest = match cx.str("kind")? {
        "max" => true,
        "min" => false,
        other => return Err(format!("unknown kind `{other}`")),
    };
    let (indices, by_rank) = (cx.bool("indices")?, cx.bool("sort_indices")?);
    map_lanes(x, axis, k, |lane| {
        let mut chosen: Vec<usize> = ranked(lane, largest).into_iter().take(k).collect();
        if !by_rank {
            chosen.sort_unstable();
        }
        Ok(pick(lane, &chosen, indices))
    })
}

pub(crate) fn global_arg_min_max(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let max = match cx.str("kind")? {
        "max" => true,
        "min" => false,
        other => return Err(format!("unknown kind `{other}`")),
    };
    arg_reduce(x, cx.axis("dimension")?, max)
}

pub(crate) fn arg_min_max(cx: &OpCx<'_>, x: &Tensor, shape: &[usize]) -> Result<Tensor, String> {
    let mode = cx.str("mode")?;
    let max = mode.ends_with("max");
    let kernel = cx.usizes("kernel", 2)?;
    let pad = cx.usizes("pad", 6)?;
    if mode.starts_with("channel") {
        if kernel != [1, 1] || pad.iter().any(|&p| p != 0) {
            return Err("channel modes are evaluated only with a 1x1 window and no padding".into());
        }
        return arg_reduce(x, 1, max);
    }
    let [n, c, d, h, w] = five(x)?;
    let [_, _, od, oh, ow] = shape[..] else { return Err("internal: result is not 5-D".into()) };
    if pad[0] != 0 || pad[1] != 0 || od != d {
        return Err("depth padding is not evaluated".into());
    }
    let (kh, kw) = (kernel[0], kernel[1]);
    let mut data = Vec::with_capacity(numel(shape)?);
    for plane in 0..n * c {
        for zi in 0..d {
            for y in 0..oh {
                for xo in 0..ow {
                    let mut best: Option<(f32, usize)> = None;
                    for ky in 0..kh {
                        for kx in 0..kw {
                            let (iy, ix) = ((y + ky).checked_sub(pad[2]), (xo + kx).checked_sub(pad[4]));
                            let (Some(iy), Some(ix)) = (iy, ix) else { continue };
                            if iy >= h || ix >= w {
                                continue;
                            }
                            let v = x.data[((plane * d + zi) * h + iy) * w + ix];
                            let better = best.is_none_or(|(b, _)| if max { v > b } else { v < b });
                            if better {
                                best = Some((v, ky * kw + kx));
                            }
                        }
                    }
                    data.push(best.map_or(0.0, |(_, i)| i as f32));
                }
            }
        }
    }
    make(shape.to_vec(), data)
}
