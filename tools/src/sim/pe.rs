//! The planar engine: elementwise add, multiply, maximum, minimum of its two sources (or
//! the square of one), then the BiasScale affine: `y = op(a, b) * scale + bias`, in f32,
//! rounded to the result format when the L2 result is written.
//!
//! Apple's sum.hwx (scale 1.0, bias 0) fixes the operation; where the scale and bias
//! apply is inferred (our encoder writes the netplist's `Scale` into the high half and
//! no bias). Broadcasting needs no rule of its own: a zero DRAM stride repeats a source.

use super::memory::Dense;
use super::td::{PeOp, PeTask};

/// Runs the planar engine on `sources` (one or two arrays of equal dimensions).
pub fn run(pe: &PeTask, sources: &[Dense]) -> Dense {
    let Some(a) = sources.first() else { return Dense::zeros(super::memory::Dims { c: 0, d: 0, h: 0, w: 0 }) };
    let b = sources.get(1).unwrap_or(a);
    let data = a
        .data
        .iter()
        .zip(&b.data)
        .map(|(&x, &y)| {
            let v = match pe.op {
                PeOp::Add => x + y,
                PeOp::Mul => x * y,
                PeOp::Max => x.max(y),
                PeOp::Min => x.min(y),
                PeOp::Square => x * x,
            };
            v * pe.scale + pe.bias
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
        let t = |op| PeTask { op, scale: 2.0, bias: 0.5 };
        assert_eq!(run(&t(PeOp::Add), &[a.clone(), b.clone()]).data, vec![8.5, 6.5]);
        assert_eq!(run(&t(PeOp::Mul), &[a.clone(), b.clone()]).data, vec![6.5, -19.5]);
        assert_eq!(run(&t(PeOp::Max), &[a.clone(), b.clone()]).data, vec![6.5, 10.5]);
        assert_eq!(run(&t(PeOp::Min), &[a.clone(), b]).data, vec![2.5, -3.5]);
        assert_eq!(run(&t(PeOp::Square), &[a]).data, vec![2.5, 8.5]);
    }
}
