//! Shared f32 math of the reference interpreter, on row-major [`Tensor`]s of any rank.
//!
//! Both interpreters (the anec dialect walk and the MIL walk) call these kernels; each
//! validates its arguments and returns `Err(reason)` instead of panicking, so a malformed
//! program becomes an error naming the op. Arithmetic is f32 (accumulations too); nothing
//! is rounded to fp16.
//!
//! | file | kernels |
//! |---|---|
//! | `shape.rs` | transpose, reshape, concat (plain and interleaved), strided slice, broadcast |
//! | `elementwise.rs` | numpy broadcasting of shapes, binary and unary maps |
//! | `activation.rs` | scalar activation functions (sigmoid, erf, gelu, ...) |
//! | `conv.rs` | N-D convolution with strides, pads, dilations, groups |
//! | `pool.rs` | N-D max and average pooling |
//! | `matmul.rs` | batched matrix multiply with broadcast batch axes |
//! | `norm.rs` | normalization over axes (layer / instance / group norm core) |
//! | `softmax.rs` | softmax along one axis |
//! | `reduce.rs` | sum / mean / max / min / prod over axes, argmax / argmin |

pub mod activation;
pub mod conv;
pub mod elementwise;
pub mod matmul;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod shape;
pub mod softmax;

use crate::tensor::Tensor;

/// A kernel result: the reason is a sentence fragment the caller prefixes with the op.
pub type KResult<T> = Result<T, String>;

/// The most elements a tensor may have (2^28), so a malformed shape cannot exhaust memory.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The element count of `shape`, or an error when it overflows or exceeds [`MAX_ELEMENTS`].
pub fn numel(shape: &[usize]) -> KResult<usize> {
    let n = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    match n {
        Some(n) if n <= MAX_ELEMENTS => Ok(n),
        _ => Err(format!("shape {shape:?} has more than {MAX_ELEMENTS} elements")),
    }
}

/// Row-major strides of `shape` (in elements).
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
}

/// A tensor from a shape and data whose lengths are checked.
pub fn make(shape: Vec<usize>, data: Vec<f32>) -> KResult<Tensor> {
    let n = numel(&shape)?;
    if n != data.len() {
        return Err(format!("internal: shape {shape:?} needs {n} values, got {}", data.len()));
    }
    Ok(Tensor { shape, data })
}

/// The element at flat index `i`, or an error (never a panic).
pub fn at(data: &[f32], i: usize) -> KResult<f32> {
    data.get(i).copied().ok_or_else(|| format!("internal: index {i} outside {} elements", data.len()))
}

/// Advances a row-major coordinate within `shape`; false once it wraps around.
pub fn next_coord(coord: &mut [usize], shape: &[usize]) -> bool {
    for (c, &d) in coord.iter_mut().zip(shape).rev() {
        *c += 1;
        if *c < d {
            return true;
        }
        *c = 0;
    }
    false
}

/// A possibly negative axis normalized into `0..rank`.
pub fn axis_index(axis: i64, rank: usize) -> KResult<usize> {
    let r = i64::try_from(rank).map_err(|_| "rank too large".to_string())?;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        usize::try_from(a).map_err(|_| format!("axis {axis} is out of range for rank {rank}"))
    } else {
        Err(format!("axis {axis} is out of range for rank {rank}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_and_counts() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
        assert_eq!(numel(&[2, 3, 4]), Ok(24));
        assert_eq!(numel(&[]), Ok(1));
        assert!(numel(&[1 << 20, 1 << 20]).is_err());
        assert!(make(vec![2, 2], vec![0.0; 3]).is_err());
    }

    #[test]
    fn coordinates_walk_row_major() {
        let mut c = vec![0, 0];
        let mut seen = vec![c.clone()];
        while next_coord(&mut c, &[2, 2]) {
            seen.push(c.clone());
        }
        assert_eq!(seen, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
        assert_eq!(axis_index(-1, 3), Ok(2));
        assert!(axis_index(3, 3).is_err());
        assert!(axis_index(-4, 3).is_err());
    }
}
