//! `conv`: 2-D convolution (rank-4 input) and 1-D convolution (rank 3, `[N, C, L]`) with
//! constant weights, to `anec.conv` plus a per-channel `anec.gain_offset_control` for the
//! bias.
//!
//! `pad_type` is `valid`, `custom` (with `pad`), `same` or `same_lower`. A dilated
//! convolution (the anec dialect's conv has no dilation) runs as the convolution with the
//! kernel spread out: `k` taps `d` apart become a `(k - 1)·d + 1` kernel whose other taps
//! are zero ([`dilate`]), the same sums; the chip's kernel-size limit then applies to that
//! size (a 3 x 3 kernel up to dilation 6 on h13g). Runtime weights and 3-D convolution
//! are rejected. A 1-D convolution runs as a `1 x K` kernel over width: its rank-3 input
//! `[N, C, L]` (mapped to `1 x N x 1 x C x L`) is read as `N x C x 1 x 1 x L`, the same
//! bytes, and its result reshaped back. Weights keep their source precision (fp32 stays f32).

use super::consts::{blob, weight_dtype};
use super::cx::{attrs, ints_attr, Cx, Fail, LResult, Rt, Val};
use super::elementwise::{goc, Goc, V};
use super::layout::anec_type;
use super::tensor::Tensor;
use anec_ir::{Attr, Blob, DType, OpCode, TensorType};

/// The geometry of an `anec.conv`.
#[derive(Debug, Clone)]
pub(crate) struct ConvSpec {
    /// Output channels.
    pub cout: u32,
    /// `[kh, kw]`.
    pub kernel: [u32; 2],
    /// `[sy, sx]`.
    pub stride: [u32; 2],
    /// `[top, bottom, left, right]`.
    pub pad: [u32; 4],
    /// Groups.
    pub groups: u32,
}

/// `(in + pads - k) / stride + 1`, or `None` when the kernel does not fit.
pub(crate) fn out_extent(input: u64, pads: u64, k: u64, stride: u64) -> Option<u64> {
    let span = (input + pads).checked_sub(k)?;
    Some(span / stride.max(1) + 1)
}

/// Emits an `anec.conv` of `x` with `weights` (`Cout x Cin/groups x kh x kw`, row-major,
/// fp16 or fp32).
pub(crate) fn emit_conv(cx: &mut Cx<'_, '_>, x: V, s: &ConvSpec, weights: Blob) -> LResult<V> {
    let [kh, kw] = s.kernel;
    let cin = x.1.c;
    if s.groups == 0 || !cin.is_multiple_of(s.groups) || !s.cout.is_multiple_of(s.groups) {
        return Err(Fail::Msg(format!("{} groups do not divide {cin} input and {} output channels", s.groups, s.cout)));
    }
    let wty = TensorType::nchw(s.cout, cin / s.groups, kh, kw, weights.dtype);
    let values = weights.bytes.len() / weights.dtype.size();
    if wty.elements() != values as u64 {
        return Err(Fail::Msg(format!("the weight holds {values} values, {wty} needs {}", wty.elements())));
    }
    let [top, bottom, left, right] = s.pad.map(u64::from);
    let oh = out_extent(u64::from(x.1.h), top + bottom, u64::from(kh), u64::from(s.stride[0]));
    let ow = out_extent(u64::from(x.1.w), left + right, u64::from(kw), u64::from(s.stride[1]));
    let (Some(oh), Some(ow)) = (oh, ow) else {
        return Err(Fail::Msg(format!("the {kh}x{kw} kernel is larger than the padded {}x{} input", x.1.h, x.1.w)));
    };
    let (h, w) = (
        u32::try_from(oh).map_err(|_| "the output is too high")?,
        u32::try_from(ow).map_err(|_| "the output is too wide")?,
    );
    let out = TensorType { c: s.cout, h, w, dtype: DType::F16, ..x.1 };
    let a = attrs([
        ("kernel", ints_attr(&s.kernel)),
        ("stride", ints_attr(&s.stride)),
        ("pad", ints_attr(&s.pad)),
        ("groups", Attr::Int(i64::from(s.groups))),
        ("kernel_group_reuse", Attr::Bool(false)),
    ]);
    let id = cx.emit_with(OpCode::Conv, &[x.0], out, a, vec![("weights", weights, wty)]);
    Ok((id, out))
}

/// Adds a per-channel bias unless every value is zero.
pub(crate) fn add_bias(cx: &mut Cx<'_, '_>, x: V, bias: Option<&Tensor>) -> LResult<V> {
    let Some(b) = bias else { return Ok(x) };
    let values = b.as_f32().ok_or("`bias` must be numeric")?;
    if values.len() != x.1.c as usize {
        return Err(Fail::Msg(format!("`bias` holds {} values for {} output channels", values.len(), x.1.c)));
    }
    if values.iter().all(|&v| v == 0.0) {
        return Ok(x);
    }
    Ok(goc(cx, x, Goc { bias_data: Some(values), source: Some(b.dtype), ..Goc::default() }))
}

