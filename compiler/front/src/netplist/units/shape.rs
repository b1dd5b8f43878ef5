//! Shape units: `Concat`, `Reshape`, `InputView` and `Broadcast`.
//!
//! Axes are named `Batch`, `Channel`, `Depth`, `Height`, `Width` (case-insensitive) and
//! become the lower-case axis names of `docs/ops.md`.
//! - `Concat`: `Params.Dimension` (default `Channel`, also when `Params` is absent); two or
//!   more bottoms equal on every other axis; the result axis is the sum.
//! - `Reshape`: `ReshapedChannel`, `ReshapedHeight`, `ReshapedWidth` (required),
//!   `ReshapedBatch`, `ReshapedDepth` (default 1); element counts must agree.
//! - `InputView`: `Dimension`, `Size` (required), `Offset` (default 0), `Step` (default 1);
//!   the window must lie inside the operand.
//! - `Broadcast`: `BroadcastInfo`, an array of `{Dimension, Size}`; each axis must have
//!   extent 1 in the operand.

use super::{checked_elements, Lowered, UnitCx};
use crate::netplist::reader::{Dict, Result};
use anec_ir::{Attr, Attrs, OpCode, TensorType};
use plist::Value;

/// A tensor axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Batch,
    Channel,
    Depth,
    Height,
    Width,
}

impl Axis {
    const ALL: [Axis; 5] = [Axis::Batch, Axis::Channel, Axis::Depth, Axis::Height, Axis::Width];

    /// The anec axis name.
    fn name(self) -> &'static str {
        match self {
            Axis::Batch => "batch",
            Axis::Channel => "channel",
            Axis::Depth => "depth",
            Axis::Height => "height",
            Axis::Width => "width",
        }
    }

    fn extent(self, t: &TensorType) -> u32 {
        match self {
            Axis::Batch => t.n,
            Axis::Channel => t.c,
            Axis::Depth => t.d,
            Axis::Height => t.h,
            Axis::Width => t.w,
        }
    }

    fn set(self, t: &mut TensorType, v: u32) {
        match self {
            Axis::Batch => t.n = v,
            Axis::Channel => t.c = v,
            Axis::Depth => t.d = v,
            Axis::Height => t.h = v,
            Axis::Width => t.w = v,
        }
    }
}

/// An optional axis key.
fn opt_axis(p: &Dict<'_>, key: &str) -> Result<Option<Axis>> {
    let Some(s) = p.opt_str(key)? else { return Ok(None) };
    let found = Axis::ALL.iter().copied().find(|a| a.name().eq_ignore_ascii_case(s));
    found
        .map(Some)
        .ok_or_else(|| p.bad(key, format!("unknown dimension '{s}' (expected Batch, Channel, Depth, Height or Width)")))
}

/// A required axis key.
fn axis(p: &Dict<'_>, key: &str) -> Result<Axis> {
    opt_axis(p, key)?.ok_or_else(|| p.missing(key))
}

fn lowered(opcode: OpCode, attrs: Attrs, result: TensorType) -> Lowered {
    Lowered { opcode, attrs, result, resources: Vec::new() }
}

/// Lowers a `Concat` unit.
pub(crate) fn concat(cx: &UnitCx<'_>) -> Result<Lowered> {
    let ax = match cx.unit.opt_dict("Params")? {
        Some(p) => opt_axis(&p, "Dimension")?.unwrap_or(Axis::Channel),
        None => Axis::Channel,
    };
    let (first, rest) = match cx.operands.as_slice() {
        [(_, first), rest @ ..] if !rest.is_empty() => (first, rest),
        other => {
            let n = other.len();
            return Err(cx.unit.bad("Bottom", format!("expects 2 or more bottoms, found {n}")));
        }
    };
    let mut total = u64::from(ax.extent(first));
    for (_, t) in rest {
        let mismatch = Axis::ALL.iter().any(|&a| a != ax && a.extent(t) != a.extent(first));
        if mismatch {
            let message = format!("bottoms {first} and {t} differ outside the {} axis", ax.name());
            return Err(cx.shape_error(message));
        }
        total += u64::from(ax.extent(t));
    }
    let total = u32::try_from(total).map_err(|_| cx.shape_error("concatenated extent overflows"))?;
    let mut result = TensorType { dtype: cx.out_dtype, ..*first };
    ax.set(&mut result, total);
    let mut attrs = Attrs::new();
    attrs.insert("axis".into(), Attr::Str(ax.name().into()));
    Ok(lowered(OpCode::Concat, attrs, result))
}

