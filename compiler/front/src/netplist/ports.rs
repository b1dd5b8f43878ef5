//! Network inputs and outputs: the entries named by `Inputs` and `Outputs`.
//!
//! An input entry gives the tensor shape (`BatchSize`, `InputChannels`, `InputDepth`,
//! `InputHeight`, `InputWidth`), the element type (`InputType`) and optionally its memory
//! layout (`Input*Stride`, `InputInterleave`). An output entry (`probs@output`) names the
//! value it exposes with `Bottom` and optionally its layout (`Output*Stride`,
//! `OutputInterleave`) and type (`OutputType`, which must match the value's type).

use super::reader::{dtype_name, Dict, Result};
use super::{entry, Builder};
use crate::error::{FrontError, Subject};
use anec_ir::{Layout, Port, TensorType};

/// Adds the input `name` of the network as a module input.
pub(crate) fn add_input(b: &mut Builder<'_>, net: &Dict<'_>, name: &str) -> Result<()> {
    let map = entry(net, name, "Inputs")?;
    let (site, loc) = b.place(Subject::Input(name.into()));
    let d = Dict::new(map, &site);
    let ty = TensorType {
        n: d.dim_or("BatchSize", 1)?,
        c: d.dim("InputChannels")?,
        d: d.dim_or("InputDepth", 1)?,
        h: d.dim("InputHeight")?,
        w: d.dim("InputWidth")?,
        dtype: d.dtype("InputType")?,
    };
    let layout = layout(&d, "Input")?;
    if b.values.contains_key(name) {
        return Err(net.bad("Inputs", format!("'{name}' is listed twice")));
    }
    let value = b.module.add_value(ty);
    b.module.inputs.push(Port { name: name.into(), value, layout, loc });
    b.values.insert(name.into(), value);
    Ok(())
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
    let value = *b.values.get(*bottom).ok_or_else(unknown)?;
    let ty = b.module.ty(value).copied().ok_or_else(unknown)?;
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
    let layout = layout(&d, "Output")?;
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
