//! The per-op checking context shared by every op verifier.
//!
//! [`OpCx`] reads an op's operands, results and attributes, recording an error for each
//! missing or ill-typed piece and returning `None` for it, so a verifier checks what it can
//! and skips the shape rules whose inputs were already reported broken.

use super::VerifyError;
use crate::attr::Attr;
use crate::module::{Module, Op};
use crate::types::TensorType;

/// Axis names in the engine's N, C, D, H, W order.
pub(super) const AXIS_NAMES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

/// Dimensions in N, C, D, H, W order.
pub(super) fn dims5(t: &TensorType) -> [u32; 5] {
    [t.n, t.c, t.d, t.h, t.w]
}

/// Whether two types have the same shape (element types may differ).
pub(super) fn same_shape(a: &TensorType, b: &TensorType) -> bool {
    dims5(a) == dims5(b)
}

/// Checking context for one op; errors go to the shared list.
pub(super) struct OpCx<'a, 'e> {
    /// The module holding the op.
    pub m: &'a Module,
    /// The op being verified.
    pub op: &'a Op,
    index: usize,
    errs: &'e mut Vec<VerifyError>,
}

impl<'a, 'e> OpCx<'a, 'e> {
    /// A context for op number `index` of `m`.
    pub fn new(m: &'a Module, index: usize, op: &'a Op, errs: &'e mut Vec<VerifyError>) -> Self {
        OpCx { m, op, index, errs }
    }

    /// Records a problem with this op.
    pub fn err(&mut self, message: impl Into<String>) {
        self.errs.push(VerifyError::for_op(self.index, self.op, message));
    }

    /// Rejects attributes outside `allowed` (and the reserved `name`).
    pub fn known_attrs(&mut self, allowed: &[&str]) {
        let op = self.op;
        for key in op.attrs.keys() {
            if key == "name" {
                self.err("attribute `name` is reserved for the op name");
            } else if !allowed.contains(&key.as_str()) {
                self.err(format!("unknown attribute `{key}`"));
            }
        }
    }

    /// Checks the operand count is in `min..=max` and returns the operand types.
    pub fn operands(&mut self, min: usize, max: usize) -> Option<Vec<TensorType>> {
        let n = self.op.operands.len();
        if n < min || n > max {
            let want = match (min, max) {
                (a, b) if a == b => format!("{a}"),
                (a, usize::MAX) => format!("at least {a}"),
                (a, b) => format!("{a} to {b}"),
            };
            self.err(format!("expects {want} operands, got {n}"));
            return None;
        }
        let m = self.m;
        self.op.operands.iter().map(|&id| m.ty(id).copied()).collect()
    }

    /// Checks there is exactly one result and returns its type.
    pub fn result(&mut self) -> Option<TensorType> {
        match self.op.results.as_slice() {
            [id] => self.m.ty(*id).copied(),
            rs => {
                self.err(format!("expects 1 result, got {}", rs.len()));
                None
            }
        }
    }

    /// An attribute converted by `conv`; reports it missing (if required) or of the
    /// wrong kind (`kind` describes what was expected).
    fn typed<T>(&mut self, name: &str, required: bool, kind: &str, conv: impl Fn(&'a Attr) -> Option<T>) -> Option<T> {
        let op = self.op;
        let Some(attr) = op.attr(name) else {
            if required {
                self.err(format!("missing attribute `{name}` ({kind})"));
            }
            return None;
        };
        let value = conv(attr);
        if value.is_none() {
            self.err(format!("attribute `{name}` must be {kind}, got {}", describe(attr)));
        }
        value
    }

    /// A required integer.
    pub fn int(&mut self, name: &str) -> Option<i64> {
        self.typed(name, true, "an integer", Attr::as_int)
    }

    /// A float, required or optional.
    pub fn float(&mut self, name: &str, required: bool) -> Option<f64> {
        let conv = |a: &Attr| match a {
            Attr::Float(v) => Some(*v),
            _ => None,
        };
        self.typed(name, required, "a float", conv)
    }

    /// A required boolean.
    pub fn bool(&mut self, name: &str) -> Option<bool> {
        self.typed(name, true, "a bool", Attr::as_bool)
    }

    /// A required string.
    pub fn string(&mut self, name: &str) -> Option<&'a str> {
        self.typed(name, true, "a string", Attr::as_str)
    }

    /// A required array of exactly `len` integers.
    pub fn int_array(&mut self, name: &str, len: usize) -> Option<Vec<i64>> {
        let kind = format!("an array of {len} integers");
        let conv = |a: &Attr| a.as_int_array().filter(|v| v.len() == len);
        self.typed(name, true, &kind, conv)
    }

    /// A required array of integers of any length.
    pub fn ints(&mut self, name: &str) -> Option<Vec<i64>> {
        self.typed(name, true, "an array of integers", Attr::as_int_array)
    }

    /// A `dense_resource` attribute's type, required or optional.
    pub fn resource(&mut self, name: &str, required: bool) -> Option<TensorType> {
        let conv = |a: &Attr| a.as_resource().map(|(_, ty)| *ty);
        self.typed(name, required, "a dense_resource", conv)
    }

    /// A required axis name, as an index into N, C, D, H, W.
    pub fn axis(&mut self, name: &str) -> Option<usize> {
        self.typed(name, true, "an axis name (\"batch\", \"channel\", ...)", axis_of)
    }

    /// A required non-empty array of distinct axis names.
    pub fn axes(&mut self, name: &str) -> Option<Vec<usize>> {
        let conv = |a: &Attr| {
            let axes: Vec<usize> = a.as_array()?.iter().map(axis_of).collect::<Option<_>>()?;
            let distinct = axes.iter().enumerate().all(|(i, x)| !axes[..i].contains(x));
            (distinct && !axes.is_empty()).then_some(axes)
        };
        self.typed(name, true, "a non-empty array of distinct axis names", conv)
    }
}

/// The axis index named by a string attribute.
fn axis_of(a: &Attr) -> Option<usize> {
    let s = a.as_str()?;
    AXIS_NAMES.iter().position(|n| *n == s)
}

/// Short description of an attribute value for messages.
fn describe(a: &Attr) -> String {
    match a {
        Attr::Int(v) => format!("integer {v}"),
        Attr::Float(v) => format!("float {v}"),
        Attr::Bool(v) => format!("bool {v}"),
        Attr::Str(v) => format!("string {v:?}"),
        Attr::Array(v) => format!("array of {} elements", v.len()),
        Attr::Resource { name, ty } => format!("dense_resource<{name}> : {ty}"),
    }
}
