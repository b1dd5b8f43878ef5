//! N-D max and average pooling over the trailing (spatial) axes of `[N, C, s1, ..., sk]`.
//!
//! Window `o` on an axis starts at `o * stride - before`. Max pooling takes the largest real
//! input in the window (padding never wins); a window holding no real input is an error.
//! Average pooling sums the real inputs and divides by the number of real inputs
//! (`exclude_padding`) or by the number of window positions inside the padded extent
//! `[-before, extent + after)` (so a ceil-mode window running past the padding counts only
//! the positions within it). The output extents are given by the caller (floor or ceil
//! mode is the caller's decision).

use super::conv::for_each;
use super::shape::check;
use super::{at, make, numel, strides, KResult};
use crate::tensor::Tensor;

/// What a window computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// The largest value.
    Max,
    /// The mean; `exclude_padding` divides by the real inputs only.
    Avg {
        /// Divide by the number of real (non-padding) inputs.
        exclude_padding: bool,
    },
}

/// Window geometry, one entry per spatial axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolGeom {
    /// Window extent.
    pub kernel: Vec<usize>,
    /// Step between windows.
    pub strides: Vec<usize>,
    /// Padding `(before, after)`.
    pub pads: Vec<(usize, usize)>,
    /// Output extent.
    pub out: Vec<usize>,
}

/// Pools `x` with `kind` over its spatial axes.
pub fn pool(x: &Tensor, kind: PoolKind, g: &PoolGeom) -> KResult<Tensor> {
    check(x)?;
    let dims = x.shape.len().saturating_sub(2);
    if x.shape.len() < 3 || [g.kernel.len(), g.strides.len(), g.pads.len(), g.out.len()] != [dims; 4] {
        return Err(format!("pooling geometry does not match the {dims} spatial axes of {:?}", x.shape));
    }
    if g.kernel.contains(&0) || g.strides.contains(&0) {
        return Err("kernel and strides must be >= 1".into());
    }
    let outer = x.shape[0] * x.shape[1];
    let spatial = &x.shape[2..];
    let plane = numel(spatial)?;
    let sst = strides(spatial);
    let mut out_shape = x.shape[..2].to_vec();
    out_shape.extend_from_slice(&g.out);
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    for p in 0..outer {
        let base = p * plane;
        for_each(&g.out, |o| {
            out.push(window(&x.data, base, o, spatial, &sst, kind, g)?);
            Ok(())
        })?;
    }
    make(out_shape, out)
}

/// One output value.
fn window(
    data: &[f32],
    base: usize,
    o: &[usize],
    spatial: &[usize],
    sst: &[usize],
    kind: PoolKind,
    g: &PoolGeom,
) -> KResult<f32> {
    let (mut sum, mut max, mut real, mut inside) = (0.0f32, f32::NEG_INFINITY, 0usize, 0usize);
    for_each(&g.kernel, |k| {
        let mut off = 0usize;
        let (mut is_real, mut is_inside) = (true, true);
        for i in 0..o.len() {
            let pos = (o[i] * g.strides[i] + k[i]) as i64 - g.pads[i].0 as i64;
            let n = spatial[i] as i64;
            is_inside &= pos >= -(g.pads[i].0 as i64) && pos < n + g.pads[i].1 as i64;
            if (0..n).contains(&pos) {
                off += pos as usize * sst[i];
            } else {
                is_real = false;
            }
        }
        inside += usize::from(is_inside);
        if is_real {
            let v = at(data, base + off)?;
            real += 1;
            sum += v;
            max = max.max(v);
        }
        Ok(())
    })?;
    match kind {
        PoolKind::Max if real == 0 => Err(format!("the window at output {o:?} covers only padding")),
        PoolKind::Max => Ok(max),
        PoolKind::Avg { exclude_padding } => {
            let count = if exclude_padding { real } else { inside };
            Ok(if count == 0 { 0.0 } else { sum / count as f32 })
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ramp() -> Tensor {
        // 1 x 1 x 3 x 3: [[1, 2, 3], [4, 5, 6], [7, 8, 9]].
        Tensor { shape: vec![1, 1, 3, 3], data: (1..=9).map(|v| v as f32).collect() }
    }

    fn geom(k: usize, s: usize, p: usize, out: usize) -> PoolGeom {
        PoolGeom { kernel: vec![k, k], strides: vec![s, s], pads: vec![(p, p), (p, p)], out: vec![out, out] }
    }

    #[test]
    fn max_pool_2x2_stride_1() {
        let y = pool(&ramp(), PoolKind::Max, &geom(2, 1, 0, 2)).unwrap();
        assert_eq!(y.data, vec![5., 6., 8., 9.]);
    }

    #[test]
    fn avg_pool_padding_counted_or_excluded() {
        // 3x3 window, pad 1, stride 2 -> 2x2 outputs; top-left covers 1, 2, 4, 5 (sum 12).
        let inc = pool(&ramp(), PoolKind::Avg { exclude_padding: false }, &geom(3, 2, 1, 2)).unwrap();
        assert_eq!(inc.data, vec![12. / 9., 16. / 9., 24. / 9., 28. / 9.]);
        let exc = pool(&ramp(), PoolKind::Avg { exclude_padding: true }, &geom(3, 2, 1, 2)).unwrap();
        assert_eq!(exc.data, vec![3., 4., 6., 7.]);
    }

    #[test]
    fn ceil_mode_window_past_the_padding() {
        // 1-D [1, 2, 3], k 2, s 2, no pad, ceil mode gives 2 outputs: [1, 2] and [3].
        let x = Tensor { shape: vec![1, 1, 3], data: vec![1., 2., 3.] };
        let g = PoolGeom { kernel: vec![2], strides: vec![2], pads: vec![(0, 0)], out: vec![2] };
        assert_eq!(pool(&x, PoolKind::Max, &g).unwrap().data, vec![2., 3.]);
        assert_eq!(pool(&x, PoolKind::Avg { exclude_padding: false }, &g).unwrap().data, vec![1.5, 3.]);
    }
}
