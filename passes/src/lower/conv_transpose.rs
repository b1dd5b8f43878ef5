//! `conv_transpose(x, weight, bias?, pad?, output_shape?, pad_type?, strides?, dilations?,
//! groups?)` on a rank-4 input, as the convolution it is the transpose of:
//!
//! 1. **zero-stuffing** (stride `s > 1`): `x` upsampled by `s` (`anec.resize`, nearest)
//!    times a constant mask that is 1 where both coordinates are multiples of `s`: each
//!    input value at `s·i`, zeros between (exact: `v·1`, `v·0`);
//! 2. the **convolution** of that at stride 1 with the kernel flipped in H and W and its
//!    input and output channels exchanged per group (`weight` is `Cin x Cout/groups x kh x
//!    kw`), padded `k_eff - 1 - pad_before` before and so that the result has the output
//!    size after (`k_eff = (k - 1)·dilation + 1`, the dilation spread by `conv::dilate`);
//! 3. the bias.
//!
//! Output size: `output_shape` when given, else `(in - 1)·s + k_eff - pad_before -
//! pad_after` (`valid`, `custom`) or `in·s` (`same`, the odd pad after). A padding that
//! would crop the stuffed input (a pad larger than `k_eff - 1`, or more output past the
//! last input than the kernel reaches) is refused with the reason.

use super::consts::weight_dtype;
use super::cx::{attrs, Cx, Fail, LResult, Val};
use super::tensor::Tensor;
use anec_ir::mil::ScalarType;
use anec_ir::{Attr, OpCode};

/// `conv_transpose`.
pub(crate) fn conv_transpose(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let weight = cx.req_konst("weight")?;
    let bias = cx.konst("bias")?;
    if x.shape.len() != 4 || weight.shape.len() != 4 {
        return Err(Fail::Msg(format!(
            "only 2-D transposed convolution is supported: `x` {:?}, `weight` {:?}",
            x.shape, weight.shape
        )));
    }
    let groups = u64::try_from(cx.int("groups")?.unwrap_or(1)).map_err(|_| "`groups` must be >= 1")?.max(1);
    let stride = super::conv::strides(cx, "strides", 2)?;
    let dil = super::conv::strides(cx, "dilations", 2)?;
    let (cin, cout_g) = (weight.shape[0], weight.shape[1]);
    if cin != x.shape[1] || cin % groups != 0 {
        return Err(Fail::Msg(format!(
            "`weight` {:?} does not fit `x` {:?} in {groups} groups",
            weight.shape, x.shape
        )));
    }
    let values = weight.as_f32().ok_or("`weight` must be numeric")?;
    let flipped = flip(&values, [cin, cout_g, weight.shape[2], weight.shape[3]], groups);
    let (kernel, spread) = super::conv::dilate(&weight.shape[2..], &flipped, &dil);
    let input = [x.shape[2], x.shape[3]];
    let out = output_size(cx, &input, &kernel, &stride)?;
    let (pads, lengths) = conv_pads(cx, &input, &kernel, &stride, &out)?;
    let stuffed = stuff(cx, &x, &stride)?;
    // The stuffed rows and columns no output reads (past the last one's window): dropped.
    let windows = [(0, x.shape[0], 1), (0, x.shape[1], 1), (0, lengths[0], 1), (0, lengths[1], 1)];
    let stuffed = super::shape::views(cx, &stuffed, &windows)?;
    let spec = super::conv::ConvSpec {
        cout: u32::try_from(cout_g * groups).map_err(|_| "too many output channels")?,
        kernel: super::conv::pair(&kernel, 1),
        stride: [1, 1],
        pad: super::conv::pads4(&pads),
        groups: u32::try_from(groups).map_err(|_| "too many groups")?,
    };
    let y = super::conv::emit_conv(
        cx,
        (stuffed.id, stuffed.ty),
        &spec,
        super::consts::blob(&spread, weight_dtype(weight.dtype)),
    )?;
    let y = super::conv::add_bias(cx, y, bias.as_deref())?;
    Ok(vec![Val::Rt(super::conv::spatial_output(cx, y, 2)?)])
}

/// The conv-layout kernel (`Cout x Cin/groups x kh x kw`) of a transposed convolution's
/// `weight` (`Cin x Cout/groups x kh x kw`): channels exchanged within each group, taps
/// flipped in H and W.
fn flip(w: &[f32], [cin, cout_g, kh, kw]: [u64; 4], groups: u64) -> Vec<f32> {
    let cin_g = cin / groups;
    let (kh, kw) = (kh as usize, kw as usize);
    let mut out = vec![0.0; w.len()];
    for g in 0..groups {
        for ci in 0..cin_g {
            for co in 0..cout_g {
                for ky in 0..kh {
                    for kx in 0..kw {
                        let src = ((((g * cin_g + ci) * cout_g + co) as usize * kh) + ky) * kw + kx;
                        let dst =
                            ((((g * cout_g + co) * cin_g + ci) as usize * kh) + (kh - 1 - ky)) * kw + (kw - 1 - kx);
                        out[dst] = w[src];
                    }
                }
            }
        }
    }
    out
}

