//! Shape and data-movement ops: `reshape` (`-1` inferred, `0` copies the input extent),
//! `expand_dims`, `squeeze`, `transpose`, `concat` (also `interleave`), `stack`, `split`,
//! `slice_by_index` (numpy slicing: negative indices and strides, `begin_mask`, `end_mask`,
//! `squeeze_mask`), `slice_by_size`, `tile`, `identity`, `cast`.
//!
//! Integer and string tensors move as exactly as float ones: the movement is computed on
//! element indices and applied to the data.

use super::args::Sx;
use super::value::{Data, MTensor};
use crate::reference::kernels::shape::{concat, interleave, reshape, slice, transpose, Window};
use crate::reference::kernels::{axis_index, numel, KResult};
use crate::tensor::Tensor;
use anec_ir::mil::ScalarType;
use std::rc::Rc;

/// The ops [`shape_op`] evaluates.
const OPS: [&str; 14] = [
    "pad",
    "reshape",
    "expand_dims",
    "squeeze",
    "transpose",
    "concat",
    "stack",
    "split",
    "slice_by_index",
    "slice_by_size",
    "tile",
    "identity",
    "cast",
    "flatten2d",
];

/// True for the ops [`shape_op`] evaluates.
pub(crate) fn handles(op: &str) -> bool {
    OPS.contains(&op)
}

