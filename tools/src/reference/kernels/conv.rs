//! N-D convolution (cross-correlation, as every framework computes it).
//!
//! `x` is `[N, Cin, s1, ..., sk]`, the weight `[Cout, Cin / groups, k1, ..., kk]`; output
//! channel `o` of group `g = o / (Cout / groups)` reads input channels
//! `g * Cin/groups .. (g + 1) * Cin/groups`. Padding is zeros; output extent per axis
//! `(s + before + after - dilation * (k - 1) - 1) / stride + 1`.

use super::shape::check;
use super::{at, make, next_coord, numel, strides, KResult};
use crate::tensor::Tensor;

/// Strides, pads, dilations and groups of a convolution (one entry per spatial axis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeom {
    /// Step between output positions.
    pub strides: Vec<usize>,
    /// Zero padding `(before, after)`.
    pub pads: Vec<(usize, usize)>,
    /// Distance between kernel taps.
    pub dilations: Vec<usize>,
    /// Channel groups.
    pub groups: usize,
}

impl ConvGeom {
    /// No padding, unit strides and dilations, one group, over `dims` spatial axes.
    pub fn plain(dims: usize) -> ConvGeom {
        ConvGeom { strides: vec![1; dims], pads: vec![(0, 0); dims], dilations: vec![1; dims], groups: 1 }
    }
}

/// The output extent of one axis, or an error when the kernel does not fit.
pub fn out_extent(input: usize, pads: (usize, usize), k: usize, stride: usize, dilation: usize) -> KResult<usize> {
    let span = dilation.checked_mul(k.saturating_sub(1)).and_then(|v| v.checked_add(1)).ok_or("kernel too large")?;
    let padded = input.checked_add(pads.0).and_then(|v| v.checked_add(pads.1)).ok_or("padding too large")?;
    if stride == 0 || k == 0 || dilation == 0 {
        return Err(format!("kernel {k}, stride {stride} and dilation {dilation} must be >= 1"));
    }
    if padded < span {
        return Err(format!("the kernel spans {span}, more than the padded extent {padded}"));
    }
    Ok((padded - span) / stride + 1)
}

/// Checks the geometry against `x` and `w`; returns `(cin per group, cout per group)`.
fn check_geometry(x: &Tensor, w: &Tensor, g: &ConvGeom) -> KResult<(usize, usize)> {
    check(x)?;
    check(w)?;
    let dims = x.shape.len().saturating_sub(2);
    if x.shape.len() < 3 || w.shape.len() != x.shape.len() {
        return Err(format!("input {:?} and weight {:?} must both have rank 2 + spatial axes", x.shape, w.shape));
    }
    if g.strides.len() != dims || g.pads.len() != dims || g.dilations.len() != dims {
        return Err(format!("strides, pads and dilations need {dims} entries"));
    }
    let (cin, cout) = (x.shape[1], w.shape[0]);
    if g.groups == 0 || cin % g.groups != 0 || cout % g.groups != 0 {
        return Err(format!("{} groups do not divide {cin} input and {cout} output channels", g.groups));
    }
    if w.shape[1] != cin / g.groups {
        return Err(format!("weight {:?} needs Cin/groups = {} on axis 1", w.shape, cin / g.groups));
    }
    Ok((cin / g.groups, cout / g.groups))
}

/// Convolution of `x` with `w`, plus an optional per-output-channel `bias`.
pub fn conv(x: &Tensor, w: &Tensor, bias: Option<&[f32]>, g: &ConvGeom) -> KResult<Tensor> {
    let (cin_g, cout_g) = check_geometry(x, w, g)?;
    let (n, cout) = (x.shape[0], w.shape[0]);
    if let Some(b) = bias {
        if b.len() != cout {
            return Err(format!("bias holds {} values for {cout} output channels", b.len()));
        }
    }
    let spatial = &x.shape[2..];
    let kernel = &w.shape[2..];
    let out_sp: Vec<usize> = (0..spatial.len())
        .map(|i| out_extent(spatial[i], g.pads[i], kernel[i], g.strides[i], g.dilations[i]))
        .collect::<KResult<_>>()?;
    let mut out_shape = vec![n, cout];
    out_shape.extend_from_slice(&out_sp);
    let xs = strides(&x.shape);
    let ws = strides(&w.shape);
    let taps = kernel_taps(kernel)?;
    let mut out = Vec::with_capacity(numel(&out_shape)?);
    for b in 0..n {
        for co in 0..cout {
            let group = co / cout_g;
            let bias_v = bias.and_then(|v| v.get(co).copied()).unwrap_or(0.0);
            for_each(&out_sp, |o| {
                let mut acc = bias_v;
                for ci in 0..cin_g {
                    let c = group * cin_g + ci;
                    let xbase = b * xs[0] + c * xs[1];
                    let wbase = co * ws[0] + ci * ws[1];
                    for tap in &taps {
                        let Some(xoff) = input_offset(o, tap, g, spatial, &xs[2..]) else { continue };
                        let woff: usize = tap.iter().zip(&ws[2..]).map(|(k, s)| k * s).sum();
                        acc += at(&x.data, xbase + xoff)? * at(&w.data, wbase + woff)?;
                    }
                }
                out.push(acc);
                Ok(())
            })?;
        }
    }
    make(out_shape, out)
}

