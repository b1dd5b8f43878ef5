//! `max_pool` and `avg_pool` (2-D on rank 4, 1-D on rank 3) to `anec.pooling`.
//!
//! `kernel_sizes`, `strides`, `pad_type` (`valid`, `custom` with `pad`, `same`,
//! `same_lower`) map as for `conv`; `exclude_padding_from_average` becomes
//! `exclude_padding`. `ceil_mode = true` is accepted only when it gives the same output
//! size as flooring (the dialect's pooling floors).

use super::conv::{out_extent, padding, pads4, pair, spatial_input, spatial_output, strides};
use super::cx::{attrs, ints_attr, Cx, Fail, LResult, Val};
use anec_ir::{Attr, OpCode, TensorType};

/// `max_pool` / `avg_pool`.
pub(crate) fn pool(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let (xin, dims) = spatial_input(cx, &x)?;
    let kernel: Vec<u64> =
        cx.ints("kernel_sizes")?.ok_or("missing input `kernel_sizes`")?.iter().map(|&k| k.max(0) as u64).collect();
    if kernel.len() != dims || kernel.contains(&0) {
        return Err(Fail::Msg(format!("`kernel_sizes` {kernel:?} must hold {dims} values >= 1")));
    }
    let stride = strides(cx, "strides", dims)?;
    let spatial: Vec<u64> = x.shape[2..].to_vec();
    let pad_type = cx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let pads = padding(&pad_type, cx.ints("pad")?.as_deref(), &spatial, &kernel, &stride)?;
    if cx.boolean("ceil_mode")?.unwrap_or(false) {
        for (i, &n) in spatial.iter().enumerate() {
            let padded = n + pads[i][0] + pads[i][1];
            let floor = out_extent(n, pads[i][0] + pads[i][1], kernel[i], stride[i]);
            let ceil = padded.checked_sub(kernel[i]).map(|s| s.div_ceil(stride[i]) + 1);
            if floor != ceil {
                return Err(Fail::Msg(format!("`ceil_mode = true` changes the output extent of axis {} ({floor:?} vs {ceil:?}); only flooring is supported", i + 2)));
            }
        }
    }
    let [kh, kw] = pair(&kernel, 1);
    let [sy, sx] = pair(&stride, 1);
    let pad = pads4(&pads);
    let [top, bottom, left, right] = pad.map(u64::from);
    let oh = out_extent(u64::from(xin.1.h), top + bottom, u64::from(kh), u64::from(sy));
    let ow = out_extent(u64::from(xin.1.w), left + right, u64::from(kw), u64::from(sx));
    let (Some(oh), Some(ow)) = (oh, ow) else {
        return Err(Fail::Msg(format!("the {kh}x{kw} window is larger than the padded input")));
    };
    let kind = if cx.op() == "max_pool" { "max" } else { "avg" };
    let mut a = attrs([
        ("kind", Attr::Str(kind.into())),
        ("kernel", ints_attr(&[kh, kw])),
        ("stride", ints_attr(&[sy, sx])),
        ("pad", ints_attr(&pad)),
    ]);
    if kind == "avg" {
        let exclude = cx.boolean("exclude_padding_from_average")?.unwrap_or(false);
        a.insert("exclude_padding".into(), Attr::Bool(exclude));
    }
    let (h, w) = (
        u32::try_from(oh).map_err(|_| "the output is too high")?,
        u32::try_from(ow).map_err(|_| "the output is too wide")?,
    );
    let out = TensorType { h, w, ..xin.1 };
    let id = cx.emit(OpCode::Pooling, &[xin.0], out, a);
    Ok(vec![Val::Rt(spatial_output(cx, (id, out), dims)?)])
}
