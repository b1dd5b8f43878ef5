//! Data movement: transpose, reshape, concat, strided slice, broadcast.

use super::{at, make, next_coord, numel, strides, KResult};
use crate::tensor::Tensor;

/// Checks that `data` matches `shape`.
pub fn check(t: &Tensor) -> KResult<()> {
    if numel(&t.shape)? == t.data.len() {
        Ok(())
    } else {
        Err(format!("a tensor of shape {:?} holds {} values", t.shape, t.data.len()))
    }
}

/// `x` permuted so that output axis `i` is input axis `perm[i]`.
pub fn transpose(x: &Tensor, perm: &[usize]) -> KResult<Tensor> {
    check(x)?;
    let rank = x.shape.len();
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..rank).collect::<Vec<_>>() {
        return Err(format!("{perm:?} is not a permutation of the {rank} axes of {:?}", x.shape));
    }
    let in_strides = strides(&x.shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    let src_strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let mut out = Vec::with_capacity(x.data.len());
    if !x.data.is_empty() {
        let mut coord = vec![0usize; rank];
        loop {
            let src: usize = coord.iter().zip(&src_strides).map(|(c, s)| c * s).sum();
            out.push(at(&x.data, src)?);
            if !next_coord(&mut coord, &out_shape) {
                break;
            }
        }
    }
    make(out_shape, out)
}

/// The same data under `shape` (element counts must agree).
pub fn reshape(x: &Tensor, shape: &[usize]) -> KResult<Tensor> {
    check(x)?;
    if numel(shape)? != x.data.len() {
        return Err(format!("cannot reshape {:?} ({} elements) to {shape:?}", x.shape, x.data.len()));
    }
    Ok(Tensor { shape: shape.to_vec(), data: x.data.clone() })
}

/// Splits a shape around `axis` into (outer count, extent, inner count).
fn around(shape: &[usize], axis: usize) -> KResult<(usize, usize, usize)> {
    let extent = *shape.get(axis).ok_or_else(|| format!("axis {axis} is out of range for {shape:?}"))?;
    Ok((numel(&shape[..axis])?, extent, numel(&shape[axis + 1..])?))
}

/// Concatenation along `axis`; every other axis must agree.
pub fn concat(parts: &[&Tensor], axis: usize) -> KResult<Tensor> {
    let first = parts.first().ok_or("nothing to concatenate")?;
    let rank = first.shape.len();
    let mut out_shape = first.shape.clone();
    let mut total = 0usize;
    for p in parts {
        check(p)?;
        let same = p.shape.len() == rank
            && p.shape.iter().zip(&first.shape).enumerate().all(|(i, (a, b))| i == axis || a == b);
        if !same || axis >= rank {
            return Err(format!("shapes {:?} and {:?} differ outside axis {axis}", first.shape, p.shape));
        }
        total += p.shape[axis];
    }
    out_shape[axis] = total;
    let (outer, _, inner) = around(&first.shape, axis)?;
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    for o in 0..outer {
        for p in parts {
            let chunk = p.shape[axis] * inner;
            let slice = p.data.get(o * chunk..(o + 1) * chunk).ok_or("internal: concat chunk out of range")?;
            out.extend_from_slice(slice);
        }
    }
    make(out_shape, out)
}

/// Interleaved concatenation along `axis` (MIL `interleave = true`): equal shapes, the
/// result takes index 0 of every part, then index 1 of every part, and so on.
pub fn interleave(parts: &[&Tensor], axis: usize) -> KResult<Tensor> {
    let first = parts.first().ok_or("nothing to concatenate")?;
    if parts.iter().any(|p| p.shape != first.shape) {
        return Err("interleaved concatenation needs inputs of one shape".into());
    }
    let (outer, extent, inner) = around(&first.shape, axis)?;
    let mut out_shape = first.shape.clone();
    out_shape[axis] = extent * parts.len();
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    for o in 0..outer {
        for e in 0..extent {
            for p in parts {
                check(p)?;
                let start = (o * extent + e) * inner;
                out.extend_from_slice(p.data.get(start..start + inner).ok_or("internal: interleave out of range")?);
            }
        }
    }
    make(out_shape, out)
}

/// One axis of a strided slice: `count` elements at `start + i * step` (step may be
/// negative; every index must fall inside the axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First index.
    pub start: i64,
    /// Number of elements taken.
    pub count: usize,
    /// Distance between taken elements (non-zero).
    pub step: i64,
}

impl Window {
    /// The whole axis of extent `n`.
    pub fn all(n: usize) -> Window {
        Window { start: 0, count: n, step: 1 }
    }
}

