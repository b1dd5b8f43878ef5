//! Normalization over a set of axes: `(x - mean) / sqrt(var + eps)` with the biased
//! variance (mean of squared deviations), statistics taken over `axes` separately for
//! every index of the other axes. Layer, instance and group norm are this plus an affine
//! part their callers apply.

use super::shape::check;
use super::{at, make, next_coord, strides, KResult};
use crate::tensor::Tensor;

/// Normalizes `x` over `axes` (distinct, in range) with `eps`.
pub fn normalize(x: &Tensor, axes: &[usize], eps: f32) -> KResult<Tensor> {
    check(x)?;
    let rank = x.shape.len();
    if axes.iter().any(|&a| a >= rank) || (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(format!("axes {axes:?} are not distinct axes of {:?}", x.shape));
    }
    let st = strides(&x.shape);
    let kept: Vec<usize> = (0..rank).filter(|a| !axes.contains(a)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&a| x.shape[a]).collect();
    let red_shape: Vec<usize> = axes.iter().map(|&a| x.shape[a]).collect();
    let mut out = vec![0.0f32; x.data.len()];
    if x.data.is_empty() {
        return make(x.shape.clone(), out);
    }
    let mut outer = vec![0usize; kept.len()];
    loop {
        let base: usize = outer.iter().zip(&kept).map(|(c, &a)| c * st[a]).sum();
        let offsets = offsets(&red_shape, axes, &st);
        let count = offsets.len() as f32;
        let mut sum = 0.0f32;
        for &o in &offsets {
            sum += at(&x.data, base + o)?;
        }
        let mean = sum / count;
        let mut var = 0.0f32;
        for &o in &offsets {
            let d = at(&x.data, base + o)? - mean;
            var += d * d;
        }
        let inv = 1.0 / (var / count + eps).sqrt();
        for &o in &offsets {
            let slot = out.get_mut(base + o).ok_or("internal: normalize index")?;
            *slot = (at(&x.data, base + o)? - mean) * inv;
        }
        if !next_coord(&mut outer, &kept_shape) {
            break;
        }
    }
    make(x.shape.clone(), out)
}

/// Flat offsets of every coordinate of `shape` on `axes` with strides `st`.
fn offsets(shape: &[usize], axes: &[usize], st: &[usize]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut c = vec![0usize; shape.len()];
    loop {
        v.push(c.iter().zip(axes).map(|(i, &a)| i * st[a]).sum());
        if !next_coord(&mut c, shape) {
            return v;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_rows() {
        // Rows [1, 3] and [2, 2]: means 2 and 2, variances 1 and 0.
        let x = Tensor { shape: vec![2, 2], data: vec![1., 3., 2., 2.] };
        let y = normalize(&x, &[1], 0.0).unwrap();
        assert_eq!(y.data[..2], [-1., 1.]);
        let z = normalize(&x, &[1], 1.0).unwrap();
        assert_eq!(z.data[2..], [0., 0.]);
        // Column-wise: columns [1, 2] and [3, 2] each have variance 0.25.
        let c = normalize(&x, &[0], 0.0).unwrap();
        assert_eq!(c.data, vec![-1., 1., 1., -1.]);
        assert!(normalize(&x, &[2], 0.0).is_err());
        assert!(normalize(&x, &[1, 1], 0.0).is_err());
    }

    #[test]
    fn normalizes_over_two_axes() {
        // One 2x2 block [0, 2, 4, 6]: mean 3, variance 5.
        let x = Tensor { shape: vec![1, 2, 2], data: vec![0., 2., 4., 6.] };
        let y = normalize(&x, &[1, 2], 0.0).unwrap();
        let s = 5f32.sqrt();
        for (got, want) in y.data.iter().zip([-3. / s, -1. / s, 1. / s, 3. / s]) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }
}
