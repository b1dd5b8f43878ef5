//! `const` and the `constexpr_*` decompression ops (coremltools iOS16 / iOS18 definitions).
//!
//! - `constexpr_affine_dequantize(quantized_data, zero_point, scale, axis)`:
//!   `scale * (q - zero_point)`, each parameter a scalar or a vector along `axis`.
//! - `constexpr_cast(source_val, output_dtype)`: fp16 to fp32.
//! - `constexpr_lut_to_dense`: iOS16 `(indices: uint8 bytes packing log2(len(lut))-bit
//!   indices LSB first, lut, shape)`; iOS18 `(indices, lut [blocks..., palettes, vector],
//!   vector_axis?)`, one palette per block, vectors laid along `vector_axis`.
//! - `constexpr_sparse_to_dense`: iOS16 `(nonzero_data, mask: packed bits, shape)`; iOS18
//!   `(nonzero_data, mask: uint1 of the output shape)`; set bits take the next value.
//! - `constexpr_blockwise_shift_scale(data, scale, offset?)`: `scale * (data - offset)`,
//!   block sizes `data.shape / scale.shape`.
//! - `constexpr_lut_to_sparse`, `constexpr_sparse_blockwise_shift_scale`: the same on the
//!   nonzero values of a sparse tensor; two results (mask, values).
//!
//! Results take the declared element type: an fp16 result is rounded to fp16, as
//! coremltools' `astype` does (these are constants of that type, not arithmetic).

use super::args::Sx;
use super::value::{unpack_bits, Data, MTensor};
use crate::reference::kernels::{axis_index, next_coord, numel, strides};
use anec_ir::mil::ScalarType;

/// `const()[val = ...]`.
pub(crate) fn const_op(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    Ok(vec![(*sx.req("val")?).clone()])
}

/// The `constexpr_*` ops.
pub(crate) fn constexpr(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let dtype = |k: usize| sx.out_dtype(k).ok_or_else(|| format!("result {k} has no element type"));
    let typed = |values: Vec<f32>, shape: Vec<usize>, k: usize| -> Result<MTensor, String> {
        let d = dtype(k)?;
        let t = MTensor { dtype: ScalarType::Fp32, shape, data: Data::Float(values) };
        if d.is_float() {
            Ok(t.rounded_to(d))
        } else {
            t.cast(d)
        }
    };
    match sx.op() {
        "constexpr_affine_dequantize" => {
            let (v, shape) = affine(sx)?;
            Ok(vec![typed(v, shape, 0)?])
        }
        "constexpr_cast" => Ok(vec![typed(sx.x("source_val")?.data, sx.req("source_val")?.shape.clone(), 0)?]),
        "constexpr_lut_to_dense" => {
            let (v, shape) = lut_to_dense(sx)?;
            Ok(vec![typed(v, shape, 0)?])
        }
        "constexpr_sparse_to_dense" => {
            let (v, shape) = sparse_to_dense(sx)?;
            Ok(vec![typed(v, shape, 0)?])
        }
        "constexpr_blockwise_shift_scale" => {
            let data = sx.req("data")?;
            let v = shift_scale(&data.to_f32()?.data, &data.shape, sx)?;
            Ok(vec![typed(v, data.shape.clone(), 0)?])
        }
        "constexpr_lut_to_sparse" => {
            let mask = sx.req("indices_mask")?;
            let idx = dense_from_sparse(&sx.req("indices_nonzero_data")?.to_i64()?, &mask.to_i64()?)?;
            let lut = sx.req("lut")?;
            let (dense, shape) = lut_ios18(&idx, &mask.shape, &lut.to_f32()?.data, &lut.shape, sx.int("vector_axis")?)?;
            let vaxis = sx.int("vector_axis")?;
            let m = expand_mask(&mask.to_i64()?, &mask.shape, &lut.shape, vaxis)?;
            let values: Vec<f32> = dense.iter().zip(&m).filter(|(_, &b)| b != 0).map(|(&v, _)| v).collect();
            let mask_t = MTensor { dtype: ScalarType::Uint1, shape, data: Data::Int(m) };
            let n = values.len();
            Ok(vec![mask_t, typed(values, vec![n], 1)?])
        }
        "constexpr_sparse_blockwise_shift_scale" => {
            let mask = sx.req("data_mask")?;
            let bits = mask.to_i64()?;
            let nz = sx.x("nonzero_data")?.data;
            let dense: Vec<f32> = dense_from_sparse(&nz, &bits)?;
            let scaled = shift_scale(&dense, &mask.shape, sx)?;
            let values: Vec<f32> = scaled.iter().zip(&bits).filter(|(_, &b)| b != 0).map(|(&v, _)| v).collect();
            let n = values.len();
            Ok(vec![(*mask).clone(), typed(values, vec![n], 1)?])
        }
        other => Err(format!("the reference interpreter does not implement MIL op `{other}`")),
    }
}

