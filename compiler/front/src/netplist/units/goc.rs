//! `GOC` (gain/offset control) units: `x * scale + bias` (`anec.gain_offset_control`).
//!
//! Params: scalar `BiasScalar` and `ScaleScalar` (fp16 bit patterns, e.g. 15360 = 1.0) and
//! the per-channel `BiasScaleGroupData` dictionary: `BiasCount`, `BiasIndex` (default 0),
//! `BiasOffset`, `BiasType` (default Float16) and the same four `Scale*` keys, read from
//! `Weights[Index]` at byte `Offset`. The count must equal the input's channel count. A
//! quantity given both as a scalar and per channel is an error, and so are nonzero
//! `BiasShift`/`ScaleShift` and a true `BiasMutable`.

use super::weights::{Request, WeightFiles};
use super::{Lowered, UnitCx};
use crate::netplist::reader::{dtype_name, Dict, Result};
use anec_ir::{Attr, Attrs, Blob, DType, OpCode, TensorType};

/// The key names of one per-channel quantity.
struct Keys {
    count: &'static str,
    index: &'static str,
    offset: &'static str,
    ty: &'static str,
    /// The scalar attribute it conflicts with.
    scalar: &'static str,
    /// The resource attribute it becomes.
    attr: &'static str,
}

const BIAS: Keys = Keys {
    count: "BiasCount",
    index: "BiasIndex",
    offset: "BiasOffset",
    ty: "BiasType",
    scalar: "bias",
    attr: "bias_data",
};

const SCALE: Keys = Keys {
    count: "ScaleCount",
    index: "ScaleIndex",
    offset: "ScaleOffset",
    ty: "ScaleType",
    scalar: "scale",
    attr: "scale_data",
};

/// Lowers a `GOC` unit.
pub(crate) fn lower(cx: &UnitCx<'_>, weights: &WeightFiles) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    let mut attrs = Attrs::new();
    if let Some(v) = p.opt_half("BiasScalar")? {
        attrs.insert("bias".into(), Attr::Float(v));
    }
    if let Some(v) = p.opt_half("ScaleScalar")? {
        attrs.insert("scale".into(), Attr::Float(v));
    }
    for key in ["BiasShift", "ScaleShift"] {
        if p.opt_int(key)?.unwrap_or(0) != 0 {
            return Err(p.bad(key, "only 0 is supported"));
        }
    }
    let mut resources = Vec::new();
    if let Some(g) = p.opt_dict("BiasScaleGroupData")? {
        if g.opt_bool("BiasMutable")?.unwrap_or(false) {
            return Err(g.bad("BiasMutable", "mutable biases are not supported"));
        }
        for keys in [&BIAS, &SCALE] {
            if let Some((blob, ty)) = per_channel(&g, keys, input.c, weights)? {
                if attrs.contains_key(keys.scalar) {
                    return Err(g.bad(keys.count, "given both as a scalar and per channel"));
                }
                let name = cx.resource_key(keys.attr);
                attrs.insert(keys.attr.into(), Attr::Resource { name: name.clone(), ty });
                resources.push((name, blob));
            }
        }
    }
    if attrs.is_empty() {
        return Err(cx
            .unit
            .bad("Params", "GOC has none of BiasScalar, ScaleScalar or BiasScaleGroupData bias/scale data"));
    }
    let result = TensorType { dtype: cx.out_dtype, ..input };
    Ok(Lowered { opcode: OpCode::GainOffsetControl, attrs, result, resources })
}

/// Reads one per-channel quantity of `BiasScaleGroupData`, if any of its keys is present.
fn per_channel(g: &Dict<'_>, keys: &Keys, channels: u32, weights: &WeightFiles) -> Result<Option<(Blob, TensorType)>> {
    if [keys.count, keys.index, keys.offset, keys.ty].iter().all(|k| g.get(k).is_none()) {
        return Ok(None);
    }
    let count = g.dim(keys.count)?;
    if count != channels {
        return Err(g.bad(keys.count, format!("{count} differs from the {channels} input channels")));
    }
    let dtype = g.opt_dtype(keys.ty)?.unwrap_or(DType::F16);
    if !matches!(dtype, DType::F16 | DType::F32) {
        let message = format!("{} is not supported (only Float16 or Float32)", dtype_name(dtype));
        return Err(g.bad(keys.ty, message));
    }
    let req = Request {
        index_key: keys.index,
        index: g.opt_int(keys.index)?.unwrap_or(0),
        offset_key: keys.offset,
        offset: g.u64(keys.offset)?,
        count: u64::from(count),
        dtype,
    };
    let blob = weights.read(g, &req)?;
    Ok(Some((blob, TensorType::nchw(1, count, 1, 1, dtype))))
}
