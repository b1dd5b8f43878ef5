//! MIL types: element types, tensor shapes, and the container types of the grammar.

use std::fmt;

/// A MIL element type, with MILBlob's dtype code where the blob format has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// `fp16`
    Fp16,
    /// `fp32`
    Fp32,
    /// `fp64`
    Fp64,
    /// `bf16`
    Bf16,
    /// `fp8e4m3fn` (MILBlob 16)
    Fp8E4M3,
    /// `fp8e5m2` (MILBlob 17)
    Fp8E5M2,
    /// `bool`
    Bool,
    /// `string`
    String,
    /// `int4`
    Int4,
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint1`
    Uint1,
    /// `uint2`
    Uint2,
    /// `uint3`
    Uint3,
    /// `uint4`
    Uint4,
    /// `uint6`
    Uint6,
    /// `uint8`
    Uint8,
    /// `uint16`
    Uint16,
    /// `uint32`
    Uint32,
    /// `uint64`
    Uint64,
}

/// Every element type with its text name.
const NAMES: [(ScalarType, &str); 22] = [
    (ScalarType::Fp16, "fp16"),
    (ScalarType::Fp32, "fp32"),
    (ScalarType::Fp64, "fp64"),
    (ScalarType::Bf16, "bf16"),
    (ScalarType::Fp8E4M3, "fp8e4m3fn"),
    (ScalarType::Fp8E5M2, "fp8e5m2"),
    (ScalarType::Bool, "bool"),
    (ScalarType::String, "string"),
    (ScalarType::Int4, "int4"),
    (ScalarType::Int8, "int8"),
    (ScalarType::Int16, "int16"),
    (ScalarType::Int32, "int32"),
    (ScalarType::Int64, "int64"),
    (ScalarType::Uint1, "uint1"),
    (ScalarType::Uint2, "uint2"),
    (ScalarType::Uint3, "uint3"),
    (ScalarType::Uint4, "uint4"),
    (ScalarType::Uint6, "uint6"),
    (ScalarType::Uint8, "uint8"),
    (ScalarType::Uint16, "uint16"),
    (ScalarType::Uint32, "uint32"),
    (ScalarType::Uint64, "uint64"),
];

impl ScalarType {
    /// The text name (`fp16`, `int32`, ...).
    pub fn name(self) -> &'static str {
        NAMES.iter().find(|(t, _)| *t == self).map_or("?", |(_, n)| n)
    }

    /// Looks a type up by its text name.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// Size of one element in bits (strings: 0).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Uint1 | Bool => 1,
            Uint2 => 2,
            Uint3 => 3,
            Int4 | Uint4 => 4,
            Uint6 => 6,
            Int8 | Uint8 | Fp8E4M3 | Fp8E5M2 => 8,
            Fp16 | Bf16 | Int16 | Uint16 => 16,
            Fp32 | Int32 | Uint32 => 32,
            Fp64 | Int64 | Uint64 => 64,
            String => 0,
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::Fp16
                | ScalarType::Fp32
                | ScalarType::Fp64
                | ScalarType::Bf16
                | ScalarType::Fp8E4M3
                | ScalarType::Fp8E5M2
        )
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dimension: a number or `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A fixed extent.
    Known(u64),
    /// `?`: decided at run time.
    Unknown,
}

/// A MIL type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// `tensor<DT, [d0, d1, ...]>` (rank 0 is `tensor<DT, []>`).
    Tensor {
        /// Element type.
        dtype: ScalarType,
        /// Dimensions.
        shape: Vec<Dim>,
    },
    /// The rank-0 short form of program 1.3: `fp16`, `int32`, `string`, ...
    Scalar(ScalarType),
    /// `state<T>`.
    State(Box<Type>),
    /// `list<T, N>` (N may be `?`).
    List(Box<Type>, Dim),
    /// `dict<K, V>`.
    Dict(Box<Type>, Box<Type>),
    /// `tuple<T, ...>`.
    Tuple(Vec<Type>),
}

impl Type {
    /// Element type of a tensor or scalar (through `state<>`).
    pub fn dtype(&self) -> Option<ScalarType> {
        match self {
            Type::Tensor { dtype, .. } | Type::Scalar(dtype) => Some(*dtype),
            Type::State(t) => t.dtype(),
            _ => None,
        }
    }

    /// Dimensions of a tensor (empty for a scalar); `None` for other types.
    pub fn shape(&self) -> Option<&[Dim]> {
        match self {
            Type::Tensor { shape, .. } => Some(shape),
            Type::Scalar(_) => Some(&[]),
            Type::State(t) => t.shape(),
            _ => None,
        }
    }

    /// Dimensions when all are known.
    pub fn static_shape(&self) -> Option<Vec<u64>> {
        self.shape()?.iter().map(|d| if let Dim::Known(v) = d { Some(*v) } else { None }).collect()
    }

    /// Number of elements when the shape is static.
    pub fn elements(&self) -> Option<u64> {
        self.static_shape()?.iter().try_fold(1u64, |acc, d| acc.checked_mul(*d))
    }
}
