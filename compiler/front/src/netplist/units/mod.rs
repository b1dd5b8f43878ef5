//! Units: one netplist layer each, lowered to one anec op.
//!
//! Every unit entry has `Type`, `Bottom` (a string or an array of strings naming inputs or
//! earlier units), optional `Name` (the op name; default the unit's key), optional
//! `OutputType` (default the first bottom's type), optional `OutputChannels` (checked
//! against the inferred shape; required by `Conv`) and `Params`. The per-type files lower
//! `Params` to the attributes of `docs/ops.md` and infer the result shape; the hidden-layer
//! Types (seed 002 Table B.1: SDPA, Sort, TopK, PixelShuffle, ...) share one table-driven
//! reader, `hidden.rs` (table in `hidden_table.rs`).

mod conv;
mod elementwise;
mod goc;
mod hidden;
mod hidden_table;
mod neuron;
mod shape;
pub(crate) mod weights;

use super::reader::{Dict, Result};
use super::{entry, Builder};
use crate::error::{FrontError, Site, Subject};
use anec_ir::{Attrs, Blob, DType, Location, Op, OpCode, TensorType, ValueId};

/// The unit types this front end reads, for messages.
const SUPPORTED: &str = "Conv, Neuron, GOC, ScaledElementWise, Concat, Reshape, InputView, Broadcast, \
    SDPA, Sort, TopK, ArgMinMax, GlobalArgMinMax, PixelShuffle, PixelUnshuffle, ChannelToSpace, SpaceToChannel, \
    SpaceToBatch, BatchToSpace, MinMaxNormalization, LocalResponseNormalization, CrossCorrelation, CrossProduct, \
    FurthestPointSampling, RadiusSearch, CostVolume, DynamicSlice, Flatten, Dropout, Resize";

/// A unit being lowered: its entry, resolved operands and result element type.
pub(crate) struct UnitCx<'a> {
    /// The op name (`Name`, default the key).
    pub name: String,
    /// The unit's dictionary.
    pub unit: Dict<'a>,
    /// Operand values and their types, in `Bottom` order.
    pub operands: Vec<(ValueId, TensorType)>,
    /// The result element type.
    pub out_dtype: DType,
}

/// What a unit lowers to.
pub(crate) struct Lowered {
    /// The op.
    pub opcode: OpCode,
    /// Its attributes.
    pub attrs: Attrs,
    /// The result type.
    pub result: TensorType,
    /// Weight blobs to add to the module, by resource key.
    pub resources: Vec<(String, Blob)>,
}

impl<'a> UnitCx<'a> {
    /// The unit's `Params` dictionary (required).
    pub fn params(&self) -> Result<Dict<'a>> {
        self.unit.dict("Params")
    }

    /// The type of the only operand; an error unless there is exactly one bottom.
    pub fn single(&self) -> Result<TensorType> {
        match self.operands.as_slice() {
            [(_, ty)] => Ok(*ty),
            other => Err(self.unit.bad("Bottom", format!("expects 1 bottom, found {}", other.len()))),
        }
    }

    /// The resource key of an attribute: `<layer>.<attr>`.
    pub fn resource_key(&self, attr: &str) -> String {
        format!("{}.{attr}", self.name)
    }

    /// A shape error at this unit.
    pub fn shape_error(&self, message: impl Into<String>) -> FrontError {
        FrontError::Shape { site: Box::new(self.unit.site().clone()), message: message.into() }
    }
}