/// Applies a data movement `f` (written for f32 tensors) to tensors of any element type.
fn moved(parts: &[Rc<MTensor>], f: impl Fn(&[&Tensor]) -> KResult<Tensor>) -> Result<MTensor, String> {
    let first = parts.first().ok_or("no input")?;
    if parts.iter().all(|p| matches!(p.data, Data::Float(_))) {
        let ts = parts.iter().map(|p| p.to_f32()).collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&Tensor> = ts.iter().collect();
        return Ok(MTensor::float(first.dtype, f(&refs)?));
    }
    // Move element indices (exact in f32 below 2^24), then gather.
    let mut offset = 0usize;
    let mut idx = Vec::with_capacity(parts.len());
    for p in parts {
        let n = numel(&p.shape)?;
        if offset + n > 1 << 24 {
            return Err("non-float tensors this large are not supported".into());
        }
        idx.push(Tensor { shape: p.shape.clone(), data: (offset..offset + n).map(|i| i as f32).collect() });
        offset += n;
    }
    let refs: Vec<&Tensor> = idx.iter().collect();
    let r = f(&refs)?;
    let pick = |i: f32| -> Result<(usize, usize), String> {
        let mut i = i as usize;
        for (k, p) in parts.iter().enumerate() {
            let n = numel(&p.shape)?;
            if i < n {
                return Ok((k, i));
            }
            i -= n;
        }
        Err("internal: moved index out of range".into())
    };
    let data = match &first.data {
        Data::Str(_) => Data::Str(
            r.data
                .iter()
                .map(|&i| {
                    let (k, j) = pick(i)?;
                    match &parts[k].data {
                        Data::Str(v) => v.get(j).cloned().ok_or_else(|| "index".to_string()),
                        _ => Err("mixed element types".to_string()),
                    }
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => {
            let ints = parts.iter().map(|p| p.to_i64()).collect::<Result<Vec<_>, _>>()?;
            Data::Int(
                r.data
                    .iter()
                    .map(|&i| {
                        let (k, j) = pick(i)?;
                        ints.get(k).and_then(|v| v.get(j)).copied().ok_or_else(|| "index".to_string())
                    })
                    .collect::<Result<_, _>>()?,
            )
        }
    };
    Ok(MTensor { dtype: first.dtype, shape: r.shape, data })
}

/// A shape op.
pub(crate) fn shape_op(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let op = sx.op();
    if op == "split" {
        return split(sx);
    }
    if op == "concat" || op == "stack" {
        let parts = sx.values("values")?;
        let rank = parts.first().ok_or("`values` is empty")?.shape.len();
        let axis_arg = sx.int("axis")?.ok_or("missing input `axis`")?;
        if op == "stack" {
            let axis = axis_index(axis_arg, rank + 1)?;
            let f = |ts: &[&Tensor]| {
                let ex: Vec<Tensor> = ts.iter().map(|t| reshape(t, &insert(&t.shape, axis))).collect::<KResult<_>>()?;
                concat(&ex.iter().collect::<Vec<_>>(), axis)
            };
            return Ok(vec![moved(&parts, f)?]);
        }
        let axis = axis_index(axis_arg, rank)?;
        let inter = sx.bool("interleave")?.unwrap_or(false);
        return Ok(vec![moved(&parts, |ts| if inter { interleave(ts, axis) } else { concat(ts, axis) })?]);
    }
    let x = sx.req("x")?;
    let one = |f: &dyn Fn(&Tensor) -> KResult<Tensor>| moved(std::slice::from_ref(&x), |ts| f(ts[0]));
    let out = match op {
        "identity" => (*x).clone(),
        "cast" => {
            let d = sx.string("dtype")?.ok_or("missing input `dtype`")?;
            x.cast(ScalarType::from_name(&d).ok_or_else(|| format!("unknown dtype `{d}`"))?)?
        }
        "reshape" => {
            let shape = reshape_shape(&x.shape, &sx.ints("shape")?.ok_or("missing input `shape`")?)?;
            one(&|t| reshape(t, &shape))?
        }
        "expand_dims" => {
            let shape = expand_shape(&x.shape, &sx.ints("axes")?.ok_or("missing input `axes`")?)?;
            one(&|t| reshape(t, &shape))?
        }
        "squeeze" => {
            let shape = squeeze_shape(&x.shape, sx.ints("axes")?.as_deref())?;
            one(&|t| reshape(t, &shape))?
        }
        "flatten2d" => {
            let axis = axis_index(sx.int("axis")?.unwrap_or(1), x.shape.len() + 1)?;
            let shape = [numel(&x.shape[..axis])?, numel(&x.shape[axis..])?];
            one(&|t| reshape(t, &shape))?
        }
        "transpose" => {
            let perm = sx.ints("perm")?.ok_or("missing input `perm`")?;
            let perm = perm.iter().map(|&p| axis_index(p, x.shape.len())).collect::<Result<Vec<_>, _>>()?;
            one(&|t| transpose(t, &perm))?
        }
        "slice_by_index" => slice_by_index(sx, &x)?,
        "slice_by_size" => {
            let w = size_windows(
                &x.shape,
                &sx.ints("begin")?.ok_or("missing input `begin`")?,
                &sx.ints("size")?.ok_or("missing input `size`")?,
            )?;
            one(&|t| slice(t, &w))?
        }
        "pad" => {
            let pads = sx.ints("pad")?.ok_or("missing input `pad`")?;
            let mode = sx.string("mode")?.unwrap_or_else(|| "constant".into());
            let value = sx.float("constant_val")?.unwrap_or(0.0);
            one(&|t| pad(t, &pads, &mode, value))?
        }
        "tile" => {
            let reps = sx.ints("reps")?.ok_or("missing input `reps`")?;
            if reps.len() != x.shape.len() || reps.iter().any(|&r| !(1..=1 << 28).contains(&r)) {
                return Err(format!("`reps` {reps:?} must hold {} values >= 1", x.shape.len()));
            }
            let tiled: Vec<usize> = x.shape.iter().zip(&reps).map(|(&d, &r)| d.saturating_mul(r as usize)).collect();
            numel(&tiled)?;
            one(&|t| tile(t, &reps))?
        }
        other => return Err(format!("`{other}` is not a shape op")),
    };
    Ok(vec![out])
}

/// `shape` with a 1 inserted at `axis`.
fn insert(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.insert(axis.min(s.len()), 1);
    s
}

/// `x` repeated `reps[i]` times along each axis.
fn tile(x: &Tensor, reps: &[i64]) -> KResult<Tensor> {
    let mut cur = x.clone();
    for (axis, &r) in reps.iter().enumerate() {
        let copies: Vec<&Tensor> = (0..r).map(|_| &cur).collect();
        cur = concat(&copies, axis)?;
    }
    Ok(cur)
}

/// `pad(x, pad, mode, constant_val)` (coremltools iOS15): `pad` holds a (before, after)
/// pair for each of the last `pad.len() / 2` axes; outside `x`, the constant, the edge
/// value (`replicate`) or the mirror without the edge (`reflect`).
fn pad(x: &Tensor, pads: &[i64], mode: &str, value: f32) -> KResult<Tensor> {
    let rank = x.shape.len();
    if !pads.len().is_multiple_of(2) || pads.len() / 2 > rank || pads.iter().any(|&p| p < 0) {
        return Err(format!("`pad` {pads:?} must hold non-negative (before, after) pairs for at most {rank} axes"));
    }
    let first = rank - pads.len() / 2;
    let lo = |a: usize| if a < first { 0 } else { pads[2 * (a - first)] as usize };
    let hi = |a: usize| if a < first { 0 } else { pads[2 * (a - first) + 1] as usize };
    let shape: Vec<usize> = (0..rank).map(|a| x.shape[a] + lo(a) + hi(a)).collect();
    let st = super::super::kernels::strides(&x.shape);
    let mut data = Vec::with_capacity(numel(&shape)?);
    let mut coord = vec![0usize; rank];
    loop {
        let mut src = Some(0usize);
        for a in 0..rank {
            let (i, e) = (coord[a] as i64 - lo(a) as i64, x.shape[a] as i64);
            let j = match mode {
                _ if (0..e).contains(&i) => Some(i),
                "replicate" => Some(i.clamp(0, e - 1)),
                "reflect" if i < 0 => Some(-i),
                "reflect" => Some(2 * (e - 1) - i),
                "constant" => None,
                other => return Err(format!("pad mode `{other}` (constant, reflect or replicate)")),
            };
            src = match (src, j) {
                (_, Some(j)) if !(0..e).contains(&j) => {
                    return Err(format!("{mode} padding {pads:?} exceeds the operand {:?}", x.shape))
                }
                (Some(s), Some(j)) => Some(s + j as usize * st[a]),
                _ => None,
            };
        }
        data.push(src.and_then(|s| x.data.get(s).copied()).unwrap_or(value));
        if !super::super::kernels::next_coord(&mut coord, &shape) {
            break;
        }
    }
    super::super::kernels::make(shape, data)
}

/// The target of `reshape(x, shape)`.
pub(crate) fn reshape_shape(x: &[usize], shape: &[i64]) -> Result<Vec<usize>, String> {
    let total = numel(x)?;
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &d) in shape.iter().enumerate() {
        match d {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            0 => out.push(*x.get(i).ok_or("a 0 in `shape` has no input axis to copy")?),
            d if d > 0 => out.push(usize::try_from(d).map_err(|_| "extent too large")?),
            _ => return Err(format!("`shape` {shape:?} is not a valid shape")),
        }
    }
    let known = numel(&out)?;
    if let Some(i) = infer {
        if known == 0 || total % known != 0 {
            return Err(format!("cannot infer the -1 of {shape:?} for {total} elements"));
        }
        out[i] = total / known;
    }
    if numel(&out)? != total {
        return Err(format!("cannot reshape {x:?} to {shape:?}: the element counts differ"));
    }
    Ok(out)
}

fn expand_shape(x: &[usize], axes: &[i64]) -> Result<Vec<usize>, String> {
    let rank = x.len() + axes.len();
    let mut at = axes.iter().map(|&a| axis_index(a, rank)).collect::<Result<Vec<_>, _>>()?;
    at.sort_unstable();
    at.dedup();
    if at.len() != axes.len() {
        return Err(format!("`axes` {axes:?} repeats an axis"));
    }
    let mut rest = x.iter();
    Ok((0..rank).map(|i| if at.contains(&i) { 1 } else { rest.next().copied().unwrap_or(1) }).collect())
}

fn squeeze_shape(x: &[usize], axes: Option<&[i64]>) -> Result<Vec<usize>, String> {
    let Some(axes) = axes else { return Ok(x.iter().copied().filter(|&d| d != 1).collect()) };
    let drop = axes.iter().map(|&a| axis_index(a, x.len())).collect::<Result<Vec<_>, _>>()?;
    if let Some(&i) = drop.iter().find(|&&i| x[i] != 1) {
        return Err(format!("axis {i} has extent {}, not 1", x[i]));
    }
    Ok(x.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &d)| d).collect())
}

