//! `Conv` units: dense convolution with constant weights (`anec.conv`).
//!
//! Params: `KernelHeight`, `KernelWidth` (required), `Step` (`[sx, sy]` or `[sx, sy, sz]`,
//! width first like Apple's kernel-size triple; default `[1, 1]`), `PadTop`, `PadBot`,
//! `PadLeft`, `PadRight` (default 0), `KernelType`, `KernelOffset` (required),
//! `KernelIndex` (default 0), `KernelGroupReuse` (default false), `KernelMode` (only
//! `Dense`). The group count is the unit's `NumGroups` (or `Params.NumGroups`), default 1;
//! `OutputChannels` on the unit is required. Depth, dilation and padding-mode keys are
//! accepted only with their neutral values.

use super::weights::{Request, WeightFiles};
use super::{checked_elements, Lowered, UnitCx};
use crate::netplist::reader::{Dict, Result};
use anec_ir::{Attr, Attrs, OpCode, TensorType};

/// The kernel geometry of a conv unit.
struct Geometry {
    kernel: [u32; 2],
    /// `[sy, sx]`.
    stride: [u32; 2],
    /// `[top, bottom, left, right]`.
    pad: [u32; 4],
    groups: u32,
    cout: u32,
}

/// Lowers a `Conv` unit.
pub(crate) fn lower(cx: &UnitCx<'_>, weights: &WeightFiles) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    check_supported(&p)?;
    let g = geometry(cx, &p, &input)?;
    let [kh, kw] = g.kernel;
    let oh = out_extent(input.h, g.pad[0], g.pad[1], kh, g.stride[0])
        .ok_or_else(|| cx.shape_error(format!("kernel height {kh} exceeds the padded input height")))?;
    let ow = out_extent(input.w, g.pad[2], g.pad[3], kw, g.stride[1])
        .ok_or_else(|| cx.shape_error(format!("kernel width {kw} exceeds the padded input width")))?;
    let dtype = p.dtype("KernelType")?;
    let wty = TensorType::nchw(g.cout, input.c / g.groups, kh, kw, dtype);
    let req = Request {
        index_key: "KernelIndex",
        index: p.opt_int("KernelIndex")?.unwrap_or(0),
        offset_key: "KernelOffset",
        offset: p.u64("KernelOffset")?,
        count: checked_elements(&wty).ok_or_else(|| cx.shape_error("weight count overflows"))?,
        dtype,
    };
    let blob = weights.read(&p, &req)?;
    let key = cx.resource_key("weights");
    let reuse = p.opt_bool("KernelGroupReuse")?.unwrap_or(false);
    let attrs = attrs(&g, Attr::Resource { name: key.clone(), ty: wty }, reuse);
    let result = TensorType { c: g.cout, h: oh, w: ow, dtype: cx.out_dtype, ..input };
    Ok(Lowered { opcode: OpCode::Conv, attrs, result, resources: vec![(key, blob)] })
}

/// Reads kernel size, step, pads, groups and output channels.
fn geometry(cx: &UnitCx<'_>, p: &Dict<'_>, input: &TensorType) -> Result<Geometry> {
    let kernel = [p.dim("KernelHeight")?, p.dim("KernelWidth")?];
    let (sx, sy) = step(p)?;
    let pad = [p.u32_or("PadTop", 0)?, p.u32_or("PadBot", 0)?, p.u32_or("PadLeft", 0)?, p.u32_or("PadRight", 0)?];
    let groups = groups(cx, p)?;
    let cout = cx.unit.dim("OutputChannels")?;
    if input.c.checked_rem(groups) != Some(0) || cout.checked_rem(groups) != Some(0) {
        let message = format!("{groups} groups do not divide the {} input and {cout} output channels", input.c);
        return Err(cx.shape_error(message));
    }
    Ok(Geometry { kernel, stride: [sy, sx], pad, groups, cout })
}

