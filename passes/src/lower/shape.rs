//! Shape ops: `reshape`, `transpose`, `expand_dims`, `squeeze`, `identity`, `concat`,
//! `split`, `slice_by_index`, `slice_by_size`, and the re-layout helpers other families use.
//!
//! A MIL reshape keeps MIL's row-major element order, which is the anec order for every
//! rank: it becomes an `anec.reshape` (or no op at all when the anec type does not
//! change). A MIL transpose maps axis by axis to an `anec.transpose`; one that moves only
//! axes of extent 1 is a reshape. Slices and
//! splits are `anec.input_view` windows on the mapped axis.

use super::cx::{attrs, axes_attr, axis_attr, ints_attr, Cx, Fail, LResult, Rt, Val};
use super::flatten_fc;
use super::layout::{self, anec_type, axis_map, dims_of, promote, C};
use anec_ir::{Attr, OpCode, TensorType, ValueId};
use std::rc::Rc;

/// `reshape(x, shape)`.
pub(crate) fn reshape(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let shape = target_shape(cx, &x.shape)?;
    if let Some(f) = flatten_fc::defer(cx, &x, &shape) {
        return Ok(vec![Val::Flatten(Rc::new(f))]);
    }
    Ok(vec![Val::Rt(reshape_rt(cx, &x, shape)?)])
}

/// `expand_dims(x, axes)` and `squeeze(x, axes?)`.
pub(crate) fn expand_or_squeeze(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let shape = target_shape(cx, &x.shape)?;
    Ok(vec![Val::Rt(reshape_rt(cx, &x, shape)?)])
}

/// `identity(x)`: the same value.
pub(crate) fn identity(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    Ok(vec![Val::Rt(cx.input("x")?)])
}

/// The result shape of a `reshape`, `expand_dims`, `squeeze` or `identity` of `x`.
pub(crate) fn target_shape(cx: &Cx<'_, '_>, x: &[u64]) -> LResult<Vec<u64>> {
    let shape = match cx.op() {
        "reshape" => reshape_shape(x, &cx.ints("shape")?.ok_or("missing input `shape`")?)?,
        "expand_dims" => expand_shape(x, &cx.ints("axes")?.ok_or("missing input `axes`")?)?,
        "squeeze" => squeeze_shape(x, cx.ints("axes")?.as_deref())?,
        _ => x.to_vec(),
    };
    Ok(shape)
}

/// `shape` with `-1` inferred and `0` copied from `x`.
fn reshape_shape(x: &[u64], shape: &[i64]) -> Result<Vec<u64>, String> {
    let total = layout::elements(x).ok_or("the input has too many elements")?;
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &d) in shape.iter().enumerate() {
        match d {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            0 => out.push(*x.get(i).ok_or("a 0 in `shape` has no input axis to copy")?),
            d if d > 0 => out.push(d as u64),
            _ => return Err(format!("`shape` {shape:?} is not supported")),
        }
    }
    let known = layout::elements(&out).ok_or_else(|| format!("`shape` {shape:?} has too many elements"))?;
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(format!("cannot infer the -1 of {shape:?} for {total} elements"));
        }
        out[i] = total / known;
    }
    if layout::elements(&out) != Some(total) {
        return Err(format!("cannot reshape {x:?} to {shape:?}: the element counts differ"));
    }
    Ok(out)
}

fn expand_shape(x: &[u64], axes: &[i64]) -> Result<Vec<u64>, String> {
    let rank = x.len() + axes.len();
    let mut at: Vec<usize> = axes
        .iter()
        .map(|&a| layout::normalize_axis(a, rank).ok_or_else(|| format!("axis {a} is out of range")))
        .collect::<Result<_, _>>()?;
    at.sort_unstable();
    at.dedup();
    if at.len() != axes.len() {
        return Err(format!("`axes` {axes:?} repeats an axis"));
    }
    let mut rest = x.iter();
    Ok((0..rank).map(|i| if at.contains(&i) { 1 } else { rest.next().copied().unwrap_or(1) }).collect())
}

