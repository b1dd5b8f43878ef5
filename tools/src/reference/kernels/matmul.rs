//! Batched matrix multiply: `a [..., M, K] x b [..., K, N] -> [..., M, N]`, the batch axes
//! broadcast with numpy rules. Sums accumulate in f32 in order of `k`.

use super::elementwise::broadcast_shapes;
use super::shape::{broadcast_to, check};
use super::{at, make, numel, KResult};
use crate::tensor::Tensor;

/// `a x b` over the last two axes of each (both of rank >= 2).
pub fn matmul(a: &Tensor, b: &Tensor) -> KResult<Tensor> {
    check(a)?;
    check(b)?;
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra < 2 || rb < 2 {
        return Err(format!("matmul needs rank >= 2 operands, got {:?} and {:?}", a.shape, b.shape));
    }
    let (m, k) = (a.shape[ra - 2], a.shape[ra - 1]);
    let (k2, n) = (b.shape[rb - 2], b.shape[rb - 1]);
    if k != k2 {
        return Err(format!("inner dimensions differ: {:?} x {:?}", a.shape, b.shape));
    }
    let batch = broadcast_shapes(&a.shape[..ra - 2], &b.shape[..rb - 2])?;
    let full = |t: &Tensor, r: usize| -> KResult<Tensor> {
        let mut s = batch.clone();
        s.extend_from_slice(&t.shape[r - 2..]);
        if s == t.shape {
            Ok(t.clone())
        } else {
            broadcast_to(t, &s)
        }
    };
    let (a, b) = (full(a, ra)?, full(b, rb)?);
    let count = numel(&batch)?;
    let mut out_shape = batch.clone();
    out_shape.extend_from_slice(&[m, n]);
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    for p in 0..count {
        let (abase, bbase) = (p * m * k, p * k * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for q in 0..k {
                    acc += at(&a.data, abase + i * k + q)? * at(&b.data, bbase + q * n + j)?;
                }
                out.push(acc);
            }
        }
    }
    make(out_shape, out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn two_by_two() {
        // [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
        let a = Tensor { shape: vec![2, 2], data: vec![1., 2., 3., 4.] };
        let b = Tensor { shape: vec![2, 2], data: vec![5., 6., 7., 8.] };
        assert_eq!(matmul(&a, &b).unwrap().data, vec![19., 22., 43., 50.]);
    }

    #[test]
    fn batch_broadcast() {
        // Two batches of a 1x2 row times one shared 2x1 column.
        let a = Tensor { shape: vec![2, 1, 2], data: vec![1., 2., 3., 4.] };
        let b = Tensor { shape: vec![2, 1], data: vec![10., 1.] };
        let c = matmul(&a, &b).unwrap();
        assert_eq!(c.shape, vec![2, 1, 1]);
        assert_eq!(c.data, vec![12., 34.]);
        let bad = Tensor { shape: vec![3, 1], data: vec![0.; 3] };
        assert!(matmul(&a, &bad).is_err());
    }
}
