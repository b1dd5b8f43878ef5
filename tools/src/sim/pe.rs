//! The planar engine: elementwise add, multiply, maximum, minimum of its first two
//! operands (the second possibly negated: sub), or the square of one, or one operand
//! alone, then the BiasScale affine, then a third operand as a factor, then the absolute
//! value: `y = |(op(a, ±b) + bias) * scale * c|`, in f32, rounded to the result format when
//! the L2 result is written. Each term is present when its register says so: b with PE
//! config bit 19 (through the tile DMA, Cfg 0x33, or from L2, Cfg 0x31), c with three
//! operands (Cfg 0x41: Apple's per-channel constant, `(x + bias row) * scale row`), the
//! absolute value with bit 6, or instead a ReLU (bit 5: Apple's `chain_add_relu_c512`,
//! an add and the ReLU after it in one task).
//!
//! Apple's sum.hwx (scale 1.0, bias 0) fixes the operation. The current compiler folds a
//! scalar constant into BiasScale with the other half neutral (mul 0.5: scale 0.5; sub
//! 0.5: bias -0.5), so either order reproduces Apple's programs; the bias is taken before
//! the scale as in the NE's `(acc + bias) * scale` (docs/conformance.md). Every program
//! with a third operand or the absolute value (the three-operand records, `unary_abs`)
//! has bias 0 and scale 1, so the place of c and of the absolute value relative to
//! BiasScale is a definition, not an observation. Broadcasting is done before: a zero DRAM
//! stride repeats a source, an operand from L2 is repeated along its broadcast axes.
//!
//! The reduction (Common.Cfg 0x51) combines every element of a channel (over depth, then
//! rows, then columns; a sum accumulates in f32 in that order), then applies BiasScale
//! and the fp32 final scale: `y[c] = post((op(u[c, ..]) + bias) * scale * final + eps)`.
//! Each element is `u = x`, or with a second operand (Cfg 0x61: the layer norms'
//! variance) `u = ±a + b`, squared with word 0x22c bit 4; `post` is the reciprocal (bit
//! 12, softmax's denominator) or the reciprocal square root (bit 13, the layer norms'
//! rstd), exact in f32; `eps` the low half of word 0x234 (with rsqrt only). The order
//! follows the layer norms' rstd: `rsqrt(sum((x - mean)^2) / N + eps)` needs the square
//! before the sum, the final scale 1/N and the epsilon before the rsqrt; the reciprocal
//! takes the same place. Every reduction of the corpus has bias 0 and scale 1, so the
//! place of BiasScale is a definition. The engine's reciprocal and rsqrt are
//! approximations whose error is not known: the simulator's are the f32 operations.

use super::memory::{Dense, Dims};
use super::td::{PeOp, PeReduce, PeTask, PostOp, ReduceOp};

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
            match (pe.abs, pe.relu) {
                (true, _) => v.abs(),
                (false, true) => v.max(0.0),
                (false, false) => v,
            }
        })
        .collect();
    Dense { dims: a.dims, data }
}