/// `scale * (q - zero_point)` along `axis`.
fn affine(sx: &Sx<'_>) -> Result<(Vec<f32>, Vec<usize>), String> {
    let q = sx.req("quantized_data")?;
    let (zp, scale) = (sx.x("zero_point")?, sx.x("scale")?);
    let axis = axis_index(sx.int("axis")?.unwrap_or(0), q.shape.len())?;
    let extent = q.shape[axis];
    let inner = numel(&q.shape[axis + 1..])?;
    let pick = |v: &[f32], name: &str, i: usize| -> Result<f32, String> {
        match v.len() {
            1 => Ok(v[0]),
            n if n == extent => Ok(v[(i / inner.max(1)) % extent]),
            n => Err(format!("`{name}` has {n} values; expected 1 or {extent} (axis {axis})")),
        }
    };
    let data = q.to_f32()?.data;
    let out = data
        .iter()
        .enumerate()
        .map(|(i, &x)| Ok(pick(&scale.data, "scale", i)? * (x - pick(&zp.data, "zero_point", i)?)))
        .collect::<Result<Vec<f32>, String>>()?;
    Ok((out, q.shape.clone()))
}

fn lut_to_dense(sx: &Sx<'_>) -> Result<(Vec<f32>, Vec<usize>), String> {
    let indices = sx.req("indices")?;
    let lut = sx.req("lut")?;
    let table = lut.to_f32()?.data;
    if let Some(shape) = sx.ints("shape")? {
        let shape: Vec<usize> =
            shape.iter().map(|&d| usize::try_from(d).map_err(|_| "negative extent")).collect::<Result<_, _>>()?;
        let nbits = table.len().trailing_zeros() as usize;
        if !table.len().is_power_of_two() || !(1..=8).contains(&nbits) {
            return Err(format!("`lut` has {} entries; expected 2, 4, 16, 64 or 256", table.len()));
        }
        let n = numel(&shape)?;
        let bytes: Vec<u8> = indices.to_i64()?.iter().map(|&b| b as u8).collect();
        if bytes.len() * 8 < n * nbits {
            return Err(format!("`indices` holds {} bytes; {n} {nbits}-bit indices need more", bytes.len()));
        }
        let idx = unpack_bits(&bytes, nbits, n, false);
        let out = idx
            .iter()
            .map(|&i| table.get(i as usize).copied().ok_or("index outside the lut"))
            .collect::<Result<_, _>>()?;
        return Ok((out, shape));
    }
    lut_ios18(&indices.to_i64()?, &indices.shape, &table, &lut.shape, sx.int("vector_axis")?)
}

