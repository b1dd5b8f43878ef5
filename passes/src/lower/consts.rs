//! Compile-time tensors: `const`, the `constexpr_*` decompression ops, and folding of
//! shape and arithmetic ops whose inputs are all constants.
//!
//! None of these emit an op: their results are [`Tensor`]s that later ops take as weights
//! or parameters. Decompression follows coremltools' definitions:
//!
//! - `constexpr_affine_dequantize(quantized_data, zero_point, scale, axis)`:
//!   `(q - zero_point) * scale`, the parameters scalar or one per index of `axis`.
//! - `constexpr_lut_to_dense`: iOS16 form `(indices, lut, shape)` with `indices` a uint8
//!   tensor packing `log2(len(lut))`-bit indices from the least significant bit up; iOS18
//!   form `(indices, lut, vector_axis)` with `lut` of shape `[blocks..., palettes, vector]`.
//! - `constexpr_sparse_to_dense`: iOS16 `(nonzero_data, mask, shape)` with a packed bit
//!   mask; iOS18 `(nonzero_data, mask)` with a uint1 mask of the output shape.
//! - `constexpr_blockwise_shift_scale(data, scale, offset?)`: `scale * (data - offset)`,
//!   each block of `data` using the matching element of `scale` and `offset`.
//! - `constexpr_cast(source_val, output_dtype)`.
//!
//! A tensor an engine op must read as an operand is emitted as `anec.constant` by
//! [`materialize`] (f16 data in the anec element order).

use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::layout::{anec_type, broadcast_shapes, promote};
use super::tensor::{count, unpack_bits, Data, Tensor};
use anec_ir::mil::{Arg, ScalarType, SharedBytes};
use anec_ir::{Blob, DType, OpCode, TensorType};
use half::f16;
use std::rc::Rc;

/// `const()[val = ...]`.
pub(crate) fn const_op(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let t = cx.req_konst("val")?;
    Ok(vec![Val::Const(t)])
}

/// The `constexpr_*` ops.
pub(crate) fn constexpr(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let out_dtype = cx.stmt.outputs.first().and_then(|o| o.ty.dtype()).ok_or("the op declares no tensor result")?;
    let t = match cx.op() {
        "constexpr_affine_dequantize" => affine_dequantize(cx, out_dtype)?,
        "constexpr_lut_to_dense" => lut_to_dense(cx, out_dtype)?,
        "constexpr_sparse_to_dense" => sparse_to_dense(cx, out_dtype)?,
        "constexpr_blockwise_shift_scale" => blockwise_shift_scale(cx, out_dtype)?,
        "constexpr_cast" => {
            let src = cx.req_konst("source_val")?;
            cast_tensor(&src, out_dtype)?
        }
        other => return Err(Fail::Msg(format!("`{other}` is not supported (no folding for it)"))),
    };
    Ok(vec![Val::Const(Rc::new(t))])
}

/// Float elements of a constant, or an error naming it.
fn floats(t: &Tensor, what: &str) -> LResult<Vec<f32>> {
    t.as_f32().ok_or_else(|| Fail::Msg(format!("`{what}` must be numeric")))
}

/// Integer elements of a constant, or an error naming it.
fn integers(t: &Tensor, what: &str) -> LResult<Vec<i64>> {
    t.as_i64().ok_or_else(|| Fail::Msg(format!("`{what}` must hold integers")))
}

fn affine_dequantize(cx: &Cx<'_, '_>, dtype: ScalarType) -> LResult<Tensor> {
    let q = cx.req_konst("quantized_data")?;
    let zp = floats(&*cx.req_konst("zero_point")?, "zero_point")?;
    let scale = floats(&*cx.req_konst("scale")?, "scale")?;
    let axis = cx.int("axis")?.unwrap_or(0);
    let rank = q.shape.len();
    let axis = super::layout::normalize_axis(axis, rank).ok_or_else(|| format!("axis {axis} is out of range"))?;
    let data = floats(&q, "quantized_data")?;
    let inner: u64 = q.shape[axis + 1..].iter().product();
    let extent = q.shape[axis];
    let pick = |v: &[f32], what: &str, i: usize| -> LResult<f32> {
        match v.len() {
            1 => Ok(v[0]),
            n if n as u64 == extent => Ok(v[((i as u64 / inner.max(1)) % extent) as usize]),
            n => Err(Fail::Msg(format!("`{what}` has {n} values; expected 1 or {extent} (the extent of axis {axis})"))),
        }
    };
    let out: Vec<f32> = data
        .iter()
        .enumerate()
        .map(|(i, &x)| Ok((x - pick(&zp, "zero_point", i)?) * pick(&scale, "scale", i)?))
        .collect::<LResult<_>>()?;
    Ok(Tensor::floats(dtype, q.shape.clone(), out))
}

