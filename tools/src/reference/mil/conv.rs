//! `conv` (1-D, 2-D and 3-D, with strides, dilations, groups and bias) and `max_pool` /
//! `avg_pool`, on `[N, C, spatial...]` inputs.
//!
//! `pad_type`: `valid` (no padding, the default), `custom` (`pad` = before/after per
//! spatial axis), `same` / `same_lower` (total `max(0, (ceil(in / s) - 1) * s + k_eff - in)`
//! with `k_eff = dilation * (k - 1) + 1`, the odd unit after the input for `same`, before
//! it for `same_lower`). Pooling's `ceil_mode` follows coremltools: extent
//! `floor((in + pads - k + s - 1) / s) + 1`, one less when the last window would start at
//! or past `in + pads / 2` and there is padding.

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::conv::{conv as conv_kernel, out_extent, ConvGeom};
use crate::reference::kernels::pool::{pool as pool_kernel, PoolGeom, PoolKind};

/// `(before, after)` padding per spatial axis.
fn pads(
    pad_type: &str,
    pad: Option<&[i64]>,
    input: &[usize],
    kernel: &[usize],
    strides: &[usize],
    dil: &[usize],
) -> Result<Vec<(usize, usize)>, String> {
    let dims = input.len();
    match pad_type {
        "valid" => Ok(vec![(0, 0); dims]),
        "custom" => {
            let p = pad.ok_or("`pad_type = custom` needs `pad`")?;
            if p.len() != 2 * dims {
                return Err(format!("`pad` {p:?} must hold {} values", 2 * dims));
            }
            let u = |v: i64| usize::try_from(v).map_err(|_| format!("`pad` {p:?} holds a negative value"));
            (0..dims).map(|i| Ok((u(p[2 * i])?, u(p[2 * i + 1])?))).collect()
        }
        "same" | "same_lower" => Ok((0..dims)
            .map(|i| {
                let s = strides[i].max(1);
                let k_eff = dil[i] * kernel[i].saturating_sub(1) + 1;
                let total = ((input[i].div_ceil(s)).saturating_sub(1) * s + k_eff).saturating_sub(input[i]);
                let small = total / 2;
                if pad_type == "same" {
                    (small, total - small)
                } else {
                    (total - small, small)
                }
            })
            .collect()),
        other => Err(format!("`pad_type = {other}` is not supported")),
    }
}

/// A list of `dims` positive values from argument `key` (default all 1).
fn positive(sx: &Sx<'_>, key: &str, dims: usize) -> Result<Vec<usize>, String> {
    let v = sx.ints(key)?.unwrap_or_else(|| vec![1; dims]);
    if v.len() != dims || v.iter().any(|&x| x < 1) {
        return Err(format!("`{key}` {v:?} must hold {dims} values >= 1"));
    }
    Ok(v.iter().map(|&x| x as usize).collect())
}

/// `conv`.
pub(crate) fn conv(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let w = sx.x("weight")?;
    let dims = x.shape.len().saturating_sub(2);
    if !(1..=3).contains(&dims) || w.shape.len() != x.shape.len() {
        return Err(format!(
            "`x` {:?} and `weight` {:?} must be 1-D, 2-D or 3-D convolution operands",
            x.shape, w.shape
        ));
    }
    let strides = positive(sx, "strides", dims)?;
    let dil = positive(sx, "dilations", dims)?;
    let groups = usize::try_from(sx.int("groups")?.unwrap_or(1)).map_err(|_| "`groups` must be >= 1")?;
    let pad_type = sx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let p = pads(&pad_type, sx.ints("pad")?.as_deref(), &x.shape[2..], &w.shape[2..], &strides, &dil)?;
    let bias = sx.opt_x("bias")?;
    let g = ConvGeom { strides, pads: p, dilations: dil, groups };
    Ok(sx.one(conv_kernel(&x, &w, bias.as_ref().map(|b| b.data.as_slice()), &g)?))
}

/// `max_pool` and `avg_pool`.
pub(crate) fn pool(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let dims = x.shape.len().saturating_sub(2);
    if !(1..=3).contains(&dims) {
        return Err(format!("`x` {:?} must have 1 to 3 spatial axes", x.shape));
    }
    let kernel = positive(sx, "kernel_sizes", dims)?;
    if sx.value("kernel_sizes")?.is_none() {
        return Err("missing input `kernel_sizes`".into());
    }
    let strides = positive(sx, "strides", dims)?;
    let pad_type = sx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let p = pads(&pad_type, sx.ints("pad")?.as_deref(), &x.shape[2..], &kernel, &strides, &vec![1; dims])?;
    let ceil = sx.bool("ceil_mode")?.unwrap_or(false);
    let out =
        (0..dims).map(|i| extent(x.shape[2 + i], p[i], kernel[i], strides[i], ceil)).collect::<Result<Vec<_>, _>>()?;
    let kind = if sx.op() == "max_pool" {
        PoolKind::Max
    } else {
        PoolKind::Avg { exclude_padding: sx.bool("exclude_padding_from_average")?.unwrap_or(false) }
    };
    let g = PoolGeom { kernel, strides, pads: p, out };
    Ok(sx.one(pool_kernel(&x, kind, &g)?))
}

/// The pooled extent of one axis (floor or coremltools' ceil rule).
fn extent(input: usize, pad: (usize, usize), k: usize, s: usize, ceil: bool) -> Result<usize, String> {
    let floor = out_extent(input, pad, k, s, 1)?;
    if !ceil {
        return Ok(floor);
    }
    let total = pad.0 + pad.1;
    let mut out = (input + total - k).div_ceil(s) + 1;
    if total > 0 && (out - 1) * s * 2 >= input * 2 + total {
        out -= 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_padding_and_ceil_extents() {
        assert_eq!(pads("same", None, &[28, 28], &[5, 5], &[1, 1], &[1, 1]), Ok(vec![(2, 2), (2, 2)]));
        assert_eq!(pads("same", None, &[7], &[2], &[2], &[1]), Ok(vec![(0, 1)]));
        assert_eq!(pads("same_lower", None, &[8], &[4], &[1], &[1]), Ok(vec![(2, 1)]));
        // Dilation 2 makes a 3-tap kernel span 5.
        assert_eq!(pads("same", None, &[6], &[3], &[1], &[2]), Ok(vec![(2, 2)]));
        assert_eq!(pads("custom", Some(&[1, 2]), &[8], &[3], &[1], &[1]), Ok(vec![(1, 2)]));
        assert!(pads("reflect", None, &[8], &[3], &[1], &[1]).is_err());
        assert_eq!(extent(5, (0, 0), 2, 2, false), Ok(2));
        assert_eq!(extent(5, (0, 0), 2, 2, true), Ok(3));
        assert_eq!(extent(4, (1, 1), 2, 2, true), Ok(3));
        // 5 padded 1+1, k 3, s 3: ceil gives 3, but the third window would start at 6,
        // at or past 5 + 2/2, so it is dropped.
        assert_eq!(extent(5, (1, 1), 3, 3, true), Ok(2));
        assert_eq!(extent(5, (1, 1), 2, 3, true), Ok(2));
        assert_eq!(extent(6, (0, 0), 4, 3, true), Ok(2));
    }
}