fn squeeze_shape(x: &[u64], axes: Option<&[i64]>) -> Result<Vec<u64>, String> {
    let Some(axes) = axes else {
        return Ok(x.iter().copied().filter(|&d| d != 1).collect());
    };
    let mut drop = Vec::new();
    for &a in axes {
        let i = layout::normalize_axis(a, x.len()).ok_or_else(|| format!("axis {a} is out of range"))?;
        if x[i] != 1 {
            return Err(format!("axis {a} has extent {}, not 1", x[i]));
        }
        drop.push(i);
    }
    Ok(x.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &d)| d).collect())
}

/// `transpose(x, perm)`.
pub(crate) fn transpose(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let perm = perm(cx, x.shape.len())?;
    Ok(vec![Val::Rt(transpose_rt(cx, &x, &perm)?)])
}

/// The `perm` input as a permutation of `0..rank`.
pub(crate) fn perm(cx: &Cx<'_, '_>, rank: usize) -> LResult<Vec<usize>> {
    let raw = cx.ints("perm")?.ok_or("missing input `perm`")?;
    let perm: Vec<usize> = raw.iter().filter_map(|&p| layout::normalize_axis(p, rank)).collect();
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if raw.len() != rank || sorted != (0..rank).collect::<Vec<_>>() {
        return Err(Fail::Msg(format!("`perm` {raw:?} is not a permutation of {rank} axes")));
    }
    Ok(perm)
}

/// A MIL reshape of a runtime tensor (see the module header).
pub(crate) fn reshape_rt(cx: &mut Cx<'_, '_>, x: &Rt, shape: Vec<u64>) -> LResult<Rt> {
    if layout::elements(&x.shape) != layout::elements(&shape) {
        return Err(Fail::Msg(format!("cannot reshape {:?} to {shape:?}: the element counts differ", x.shape)));
    }
    let ty = anec_type(&shape)?;
    let id = if ty == x.ty { x.id } else { cx.emit(OpCode::Reshape, &[x.id], ty, attrs([])) };
    Ok(Rt { id, ty, shape })
}

/// A MIL transpose of a runtime tensor: output axis `j` is input axis `perm[j]`.
pub(crate) fn transpose_rt(cx: &mut Cx<'_, '_>, x: &Rt, perm: &[usize]) -> LResult<Rt> {
    let map = axis_map(x.shape.len()).ok_or("the rank is not supported")?;
    let shape: Vec<u64> = perm.iter().map(|&p| x.shape[p]).collect();
    let mut p5 = [0, 1, 2, 3, 4];
    for (j, &p) in perm.iter().enumerate() {
        p5[map[j]] = map[p];
    }
    let (id, ty) = permute(cx, (x.id, x.ty), p5);
    Ok(Rt { id, ty, shape })
}

/// `t` with axes `a` and `b` exchanged.
pub(crate) fn swapped(t: TensorType, a: usize, b: usize) -> TensorType {
    let mut d = dims_of(&t);
    d.swap(a, b);
    let [n, c, dd, h, w] = d;
    TensorType { n, c, d: dd, h, w, dtype: t.dtype }
}

/// Exchanges anec axes `a` and `b` of a value.
pub(crate) fn swap(cx: &mut Cx<'_, '_>, v: (ValueId, TensorType), a: usize, b: usize) -> (ValueId, TensorType) {
    let mut p5 = [0, 1, 2, 3, 4];
    p5.swap(a, b);
    permute(cx, v, p5)
}

/// Permutes the anec axes of a value (result axis `i` = operand axis `p5[i]`): nothing when
/// the type and element order stay, a reshape when only unit axes move, else a transpose.
pub(crate) fn permute(cx: &mut Cx<'_, '_>, v: (ValueId, TensorType), p5: [usize; 5]) -> (ValueId, TensorType) {
    let d = dims_of(&v.1);
    let [n, c, dd, h, w] = p5.map(|p| d[p]);
    let ty = TensorType { n, c, d: dd, h, w, dtype: v.1.dtype };
    let moved: Vec<usize> = p5.iter().copied().filter(|&p| d[p] > 1).collect();
    if moved.windows(2).all(|w| w[0] < w[1]) {
        if ty == v.1 {
            return v;
        }
        return (cx.emit(OpCode::Reshape, &[v.0], ty, attrs([])), ty);
    }
    let perm = Attr::Array(p5.iter().map(|&p| axis_attr(p)).collect());
    (cx.emit(OpCode::Transpose, &[v.0], ty, attrs([("perm", perm)])), ty)
}