/// Lowers the unit `key` of the network and adds its op to the module.
pub(crate) fn add_unit(b: &mut Builder<'_>, net: &Dict<'_>, key: &str) -> Result<()> {
    let map = entry(net, key, "Units")?;
    let (site, loc) = b.place(Subject::Unit(key.into()));
    let unit = Dict::new(map, &site);
    if b.values.contains_key(key) {
        return Err(net.bad("Units", format!("'{key}' is listed twice or also names an input")));
    }
    let name = unit.opt_str("Name")?.unwrap_or(key).to_string();
    if b.op_names.contains(&name) {
        return Err(unit.bad("Name", format!("'{name}' is already the name of another unit")));
    }
    let unit_type = unit.str("Type")?;
    let operands = resolve_bottoms(b, &unit, &site)?;
    let out_dtype = match (unit.opt_dtype("OutputType")?, operands.first()) {
        (Some(t), _) => t,
        (None, Some((_, ty))) => ty.dtype,
        (None, None) => return Err(unit.bad("Bottom", "names no value")),
    };
    let cx = UnitCx { name, unit, operands, out_dtype };
    let lowered = lower(b, &cx, unit_type)?;
    check_output_channels(&cx, &lowered.result)?;
    emit(b, key, cx, lowered, loc);
    Ok(())
}

/// Adds a lowered unit's result value, op and resources to the module.
fn emit(b: &mut Builder<'_>, key: &str, cx: UnitCx<'_>, lowered: Lowered, loc: Location) {
    let value = b.module.add_value(lowered.result);
    let op = Op {
        opcode: lowered.opcode,
        name: cx.name.clone(),
        operands: cx.operands.iter().map(|(id, _)| *id).collect(),
        results: vec![value],
        attrs: lowered.attrs,
        loc,
    };
    b.module.ops.push(op);
    b.module.resources.extend(lowered.resources);
    b.values.insert(key.into(), value);
    b.op_names.insert(cx.name);
}

/// The element count of a type, or `None` when it overflows 64 bits.
pub(crate) fn checked_elements(t: &TensorType) -> Option<u64> {
    [t.n, t.c, t.d, t.h, t.w].iter().try_fold(1u64, |acc, &x| acc.checked_mul(u64::from(x)))
}

/// Dispatches on the unit `Type`.
fn lower(b: &mut Builder<'_>, cx: &UnitCx<'_>, unit_type: &str) -> Result<Lowered> {
    match unit_type {
        "Conv" => conv::lower(cx, &b.weights),
        "Neuron" => neuron::lower(cx),
        "GOC" => goc::lower(cx, &b.weights),
        "ScaledElementWise" => elementwise::lower(cx),
        "Concat" => shape::concat(cx),
        "Reshape" => shape::reshape(cx),
        "InputView" => shape::input_view(cx),
        "Broadcast" => shape::broadcast(cx),
        other => hidden::lower(cx, other).unwrap_or_else(|| {
            Err(FrontError::UnknownUnitType {
                site: Box::new(cx.unit.site().clone()),
                unit_type: other.into(),
                supported: SUPPORTED,
            })
        }),
    }
}

/// The values named by `Bottom`, which must be inputs or earlier units.
fn resolve_bottoms(b: &Builder<'_>, unit: &Dict<'_>, site: &Site) -> Result<Vec<(ValueId, TensorType)>> {
    let names = unit.string_or_strings("Bottom")?;
    names
        .into_iter()
        .map(|name| {
            let unknown = || FrontError::UnknownBottom { site: Box::new(site.clone()), bottom: name.into() };
            let id = *b.values.get(name).ok_or_else(unknown)?;
            let ty = b.module.ty(id).copied().ok_or_else(unknown)?;
            Ok((id, ty))
        })
        .collect()
}

/// Checks a stated `OutputChannels` against the inferred result.
fn check_output_channels(cx: &UnitCx<'_>, result: &TensorType) -> Result<()> {
    match cx.unit.opt_int("OutputChannels")? {
        Some(c) if c != i64::from(result.c) => {
            Err(cx.unit.bad("OutputChannels", format!("{c} differs from the inferred {} output channels", result.c)))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn supported_lists_every_hidden_type() {
        let listed: Vec<&str> = super::SUPPORTED.split(", ").collect();
        for t in super::hidden::type_names() {
            assert!(listed.contains(&t), "{t} missing from SUPPORTED");
        }
        assert_eq!(listed.len(), 8 + super::hidden::type_names().len());
    }
}