/// Explicit `[before, after]` pads per spatial axis for `pad_type`.
pub(crate) fn padding(
    pad_type: &str,
    pad: Option<&[i64]>,
    input: &[u64],
    kernel: &[u64],
    stride: &[u64],
) -> Result<Vec<[u64; 2]>, String> {
    let dims = input.len();
    match pad_type {
        "valid" => Ok(vec![[0, 0]; dims]),
        "custom" => {
            let p = pad.ok_or("`pad_type = custom` needs `pad`")?;
            if p.len() != 2 * dims || p.iter().any(|&v| !(0..=i64::from(u32::MAX)).contains(&v)) {
                return Err(format!("`pad` {p:?} must hold {} values from 0 to {}", 2 * dims, u32::MAX));
            }
            Ok((0..dims).map(|i| [p[2 * i] as u64, p[2 * i + 1] as u64]).collect())
        }
        "same" | "same_lower" => Ok((0..dims)
            .map(|i| {
                let s = stride[i].max(1);
                let out = input[i].div_ceil(s);
                let total = ((out - 1) * s + kernel[i]).saturating_sub(input[i]);
                let small = total / 2;
                if pad_type == "same" {
                    [small, total - small]
                } else {
                    [total - small, small]
                }
            })
            .collect()),
        other => Err(format!("`pad_type = {other}` is not supported")),
    }
}

/// Reads `strides` (default 1s) for `dims` spatial axes.
pub(crate) fn strides(cx: &Cx<'_, '_>, key: &str, dims: usize) -> LResult<Vec<u64>> {
    let s = cx.ints(key)?.unwrap_or_else(|| vec![1; dims]);
    if s.len() != dims || s.iter().any(|&v| v < 1) {
        return Err(Fail::Msg(format!("`{key}` {s:?} must hold {dims} values >= 1")));
    }
    Ok(s.iter().map(|&v| v as u64).collect())
}

/// The spatial layout of a conv or pooling input: a rank-4 tensor as is, a rank-3
/// `[N, C, L]` one (mapped to `1 x N x 1 x C x L`) reshaped to `N x C x 1 x 1 x L` (the
/// same bytes).
pub(crate) fn spatial_input(cx: &mut Cx<'_, '_>, x: &Rt) -> LResult<(V, usize)> {
    match x.shape.len() {
        4 => Ok(((x.id, x.ty), 2)),
        3 => {
            let ty = TensorType { n: x.ty.c, c: x.ty.h, h: 1, ..x.ty };
            Ok(((cx.emit(OpCode::Reshape, &[x.id], ty, attrs([])), ty), 1))
        }
        r => Err(Fail::Msg(format!("a rank-{r} input is not supported (only 1-D and 2-D: rank 3 or 4)"))),
    }
}

/// The result of a conv or pooling run on [`spatial_input`]'s layout, as a MIL tensor.
pub(crate) fn spatial_output(cx: &mut Cx<'_, '_>, y: V, dims: usize) -> LResult<Rt> {
    let (y, shape) = if dims == 1 {
        (y, vec![u64::from(y.1.n), u64::from(y.1.c), u64::from(y.1.w)])
    } else {
        (y, vec![u64::from(y.1.n), u64::from(y.1.c), u64::from(y.1.h), u64::from(y.1.w)])
    };
    let ty = anec_type(&shape)?;
    let id = if ty == y.1 { y.0 } else { cx.emit(OpCode::Reshape, &[y.0], ty, attrs([])) };
    Ok(Rt { id, ty, shape })
}

/// `[kh, kw]`-style pairs for 1 or 2 spatial axes (1-D puts the axis on width).
pub(crate) fn pair(v: &[u64], one: u64) -> [u32; 2] {
    let c = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    match v {
        [a] => [c(one), c(*a)],
        [a, b, ..] => [c(*a), c(*b)],
        [] => [c(one), c(one)],
    }
}

/// `[top, bottom, left, right]` from per-axis pads.
pub(crate) fn pads4(p: &[[u64; 2]]) -> [u32; 4] {
    let c = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    match p {
        [w] => [0, 0, c(w[0]), c(w[1])],
        [h, w, ..] => [c(h[0]), c(h[1]), c(w[0]), c(w[1])],
        [] => [0; 4],
    }
}