/// Brings MIL axis `k` of `x` onto the anec channel axis; returns the value and the anec
/// axis it came from (give both to [`channel_back`]).
pub(crate) fn axis_to_channel(cx: &mut Cx<'_, '_>, x: &Rt, k: usize) -> LResult<((ValueId, TensorType), usize)> {
    let a = layout::anec_axis(x.shape.len(), k).ok_or("the axis is out of range")?;
    Ok((swap(cx, (x.id, x.ty), a, C), a))
}

/// Undoes [`axis_to_channel`].
pub(crate) fn channel_back(cx: &mut Cx<'_, '_>, y: (ValueId, TensorType), a: usize) -> (ValueId, TensorType) {
    swap(cx, y, a, C)
}

/// Broadcasts a runtime tensor to `shape` (MIL rules: ranks aligned at the last axis).
pub(crate) fn broadcast_rt(cx: &mut Cx<'_, '_>, x: &Rt, shape: &[u64]) -> LResult<Rt> {
    let x = if x.shape.len() < shape.len() { reshape_rt(cx, x, promote(&x.shape, shape.len()))? } else { x.clone() };
    if x.shape.len() != shape.len() {
        return Err(Fail::Msg(format!("cannot broadcast {:?} to {shape:?}", x.shape)));
    }
    let map = axis_map(shape.len()).ok_or("the rank is not supported")?;
    let ty = anec_type(shape)?;
    let (mut axes, mut sizes) = (Vec::new(), Vec::new());
    for (k, (&from, &to)) in x.shape.iter().zip(shape).enumerate() {
        if from == to {
            continue;
        }
        if from != 1 {
            return Err(Fail::Msg(format!("cannot broadcast {:?} to {shape:?}", x.shape)));
        }
        axes.push(map[k]);
        sizes.push(i64::from(dims_of(&ty)[map[k]]));
    }
    if axes.is_empty() {
        return Ok(x);
    }
    let a = attrs([("axes", axes_attr(&axes)), ("sizes", ints_attr(&sizes))]);
    cx.emit_rt(OpCode::Broadcast, &[x.id], shape.to_vec(), a)
}

/// `concat(values, axis, interleave?)`.
pub(crate) fn concat(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let vals = cx.vals("values")?;
    let mut parts = Vec::with_capacity(vals.len());
    for v in vals {
        parts.push(cx.runtime(v, "values")?);
    }
    if cx.boolean("interleave")?.unwrap_or(false) {
        return Err(Fail::Msg("`interleave = true` is not supported".into()));
    }
    let first = parts.first().ok_or("`values` is empty")?.clone();
    let rank = first.shape.len();
    let axis = cx.int("axis")?.ok_or("missing input `axis`")?;
    let k = layout::normalize_axis(axis, rank).ok_or_else(|| format!("axis {axis} is out of range"))?;
    let mut shape = first.shape.clone();
    shape[k] = 0;
    for p in &parts {
        let same =
            p.shape.len() == rank && p.shape.iter().zip(&first.shape).enumerate().all(|(i, (a, b))| i == k || a == b);
        if !same {
            return Err(Fail::Msg(format!("shapes {:?} and {:?} differ outside axis {axis}", first.shape, p.shape)));
        }
        shape[k] += p.shape[k];
    }
    if parts.len() == 1 {
        return Ok(vec![Val::Rt(first)]);
    }
    let ids: Vec<ValueId> = parts.iter().map(|p| p.id).collect();
    let anec = layout::anec_axis(rank, k).ok_or("the rank is not supported")?;
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Concat, &ids, shape, attrs([("axis", axis_attr(anec))]))?)])
}

