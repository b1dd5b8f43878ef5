//! Hidden-layer units (seed 002 Table B.1, plus `Resize`), read from one table.
//!
//! Each unit Type of [`UNITS`] (`hidden_table.rs`) lists its bottom count range and its
//! `Params` keys: the attribute each becomes, how its value is read (integer, extent,
//! fp16 pattern, flag, axis name, enumerated spelling) and its default (none: the key is
//! required, and a missing one is a `MissingKey` error naming the unit and the key). The
//! result shape comes from the IR's own rule (`anec_ir::verify::infer_extents`), so the
//! front end and the verifier cannot disagree; shape errors name the unit. Structurally
//! sound layers the engine may still reject (factor sets, arch gates) parse and reach the
//! validators. The keys, spellings and defaults are in `docs/netplist.md`.

use super::hidden_table::UNITS;
use super::{Lowered, UnitCx};
use crate::netplist::reader::{Dict, Result};
use anec_ir::{Attr, Attrs, OpCode, TensorType};
use plist::Value;

/// How a `Params` value is read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Param {
    /// An integer >= 1 (extent, count, factor).
    Positive,
    /// An integer >= 0 (pad).
    NonNegative,
    /// An fp16 bit pattern stored as an integer, or a real.
    Half,
    /// A boolean (`<true/>`, or the integers 0 and 1).
    Flag,
    /// An axis name: `Batch`, `Channel`, `Depth`, `Height`, `Width` (case-insensitive).
    Axis,
    /// One of the netplist spellings, each mapped to its attribute value.
    Enum(&'static [(&'static str, &'static str)]),
}

/// What a missing key means.
#[derive(Debug, Clone, Copy)]
pub(super) enum Missing {
    /// Required: no default.
    Required,
    /// Optional, and absent from the op when missing.
    Absent,
    /// This integer.
    Int(i64),
    /// This float.
    Float(f64),
    /// This flag.
    Bool(bool),
}

/// One `Params` key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    /// The key in `Params`.
    pub key: &'static str,
    /// The attribute it becomes (a temporary name when `finish` packs it).
    pub attr: &'static str,
    /// How it is read.
    pub param: Param,
    /// What a missing key means.
    pub default: Missing,
}