fn lut_to_dense(cx: &Cx<'_, '_>, dtype: ScalarType) -> LResult<Tensor> {
    let lut = cx.req_konst("lut")?;
    let indices = cx.req_konst("indices")?;
    if let Some(shape) = cx.ints("shape")? {
        return lut_ios16(&indices, &lut, &shape, dtype);
    }
    let vector_axis = cx.int("vector_axis")?;
    lut_ios18(&indices, &lut, vector_axis, dtype)
}

/// The iOS16 form: packed indices into a flat palette.
fn lut_ios16(indices: &Tensor, lut: &Tensor, shape: &[i64], dtype: ScalarType) -> LResult<Tensor> {
    let palette = floats(lut, "lut")?;
    let nbits = palette.len().trailing_zeros() as usize;
    if !palette.len().is_power_of_two() || !(1..=8).contains(&nbits) {
        return Err(Fail::Msg(format!("`lut` has {} entries; expected 2, 4, 16, 64 or 256", palette.len())));
    }
    let shape: Vec<u64> = shape.iter().map(|&d| u64::try_from(d)).collect::<Result<_, _>>().map_err(|_| "bad shape")?;
    let n = count(&shape).ok_or("the shape is too large")?;
    let stored = indices.packed().filter(|_| indices.dtype == ScalarType::Uint8);
    let owned: Vec<u8>;
    let bytes: &[u8] = match stored {
        Some(b) => b,
        None => {
            owned = integers(indices, "indices")?.iter().map(|&b| b as u8).collect();
            &owned
        }
    };
    if n.checked_mul(nbits).is_none_or(|bits| bytes.len().saturating_mul(8) < bits) {
        return Err(Fail::Msg(format!("`indices` holds {} bytes, {n} {nbits}-bit indices need more", bytes.len())));
    }
    let data = match dtype {
        // A weight: the stored form directly, each index replaced by its entry's bytes
        // (one pass, no f32 detour; the engine's kernels are dense, `docs/performance.md`).
        ScalarType::Fp16 => expand(bytes, nbits, n, &palette, |v| f16::from_f32(v).to_le_bytes()),
        ScalarType::Fp32 => expand(bytes, nbits, n, &palette, f32::to_le_bytes),
        _ => {
            return Ok(Tensor::floats(
                dtype,
                shape,
                unpack_bits(bytes, nbits, n, false).iter().map(|&i| palette[i as usize]).collect(),
            ))
        }
    };
    Ok(Tensor { dtype, shape, data: Data::Raw(data) })
}

/// `n` packed `nbits`-bit indices (least significant bit first) replaced by the bytes of
/// their palette entries.
fn expand<const W: usize>(
    bytes: &[u8],
    nbits: usize,
    n: usize,
    palette: &[f32],
    enc: impl Fn(f32) -> [u8; W],
) -> SharedBytes {
    let entries: Vec<[u8; W]> = palette.iter().map(|&v| enc(v)).collect();
    let entry = |i: usize| entries.get(i).copied().unwrap_or([0; W]);
    let fill = |out: &mut [u8]| {
        let mut slots = out.chunks_exact_mut(W);
        if 8 % nbits == 0 {
            let (per_byte, mask) = (8 / nbits, (1usize << nbits) - 1);
            let indices =
                bytes.iter().flat_map(|&b| (0..per_byte).map(move |k| (usize::from(b) >> (k * nbits)) & mask));
            slots.zip(indices).for_each(|(s, i)| s.copy_from_slice(&entry(i)));
        } else {
            let indices = unpack_bits(bytes, nbits, n, false);
            slots.by_ref().zip(indices).for_each(|(s, i)| s.copy_from_slice(&entry(i as usize)));
        }
    };
    produce(n * W, fill)
}