/// `slice_by_size` windows: `size = -1` runs to the end.
fn size_windows(shape: &[usize], begin: &[i64], size: &[i64]) -> Result<Vec<Window>, String> {
    if begin.len() != shape.len() || size.len() != shape.len() {
        return Err(format!("`begin` and `size` must have {} entries", shape.len()));
    }
    (0..shape.len())
        .map(|i| {
            let n = shape[i] as i64;
            let b = if begin[i] < 0 { begin[i] + n } else { begin[i] };
            let s = if size[i] == -1 { n - b } else { size[i] };
            if b < 0 || s < 0 || b.saturating_add(s) > n {
                return Err(format!("axis {i}: begin {} size {} is outside the extent {n}", begin[i], size[i]));
            }
            Ok(Window { start: b, count: s as usize, step: 1 })
        })
        .collect()
}

/// Python's `slice(start, stop, step).indices(n)` as a window.
pub(crate) fn py_slice(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> Result<Window, String> {
    if step == 0 {
        return Err("a slice stride of 0".into());
    }
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let norm = |v: i64| if v < 0 { (v + n).max(lower) } else { v.min(upper) };
    let b = start.map_or(if step > 0 { lower } else { upper }, norm);
    let e = stop.map_or(if step > 0 { upper } else { lower }, norm);
    let (span, by) = if step > 0 { (e - b, step) } else { (b - e, -step) };
    let count = span.max(0).unsigned_abs().div_ceil(by.unsigned_abs());
    Ok(Window { start: b, count: usize::try_from(count).map_err(|_| "slice too long")?, step })
}

fn slice_by_index(sx: &Sx<'_>, x: &Rc<MTensor>) -> Result<MTensor, String> {
    let rank = x.shape.len();
    let begin = sx.ints("begin")?.ok_or("missing input `begin`")?;
    let end = sx.ints("end")?.ok_or("missing input `end`")?;
    let stride = sx.ints("stride")?.unwrap_or_else(|| vec![1; rank]);
    let mask = |key: &str| -> Result<Vec<bool>, String> {
        Ok(sx.ints(key)?.map_or(vec![false; rank], |v| v.iter().map(|&b| b != 0).collect()))
    };
    let (bm, em, sm) = (mask("begin_mask")?, mask("end_mask")?, mask("squeeze_mask")?);
    if [begin.len(), end.len(), stride.len(), bm.len(), em.len(), sm.len()].iter().any(|&l| l != rank) {
        return Err(format!("`begin`, `end`, `stride` and the masks must have {rank} entries"));
    }
    let mut windows = Vec::with_capacity(rank);
    for i in 0..rank {
        let n = x.shape[i] as i64;
        let w = if sm[i] {
            let b = if begin[i] < 0 { begin[i] + n } else { begin[i] };
            if !(0..n).contains(&b) {
                return Err(format!("axis {i}: index {} is outside the extent {n}", begin[i]));
            }
            Window { start: b, count: 1, step: 1 }
        } else {
            py_slice((!bm[i]).then_some(begin[i]), (!em[i]).then_some(end[i]), stride[i], n)?
        };
        windows.push(w);
    }
    let kept: Vec<usize> = windows.iter().zip(&sm).filter(|(_, &s)| !s).map(|(w, _)| w.count).collect();
    moved(std::slice::from_ref(x), |ts| reshape(&slice(ts[0], &windows)?, &kept))
}

/// `split(x, num_splits | split_sizes, axis)`.
fn split(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.req("x")?;
    let axis = axis_index(sx.int("axis")?.ok_or("missing input `axis`")?, x.shape.len())?;
    let extent = x.shape[axis];
    let sizes: Vec<usize> = match (sx.ints("split_sizes")?, sx.int("num_splits")?) {
        (Some(s), _) => {
            s.iter().map(|&v| usize::try_from(v).map_err(|_| "negative split size")).collect::<Result<_, _>>()?
        }
        (None, Some(n)) if n > 0 && extent % n as usize == 0 => vec![extent / n as usize; n as usize],
        (None, Some(n)) => return Err(format!("{extent} does not split into {n} equal parts")),
        (None, None) => return Err("missing input `split_sizes` or `num_splits`".into()),
    };
    if sizes.iter().sum::<usize>() != extent {
        return Err(format!("split sizes {sizes:?} do not cover the extent {extent}"));
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut offset = 0usize;
    for size in sizes {
        let w: Vec<Window> = x
            .shape
            .iter()
            .enumerate()
            .map(
                |(i, &d)| {
                    if i == axis {
                        Window { start: offset as i64, count: size, step: 1 }
                    } else {
                        Window::all(d)
                    }
                },
            )
            .collect();
        out.push(moved(std::slice::from_ref(&x), |ts| slice(ts[0], &w))?);
        offset += size;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(reshape_shape(&[1, 16, 4, 4], &[1, -1]), Ok(vec![1, 256]));
        assert_eq!(reshape_shape(&[2, 3], &[0, 3, 1]), Ok(vec![2, 3, 1]));
        assert!(reshape_shape(&[2, 3], &[4, -1]).is_err());
        assert_eq!(expand_shape(&[3, 4], &[0, -1]), Ok(vec![1, 3, 4, 1]));
        assert_eq!(squeeze_shape(&[1, 3, 1], None), Ok(vec![3]));
        assert_eq!(squeeze_shape(&[1, 3, 1], Some(&[-1])), Ok(vec![1, 3]));
        assert!(squeeze_shape(&[1, 3, 1], Some(&[1])).is_err());
    }

    #[test]
    fn python_slices() {
        // list(range(5))[1:4:2] = [1, 3]; [::-1] = [4, 3, 2, 1, 0]; [-2:] = [3, 4];
        // [3:1:-1] = [3, 2]; [10:] = [].
        assert_eq!(py_slice(Some(1), Some(4), 2, 5), Ok(Window { start: 1, count: 2, step: 2 }));
        assert_eq!(py_slice(None, None, -1, 5), Ok(Window { start: 4, count: 5, step: -1 }));
        assert_eq!(py_slice(Some(-2), None, 1, 5), Ok(Window { start: 3, count: 2, step: 1 }));
        assert_eq!(py_slice(Some(3), Some(1), -1, 5), Ok(Window { start: 3, count: 2, step: -1 }));
        assert_eq!(py_slice(Some(10), None, 1, 5).map(|w| w.count), Ok(0));
        assert!(py_slice(None, None, 0, 5).is_err());
    }
}
