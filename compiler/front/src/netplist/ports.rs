//! Network inputs and outputs: the entries named by `Inputs` and `Outputs`.
//!
//! An input entry gives the tensor shape (`BatchSize`, `InputChannels`, `InputDepth`,
//! `InputHeight`, `InputWidth`), the element type (`InputType`) and optionally its memory
//! layout (`Input*Stride`, `InputInterleave`). An output entry (`probs@output`) names the
//! value it exposes with `Bottom` and optionally its layout (`Output*Stride`,
//! `OutputInterleave`) and type (`OutputType`, which must match the value's type). The
//! ProcedureList form (`procedures.rs`) reads its `InputList` and `OutputList` items with
//! the same entry readers.

use super::reader::{dtype_name, Dict, Result};
use super::{entry, Builder};
use crate::error::{FrontError, Subject};
use anec_ir::{Layout, Location, Port, TensorType, ValueId};

/// Adds the input `name` of the network as a module input.
pub(crate) fn add_input(b: &mut Builder<'_>, net: &Dict<'_>, name: &str) -> Result<()> {
    let map = entry(net, name, "Inputs")?;
    let (site, loc) = b.place(Subject::Input(name.into()));
    let d = Dict::new(map, &site);
    let (ty, layout) = input_type(&d)?;
    if b.values.contains_key(name) {
        return Err(net.bad("Inputs", format!("'{name}' is listed twice")));
    }
    push_input(b, name, ty, layout, loc);
    Ok(())
}

/// The tensor type and layout an input entry (`Inputs` entry or `InputList` item) gives.
pub(crate) fn input_type(d: &Dict<'_>) -> Result<(TensorType, Layout)> {
    let ty = TensorType {
        n: d.dim_or("BatchSize", 1)?,
        c: d.dim("InputChannels")?,
        d: d.dim_or("InputDepth", 1)?,
        h: d.dim("InputHeight")?,
        w: d.dim("InputWidth")?,
        dtype: d.dtype("InputType")?,
    };
    Ok((ty, layout(d, "Input")?))
}

/// Adds a module input and makes it visible to units by `name`.
pub(crate) fn push_input(b: &mut Builder<'_>, name: &str, ty: TensorType, layout: Layout, loc: Location) {
    let value = b.module.add_value(ty);
    b.module.inputs.push(Port { name: name.into(), value, layout, loc });
    b.values.insert(name.into(), value);
}

/// Adds the output `name` (`probs@output`) of the network as a module output.
pub(crate) fn add_output(b: &mut Builder<'_>, net: &Dict<'_>, name: &str) -> Result<()> {
    let map = entry(net, name, "Outputs")?;
    let (site, loc) = b.place(Subject::Output(name.into()));
    let d = Dict::new(map, &site);
    let bottoms = d.string_or_strings("Bottom")?;
    let [bottom] = bottoms.as_slice() else {
        return Err(d.bad("Bottom", format!("must name one value, found {}", bottoms.len())));
    };
    let unknown = || FrontError::UnknownBottom { site: Box::new(site.clone()), bottom: (*bottom).into() };
    let source = b.value(bottom).ok_or_else(unknown)?;
    push_output(b, &d, name, (bottom, source), loc)
}

/// Adds the module output `name` exposing the value `source` (its name and value), with
/// the layout and the `OutputType` check of the output entry `d` (`Outputs` entry or
/// `OutputList` item).
pub(crate) fn push_output(
    b: &mut Builder<'_>,
    d: &Dict<'_>,
    name: &str,
    source: (&str, (ValueId, TensorType)),
    loc: Location,
) -> Result<()> {
    let (bottom, (value, ty)) = source;
    if let Some(want) = d.opt_dtype("OutputType")? {
        if want != ty.dtype {
            return Err(d.bad(
                "OutputType",
                format!(
                    "{} differs from the type {} of '{bottom}' (type conversion at an output is not supported)",
                    dtype_name(want),
                    dtype_name(ty.dtype)
                ),
            ));
        }
    }
    let layout = layout(d, "Output")?;
    b.module.outputs.push(Port { name: name.into(), value, layout, loc });
    Ok(())
}

/// Reads `{prefix}RowStride`, `PlaneStride`, `DepthStride`, `BatchStride` and `Interleave`.
fn layout(d: &Dict<'_>, prefix: &str) -> Result<Layout> {
    let interleave_key = format!("{prefix}Interleave");
    let interleave = match d.opt_int(&interleave_key)? {
        Some(v) => Some(d.check_u32(&interleave_key, v, 1)?),
        None => None,
    };
    Ok(Layout {
        row_stride: d.opt_u64(&format!("{prefix}RowStride"))?,
        plane_stride: d.opt_u64(&format!("{prefix}PlaneStride"))?,
        depth_stride: d.opt_u64(&format!("{prefix}DepthStride"))?,
        batch_stride: d.opt_u64(&format!("{prefix}BatchStride"))?,
        interleave,
    })
}