/// `len` bytes of a weight that `fill` writes: a large one in an unnamed temporary file
/// whose pages leave memory at once (the packing reads them back from the page cache),
/// a small one in memory.
fn produce(len: usize, fill: impl FnOnce(&mut [u8])) -> SharedBytes {
    let mut fill = Some(fill);
    if len >= SPILL {
        if let Ok(b) = anec_ir::mil::spill(len, |out| fill.take().into_iter().for_each(|f| f(out))) {
            b.release();
            return b;
        }
    }
    let mut out = vec![0; len];
    fill.into_iter().for_each(|f| f(&mut out));
    out.into()
}

/// Expanded weights at least this large are spilled to a temporary file.
const SPILL: usize = 1 << 20;

/// The iOS18 form: per-block palettes of vectors.
fn lut_ios18(indices: &Tensor, lut: &Tensor, vector_axis: Option<i64>, dtype: ScalarType) -> LResult<Tensor> {
    let rank = indices.shape.len();
    if lut.shape.len() != rank + 2 {
        return Err(Fail::Msg(format!("`lut` must have rank {} (indices rank + 2), got {:?}", rank + 2, lut.shape)));
    }
    let (palettes, vsize) = (lut.shape[rank] as usize, lut.shape[rank + 1] as usize);
    let vaxis = match (vsize, vector_axis) {
        (1, _) => None,
        (_, Some(a)) => Some(super::layout::normalize_axis(a, rank).ok_or("`vector_axis` is out of range")?),
        (_, None) => return Err(Fail::Msg("`vector_axis` is required when the lut holds vectors".into())),
    };
    let mut out_shape = indices.shape.clone();
    if let Some(a) = vaxis {
        out_shape[a] = out_shape[a].saturating_mul(vsize as u64);
    }
    let idx = integers(indices, "indices")?;
    let table = floats(lut, "lut")?;
    let blocks: Vec<u64> = (0..rank).map(|k| indices.shape[k] / lut.shape[k].max(1)).collect();
    let n = count(&out_shape).ok_or("the shape is too large")?;
    let mut out = Vec::with_capacity(n);
    let mut coord = vec![0u64; rank];
    for _ in 0..n {
        let mut icoord = coord.clone();
        let mut vpos = 0u64;
        if let Some(a) = vaxis {
            vpos = coord[a] % vsize as u64;
            icoord[a] = coord[a] / vsize as u64;
        }
        let flat_i = flat_index(&icoord, &indices.shape);
        let palette = *idx.get(flat_i).ok_or("`indices` is too short")? as u64;
        let mut lut_index = 0u64;
        for k in 0..rank {
            lut_index = lut_index * lut.shape[k] + icoord[k] / blocks[k].max(1);
        }
        lut_index = (lut_index * palettes as u64 + palette) * vsize as u64 + vpos;
        out.push(*table.get(lut_index as usize).ok_or("an index exceeds the lut")?);
        step(&mut coord, &out_shape);
    }
    Ok(Tensor::floats(dtype, out_shape, out))
}

fn sparse_to_dense(cx: &Cx<'_, '_>, dtype: ScalarType) -> LResult<Tensor> {
    let nonzero_t = cx.req_konst("nonzero_data")?;
    let mask = cx.req_konst("mask")?;
    if let Some(t) = sparse_stored(&nonzero_t, &mask, cx.ints("shape")?, dtype) {
        return t;
    }
    let nonzero = floats(&nonzero_t, "nonzero_data")?;
    let (shape, bits) = match cx.ints("shape")? {
        Some(shape) => {
            let shape: Vec<u64> = shape.iter().map(|&d| d.max(0) as u64).collect();
            let n = count(&shape).ok_or("the shape is too large")?;
            let bytes: Vec<u8> = integers(&mask, "mask")?.iter().map(|&b| b as u8).collect();
            if bytes.len().saturating_mul(8) < n {
                return Err(Fail::Msg(format!("`mask` holds {} bytes, {n} elements need more", bytes.len())));
            }
            (shape, unpack_bits(&bytes, 1, n, false))
        }
        None => (mask.shape.clone(), integers(&mask, "mask")?),
    };
    let mut values = nonzero.iter();
    let mut out = Vec::with_capacity(bits.len());
    for &b in &bits {
        out.push(if b != 0 {
            *values.next().ok_or("`mask` sets more elements than `nonzero_data` holds")?
        } else {
            0.0
        });
    }
    if values.next().is_some() {
        return Err(Fail::Msg("`nonzero_data` holds more values than `mask` sets".into()));
    }
    Ok(Tensor::floats(dtype, shape, out))
}

