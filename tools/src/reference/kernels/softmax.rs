//! Softmax along one axis: `exp(x - max) / sum(exp(x - max))` (subtracting the maximum
//! changes nothing mathematically and keeps `exp` finite).

use super::shape::check;
use super::{at, make, numel, KResult};
use crate::tensor::Tensor;

/// Softmax of `x` along `axis`.
pub fn softmax(x: &Tensor, axis: usize) -> KResult<Tensor> {
    check(x)?;
    let n = *x.shape.get(axis).ok_or_else(|| format!("axis {axis} is out of range for {:?}", x.shape))?;
    let outer = numel(&x.shape[..axis])?;
    let inner = numel(&x.shape[axis + 1..])?;
    let mut out = vec![0.0f32; x.data.len()];
    for o in 0..outer {
        for i in 0..inner {
            let idx = |k: usize| (o * n + k) * inner + i;
            let mut max = f32::NEG_INFINITY;
            for k in 0..n {
                max = max.max(at(&x.data, idx(k))?);
            }
            let mut sum = 0.0f32;
            for k in 0..n {
                let e = (f64::from(at(&x.data, idx(k))? - max)).exp() as f32;
                *out.get_mut(idx(k)).ok_or("internal: softmax index")? = e;
                sum += e;
            }
            for k in 0..n {
                if let Some(v) = out.get_mut(idx(k)) {
                    *v /= sum;
                }
            }
        }
    }
    make(x.shape.clone(), out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_and_columns() {
        // Row [0, ln 3]: e^0 = 1, e^ln3 = 3 -> [0.25, 0.75].
        let x = Tensor { shape: vec![2, 2], data: vec![0., 3f32.ln(), 5., 5.] };
        let y = softmax(&x, 1).unwrap();
        assert!((y.data[0] - 0.25).abs() < 1e-6 && (y.data[1] - 0.75).abs() < 1e-6);
        assert_eq!(y.data[2..], [0.5, 0.5]);
        // Along axis 0 the first column is [0, 5].
        let c = softmax(&x, 0).unwrap();
        let e = (-5f64).exp();
        assert!((f64::from(c.data[0]) - e / (1.0 + e)).abs() < 1e-7);
        assert!(softmax(&x, 2).is_err());
    }
}