/// iOS18 palettization: per-block palettes of vectors.
fn lut_ios18(
    idx: &[i64],
    ishape: &[usize],
    table: &[f32],
    lshape: &[usize],
    vector_axis: Option<i64>,
) -> Result<(Vec<f32>, Vec<usize>), String> {
    let rank = ishape.len();
    if lshape.len() != rank + 2 {
        return Err(format!("`lut` {lshape:?} must have rank {} (indices rank + 2)", rank + 2));
    }
    let (palettes, vsize) = (lshape[rank], lshape[rank + 1]);
    let vaxis = match (vsize, vector_axis) {
        (1, _) => None,
        (_, Some(a)) => Some(axis_index(a, rank)?),
        (_, None) => return Err("`vector_axis` is required when the lut holds vectors".into()),
    };
    if (0..rank).any(|k| lshape[k] == 0 || !ishape[k].is_multiple_of(lshape[k])) {
        return Err(format!("the lut blocks {:?} do not divide the indices {ishape:?}", &lshape[..rank]));
    }
    let block: Vec<usize> = (0..rank).map(|k| ishape[k] / lshape[k]).collect();
    let mut oshape = ishape.to_vec();
    if let Some(a) = vaxis {
        oshape[a] *= vsize;
    }
    let n = numel(&oshape)?;
    let ist = strides(ishape);
    let mut out = Vec::with_capacity(n);
    let mut c = vec![0usize; rank];
    for _ in 0..n {
        let mut ic = c.clone();
        let mut vpos = 0;
        if let Some(a) = vaxis {
            (ic[a], vpos) = (c[a] / vsize, c[a] % vsize);
        }
        let flat: usize = ic.iter().zip(&ist).map(|(x, s)| x * s).sum();
        let p = usize::try_from(*idx.get(flat).ok_or("`indices` is too short")?).map_err(|_| "negative index")?;
        if p >= palettes {
            return Err(format!("index {p} exceeds the {palettes} palette entries"));
        }
        let table_no = (0..rank).fold(0usize, |acc, k| acc * lshape[k] + ic[k] / block[k]);
        out.push(*table.get((table_no * palettes + p) * vsize + vpos).ok_or("the lut is too short")?);
        next_coord(&mut c, &oshape);
    }
    Ok((out, oshape))
}

/// The mask of a vector-palettized sparse tensor: repeated `vsize` times along the axis.
fn expand_mask(mask: &[i64], mshape: &[usize], lshape: &[usize], vaxis: Option<i64>) -> Result<Vec<i64>, String> {
    let vsize = lshape.last().copied().unwrap_or(1);
    let Some(a) = vaxis.filter(|_| vsize > 1) else { return Ok(mask.to_vec()) };
    let a = axis_index(a, mshape.len())?;
    let mut oshape = mshape.to_vec();
    oshape[a] *= vsize;
    let st = strides(mshape);
    let mut out = Vec::with_capacity(numel(&oshape)?);
    let mut c = vec![0usize; oshape.len()];
    for _ in 0..numel(&oshape)? {
        let src: usize = c.iter().enumerate().map(|(k, &x)| if k == a { x / vsize } else { x } * st[k]).sum();
        out.push(*mask.get(src).ok_or("mask index")?);
        next_coord(&mut c, &oshape);
    }
    Ok(out)
}

/// A dense vector from the nonzero values and a 0/1 mask.
fn dense_from_sparse<T: Copy + Default>(nonzero: &[T], mask: &[i64]) -> Result<Vec<T>, String> {
    let mut values = nonzero.iter();
    let out = mask
        .iter()
        .map(|&b| {
            if b != 0 {
                values.next().copied().ok_or("the mask sets more elements than there are values")
            } else {
                Ok(T::default())
            }
        })
        .collect::<Result<Vec<T>, _>>()?;
    if values.next().is_some() {
        return Err("there are more values than the mask sets".into());
    }
    Ok(out)
}

fn sparse_to_dense(sx: &Sx<'_>) -> Result<(Vec<f32>, Vec<usize>), String> {
    let nonzero = sx.x("nonzero_data")?.data;
    let mask = sx.req("mask")?;
    let (bits, shape) = match sx.ints("shape")? {
        Some(shape) => {
            let shape: Vec<usize> =
                shape.iter().map(|&d| usize::try_from(d).map_err(|_| "negative extent")).collect::<Result<_, _>>()?;
            let n = numel(&shape)?;
            let bytes: Vec<u8> = mask.to_i64()?.iter().map(|&b| b as u8).collect();
            if bytes.len() * 8 < n {
                return Err(format!("`mask` holds {} bytes; {n} elements need more", bytes.len()));
            }
            (unpack_bits(&bytes, 1, n, false), shape)
        }
        None => (mask.to_i64()?, mask.shape.clone()),
    };
    Ok((dense_from_sparse(&nonzero, &bits)?, shape))
}