/// [`sparse_to_dense`] of fp16 or fp32 `nonzero_data` as the blob stores it, of the result's
/// type, and a mask of packed bits (the iOS16 `uint8` form with `shape`, or the iOS18
/// `uint1` mask): the result's bytes written straight from them, no f32 copy. `None` for
/// the other forms.
fn sparse_stored(
    nonzero: &Tensor,
    mask: &Tensor,
    shape: Option<Vec<i64>>,
    dtype: ScalarType,
) -> Option<LResult<Tensor>> {
    let src =
        nonzero.raw().filter(|_| nonzero.dtype == dtype && matches!(dtype, ScalarType::Fp16 | ScalarType::Fp32))?;
    let bits = mask.packed()?;
    let shape: Vec<u64> = match shape {
        Some(s) if mask.dtype == ScalarType::Uint8 => s.iter().map(|&d| d.max(0) as u64).collect(),
        None if mask.dtype == ScalarType::Uint1 => mask.shape.clone(),
        _ => return None,
    };
    let Some(n) = count(&shape) else { return Some(Err(Fail::Msg("the shape is too large".into()))) };
    if bits.len().saturating_mul(8) < n {
        return Some(Err(Fail::Msg(format!("`mask` holds {} bytes, {n} elements need more", bits.len()))));
    }
    let w = if dtype == ScalarType::Fp16 { 2 } else { 4 };
    // The set bits among the first n.
    let whole: usize = bits.get(..n / 8).unwrap_or_default().iter().map(|b| b.count_ones() as usize).sum();
    let part = bits.get(n / 8).map_or(0, |&b| (u32::from(b) & ((1u32 << (n % 8)) - 1)).count_ones() as usize);
    let set = whole + part;
    if set != src.len() / w {
        let what = if set > src.len() / w {
            "sets more elements than `nonzero_data` holds"
        } else {
            "sets fewer elements than `nonzero_data` holds"
        };
        return Some(Err(Fail::Msg(format!("`mask` {what}"))));
    }
    let data = produce(n * w, |out| {
        let mut values = src.chunks_exact(w);
        for (i, slot) in out.chunks_exact_mut(w).enumerate() {
            if bits.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1) {
                if let Some(v) = values.next() {
                    slot.copy_from_slice(v);
                }
            }
        }
    });
    Some(Ok(Tensor { dtype, shape, data: Data::Raw(data) }))
}

fn blockwise_shift_scale(cx: &Cx<'_, '_>, dtype: ScalarType) -> LResult<Tensor> {
    let data = cx.req_konst("data")?;
    let scale = cx.req_konst("scale")?;
    let offset = cx.konst("offset")?;
    let rank = data.shape.len();
    if scale.shape.len() != rank || offset.as_ref().is_some_and(|o| o.shape != scale.shape) {
        return Err(Fail::Msg("`scale` and `offset` must have the rank of `data` and one shape".into()));
    }
    let mut blocks = Vec::with_capacity(rank);
    for (k, (&d, &s)) in data.shape.iter().zip(&scale.shape).enumerate() {
        if s == 0 || d % s != 0 {
            return Err(Fail::Msg(format!("axis {k}: extent {d} is not a multiple of the scale's {s}")));
        }
        blocks.push(d / s);
    }
    let x = floats(&data, "data")?;
    let sc = floats(&scale, "scale")?;
    let off = match &offset {
        Some(o) => floats(o, "offset")?,
        None => vec![0.0; sc.len()],
    };
    let mut out = Vec::with_capacity(x.len());
    let mut coord = vec![0u64; rank];
    for &v in &x {
        let block: Vec<u64> = coord.iter().zip(&blocks).map(|(c, b)| c / b).collect();
        let j = flat_index(&block, &scale.shape);
        out.push((v - off[j]) * sc[j]);
        step(&mut coord, &data.shape);
    }
    Ok(Tensor::floats(dtype, data.shape.clone(), out))
}