/// The attributes of `anec.conv`.
fn attrs(g: &Geometry, weights: Attr, reuse: bool) -> Attrs {
    let mut attrs = Attrs::new();
    attrs.insert("kernel".into(), ints(&g.kernel));
    attrs.insert("stride".into(), ints(&g.stride));
    attrs.insert("pad".into(), ints(&g.pad));
    attrs.insert("groups".into(), Attr::Int(i64::from(g.groups)));
    attrs.insert("weights".into(), weights);
    attrs.insert("kernel_group_reuse".into(), Attr::Bool(reuse));
    attrs
}

/// An integer array attribute.
fn ints(v: &[u32]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(i64::from(x))).collect())
}

/// `(in + pad_a + pad_b - k) / stride + 1`, or `None` when the kernel does not fit.
fn out_extent(input: u32, pad_a: u32, pad_b: u32, k: u32, stride: u32) -> Option<u32> {
    let padded = u64::from(input) + u64::from(pad_a) + u64::from(pad_b);
    let span = padded.checked_sub(u64::from(k))?;
    u32::try_from(span / u64::from(stride.max(1)) + 1).ok()
}

/// `Step` as (sx, sy); a third (depth) step must be 1.
fn step(p: &Dict<'_>) -> Result<(u32, u32)> {
    let Some(items) = p.opt_array("Step")? else { return Ok((1, 1)) };
    let mut steps = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        let key = format!("Step[{i}]");
        let n = match v {
            plist::Value::Integer(n) => n.as_signed().ok_or_else(|| p.bad(&key, "integer out of range"))?,
            other => return Err(p.wrong(&key, "an integer", other)),
        };
        steps.push(p.check_u32(&key, n, 1)?);
    }
    match steps.as_slice() {
        [sx, sy] | [sx, sy, 1] => Ok((*sx, *sy)),
        [_, _, sz] => Err(p.bad("Step", format!("depth step {sz} is not supported (only 1)"))),
        _ => Err(p.bad("Step", format!("must have 2 or 3 elements, found {}", steps.len()))),
    }
}

/// The group count: unit `NumGroups`, else `Params.NumGroups`, else 1.
fn groups(cx: &UnitCx<'_>, p: &Dict<'_>) -> Result<u32> {
    if cx.unit.get("NumGroups").is_some() {
        cx.unit.dim("NumGroups")
    } else {
        p.dim_or("NumGroups", 1)
    }
}

/// Rejects conv variants the anec dialect cannot express.
fn check_supported(p: &Dict<'_>) -> Result<()> {
    expect_str(p, "Type", "Conv")?;
    expect_str(p, "KernelMode", "Dense")?;
    expect_str(p, "PaddingMode", "Zero")?;
    for key in ["KernelDepth", "KernelDilationX", "KernelDilationY"] {
        if p.dim_or(key, 1)? != 1 {
            return Err(p.bad(key, "only 1 is supported"));
        }
    }
    for key in ["PadFront", "PadBack"] {
        if p.u32_or(key, 0)? != 0 {
            return Err(p.bad(key, "only 0 is supported"));
        }
    }
    if p.opt_bool("KernelMutable")?.unwrap_or(false) {
        return Err(p.bad("KernelMutable", "mutable kernels are not supported"));
    }
    Ok(())
}

/// An optional string key that, when present, must equal `want`.
fn expect_str(p: &Dict<'_>, key: &str, want: &str) -> Result<()> {
    match p.opt_str(key)? {
        Some(s) if s != want => Err(p.bad(key, format!("'{s}' is not supported (only '{want}')"))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::out_extent;

    #[test]
    fn output_extent() {
        assert_eq!(out_extent(5, 1, 1, 3, 1), Some(5));
        assert_eq!(out_extent(5, 0, 0, 3, 2), Some(2));
        assert_eq!(out_extent(1, 0, 0, 3, 1), None);
    }
}
