//! Attribute values carried by anec ops.
//!
//! Attributes are a small closed set mirroring MLIR builtin attributes: integers (`3 : i64`),
//! floats (`1.0 : f64`), booleans, strings, arrays, and `dense_resource` references to weight
//! blobs held in the module's resource table. Ops keep them in a sorted dictionary so the
//! printed form is deterministic.

use crate::types::TensorType;
use std::collections::BTreeMap;

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// 64-bit signed integer (`3 : i64`).
    Int(i64),
    /// 64-bit float (`1.5 : f64`); fp16 parameters are stored exactly.
    Float(f64),
    /// Boolean (`true`).
    Bool(bool),
    /// String (`"relu"`).
    Str(String),
    /// Array (`[1, 1]`).
    Array(Vec<Attr>),
    /// Reference to a blob of the module's resource table, with its tensor type
    /// (`dense_resource<w0> : tensor<3x3x1x1xf16>`).
    Resource {
        /// Key in [`crate::Module::resources`].
        name: String,
        /// Shape and element type of the blob.
        ty: TensorType,
    },
}

/// The attribute dictionary of an op, sorted by name.
pub type Attrs = BTreeMap<String, Attr>;

impl Attr {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attr::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The float (integers widen), if this is a number.
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Attr::Float(v) => Some(*v),
            Attr::Int(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attr::Bool(v) => Some(*v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(v) => Some(v),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Attr]> {
        match self {
            Attr::Array(v) => Some(v),
            _ => None,
        }
    }

    /// An array of integers, if this is one.
    pub fn as_int_array(&self) -> Option<Vec<i64>> {
        self.as_array()?.iter().map(Attr::as_int).collect()
    }

    /// The resource name and type, if this is a `dense_resource`.
    pub fn as_resource(&self) -> Option<(&str, &TensorType)> {
        match self {
            Attr::Resource { name, ty } => Some((name, ty)),
            _ => None,
        }
    }

    /// Short name of the attribute kind, used in verifier messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Attr::Int(_) => "integer",
            Attr::Float(_) => "float",
            Attr::Bool(_) => "bool",
            Attr::Str(_) => "string",
            Attr::Array(_) => "array",
            Attr::Resource { .. } => "dense_resource",
        }
    }
}