/// Row-major index of `coord` in `shape`.
fn flat_index(coord: &[u64], shape: &[u64]) -> usize {
    coord.iter().zip(shape).fold(0u64, |acc, (c, d)| acc * d + c) as usize
}

/// Advances a row-major coordinate.
fn step(coord: &mut [u64], shape: &[u64]) {
    for k in (0..coord.len()).rev() {
        coord[k] += 1;
        if coord[k] < shape[k] {
            return;
        }
        coord[k] = 0;
    }
}

/// A tensor converted to another element type (floats to integers truncate).
pub(crate) fn cast_tensor(t: &Tensor, dtype: ScalarType) -> LResult<Tensor> {
    let data = if dtype.is_float() {
        Data::Float(t.as_f32().ok_or("strings cannot be cast")?)
    } else if dtype == ScalarType::Bool {
        Data::Bool(t.as_f32().ok_or("strings cannot be cast")?.iter().map(|&v| v != 0.0).collect())
    } else if dtype == ScalarType::String {
        return Err(Fail::Msg("casting to string is not supported".into()));
    } else {
        Data::Int(t.as_f32().ok_or("strings cannot be cast")?.iter().map(|&v| v.trunc() as i64).collect())
    };
    Ok(Tensor { dtype, shape: t.shape.clone(), data })
}

/// The ops folded when every variable they read is a constant.
const FOLDABLE: [&str; 13] = [
    "reshape",
    "expand_dims",
    "squeeze",
    "transpose",
    "identity",
    "cast",
    "add",
    "sub",
    "mul",
    "real_div",
    "maximum",
    "minimum",
    "pow",
];

/// Folds the statement when it is foldable and reads only constants.
pub(crate) fn try_fold(cx: &mut Cx<'_, '_>) -> Option<LResult<Vec<Val>>> {
    if !FOLDABLE.contains(&cx.op()) {
        return None;
    }
    for a in &cx.stmt.inputs {
        if let Arg::Name(id) = &a.value {
            match cx.lw.env.get(&id.name) {
                Some(Val::Const(_)) => {}
                Some(Val::Poison) => return Some(Err(Fail::Poisoned)),
                _ => return None,
            }
        }
    }
    Some(fold(cx).map(|t| vec![Val::Const(Rc::new(t))]))
}

fn fold(cx: &mut Cx<'_, '_>) -> LResult<Tensor> {
    let op = cx.op();
    let out_dtype = cx.stmt.outputs.first().and_then(|o| o.ty.dtype());
    match op {
        "reshape" | "expand_dims" | "squeeze" | "identity" => {
            let x = cx.req_konst("x")?;
            let shape = super::shape::target_shape(cx, &x.shape)?;
            Ok(x.reshaped(shape))
        }
        "transpose" => {
            let x = cx.req_konst("x")?;
            let perm = super::shape::perm(cx, x.shape.len())?;
            Ok(x.permuted(&perm))
        }
        "cast" => {
            let x = cx.req_konst("x")?;
            cast_tensor(&x, out_dtype.ok_or("the op declares no tensor result")?)
        }
        _ => {
            let (a, b) = (cx.req_konst("x")?, cx.req_konst("y")?);
            fold_binary(op, &a, &b, out_dtype.unwrap_or(a.dtype))
        }
    }
}

/// `op(a, b)` with MIL broadcasting, in f32.
fn fold_binary(op: &str, a: &Tensor, b: &Tensor, dtype: ScalarType) -> LResult<Tensor> {
    let shape = broadcast_shapes(&a.shape, &b.shape)
        .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", a.shape, b.shape))?;
    let f: fn(f32, f32) -> f32 = match op {
        "add" => |x, y| x + y,
        "sub" => |x, y| x - y,
        "mul" => |x, y| x * y,
        "real_div" => |x, y| x / y,
        "maximum" => f32::max,
        "minimum" => f32::min,
        _ => f32::powf,
    };
    let (va, vb) = (floats(a, "x")?, floats(b, "y")?);
    let (sa, sb) = (promote(&a.shape, shape.len()), promote(&b.shape, shape.len()));
    let n = count(&shape).ok_or("the shape is too large")?;
    let mut out = Vec::with_capacity(n);
    let mut coord = vec![0u64; shape.len()];
    for _ in 0..n {
        let ia = flat_index(&clamp(&coord, &sa), &sa);
        let ib = flat_index(&clamp(&coord, &sb), &sb);
        out.push(f(va[ia], vb[ib]));
        step(&mut coord, &shape);
    }
    let t = Tensor::floats(dtype, shape, out);
    if dtype.is_float() {
        Ok(t)
    } else {
        cast_tensor(&t, dtype)
    }
}

