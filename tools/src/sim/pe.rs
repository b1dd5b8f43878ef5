//! The planar engine: elementwise add, multiply, maximum, minimum of its first two
//! operands (the second possibly negated: sub), or the square of one, or one operand
//! alone, then the BiasScale affine, then a third operand as a factor, then the absolute
//! value: `y = |(op(a, ±b) + bias) * scale * c|`, in f32, rounded to the result format when
//! the L2 result is written. Each term is present when its register says so: b with PE
//! config bit 19 (through the tile DMA, Cfg 0x33, or from L2, Cfg 0x31), c with three
//! operands (Cfg 0x41: Apple's per-channel constant, `(x + bias row) * scale row`), the
//! absolute value with bit 6.
//!
//! Apple's sum.hwx (scale 1.0, bias 0) fixes the operation. The current compiler folds a
//! scalar constant into BiasScale with the other half neutral (mul 0.5: scale 0.5; sub
//! 0.5: bias -0.5), so either order reproduces Apple's programs; the bias is taken before
//! the scale as in the NE's `(acc + bias) * scale` (docs/conformance.md). Every program
//! with a third operand or the absolute value (the three-operand records, `unary_abs`)
//! has bias 0 and scale 1, so the place of c and of the absolute value relative to
//! BiasScale is a definition, not an observation. Broadcasting is done before: a zero DRAM
//! stride repeats a source, an operand from L2 is repeated along its broadcast axes.

use super::memory::Dense;
use super::td::{PeOp, PeTask};

/// Runs the planar engine on `sources` (one to three arrays of equal dimensions).
pub fn run(pe: &PeTask, sources: &[Dense]) -> Dense {
    let Some(a) = sources.first() else { return Dense::zeros(super::memory::Dims { c: 0, d: 0, h: 0, w: 0 }) };
    let (second, third) = (sources.get(1), sources.get(2));
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
            let v = (v + pe.bias) * pe.scale * third.and_then(|c| c.data.get(i)).copied().unwrap_or(1.0);
            if pe.abs {
                v.abs()
            } else {
                v
            }
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

    fn task(op: PeOp, scale: f32, bias: f32) -> PeTask {
        PeTask { op, negate: false, abs: false, scale, bias }
    }

    #[test]
    fn ops_then_scale_and_bias() {
        let (a, b) = (dense(&[1.0, -2.0]), dense(&[3.0, 5.0]));
        let t = |op| task(op, 2.0, 0.5);
        assert_eq!(run(&t(PeOp::Add), &[a.clone(), b.clone()]).data, vec![9.0, 7.0]);
        assert_eq!(run(&t(PeOp::Mul), &[a.clone(), b.clone()]).data, vec![7.0, -19.0]);
        assert_eq!(run(&t(PeOp::Max), &[a.clone(), b.clone()]).data, vec![7.0, 11.0]);
        assert_eq!(run(&t(PeOp::Min), &[a.clone(), b.clone()]).data, vec![3.0, -3.0]);
        assert_eq!(run(&t(PeOp::Square), std::slice::from_ref(&a)).data, vec![3.0, 9.0]);
        let sub = PeTask { negate: true, ..task(PeOp::Add, 1.0, 0.0) };
        assert_eq!(run(&sub, &[a.clone(), b]).data, vec![-2.0, -7.0]);
        let affine = task(PeOp::Add, 0.5, -1.0);
        assert_eq!(run(&affine, &[a]).data, vec![0.0, -1.5]);
    }

    /// Three operands: `(a + b + bias) * scale * c` (Cfg 0x41, Apple's per-channel
    /// constant with rows [bias; scale]); abs last: `|(op(a, ±b) + bias) * scale|`.
    #[test]
    fn third_operand_scales_and_abs_comes_last() {
        let (a, b, c) = (dense(&[1.0, -2.0]), dense(&[0.5, 0.0]), dense(&[2.0, 3.0]));
        let add = task(PeOp::Add, 2.0, 1.0);
        assert_eq!(run(&add, &[a.clone(), b.clone(), c.clone()]).data, vec![10.0, -6.0]);
        let abs = PeTask { abs: true, ..add };
        assert_eq!(run(&abs, &[a.clone(), b.clone(), c]).data, vec![10.0, 6.0]);
        // unary_abs: one operand, identity BiasScale.
        let abs1 = PeTask { abs: true, ..task(PeOp::Add, 1.0, 0.0) };
        assert_eq!(run(&abs1, std::slice::from_ref(&a)).data, vec![1.0, 2.0]);
        // Sub then abs, with a bias that changes the sign: |(1 - 0.5 - 1) * 2| = 1.
        let sub = PeTask { negate: true, abs: true, ..task(PeOp::Add, 2.0, -1.0) };
        assert_eq!(run(&sub, &[a, b]).data, vec![1.0, 6.0]);
    }
}