/// Runs the planar engine's reduction on `inputs` (the first source, and with Cfg 0x61
/// the second operand, both of the view's dimensions): one value per channel,
/// `C x 1 x 1`.
pub fn reduce(p: &PeReduce, inputs: &[Dense]) -> Dense {
    let Some(x) = inputs.first() else { return Dense::zeros(Dims { c: 0, d: 0, h: 0, w: 0 }) };
    let second = inputs.get(1);
    let n = x.dims.d * x.dims.h * x.dims.w;
    let dims = Dims { c: x.dims.c, d: 1, h: 1, w: 1 };
    let element = |i: usize| {
        let a = x.data.get(i).copied().unwrap_or(0.0);
        let u = if p.negate1 { -a } else { a } + second.and_then(|b| b.data.get(i)).copied().unwrap_or(0.0);
        if p.square {
            u * u
        } else {
            u
        }
    };
    let data = (0..x.dims.c)
        .map(|c| {
            let values = (c * n..(c + 1) * n).map(element);
            let v = match p.op {
                ReduceOp::Sum => values.sum(),
                ReduceOp::Max => values.fold(f32::NEG_INFINITY, f32::max),
                ReduceOp::Min => values.fold(f32::INFINITY, f32::min),
            };
            let v = (v + p.bias) * p.scale * p.final_scale + p.epsilon;
            match p.post {
                PostOp::None => v,
                PostOp::Reciprocal => 1.0 / v,
                PostOp::Rsqrt => 1.0 / v.sqrt(),
            }
        })
        .collect();
    Dense { dims, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(v: &[f32]) -> Dense {
        Dense { dims: Dims { c: v.len(), d: 1, h: 1, w: 1 }, data: v.to_vec() }
    }

    fn task(op: PeOp, scale: f32, bias: f32) -> PeTask {
        PeTask { op, negate: false, abs: false, relu: false, scale, bias }
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

#[cfg(test)]
mod reduce_tests {
    use super::*;

    fn reduction(op: ReduceOp, final_scale: f32) -> PeReduce {
        PeReduce::plain(op, final_scale)
    }

    /// 2 channels of 2 depth slices of 2 x 3: channel 0 holds -5..6, channel 1
    /// -(d + h + w) / 2.
    fn x() -> Dense {
        let dims = Dims { c: 2, d: 2, h: 2, w: 3 };
        let v = |c, d, h, w| if c == 0 { (6 * d + 3 * h + w) as f32 - 5.0 } else { -((d + h + w) as f32) * 0.5 };
        Dense { dims, data: Dense::coords(dims).map(|(c, d, h, w)| v(c, d, h, w)).collect() }
    }

    /// Every element of a channel is combined: over depth slices, rows and columns.
    #[test]
    fn sum_mean_max_min_over_depth_rows_and_columns() {
        let run = |op, s| reduce(&reduction(op, s), &[x()]).data;
        // Channel 1: -(sum over d, h, w of d + h + w) / 2 = -(6 + 6 + 12) / 2.
        assert_eq!(run(ReduceOp::Sum, 1.0), vec![6.0, -12.0]);
        assert_eq!(run(ReduceOp::Sum, 0.25), vec![1.5, -3.0]);
        assert_eq!(run(ReduceOp::Max, 1.0), vec![6.0, 0.0]);
        assert_eq!(run(ReduceOp::Min, 1.0), vec![-5.0, -2.0]);
        assert_eq!(reduce(&reduction(ReduceOp::Sum, 1.0), &[x()]).dims, Dims { c: 2, d: 1, h: 1, w: 1 });
    }

    /// BiasScale before the final scale: `(op + bias) * scale * final`; the post-op of all
    /// that (and the epsilon) last.
    #[test]
    fn bias_scale_then_the_final_scale_then_the_post_op() {
        let p = PeReduce { bias: 1.0, scale: 2.0, final_scale: 0.25, ..reduction(ReduceOp::Max, 1.0) };
        assert_eq!(reduce(&p, &[x()]).data, vec![3.5, 0.5]);
        let inv = PeReduce { post: PostOp::Reciprocal, ..p };
        assert_eq!(reduce(&inv, &[x()]).data, vec![1.0 / 3.5, 2.0]);
        let sum = PeReduce { post: PostOp::Reciprocal, ..reduction(ReduceOp::Sum, 1.0) };
        assert_eq!(reduce(&sum, &[x()]).data, vec![1.0 / 6.0, -1.0 / 12.0]);
        let rsqrt = PeReduce { post: PostOp::Rsqrt, epsilon: 1.0, ..reduction(ReduceOp::Sum, 0.5) };
        assert_eq!(reduce(&rsqrt, &[x()]).data[0], 0.5);
    }

    /// Two operands (Cfg 0x61): `rsqrt(sum((-a + b)^2) / N + eps)`, the layer norms'
    /// variance with a = the mean broadcast, b = x.
    #[test]
    fn two_operands_negate_the_first_and_square() {
        let b = x();
        let mean = Dense {
            dims: b.dims,
            data: b.data.iter().enumerate().map(|(i, _)| if i < 12 { 0.5 } else { -1.0 }).collect(),
        };
        let p = PeReduce {
            negate1: true,
            square: true,
            post: PostOp::Rsqrt,
            epsilon: 0.5,
            ..reduction(ReduceOp::Sum, 1.0 / 12.0)
        };
        let got = reduce(&p, &[mean.clone(), b.clone()]).data;
        for (c, g) in got.iter().enumerate() {
            let m = mean.data[c * 12];
            let var: f32 = b.data[c * 12..(c + 1) * 12].iter().map(|v| (v - m) * (v - m)).sum::<f32>() / 12.0;
            assert!((g - 1.0 / (var + 0.5).sqrt()).abs() < 1e-6, "channel {c}: {g}");
        }
    }
}