/// Every kernel coordinate.
fn kernel_taps(kernel: &[usize]) -> KResult<Vec<Vec<usize>>> {
    let mut taps = Vec::with_capacity(numel(kernel)?);
    for_each(kernel, |k| {
        taps.push(k.to_vec());
        Ok(())
    })?;
    Ok(taps)
}

/// The flat spatial offset in `x` read by kernel tap `tap` at output position `o`, or
/// `None` when it falls in the padding.
fn input_offset(o: &[usize], tap: &[usize], g: &ConvGeom, spatial: &[usize], xs: &[usize]) -> Option<usize> {
    let mut off = 0usize;
    for i in 0..o.len() {
        let pos = (o[i] * g.strides[i] + tap[i] * g.dilations[i]).checked_sub(g.pads[i].0)?;
        if pos >= spatial[i] {
            return None;
        }
        off += pos * xs[i];
    }
    Some(off)
}

/// Calls `f` with every coordinate of `shape`, row-major (once for rank 0).
pub fn for_each(shape: &[usize], mut f: impl FnMut(&[usize]) -> KResult<()>) -> KResult<()> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut coord = vec![0usize; shape.len()];
    loop {
        f(&coord)?;
        if !next_coord(&mut coord, shape) {
            return Ok(());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t(shape: &[usize], data: &[f32]) -> Tensor {
        Tensor { shape: shape.to_vec(), data: data.to_vec() }
    }

    #[test]
    fn conv2d_valid_3x3_input_2x2_kernel() {
        // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,0],[0,-1]]: out[i][j] = x[i][j] - x[i+1][j+1] = -4.
        let x = t(&[1, 1, 3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
        let w = t(&[1, 1, 2, 2], &[1., 0., 0., -1.]);
        let y = conv(&x, &w, Some(&[0.5]), &ConvGeom::plain(2)).unwrap();
        assert_eq!(y.shape, vec![1, 1, 2, 2]);
        assert_eq!(y.data, vec![-3.5; 4]);
    }

    #[test]
    fn conv2d_padding_and_stride() {
        // All-ones 3x3 kernel over a 3x3 ramp, pad 1, stride 2: corners sum 2x2 blocks.
        let x = t(&[1, 1, 3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
        let w = t(&[1, 1, 3, 3], &[1.; 9]);
        let g = ConvGeom { strides: vec![2, 2], pads: vec![(1, 1), (1, 1)], dilations: vec![1, 1], groups: 1 };
        let y = conv(&x, &w, None, &g).unwrap();
        assert_eq!(y.shape, vec![1, 1, 2, 2]);
        // Top-left window covers x[0..2][0..2] = 1+2+4+5.
        assert_eq!(y.data, vec![12., 16., 24., 28.]);
    }

    #[test]
    fn grouped_and_dilated() {
        // Two groups, each output channel copies its own input channel scaled.
        let x = t(&[1, 2, 1, 3], &[1., 2., 3., 10., 20., 30.]);
        let w = t(&[2, 1, 1, 1], &[2., -1.]);
        let g = ConvGeom { groups: 2, ..ConvGeom::plain(2) };
        let y = conv(&x, &w, None, &g).unwrap();
        assert_eq!(y.data, vec![2., 4., 6., -10., -20., -30.]);
        // 1-D dilation 2 with kernel [1, 1] over [1, 2, 3, 4, 5]: x[i] + x[i+2].
        let x1 = t(&[1, 1, 5], &[1., 2., 3., 4., 5.]);
        let w1 = t(&[1, 1, 2], &[1., 1.]);
        let gd = ConvGeom { dilations: vec![2], ..ConvGeom::plain(1) };
        assert_eq!(conv(&x1, &w1, None, &gd).unwrap().data, vec![4., 6., 8.]);
        let bad = ConvGeom { groups: 3, ..ConvGeom::plain(2) };
        assert!(conv(&x, &w, None, &bad).is_err());
    }

    #[test]
    fn extents() {
        assert_eq!(out_extent(28, (2, 2), 5, 1, 1), Ok(28));
        assert_eq!(out_extent(14, (0, 0), 3, 3, 1), Ok(4));
        assert!(out_extent(2, (0, 0), 3, 1, 1).is_err());
    }
}