/// `conv(x, weight, bias?, strides?, pad_type?, pad?, dilations?, groups?)`.
pub(crate) fn conv(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let weight = cx.req_konst("weight")?;
    let bias = cx.konst("bias")?;
    let (xin, dims) = spatial_input(cx, &x)?;
    if weight.shape.len() != dims + 2 {
        return Err(Fail::Msg(format!(
            "`weight` {:?} must have rank {} for a rank-{} input",
            weight.shape,
            dims + 2,
            x.shape.len()
        )));
    }
    let dil = strides(cx, "dilations", dims)?;
    let groups = cx.int("groups")?.unwrap_or(1);
    let stride = strides(cx, "strides", dims)?;
    let (kernel, weights) = kernel_blob(&weight, &dil)?;
    let spatial: Vec<u64> = x.shape[2..].to_vec();
    let pad_type = cx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let pads = padding(&pad_type, cx.ints("pad")?.as_deref(), &spatial, &kernel, &stride)?;
    let spec = ConvSpec {
        cout: u32::try_from(weight.shape[0]).map_err(|_| "too many output channels")?,
        kernel: pair(&kernel, 1),
        stride: pair(&stride, 1),
        pad: pads4(&pads),
        groups: u32::try_from(groups).map_err(|_| format!("`groups` {groups} is out of range"))?,
    };
    let y = emit_conv(cx, xin, &spec, weights)?;
    let y = add_bias(cx, y, bias.as_deref())?;
    Ok(vec![Val::Rt(spatial_output(cx, y, dims)?)])
}

/// The kernel extents and weights of `weight` dilated by `dil`: the stored fp16 or fp32
/// bytes themselves when nothing moves (no dilation), else the values spread out.
fn kernel_blob(weight: &Tensor, dil: &[u64]) -> LResult<(Vec<u64>, Blob)> {
    let dtype = weight_dtype(weight.dtype);
    match weight.raw() {
        Some(bytes) if dil.iter().all(|&d| d == 1) => {
            Ok((weight.shape[2..].to_vec(), Blob { dtype, bytes: bytes.clone() }))
        }
        _ => {
            let values = weight.as_f32().ok_or("`weight` must be numeric")?;
            let (kernel, values) = dilate(&weight.shape[2..], &values, dil);
            Ok((kernel, blob(&values, dtype)))
        }
    }
}

/// The kernel `values` (`[.., k1, .., kn]` row-major over the spatial axes `kernel`)
/// spread out by `dilations`: the extents `(k - 1)·d + 1` and the values with zeros
/// between the taps.
pub(crate) fn dilate(kernel: &[u64], values: &[f32], dilations: &[u64]) -> (Vec<u64>, Vec<f32>) {
    if dilations.iter().all(|&d| d <= 1) {
        return (kernel.to_vec(), values.to_vec());
    }
    let spread: Vec<u64> = kernel.iter().zip(dilations).map(|(&k, &d)| (k.max(1) - 1) * d.max(1) + 1).collect();
    let (taps, area) = (kernel.iter().product::<u64>().max(1), spread.iter().product::<u64>());
    let mut out = vec![0.0; values.len() / taps as usize * area as usize];
    for (i, &v) in values.iter().enumerate() {
        let (plane, mut tap) = (i as u64 / taps, i as u64 % taps);
        // The tap's position in the spread kernel, last axis fastest.
        let (mut at, mut scale) = (0, 1);
        for ((&k, &d), &s) in kernel.iter().zip(dilations).zip(&spread).rev() {
            at += (tap % k) * d.max(1) * scale;
            tap /= k;
            scale *= s;
        }
        out[(plane * area + at) as usize] = v;
    }
    (spread, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dilated_kernel_spreads_its_taps_with_zeros_between() {
        // One 2 x 2 kernel, dilation 2 by 3: a 3 x 4 kernel.
        let (k, v) = dilate(&[2, 2], &[1.0, 2.0, 3.0, 4.0], &[2, 3]);
        assert_eq!(k, [3, 4]);
        let expect = [1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 4.0];
        assert_eq!(v, expect);
        // Two kernels of 3 taps (1-D), dilation 2: 5 taps each.
        let (k, v) = dilate(&[3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2]);
        assert_eq!((k, v), (vec![5], vec![1.0, 0.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 0.0, 6.0]));
        // Dilation 1 leaves the kernel as it is.
        assert_eq!(dilate(&[2], &[1.0, 2.0], &[1]).1, [1.0, 2.0]);
    }

    #[test]
    fn same_padding_splits_the_excess() {
        assert_eq!(padding("same", None, &[28, 28], &[5, 5], &[1, 1]), Ok(vec![[2, 2], [2, 2]]));
        assert_eq!(padding("same", None, &[7], &[2], &[2]), Ok(vec![[0, 1]]));
        assert_eq!(padding("same_lower", None, &[8], &[4], &[1]), Ok(vec![[2, 1]]));
        assert_eq!(padding("custom", Some(&[1, 2, 3, 4]), &[8, 8], &[3, 3], &[1, 1]), Ok(vec![[1, 2], [3, 4]]));
        assert!(padding("reflect", None, &[8], &[3], &[1]).is_err());
        assert_eq!(out_extent(28, 4, 5, 1), Some(28));
        assert_eq!(out_extent(14, 0, 3, 3), Some(4));
    }
}
