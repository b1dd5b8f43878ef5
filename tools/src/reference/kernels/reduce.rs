//! Reductions over a set of axes, keeping them with extent 1, and arg-reductions along one
//! axis.

use super::shape::check;
use super::{at, make, next_coord, numel, strides, KResult};
use crate::tensor::Tensor;

/// How the elements of a reduced group combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    /// Sum.
    Sum,
    /// Arithmetic mean.
    Mean,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Product.
    Prod,
}

impl Reduce {
    /// The kind of an `anec.reduction` or the stem of a MIL `reduce_*` op.
    pub fn from_name(name: &str) -> Option<Reduce> {
        match name {
            "sum" => Some(Reduce::Sum),
            "mean" => Some(Reduce::Mean),
            "max" => Some(Reduce::Max),
            "min" => Some(Reduce::Min),
            "prod" => Some(Reduce::Prod),
            _ => None,
        }
    }
}

/// Reduces `x` over `axes` (distinct, in range); the result keeps them with extent 1.
pub fn reduce(x: &Tensor, axes: &[usize], kind: Reduce) -> KResult<Tensor> {
    check(x)?;
    let rank = x.shape.len();
    if axes.iter().any(|&a| a >= rank) || (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(format!("axes {axes:?} are not distinct axes of {:?}", x.shape));
    }
    let out_shape: Vec<usize> =
        x.shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
    let red_shape: Vec<usize> = axes.iter().map(|&a| x.shape[a]).collect();
    let count = numel(&red_shape)?;
    if count == 0 {
        return Err(format!("cannot reduce over the empty axes of {:?}", x.shape));
    }
    let st = strides(&x.shape);
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    let mut oc = vec![0usize; rank];
    loop {
        let base: usize = oc.iter().zip(&st).map(|(c, s)| c * s).sum();
        let mut rc = vec![0usize; red_shape.len()];
        let mut acc = match kind {
            Reduce::Sum | Reduce::Mean => 0.0f32,
            Reduce::Prod => 1.0,
            Reduce::Max => f32::NEG_INFINITY,
            Reduce::Min => f32::INFINITY,
        };
        loop {
            let off: usize = rc.iter().zip(axes).map(|(c, &a)| c * st[a]).sum();
            let v = at(&x.data, base + off)?;
            acc = match kind {
                Reduce::Sum | Reduce::Mean => acc + v,
                Reduce::Prod => acc * v,
                Reduce::Max => acc.max(v),
                Reduce::Min => acc.min(v),
            };
            if !next_coord(&mut rc, &red_shape) {
                break;
            }
        }
        out.push(if kind == Reduce::Mean { acc / count as f32 } else { acc });
        if out_shape.contains(&0) || !next_coord(&mut oc, &out_shape) {
            break;
        }
    }
    make(out_shape, out)
}

/// The index of the largest (`max`) or smallest value along `axis` (first on ties); the
/// result keeps the axis with extent 1.
pub fn arg_reduce(x: &Tensor, axis: usize, max: bool) -> KResult<Tensor> {
    check(x)?;
    let n = *x.shape.get(axis).ok_or_else(|| format!("axis {axis} is out of range for {:?}", x.shape))?;
    if n == 0 {
        return Err("cannot take the argument of an empty axis".into());
    }
    let outer = numel(&x.shape[..axis])?;
    let inner = numel(&x.shape[axis + 1..])?;
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let (mut best, mut bi) = (at(&x.data, o * n * inner + i)?, 0usize);
            for k in 1..n {
                let v = at(&x.data, (o * n + k) * inner + i)?;
                if (max && v > best) || (!max && v < best) {
                    (best, bi) = (v, k);
                }
            }
            out.push(bi as f32);
        }
    }
    let mut shape = x.shape.clone();
    shape[axis] = 1;
    make(shape, out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn m() -> Tensor {
        // [[1, 5, 3], [4, 2, 6]].
        Tensor { shape: vec![2, 3], data: vec![1., 5., 3., 4., 2., 6.] }
    }

    #[test]
    fn reduces_each_axis() {
        assert_eq!(reduce(&m(), &[1], Reduce::Sum).unwrap().data, vec![9., 12.]);
        assert_eq!(reduce(&m(), &[0], Reduce::Max).unwrap().data, vec![4., 5., 6.]);
        assert_eq!(reduce(&m(), &[0, 1], Reduce::Mean).unwrap().data, vec![3.5]);
        assert_eq!(reduce(&m(), &[1], Reduce::Min).unwrap().data, vec![1., 2.]);
        assert_eq!(reduce(&m(), &[0], Reduce::Prod).unwrap().data, vec![4., 10., 18.]);
        assert_eq!(reduce(&m(), &[1], Reduce::Sum).unwrap().shape, vec![2, 1]);
        assert!(reduce(&m(), &[2], Reduce::Sum).is_err());
    }

    #[test]
    fn argmax_and_argmin() {
        assert_eq!(arg_reduce(&m(), 1, true).unwrap().data, vec![1., 2.]);
        assert_eq!(arg_reduce(&m(), 0, false).unwrap().data, vec![0., 1., 0.]);
    }
}