/// `tile(x, reps)`: a repetition count of 1 changes nothing, an axis of extent 1 is
/// broadcast (`anec.broadcast`), any other axis is the concatenation of `reps` copies
/// along it (`anec.concat`).
pub(crate) fn tile(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let reps = cx.ints("reps")?.ok_or("missing input `reps`")?;
    if reps.len() != x.shape.len() || reps.iter().any(|&r| r < 1) {
        return Err(Fail::Msg(format!("`reps` {reps:?} must hold one count >= 1 per axis of {:?}", x.shape)));
    }
    let mut cur = x;
    for (k, &r) in reps.iter().enumerate() {
        let r = r as u64;
        if r == 1 {
            continue;
        }
        let mut shape = cur.shape.clone();
        shape[k] *= r;
        cur = if cur.shape[k] == 1 {
            broadcast_rt(cx, &cur, &shape)?
        } else {
            let anec = layout::anec_axis(shape.len(), k).ok_or("the rank is not supported")?;
            let ids = vec![cur.id; r as usize];
            cx.emit_rt(OpCode::Concat, &ids, shape, attrs([("axis", axis_attr(anec))]))?
        };
    }
    Ok(vec![Val::Rt(cur)])
}

/// `split(x, num_splits | split_sizes, axis)`: one `anec.input_view` per part.
pub(crate) fn split(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let axis = cx.int("axis")?.ok_or("missing input `axis`")?;
    let k = layout::normalize_axis(axis, x.shape.len()).ok_or_else(|| format!("axis {axis} is out of range"))?;
    let extent = x.shape[k];
    let sizes: Vec<u64> = match (cx.ints("split_sizes")?, cx.int("num_splits")?) {
        (Some(s), _) => s.iter().map(|&v| u64::try_from(v).unwrap_or(0)).collect(),
        (None, Some(n)) if n as usize != cx.stmt.outputs.len() => {
            return Err(Fail::Msg(format!("`num_splits` {n} differs from the {} results", cx.stmt.outputs.len())));
        }
        (None, Some(n)) if n > 0 && extent.is_multiple_of(n as u64) => vec![extent / n as u64; n as usize],
        (None, Some(n)) => return Err(Fail::Msg(format!("{extent} does not split into {n} equal parts"))),
        (None, None) => return Err(Fail::Msg("missing input `split_sizes` or `num_splits`".into())),
    };
    if sizes.iter().sum::<u64>() != extent || sizes.contains(&0) {
        return Err(Fail::Msg(format!("split sizes {sizes:?} do not cover the extent {extent}")));
    }
    let mut out = Vec::with_capacity(sizes.len());
    let mut offset = 0;
    for size in sizes {
        let windows: Vec<(u64, u64, u64)> =
            (0..x.shape.len()).map(|i| if i == k { (offset, size, 1) } else { (0, x.shape[i], 1) }).collect();
        out.push(Val::Rt(views(cx, &x, &windows)?));
        offset += size;
    }
    Ok(out)
}

/// `slice_by_size(x, begin, size)`.
pub(crate) fn slice_by_size(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let begin = cx.ints("begin")?.ok_or("missing input `begin`")?;
    let size = cx.ints("size")?.ok_or("missing input `size`")?;
    if begin.len() != x.shape.len() || size.len() != x.shape.len() {
        return Err(Fail::Msg(format!("`begin` and `size` must have {} entries", x.shape.len())));
    }
    let mut windows = Vec::with_capacity(x.shape.len());
    for (i, (&b, &s)) in begin.iter().zip(&size).enumerate() {
        let dim = x.shape[i] as i64;
        let b = if b < 0 { b + dim } else { b };
        let s = if s == -1 { dim - b } else { s };
        if b < 0 || s < 1 || b.saturating_add(s) > dim {
            return Err(Fail::Msg(format!("axis {i}: window begin {b} size {s} is outside the extent {dim}")));
        }
        windows.push((b as u64, s as u64, 1));
    }
    Ok(vec![Val::Rt(views(cx, &x, &windows)?)])
}