/// Strided slice with one [`Window`] per axis.
pub fn slice(x: &Tensor, windows: &[Window]) -> KResult<Tensor> {
    check(x)?;
    if windows.len() != x.shape.len() {
        return Err(format!("{} windows for the {} axes of {:?}", windows.len(), x.shape.len(), x.shape));
    }
    for (k, w) in windows.iter().enumerate() {
        let n = i64::try_from(x.shape[k]).map_err(|_| "extent too large")?;
        let last = i64::try_from(w.count).map_err(|_| "count too large")?.saturating_sub(1).saturating_mul(w.step);
        let end = w.start.saturating_add(last);
        if w.step == 0 || (w.count > 0 && !((0..n).contains(&w.start) && (0..n).contains(&end))) {
            return Err(format!(
                "axis {k}: window start {} step {} count {} leaves the extent {n}",
                w.start, w.step, w.count
            ));
        }
    }
    let out_shape: Vec<usize> = windows.iter().map(|w| w.count).collect();
    let st = strides(&x.shape);
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    if out_shape.iter().all(|&d| d > 0) {
        let mut coord = vec![0usize; out_shape.len()];
        loop {
            let mut src = 0i64;
            for ((c, w), s) in coord.iter().zip(windows).zip(&st) {
                src += (w.start + *c as i64 * w.step) * *s as i64;
            }
            out.push(at(&x.data, usize::try_from(src).map_err(|_| "internal: negative index")?)?);
            if !next_coord(&mut coord, &out_shape) {
                break;
            }
        }
    }
    make(out_shape, out)
}

/// `x` broadcast to `shape` with numpy rules (ranks aligned at the last axis; an axis of
/// extent 1 stretches).
pub fn broadcast_to(x: &Tensor, shape: &[usize]) -> KResult<Tensor> {
    check(x)?;
    let rank = shape.len();
    if x.shape.len() > rank {
        return Err(format!("cannot broadcast {:?} to the lower rank {shape:?}", x.shape));
    }
    let mut src_shape = vec![1usize; rank - x.shape.len()];
    src_shape.extend_from_slice(&x.shape);
    for (a, b) in src_shape.iter().zip(shape) {
        if a != b && *a != 1 {
            return Err(format!("cannot broadcast {:?} to {shape:?}", x.shape));
        }
    }
    let st = strides(&src_shape);
    let eff: Vec<usize> = st.iter().zip(&src_shape).map(|(&s, &d)| if d == 1 { 0 } else { s }).collect();
    let mut out = Vec::with_capacity(numel(shape)?);
    if shape.iter().all(|&d| d > 0) {
        let mut coord = vec![0usize; rank];
        loop {
            let src: usize = coord.iter().zip(&eff).map(|(c, s)| c * s).sum();
            out.push(at(&x.data, src)?);
            if !next_coord(&mut coord, shape) {
                break;
            }
        }
    }
    make(shape.to_vec(), out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t(shape: &[usize], data: &[f32]) -> Tensor {
        Tensor { shape: shape.to_vec(), data: data.to_vec() }
    }

    #[test]
    fn transpose_moves_elements() {
        // [[1, 2, 3], [4, 5, 6]] transposed is [[1, 4], [2, 5], [3, 6]].
        let x = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let y = transpose(&x, &[1, 0]).unwrap();
        assert_eq!(y.shape, vec![3, 2]);
        assert_eq!(y.data, vec![1., 4., 2., 5., 3., 6.]);
        assert!(transpose(&x, &[0, 0]).is_err());
        // Rank 3: out[k][i][j] = in[i][j][k] for a 1x2x2 input.
        let z = transpose(&t(&[1, 2, 2], &[1., 2., 3., 4.]), &[2, 0, 1]).unwrap();
        assert_eq!(z.shape, vec![2, 1, 2]);
        assert_eq!(z.data, vec![1., 3., 2., 4.]);
    }

    #[test]
    fn concat_and_interleave() {
        let a = t(&[2, 1], &[1., 2.]);
        let b = t(&[2, 2], &[3., 4., 5., 6.]);
        let c = concat(&[&a, &b], 1).unwrap();
        assert_eq!(c.shape, vec![2, 3]);
        assert_eq!(c.data, vec![1., 3., 4., 2., 5., 6.]);
        assert!(concat(&[&a, &b], 0).is_err());
        let x1 = t(&[2, 2], &[1., 2., 3., 4.]);
        let x2 = t(&[2, 2], &[5., 6., 7., 8.]);
        let i = interleave(&[&x1, &x2], 0).unwrap();
        assert_eq!(i.data, vec![1., 2., 5., 6., 3., 4., 7., 8.]);
    }

    #[test]
    fn strided_slices() {
        let x = t(&[5], &[0., 1., 2., 3., 4.]);
        let y = slice(&x, &[Window { start: 1, count: 2, step: 2 }]).unwrap();
        assert_eq!(y.data, vec![1., 3.]);
        let r = slice(&x, &[Window { start: 4, count: 3, step: -2 }]).unwrap();
        assert_eq!(r.data, vec![4., 2., 0.]);
        assert!(slice(&x, &[Window { start: 3, count: 3, step: 1 }]).is_err());
        let m = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let col = slice(&m, &[Window::all(2), Window { start: 2, count: 1, step: 1 }]).unwrap();
        assert_eq!(col.data, vec![3., 6.]);
    }

    #[test]
    fn broadcasting() {
        let x = t(&[2, 1], &[1., 2.]);
        let y = broadcast_to(&x, &[3, 2, 2]).unwrap();
        assert_eq!(y.data, vec![1., 1., 2., 2., 1., 1., 2., 2., 1., 1., 2., 2.]);
        assert!(broadcast_to(&t(&[2], &[1., 2.]), &[3]).is_err());
        assert!(reshape(&x, &[3]).is_err());
        assert_eq!(reshape(&x, &[1, 2]).unwrap().shape, vec![1, 2]);
    }
}
