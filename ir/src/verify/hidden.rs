//! The hidden-layer ops (seed 002 Tables B.1 and B.2), verified from one table.
//!
//! Each op of [`SPECS`] (`hidden_table.rs`) states its operand count range, its attribute
//! schema (name, kind, required, allowed values or range), whether the result keeps the
//! first operand's element type, and a shape rule (`hidden_shape.rs`) that infers the
//! result extents from the operands and attributes. The verifier checks every op of the
//! table the same way: operand and result counts, unknown attributes, each attribute
//! against its schema, the element type, then (when the attributes are sound) the
//! inferred extents against the result's.
//!
//! The rules are structural: what makes the op well-formed on any chip. Per-chip gates
//! (factor sets, the M1's missing texture engine, the TopK band, ...) belong to the
//! validators of `passes`, so an op they reject still verifies and reaches them.
//! [`infer_extents`] is public so front ends infer a result type with the same rule.

use super::check::{dims5, OpCx, AXIS_NAMES};
use super::hidden_shape::{self, Rule};
use super::hidden_table::SPECS;
use crate::attr::{Attr, Attrs};
use crate::opcode::OpCode;
use crate::types::TensorType;

/// The kind and range of one attribute.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A finite float in `min..=max`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A boolean.
    Bool,
    /// One of the listed strings.
    Str(&'static [&'static str]),
    /// An axis name (`"batch"`, `"channel"`, `"depth"`, `"height"`, `"width"`).
    Axis,
    /// A non-empty array of distinct axis names.
    Axes,
    /// An array of integers, each >= `min`; exactly `len` of them, or any non-zero count
    /// when `len` is 0.
    Ints {
        /// Required length (0: any non-zero length).
        len: usize,
        /// Smallest allowed element.
        min: i64,
    },
    /// A `dense_resource` blob.
    Resource,
}

/// One attribute of an op's schema.
#[derive(Debug, Clone, Copy)]
pub struct AttrSpec {
    /// The attribute name.
    pub name: &'static str,
    /// Its kind and range.
    pub kind: Kind,
    /// Whether it must be present.
    pub required: bool,
}

/// The contract of one hidden-layer op.
#[derive(Debug, Clone, Copy)]
pub struct OpSpec {
    /// The op.
    pub opcode: OpCode,
    /// Fewest operands.
    pub min_operands: usize,
    /// Most operands.
    pub max_operands: usize,
    /// The attribute schema; attributes not listed are rejected.
    pub attrs: &'static [AttrSpec],
    /// Whether the result has the first operand's element type (data movement).
    pub keeps_dtype: bool,
    /// How the result extents follow from operands and attributes.
    pub(crate) rule: Rule,
}

/// A required attribute.
pub(super) const fn req(name: &'static str, kind: Kind) -> AttrSpec {
    AttrSpec { name, kind, required: true }
}

/// An optional attribute.
pub(super) const fn opt(name: &'static str, kind: Kind) -> AttrSpec {
    AttrSpec { name, kind, required: false }
}

/// The contract of `opcode`, if it is a hidden-layer op.
pub fn spec(opcode: OpCode) -> Option<&'static OpSpec> {
    SPECS.iter().find(|s| s.opcode == opcode)
}

/// The result extents (N, C, D, H, W) of a hidden-layer op from its attributes and
/// operand types: `None` when `opcode` is not in the table or its result shape is free
/// (`anec.random`, `anec.nms`); `Some(Err(reason))` when the operands and attributes do
/// not fit together. Attributes are read leniently: call after checking them.
pub fn infer_extents(opcode: OpCode, attrs: &Attrs, operands: &[TensorType]) -> Option<Result<[u32; 5], String>> {
    let spec = spec(opcode)?;
    hidden_shape::infer(spec.rule, attrs, operands)
}

/// Verifies an op listed in the table; returns false when `opcode` is not in it.
pub(super) fn verify(cx: &mut OpCx<'_, '_>) -> bool {
    let Some(spec) = spec(cx.op.opcode) else { return false };
    let names: Vec<&str> = spec.attrs.iter().map(|a| a.name).collect();
    cx.known_attrs(&names);
    let inputs = cx.operands(spec.min_operands, spec.max_operands);
    let result = cx.result();
    // Every attribute is checked (no short circuit), so one run reports them all.
    let attrs_ok = spec.attrs.iter().filter(|a| !check_attr(cx, a)).count() == 0;
    let (Some(inputs), Some(out)) = (inputs, result) else { return true };
    if spec.keeps_dtype {
        if let Some(x) = inputs.first() {
            if out.dtype != x.dtype {
                cx.err(format!("result element type {} differs from the operand's {}", out.dtype, x.dtype));
            }
        }
    }
    if !attrs_ok {
        return true;
    }
    match hidden_shape::infer(spec.rule, &cx.op.attrs, &inputs) {
        None => {}
        Some(Err(reason)) => cx.err(reason),
        Some(Ok(want)) => compare_extents(cx, &out, want),
    }
    true
}