/// `scale * (data - offset)` blockwise, reading `scale` and `offset` from the statement.
fn shift_scale(data: &[f32], dshape: &[usize], sx: &Sx<'_>) -> Result<Vec<f32>, String> {
    let scale = sx.req("scale")?;
    let offset = sx.opt_x("offset")?;
    let rank = dshape.len();
    if scale.shape.len() != rank || offset.as_ref().is_some_and(|o| o.shape != scale.shape) {
        return Err("`scale` and `offset` must have the rank of `data` and one shape".into());
    }
    if (0..rank).any(|k| scale.shape[k] == 0 || !dshape[k].is_multiple_of(scale.shape[k])) {
        return Err(format!("scale {:?} does not divide data {dshape:?} into blocks", scale.shape));
    }
    let block: Vec<usize> = (0..rank).map(|k| dshape[k] / scale.shape[k]).collect();
    let sc = scale.to_f32()?.data;
    let sst = strides(&scale.shape);
    let mut out = Vec::with_capacity(data.len());
    let mut c = vec![0usize; rank];
    for &v in data {
        let j: usize = c.iter().zip(&block).zip(&sst).map(|((x, b), s)| x / b * s).sum();
        let off = offset.as_ref().map_or(Ok(0.0), |o| o.data.get(j).copied().ok_or("offset index"))?;
        out.push(sc.get(j).ok_or("scale index")? * (v - off));
        next_coord(&mut c, dshape);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lut_ios18_case1_from_the_coremltools_docs() {
        // indices [6, 2], lut [2, 1, 4, 1]: rows 0-2 use table 0, rows 3-5 table 1.
        let idx = [2, 3, 3, 0, 1, 0, 3, 0, 2, 1, 0, 3];
        let lut = [1., 5., 9., 13., 2., 10., 18., 26.];
        let (v, s) = lut_ios18(&idx, &[6, 2], &lut, &[2, 1, 4, 1], None).unwrap();
        assert_eq!(s, vec![6, 2]);
        assert_eq!(v, vec![9., 13., 13., 1., 5., 1., 26., 2., 18., 10., 2., 26.]);
    }

    #[test]
    fn lut_ios18_case2_vectors() {
        // indices [2, 2, 2] = [[[0, 0], [1, 0]], [[1, 1], [0, 0]]], vectors a = [1, 2, 3],
        // b = [4, 5, 6] laid along axis 2: output [2, 2, 6].
        let idx = [0, 0, 1, 0, 1, 1, 0, 0];
        let lut = [1., 2., 3., 4., 5., 6.];
        let (v, s) = lut_ios18(&idx, &[2, 2, 2], &lut, &[1, 1, 1, 2, 3], Some(2)).unwrap();
        assert_eq!(s, vec![2, 2, 6]);
        assert_eq!(v[..12], [1., 2., 3., 1., 2., 3., 4., 5., 6., 1., 2., 3.]);
        // Along axis 1: output [2, 6, 2]; the first column of batch 0 is a0 a1 a2 b0 b1 b2.
        let (v1, s1) = lut_ios18(&idx, &[2, 2, 2], &lut, &[1, 1, 1, 2, 3], Some(1)).unwrap();
        assert_eq!(s1, vec![2, 6, 2]);
        let col: Vec<f32> = (0..6).map(|r| v1[r * 2]).collect();
        assert_eq!(col, vec![1., 2., 3., 4., 5., 6.]);
        assert!(lut_ios18(&idx, &[2, 2, 2], &lut, &[1, 1, 1, 2, 3], None).is_err());
    }

    #[test]
    fn sparse_and_masks() {
        assert_eq!(dense_from_sparse(&[7., 8.], &[0, 1, 0, 1]).unwrap(), vec![0., 7., 0., 8.]);
        assert!(dense_from_sparse(&[7.], &[1, 1]).is_err());
        assert!(dense_from_sparse(&[7., 8., 9.], &[1, 1]).is_err());
        assert_eq!(expand_mask(&[1, 0], &[2, 1], &[1, 1, 2, 2], Some(0)).unwrap(), vec![1, 1, 0, 0]);
    }
}