/// Lowers a `Reshape` unit.
pub(crate) fn reshape(cx: &UnitCx<'_>) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    let result = TensorType {
        n: p.dim_or("ReshapedBatch", 1)?,
        c: p.dim("ReshapedChannel")?,
        d: p.dim_or("ReshapedDepth", 1)?,
        h: p.dim("ReshapedHeight")?,
        w: p.dim("ReshapedWidth")?,
        dtype: cx.out_dtype,
    };
    let same = matches!((checked_elements(&result), checked_elements(&input)), (Some(a), Some(b)) if a == b);
    if !same {
        let message = format!("reshape of {input} to {result} changes the element count");
        return Err(cx.shape_error(message));
    }
    Ok(lowered(OpCode::Reshape, Attrs::new(), result))
}

/// Lowers an `InputView` unit.
pub(crate) fn input_view(cx: &UnitCx<'_>) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    let ax = axis(&p, "Dimension")?;
    let offset = p.u32_or("Offset", 0)?;
    let size = p.dim("Size")?;
    let step = p.dim_or("Step", 1)?;
    let last = u64::from(offset) + u64::from(size - 1) * u64::from(step);
    let extent = ax.extent(&input);
    if last >= u64::from(extent) {
        let message =
            format!("view offset {offset}, size {size}, step {step} exceeds the {} extent {extent}", ax.name());
        return Err(cx.shape_error(message));
    }
    let mut result = TensorType { dtype: cx.out_dtype, ..input };
    ax.set(&mut result, size);
    let mut attrs = Attrs::new();
    attrs.insert("axis".into(), Attr::Str(ax.name().into()));
    attrs.insert("offset".into(), Attr::Int(i64::from(offset)));
    attrs.insert("size".into(), Attr::Int(i64::from(size)));
    attrs.insert("step".into(), Attr::Int(i64::from(step)));
    Ok(lowered(OpCode::InputView, attrs, result))
}

/// Lowers a `Broadcast` unit.
pub(crate) fn broadcast(cx: &UnitCx<'_>) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    let infos = p.array("BroadcastInfo")?;
    let mut result = TensorType { dtype: cx.out_dtype, ..input };
    let (mut axes, mut sizes) = (Vec::new(), Vec::new());
    for (i, v) in infos.iter().enumerate() {
        let key = format!("BroadcastInfo[{i}]");
        let Value::Dictionary(map) = v else { return Err(p.wrong(&key, "a dictionary", v)) };
        let info = p.child(map, &key);
        let ax = axis(&info, "Dimension")?;
        let size = info.dim("Size")?;
        if axes.contains(&ax) {
            return Err(info.bad("Dimension", format!("axis {} is broadcast twice", ax.name())));
        }
        if ax.extent(&input) != 1 {
            let message = format!("cannot broadcast the {} axis of {input}: extent is not 1", ax.name());
            return Err(cx.shape_error(message));
        }
        ax.set(&mut result, size);
        axes.push(ax);
        sizes.push(size);
    }
    let mut attrs = Attrs::new();
    let names = axes.iter().map(|a| Attr::Str(a.name().into())).collect();
    attrs.insert("axes".into(), Attr::Array(names));
    let sizes = sizes.iter().map(|&s| Attr::Int(i64::from(s))).collect();
    attrs.insert("sizes".into(), Attr::Array(sizes));
    Ok(lowered(OpCode::Broadcast, attrs, result))
}