/// How the result shape is found.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// The IR's rule for the op.
    Infer,
    /// A unit-specific function of the operands.
    Custom(fn(&UnitCx<'_>) -> Result<[u32; 5]>),
}

/// One hidden-layer unit Type.
#[derive(Debug, Clone, Copy)]
pub(super) struct UnitSpec {
    /// The netplist `Type`.
    pub unit_type: &'static str,
    /// The op it lowers to.
    pub opcode: OpCode,
    /// Fewest and most bottoms.
    pub bottoms: (usize, usize),
    /// The `Params` keys.
    pub keys: &'static [Key],
    /// Attributes read another way than one key each (packing, nested arrays).
    pub finish: Option<fn(&Dict<'_>, &mut Attrs) -> Result<()>>,
    /// The result shape.
    pub result: Shape,
}

/// The unit Types of the table.
#[cfg(test)]
pub(crate) fn type_names() -> Vec<&'static str> {
    UNITS.iter().map(|u| u.unit_type).collect()
}

/// Lowers `cx` if its Type is a hidden-layer unit; `None` otherwise.
pub(crate) fn lower(cx: &UnitCx<'_>, unit_type: &str) -> Option<Result<Lowered>> {
    let spec = UNITS.iter().find(|u| u.unit_type == unit_type)?;
    Some(lower_spec(cx, spec))
}

fn lower_spec(cx: &UnitCx<'_>, spec: &UnitSpec) -> Result<Lowered> {
    check_bottoms(cx, spec.bottoms)?;
    let params = match cx.unit.opt_dict("Params")? {
        Some(p) => Some(p),
        None if spec.keys.iter().all(|k| !matches!(k.default, Missing::Required)) && spec.finish.is_none() => None,
        None => return Err(cx.unit.missing("Params")),
    };
    let mut attrs = Attrs::new();
    if let Some(p) = &params {
        for key in spec.keys {
            if let Some(v) = read_key(p, key)? {
                attrs.insert(key.attr.into(), v);
            }
        }
        if let Some(finish) = spec.finish {
            finish(p, &mut attrs)?;
        }
    } else {
        for key in spec.keys {
            if let Some(v) = default_value(key.default) {
                attrs.insert(key.attr.into(), v);
            }
        }
    }
    let dims = match spec.result {
        Shape::Custom(f) => f(cx)?,
        Shape::Infer => infer(cx, spec.opcode, &attrs)?,
    };
    let [n, c, d, h, w] = dims;
    let result = TensorType { n, c, d, h, w, dtype: cx.out_dtype };
    Ok(Lowered { opcode: spec.opcode, attrs, result, resources: Vec::new() })
}

/// Checks the bottom count.
fn check_bottoms(cx: &UnitCx<'_>, (lo, hi): (usize, usize)) -> Result<()> {
    let n = cx.operands.len();
    if (lo..=hi).contains(&n) {
        return Ok(());
    }
    let want = if lo == hi { format!("{lo}") } else { format!("{lo} or {hi}") };
    Err(cx.unit.bad("Bottom", format!("expects {want} bottoms, found {n}")))
}

/// The result extents by the IR's rule for `opcode`.
fn infer(cx: &UnitCx<'_>, opcode: OpCode, attrs: &Attrs) -> Result<[u32; 5]> {
    let types: Vec<TensorType> = cx.operands.iter().map(|(_, t)| *t).collect();
    match anec_ir::verify::infer_extents(opcode, attrs, &types) {
        Some(Ok(dims)) => Ok(dims),
        Some(Err(reason)) => Err(cx.shape_error(reason)),
        None => Err(cx.shape_error(format!("{opcode} has no shape rule"))),
    }
}

/// The attribute a missing key defaults to.
fn default_value(d: Missing) -> Option<Attr> {
    match d {
        Missing::Required | Missing::Absent => None,
        Missing::Int(v) => Some(Attr::Int(v)),
        Missing::Float(v) => Some(Attr::Float(v)),
        Missing::Bool(v) => Some(Attr::Bool(v)),
    }
}

/// Reads one key: its attribute, its default, or a missing-key error.
fn read_key(p: &Dict<'_>, key: &Key) -> Result<Option<Attr>> {
    if p.get(key.key).is_none() {
        return match key.default {
            Missing::Required => Err(p.missing(key.key)),
            d => Ok(default_value(d)),
        };
    }
    read_value(p, key.key, key.param).map(Some)
}

/// Reads the present key `key` as `param`.
fn read_value(p: &Dict<'_>, key: &str, param: Param) -> Result<Attr> {
    match param {
        Param::Positive => Ok(Attr::Int(i64::from(p.dim(key)?))),
        Param::NonNegative => Ok(Attr::Int(i64::from(p.u32_or(key, 0)?))),
        Param::Half => p.opt_half(key)?.map(Attr::Float).ok_or_else(|| p.missing(key)),
        Param::Flag => flag(p, key).map(Attr::Bool),
        Param::Axis => axis_name(p, key, p.str(key)?).map(|a| Attr::Str(a.into())),
        Param::Enum(spellings) => {
            let s = p.str(key)?;
            let found = spellings.iter().find(|(from, _)| from.eq_ignore_ascii_case(s));
            let names: Vec<&str> = spellings.iter().map(|(from, _)| *from).collect();
            found
                .map(|(_, to)| Attr::Str((*to).into()))
                .ok_or_else(|| p.bad(key, format!("unknown value '{s}' (expected {})", names.join(", "))))
        }
    }
}

/// A boolean key: `<true/>`/`<false/>`, or the integers 1 and 0.
fn flag(p: &Dict<'_>, key: &str) -> Result<bool> {
    match p.req(key)? {
        Value::Boolean(b) => Ok(*b),
        Value::Integer(_) => match p.int(key)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(p.bad(key, format!("{other} is not a flag (expected a boolean, 0 or 1)"))),
        },
        other => Err(p.wrong(key, "a boolean (or 0 or 1)", other)),
    }
}

/// The anec axis name of a netplist dimension name.
pub(super) fn axis_name(p: &Dict<'_>, key: &str, s: &str) -> Result<&'static str> {
    const AXES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];
    AXES.iter()
        .copied()
        .find(|a| a.eq_ignore_ascii_case(s))
        .ok_or_else(|| p.bad(key, format!("unknown dimension '{s}' (expected Batch, Channel, Depth, Height or Width)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_types_are_distinct_and_new() {
        let names = type_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
            let legacy = ["Conv", "Neuron", "GOC", "ScaledElementWise", "Concat", "Reshape", "InputView", "Broadcast"];
            assert!(!legacy.contains(n), "{n} is read by its own file");
        }
    }
}