/// A coordinate with broadcast (extent 1) axes pinned to 0.
fn clamp(coord: &[u64], shape: &[u64]) -> Vec<u64> {
    coord.iter().zip(shape).map(|(&c, &d)| if d == 1 { 0 } else { c }).collect()
}

/// The anec element type a weight of MIL type `source` keeps: f32 for fp32, else f16.
pub(crate) fn weight_dtype(source: ScalarType) -> DType {
    if source == ScalarType::Fp32 {
        DType::F32
    } else {
        DType::F16
    }
}

/// Little-endian bytes of `values` as `dtype` (f16 or f32).
pub(crate) fn blob(values: &[f32], dtype: DType) -> Blob {
    let bytes = match dtype {
        DType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        _ => values.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect(),
    };
    Blob { dtype: if dtype == DType::F32 { DType::F32 } else { DType::F16 }, bytes }
}

/// A per-channel parameter blob (`1 x C x 1 x 1`) of `values`.
pub(crate) fn channel_blob(values: &[f32], source: ScalarType) -> (Blob, TensorType) {
    let dtype = weight_dtype(source);
    let c = u32::try_from(values.len()).unwrap_or(u32::MAX);
    (blob(values, dtype), TensorType::nchw(1, c, 1, 1, dtype))
}

/// Emits a constant tensor as an `anec.constant` value (f16; the anec element order is
/// MIL's).
pub(crate) fn materialize(cx: &mut Cx<'_, '_>, t: &Tensor) -> LResult<Rt> {
    let values = t.as_f32().ok_or("holds strings")?;
    let ty = anec_type(&t.shape)?;
    let b = blob(&values, DType::F16);
    let id = cx.emit_with(OpCode::Constant, &[], ty, attrs([]), vec![("value", b, ty)]);
    Ok(Rt { id, ty, shape: t.shape.clone() })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn t(shape: &[u64], v: &[f32]) -> Tensor {
        Tensor::floats(ScalarType::Fp32, shape.to_vec(), v.to_vec())
    }

    #[test]
    fn folds_broadcast_binary() {
        let a = t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = t(&[2], &[10.0, 20.0]);
        let r = fold_binary("add", &a, &b, ScalarType::Fp32).map(|r| r.data);
        assert!(matches!(r, Ok(Data::Float(v)) if v == [11.0, 22.0, 13.0, 24.0]));
        let c = t(&[2, 1], &[2.0, 3.0]);
        let r = fold_binary("mul", &a, &c, ScalarType::Fp32).map(|r| r.data);
        assert!(matches!(r, Ok(Data::Float(v)) if v == [2.0, 4.0, 9.0, 12.0]));
        assert!(fold_binary("add", &a, &t(&[3], &[0.0; 3]), ScalarType::Fp32).is_err());
    }

    #[test]
    fn lut_ios18_vector_palettes() {
        // Two blocks along axis 0, 2 palette entries of vectors of 2 along axis 1.
        let indices = Tensor { dtype: ScalarType::Uint1, shape: vec![2, 1], data: Data::Int(vec![1, 0]) };
        let lut = t(&[2, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        let r = lut_ios18(&indices, &lut, Some(1), ScalarType::Fp16).map(|r| (r.shape, r.data));
        assert!(matches!(r, Ok((s, Data::Float(v))) if s == [2, 2] && v == [3.0, 4.0, 5.0, 6.0]));
    }

    #[test]
    fn lut_ios16_packed() {
        let indices = Tensor { dtype: ScalarType::Uint8, shape: vec![1], data: Data::Int(vec![0b1110_0100]) };
        let lut = t(&[4], &[0.5, 1.5, 2.5, 3.5]);
        let r = lut_ios16(&indices, &lut, &[2, 2], ScalarType::Fp16).unwrap();
        assert!(r.raw().is_some(), "an fp16 weight comes out as stored bytes");
        assert_eq!(r.as_f32().unwrap(), [0.5, 1.5, 2.5, 3.5]);
        let bad = t(&[3], &[0.0; 3]);
        assert!(lut_ios16(&indices, &bad, &[2, 2], ScalarType::Fp16).is_err());
    }

    /// Indices kept as the blob stores them expand, for every width, to what the
    /// index-by-index definition gives (widths dividing 8 take the byte-wise path).
    /// Stored fp16 values and a packed mask (both forms) expand to what the value-by-value
    /// path gives; a mask setting more or fewer elements than there are values is refused.
    #[test]
    fn sparse_from_stored_values_and_packed_masks() {
        let n = 67usize;
        let bits: Vec<u8> = (0..n.div_ceil(8) as u32).map(|i| (i.wrapping_mul(2654435761) >> 9) as u8).collect();
        let set = (0..n).filter(|&i| bits[i / 8] >> (i % 8) & 1 == 1).count();
        let values: Vec<f32> = (0..set).map(|i| i as f32 * 0.5 - 3.0).collect();
        let raw: Vec<u8> = values.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect();
        let nonzero = Tensor { dtype: ScalarType::Fp16, shape: vec![set as u64], data: Data::Raw(raw.clone().into()) };
        let mut it = values.iter();
        let want: Vec<f32> =
            (0..n).map(|i| if bits[i / 8] >> (i % 8) & 1 == 1 { *it.next().unwrap() } else { 0.0 }).collect();
        let ios16 = Tensor {
            dtype: ScalarType::Uint8,
            shape: vec![bits.len() as u64],
            data: Data::Packed(bits.clone().into()),
        };
        let r = sparse_stored(&nonzero, &ios16, Some(vec![n as i64]), ScalarType::Fp16).unwrap().unwrap();
        assert_eq!((r.shape.clone(), r.as_f32().unwrap()), (vec![n as u64], want.clone()));
        let ios18 =
            Tensor { dtype: ScalarType::Uint1, shape: vec![1, n as u64], data: Data::Packed(bits.clone().into()) };
        let r = sparse_stored(&nonzero, &ios18, None, ScalarType::Fp16).unwrap().unwrap();
        assert_eq!((r.shape.clone(), r.as_f32().unwrap()), (vec![1, n as u64], want));
        let short = Tensor { data: Data::Raw(raw[2..].to_vec().into()), ..nonzero.clone() };
        assert!(sparse_stored(&short, &ios16, Some(vec![n as i64]), ScalarType::Fp16).unwrap().is_err());
        let long = Tensor { data: Data::Raw([raw.clone(), vec![0, 0]].concat().into()), ..nonzero.clone() };
        assert!(sparse_stored(&long, &ios16, Some(vec![n as i64]), ScalarType::Fp16).unwrap().is_err());
        let inline = Tensor { dtype: ScalarType::Uint8, shape: vec![1], data: Data::Int(vec![5]) };
        assert!(
            sparse_stored(&nonzero, &inline, Some(vec![3]), ScalarType::Fp16).is_none(),
            "inline masks take the other path"
        );
    }

    #[test]
    fn lut_ios16_from_stored_indices_of_every_width() {
        let bytes: Vec<u8> = (0..40u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for nbits in 1..=8usize {
            let n = bytes.len() * 8 / nbits - 1;
            let palette: Vec<f32> = (0..1usize << nbits).map(|i| i as f32 * 0.25 - 3.0).collect();
            let indices = Tensor {
                dtype: ScalarType::Uint8,
                shape: vec![bytes.len() as u64],
                data: Data::Packed(bytes.clone().into()),
            };
            let lut = t(&[palette.len() as u64], &palette);
            let want: Vec<f32> = unpack_bits(&bytes, nbits, n, false).iter().map(|&i| palette[i as usize]).collect();
            for dtype in [ScalarType::Fp16, ScalarType::Fp32] {
                let r = lut_ios16(&indices, &lut, &[n as i64], dtype).unwrap();
                assert_eq!(r.as_f32().unwrap(), want, "{nbits} bits, {dtype}");
            }
        }
    }
}