/// The output H and W: `output_shape`'s, or from the padding.
fn output_size(cx: &Cx<'_, '_>, input: &[u64; 2], kernel: &[u64], stride: &[u64]) -> LResult<[u64; 2]> {
    if let Some(shape) = cx.ints("output_shape")? {
        let [.., h, w] = shape[..] else { return Err(Fail::Msg(format!("`output_shape` {shape:?} has no H and W"))) };
        return Ok([h.max(1) as u64, w.max(1) as u64]);
    }
    let pad_type = cx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let p = cx.ints("pad")?.unwrap_or_default();
    let size = |i: usize| -> LResult<u64> {
        let full = (input[i] - 1) * stride[i] + kernel[i];
        match pad_type.as_str() {
            "same" => Ok(input[i] * stride[i]),
            "valid" => Ok(full),
            "custom" => {
                let (a, b) = (p.get(2 * i).copied().unwrap_or(0), p.get(2 * i + 1).copied().unwrap_or(0));
                full.checked_sub((a.max(0) + b.max(0)) as u64)
                    .filter(|&v| v > 0)
                    .ok_or_else(|| Fail::Msg(format!("`pad` {p:?} removes the whole output")))
            }
            other => Err(Fail::Msg(format!("`pad_type` `{other}` is not supported for conv_transpose"))),
        }
    };
    Ok([size(0)?, size(1)?])
}

/// The stride-1 convolution's `[before, after]` pads per axis giving `out` from the
/// stuffed input (`in·s` long), and how much of the stuffed input it reads:
/// `k_eff - 1 - pad_before` before; after, what the last output's window reaches past
/// the stuffed input, or nothing and the stuffed input cut where that window ends.
fn conv_pads(
    cx: &Cx<'_, '_>,
    input: &[u64; 2],
    kernel: &[u64],
    stride: &[u64],
    out: &[u64; 2],
) -> LResult<(Vec<[u64; 2]>, [u64; 2])> {
    let pad_type = cx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let p = cx.ints("pad")?.unwrap_or_default();
    let mut lengths = [0; 2];
    let pads = (0..2)
        .map(|i| {
            let full = (input[i] - 1) * stride[i] + kernel[i];
            let before = match pad_type.as_str() {
                "custom" => p.get(2 * i).copied().unwrap_or(0).max(0) as u64,
                // `same`: the excess split, the odd unit after.
                "same" => full.saturating_sub(out[i]) / 2,
                _ => 0,
            };
            let top = (kernel[i] - 1).checked_sub(before).ok_or_else(|| {
                Fail::Msg(format!("a pad of {before} before is more than the kernel's {} taps reach", kernel[i] - 1))
            })?;
            // Conv output = length + top + bottom - k + 1 = out.
            let reach = (out[i] + kernel[i] - 1)
                .checked_sub(top)
                .filter(|&r| r >= 1)
                .ok_or_else(|| Fail::Msg(format!("an output of {} reads no input after a pad of {top}", out[i])))?;
            lengths[i] = reach.min(input[i] * stride[i]);
            Ok([top, reach - lengths[i]])
        })
        .collect::<LResult<Vec<_>>>()?;
    Ok((pads, lengths))
}

/// `x` with each value at `s·i` and zeros between (stride 1: `x`).
fn stuff(cx: &mut Cx<'_, '_>, x: &super::cx::Rt, stride: &[u64]) -> LResult<super::cx::Rt> {
    if stride.iter().all(|&s| s == 1) {
        return Ok(x.clone());
    }
    let (sy, sx) = (stride[0], stride[1]);
    let (h, w) = (x.shape[2] * sy, x.shape[3] * sx);
    let a = attrs([
        ("mode", Attr::Str("nearest".into())),
        ("ratio_y", Attr::Float(sy as f64)),
        ("ratio_x", Attr::Float(sx as f64)),
    ]);
    let up = cx.emit_rt(OpCode::Resize, &[x.id], vec![x.shape[0], x.shape[1], h, w], a)?;
    let mask: Vec<f32> = (0..h * w).map(|i| f32::from(u8::from((i / w) % sy == 0 && (i % w) % sx == 0))).collect();
    let mask = Tensor::floats(ScalarType::Fp16, vec![1, 1, h, w], mask);
    super::elementwise::with_const(cx, "mul", &up, &mask, true)
}
