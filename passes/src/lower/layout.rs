//! The rank mapping: where each axis of a MIL tensor lives in the anec N, C, D, H, W type.
//!
//! | MIL rank | MIL shape | anec (N, C, D, H, W) |
//! |---|---|---|
//! | 5 | `[n, c, d, h, w]` | `n, c, d, h, w` |
//! | 4 | `[n, c, h, w]` | `n, c, 1, h, w` |
//! | 3 | `[b, s, d]` | `1, b, 1, s, d` |
//! | 2 | `[s, d]` | `1, 1, 1, s, d` |
//! | 1 | `[d]` | `1, 1, 1, 1, d` |
//! | 0 | `[]` | `1, 1, 1, 1, 1` |
//!
//! Ranks up to 4 are aligned at the last axis, which lands on W: Apple's mapping (its
//! tensor descriptors of a `[64, 256]` input are `[1, 1, 64, 256]`). The anec row-major
//! element order is MIL's for every rank, so a reshape never reorders data; a linear layer,
//! whose features sit on W, is a convolution between two channel <-> width transposes
//! (Apple's preparation task and transposed write, `linear.rs`).

use anec_ir::{DType, TensorType};

/// Batch axis index.
pub(crate) const N: usize = 0;
/// Channel axis index.
pub(crate) const C: usize = 1;
/// Depth axis index.
pub(crate) const D: usize = 2;
/// Height axis index.
pub(crate) const H: usize = 3;
/// Width axis index.
pub(crate) const W: usize = 4;

/// Axis names of the anec dialect, in N, C, D, H, W order.
pub(crate) const AXIS_NAMES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

/// The largest rank the mapping covers.
pub(crate) const MAX_RANK: usize = 5;

/// The most elements a runtime tensor may have (2^40, far beyond any engine buffer), so
/// element counts never overflow.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 40;

/// The element count of a shape, `None` on overflow.
pub(crate) fn elements(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// For each MIL axis of a tensor of `rank`, the anec axis it maps to.
pub(crate) fn axis_map(rank: usize) -> Option<&'static [usize]> {
    const MAPS: [&[usize]; 6] = [&[], &[W], &[H, W], &[C, H, W], &[N, C, H, W], &[N, C, D, H, W]];
    MAPS.get(rank).copied()
}

/// The anec axis of MIL axis `axis` (already normalized) of a tensor of `rank`.
pub(crate) fn anec_axis(rank: usize, axis: usize) -> Option<usize> {
    axis_map(rank)?.get(axis).copied()
}

/// A possibly negative MIL axis as an index into a shape of `rank`.
pub(crate) fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// The anec extents of a MIL shape.
pub(crate) fn anec_dims(shape: &[u64]) -> Result<[u32; 5], String> {
    let Some(map) = axis_map(shape.len()) else {
        return Err(format!("rank {} is not supported (the engine has at most {MAX_RANK} axes)", shape.len()));
    };
    if elements(shape).is_none_or(|n| n > MAX_ELEMENTS) {
        return Err(format!("shape {shape:?} has more than {MAX_ELEMENTS} elements"));
    }
    let mut dims = [1u32; 5];
    for (&extent, &axis) in shape.iter().zip(map) {
        dims[axis] = u32::try_from(extent).map_err(|_| format!("extent {extent} does not fit 32 bits"))?;
        if extent == 0 {
            return Err(format!("shape {shape:?} has an empty axis"));
        }
    }
    Ok(dims)
}

/// The anec type (f16) of a MIL shape.
pub(crate) fn anec_type(shape: &[u64]) -> Result<TensorType, String> {
    dims_type(anec_dims(shape)?, DType::F16)
}

/// A type from N, C, D, H, W extents.
pub(crate) fn dims_type(d: [u32; 5], dtype: DType) -> Result<TensorType, String> {
    let [n, c, d, h, w] = d;
    Ok(TensorType { n, c, d, h, w, dtype })
}

/// The extents of a type in N, C, D, H, W order.
pub(crate) fn dims_of(t: &TensorType) -> [u32; 5] {
    [t.n, t.c, t.d, t.h, t.w]
}

/// For axes listed in MIL order with their anec axes `anec`, the permutation that lists
/// them in anec order (position `i` of the result takes listed axis `order[i]`).
pub(crate) fn anec_order_of(anec: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..anec.len()).collect();
    order.sort_by_key(|&i| anec[i]);
    order
}

/// Row-major `data` of `shape` transposed so that output axis `i` is input axis `perm[i]`.
pub(crate) fn permute<T: Clone>(data: &[T], shape: &[u64], perm: &[usize]) -> Vec<T> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return data.to_vec();
    }
    let rank = shape.len();
    let mut strides = vec![1u64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<u64> = perm.iter().map(|&p| shape[p]).collect();
    let out_strides: Vec<u64> = perm.iter().map(|&p| strides[p]).collect();
    let mut out = Vec::with_capacity(data.len());
    let mut idx = vec![0u64; rank];
    for _ in 0..data.len() {
        let src: u64 = idx.iter().zip(&out_strides).map(|(i, s)| i * s).sum();
        if let Some(v) = data.get(src as usize) {
            out.push(v.clone());
        }
        for k in (0..rank).rev() {
            idx[k] += 1;
            if idx[k] < out_shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The MIL broadcast of two shapes (aligned at the last axis), if compatible.
pub(crate) fn broadcast_shapes(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let rank = a.len().max(b.len());
    let at = |s: &[u64], i: usize| if i + s.len() >= rank { s[i + s.len() - rank] } else { 1 };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// `shape` with leading 1s up to `rank`.
pub(crate) fn promote(shape: &[u64], rank: usize) -> Vec<u64> {
    let mut out = vec![1; rank.saturating_sub(shape.len())];
    out.extend_from_slice(shape);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ranks_align_at_the_last_axis_on_width() {
        assert_eq!(anec_dims(&[2, 5, 7]), Ok([1, 2, 1, 5, 7]));
        assert_eq!(anec_dims(&[5, 7]), Ok([1, 1, 1, 5, 7]));
        assert_eq!(anec_dims(&[7]), Ok([1, 1, 1, 1, 7]));
        assert_eq!(anec_dims(&[]), Ok([1; 5]));
        assert_eq!(anec_dims(&[1, 3, 4, 5]), Ok([1, 3, 1, 4, 5]));
        assert_eq!(anec_dims(&[1, 3, 2, 4, 5]), Ok([1, 3, 2, 4, 5]));
        assert!(anec_dims(&[1, 1, 1, 1, 1, 1]).unwrap_err().contains("rank 6"));
        assert!(anec_dims(&[1 << 33]).unwrap_err().contains("32 bits"));
    }

    #[test]
    fn permute_three_axes() {
        let data: Vec<u32> = (0..24).collect();
        let out = permute(&data, &[2, 3, 4], &[2, 0, 1]);
        // out[k][i][j] = in[i][j][k]
        assert_eq!(out[0..6], [0, 4, 8, 12, 16, 20]);
        assert_eq!(out[6], 1);
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[1, 8, 28, 28], &[8, 1, 1]), Some(vec![1, 8, 28, 28]));
        assert_eq!(broadcast_shapes(&[4, 1], &[3]), Some(vec![4, 3]));
        assert_eq!(broadcast_shapes(&[4, 2], &[3]), None);
        assert_eq!(normalize_axis(-1, 3), Some(2));
        assert_eq!(normalize_axis(3, 3), None);
        assert_eq!(promote(&[5], 3), vec![1, 1, 5]);
    }
}