/// Reports each axis where the result differs from the inferred extents.
fn compare_extents(cx: &mut OpCx<'_, '_>, out: &TensorType, want: [u32; 5]) {
    let got = dims5(out);
    for axis in 0..5 {
        if got[axis] != want[axis] {
            let name = AXIS_NAMES[axis];
            cx.err(format!("result {name} is {}, expected {}", got[axis], want[axis]));
        }
    }
}

/// Checks one attribute against its schema; false when it is missing (and required) or
/// malformed.
fn check_attr(cx: &mut OpCx<'_, '_>, spec: &AttrSpec) -> bool {
    let Some(attr) = cx.op.attr(spec.name) else {
        if spec.required {
            cx.err(format!("missing attribute `{}` ({})", spec.name, describe_kind(spec.kind)));
        }
        return !spec.required;
    };
    match check_value(attr, spec.kind) {
        Ok(()) => true,
        Err(problem) => {
            cx.err(format!("attribute `{}` must be {}, {problem}", spec.name, describe_kind(spec.kind)));
            false
        }
    }
}

/// Why `attr` does not fit `kind`, if it does not.
fn check_value(attr: &Attr, kind: Kind) -> Result<(), String> {
    let got = || format!("got {}", describe(attr));
    match (kind, attr) {
        (Kind::Int { min, max }, Attr::Int(v)) if (min..=max).contains(v) => Ok(()),
        (Kind::Float { min, max }, Attr::Float(v)) if v.is_finite() && (min..=max).contains(v) => Ok(()),
        (Kind::Bool, Attr::Bool(_)) | (Kind::Resource, Attr::Resource { .. }) => Ok(()),
        (Kind::Str(allowed), Attr::Str(s)) if allowed.contains(&s.as_str()) => Ok(()),
        (Kind::Axis, Attr::Str(s)) if AXIS_NAMES.contains(&s.as_str()) => Ok(()),
        (Kind::Axes, Attr::Array(items)) if distinct_axes(items) => Ok(()),
        (Kind::Ints { len, min }, Attr::Array(items)) if ints_fit(items, len, min) => Ok(()),
        _ => Err(got()),
    }
}

/// Whether `items` is a non-empty list of distinct axis names.
fn distinct_axes(items: &[Attr]) -> bool {
    let names: Option<Vec<&str>> = items.iter().map(Attr::as_str).collect();
    let Some(names) = names else { return false };
    let known = names.iter().all(|n| AXIS_NAMES.contains(n));
    let distinct = names.iter().enumerate().all(|(i, n)| !names[..i].contains(n));
    !names.is_empty() && known && distinct
}

/// Whether `items` are integers >= `min`, `len` of them (any non-zero count for 0).
fn ints_fit(items: &[Attr], len: usize, min: i64) -> bool {
    let count_ok = if len == 0 { !items.is_empty() } else { items.len() == len };
    count_ok && items.iter().all(|a| a.as_int().is_some_and(|v| v >= min))
}

/// What a kind expects, for messages.
pub fn describe_kind(kind: Kind) -> String {
    match kind {
        Kind::Int { min, max } if max == i64::MAX => format!("an integer >= {min}"),
        Kind::Int { min, max } => format!("an integer in {min}..={max}"),
        Kind::Float { min, max } if max == f64::MAX && min == -f64::MAX => "a finite float".into(),
        Kind::Float { min, max } if max == f64::MAX => format!("a finite float >= {min}"),
        Kind::Float { min, max } => format!("a float in {min}..={max}"),
        Kind::Bool => "a bool".into(),
        Kind::Str(allowed) => format!("one of {allowed:?}"),
        Kind::Axis => "an axis name (\"batch\", \"channel\", ...)".into(),
        Kind::Axes => "a non-empty array of distinct axis names".into(),
        Kind::Ints { len: 0, min } => format!("a non-empty array of integers >= {min}"),
        Kind::Ints { len, min } => format!("an array of {len} integers >= {min}"),
        Kind::Resource => "a dense_resource".into(),
    }
}

/// Short description of an attribute value for messages.
fn describe(a: &Attr) -> String {
    match a {
        Attr::Int(v) => format!("integer {v}"),
        Attr::Float(v) => format!("float {v}"),
        Attr::Bool(v) => format!("bool {v}"),
        Attr::Str(v) => format!("string {v:?}"),
        Attr::Array(v) => format!("array {}", describe_array(v)),
        Attr::Resource { name, ty } => format!("dense_resource<{name}> : {ty}"),
    }
}

/// `[1, 2]` or `["a", "b"]`, shortened past 8 elements.
fn describe_array(items: &[Attr]) -> String {
    let shown: Vec<String> = items
        .iter()
        .take(8)
        .map(|a| match a {
            Attr::Int(v) => v.to_string(),
            Attr::Str(s) => format!("{s:?}"),
            other => other.kind_name().to_string(),
        })
        .collect();
    let more = if items.len() > 8 { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

#[cfg(test)]
#[path = "hidden_tests.rs"]
mod tests;
