//! The planar engine: elementwise add, multiply, maximum, minimum of its two sources (the
//! second possibly negated: sub), or the square of one, or one source alone, then the
//! BiasScale affine: `y = (op(a, ±b) + bias) * scale`, in f32, rounded to the result
//! format when the L2 result is written.
//!
//! Apple's sum.hwx (scale 1.0, bias 0) fixes the operation. The current compiler folds a
//! scalar constant into BiasScale with the other half neutral (mul 0.5: scale 0.5; sub
//! 0.5: bias -0.5), so either order reproduces Apple's programs; the bias is taken before
//! the scale as in the NE's `(acc + bias) * scale` (docs/conformance.md). Broadcasting
//! needs no rule of its own: a zero DRAM stride repeats a source.

use super::memory::Dense;
use super::td::{PeOp, PeTask};

/// Runs the planar engine on `sources` (one or two arrays of equal dimensions).
pub fn run(pe: &PeTask, sources: &[Dense]) -> Dense {
    let Some(a) = sources.first() else { return Dense::zeros(super::memory::Dims { c: 0, d: 0, h: 0, w: 0 }) };
    let second = sources.get(1);
    let data = a
        .data
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let y = second.and_then(|b| b.data.get(i)).map(|&y| if pe.negate { -y } else { y });
            let v = match (pe.op, y) {
                (PeOp::Add, Some(y)) => x + y,
                (PeOp::Add, None) => x,
                (PeOp::Mul, y) => x * y.unwrap_or(x),
                (PeOp::Max, y) => x.max(y.unwrap_or(x)),
                (PeOp::Min, y) => x.min(y.unwrap_or(x)),
                (PeOp::Square, _) => x * x,
            };
            (v + pe.bias) * pe.scale
        })
        .collect();
    Dense { dims: a.dims, data }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::memory::Dims;

    fn dense(v: &[f32]) -> Dense {
        Dense { dims: Dims { c: v.len(), d: 1, h: 1, w: 1 }, data: v.to_vec() }
    }

    #[test]
    fn ops_then_scale_and_bias() {
        let (a, b) = (dense(&[1.0, -2.0]), dense(&[3.0, 5.0]));
        let t = |op| PeTask { op, negate: false, scale: 2.0, bias: 0.5 };
        assert_eq!(run(&t(PeOp::Add), &[a.clone(), b.clone()]).data, vec![9.0, 7.0]);
        assert_eq!(run(&t(PeOp::Mul), &[a.clone(), b.clone()]).data, vec![7.0, -19.0]);
        assert_eq!(run(&t(PeOp::Max), &[a.clone(), b.clone()]).data, vec![7.0, 11.0]);
        assert_eq!(run(&t(PeOp::Min), &[a.clone(), b.clone()]).data, vec![3.0, -3.0]);
        assert_eq!(run(&t(PeOp::Square), std::slice::from_ref(&a)).data, vec![3.0, 9.0]);
        let sub = PeTask { op: PeOp::Add, negate: true, scale: 1.0, bias: 0.0 };
        assert_eq!(run(&sub, &[a.clone(), b]).data, vec![-2.0, -7.0]);
        let affine = PeTask { op: PeOp::Add, negate: false, scale: 0.5, bias: -1.0 };
        assert_eq!(run(&affine, &[a]).data, vec![0.0, -1.5]);
    }
}