/// `slice_by_index(x, begin, end, stride?, begin_mask?, end_mask?, squeeze_mask?)`.
pub(crate) fn slice_by_index(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let rank = x.shape.len();
    let begin = cx.ints("begin")?.ok_or("missing input `begin`")?;
    let end = cx.ints("end")?.ok_or("missing input `end`")?;
    let stride = cx.ints("stride")?.unwrap_or_else(|| vec![1; rank]);
    let mask = |key: &str| -> LResult<Vec<bool>> {
        Ok(cx.ints(key)?.map_or(vec![false; rank], |v| v.iter().map(|&b| b != 0).collect()))
    };
    let (bm, em, sm) = (mask("begin_mask")?, mask("end_mask")?, mask("squeeze_mask")?);
    if [begin.len(), end.len(), stride.len(), bm.len(), em.len(), sm.len()].iter().any(|&l| l != rank) {
        return Err(Fail::Msg(format!("`begin`, `end`, `stride` and the masks must have {rank} entries")));
    }
    let mut windows = Vec::with_capacity(rank);
    for i in 0..rank {
        let dim = x.shape[i] as i64;
        let s = stride[i];
        if s < 1 {
            return Err(Fail::Msg(format!("axis {i}: stride {s} is not supported (only positive strides)")));
        }
        let clampi = |v: i64| if v < 0 { (v + dim).max(0) } else { v.min(dim) };
        let b = if bm[i] { 0 } else { clampi(begin[i]) };
        let e = if sm[i] {
            b + 1
        } else if em[i] {
            dim
        } else {
            clampi(end[i])
        };
        let size = (e - b + s - 1).div_euclid(s);
        if size < 1 {
            return Err(Fail::Msg(format!("axis {i}: the slice {b}..{e} is empty")));
        }
        windows.push((b as u64, size as u64, s as u64));
    }
    let sliced = views(cx, &x, &windows)?;
    if !sm.contains(&true) {
        return Ok(vec![Val::Rt(sliced)]);
    }
    let shape: Vec<u64> = sliced.shape.iter().zip(&sm).filter(|(_, &s)| !s).map(|(&d, _)| d).collect();
    Ok(vec![Val::Rt(reshape_rt(cx, &sliced, shape)?)])
}

/// One `anec.input_view` per axis whose `(offset, size, step)` window is not the whole.
pub(crate) fn views(cx: &mut Cx<'_, '_>, x: &Rt, windows: &[(u64, u64, u64)]) -> LResult<Rt> {
    let map = axis_map(x.shape.len()).ok_or("the rank is not supported")?;
    let mut cur = x.clone();
    for (k, &(offset, size, step)) in windows.iter().enumerate() {
        if offset == 0 && size == x.shape[k] {
            continue;
        }
        let mut shape = cur.shape.clone();
        shape[k] = size;
        let a = attrs([
            ("axis", axis_attr(map[k])),
            ("offset", Attr::Int(offset as i64)),
            ("size", Attr::Int(size as i64)),
            ("step", Attr::Int(step as i64)),
        ]);
        cur = cx.emit_rt(OpCode::InputView, &[cur.id], shape, a)?;
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_shapes() {
        assert_eq!(reshape_shape(&[1, 16, 4, 4], &[1, -1]), Ok(vec![1, 256]));
        assert_eq!(reshape_shape(&[2, 3], &[0, 3, 1]), Ok(vec![2, 3, 1]));
        assert!(reshape_shape(&[2, 3], &[4, -1]).is_err());
        assert_eq!(expand_shape(&[3, 4], &[0, -1]), Ok(vec![1, 3, 4, 1]));
        assert_eq!(squeeze_shape(&[1, 3, 1], None), Ok(vec![3]));
        assert_eq!(squeeze_shape(&[1, 3, 1], Some(&[-1])), Ok(vec![1, 3]));
        assert!(squeeze_shape(&[1, 3, 1], Some(&[1])).is_err());
    }
}
