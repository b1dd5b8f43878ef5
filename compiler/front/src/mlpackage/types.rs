//! Protobuf MIL types (`ValueType`) to [`anec_ir::mil::Type`].
//!
//! Rank-0 tensors become the short form (`fp16`, `int32`) when the target text version
//! writes them that way (program 1.3), `tensor<T, []>` otherwise (program 1.0).

use super::proto::{self, dimension, value_type, DataType};
use anec_ir::mil::{Dim, ScalarType, Type};

/// How rank-0 types are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// Rank-0 tensors as `int32` instead of `tensor<int32, []>`.
    pub short_scalars: bool,
}

impl Form {
    /// The type of a rank-0 value of `dtype` in this form.
    pub fn scalar(self, dtype: ScalarType) -> Type {
        if self.short_scalars {
            Type::Scalar(dtype)
        } else {
            Type::Tensor { dtype, shape: Vec::new() }
        }
    }
}

/// Converts a (required) `ValueType`.
pub fn value_type(t: Option<&proto::ValueType>, form: Form) -> Result<Type, String> {
    let t = t.and_then(|t| t.r#type.as_ref()).ok_or("a type is missing")?;
    match t {
        value_type::Type::TensorType(t) => tensor_type(t, form),
        value_type::Type::ListType(l) => {
            let len = l.length.as_ref().map_or(Ok(Dim::Unknown), dim)?;
            Ok(Type::List(Box::new(value_type(l.r#type.as_deref(), form)?), len))
        }
        value_type::Type::TupleType(t) => {
            t.types.iter().map(|t| value_type(Some(t), form)).collect::<Result<_, _>>().map(Type::Tuple)
        }
        value_type::Type::DictionaryType(d) => Ok(Type::Dict(
            Box::new(value_type(d.key_type.as_deref(), form)?),
            Box::new(value_type(d.value_type.as_deref(), form)?),
        )),
        value_type::Type::StateType(s) => Ok(Type::State(Box::new(value_type(s.wrapped_type.as_deref(), form)?))),
    }
}

fn tensor_type(t: &proto::TensorType, form: Form) -> Result<Type, String> {
    let dtype = data_type(t.data_type)?;
    if t.rank < 0 {
        return Err(format!("tensor<{dtype}> of variable rank is not supported"));
    }
    if usize::try_from(t.rank).ok() != Some(t.dimensions.len()) {
        return Err(format!("tensor<{dtype}> has rank {} but {} dimensions", t.rank, t.dimensions.len()));
    }
    let shape = t.dimensions.iter().map(dim).collect::<Result<Vec<_>, _>>()?;
    if shape.is_empty() {
        return Ok(form.scalar(dtype));
    }
    Ok(Type::Tensor { dtype, shape })
}

fn dim(d: &proto::Dimension) -> Result<Dim, String> {
    match d.dimension.as_ref() {
        Some(dimension::Dimension::Constant(c)) => Ok(Dim::Known(c.size)),
        Some(dimension::Dimension::Unknown(u)) if !u.variadic => Ok(Dim::Unknown),
        Some(dimension::Dimension::Unknown(_)) => Err("variadic dimensions are not supported".into()),
        None => Err("a dimension is empty".into()),
    }
}

/// The element type of a protobuf `DataType` code.
pub fn data_type(code: i32) -> Result<ScalarType, String> {
    use ScalarType as S;
    let t = DataType::try_from(code).map_err(|_| format!("unknown data type code {code}"))?;
    Ok(match t {
        DataType::UnusedType => return Err("data type UNUSED_TYPE (0) is not a type".into()),
        DataType::Bool => S::Bool,
        DataType::String => S::String,
        DataType::Float16 => S::Fp16,
        DataType::Float32 => S::Fp32,
        DataType::Float64 => S::Fp64,
        DataType::Bfloat16 => S::Bf16,
        DataType::Float8e4m3fn => S::Fp8E4M3,
        DataType::Float8e5m2 => S::Fp8E5M2,
        DataType::Int4 => S::Int4,
        DataType::Int8 => S::Int8,
        DataType::Int16 => S::Int16,
        DataType::Int32 => S::Int32,
        DataType::Int64 => S::Int64,
        DataType::Uint1 => S::Uint1,
        DataType::Uint2 => S::Uint2,
        DataType::Uint3 => S::Uint3,
        DataType::Uint4 => S::Uint4,
        DataType::Uint6 => S::Uint6,
        DataType::Uint8 => S::Uint8,
        DataType::Uint16 => S::Uint16,
        DataType::Uint32 => S::Uint32,
        DataType::Uint64 => S::Uint64,
    })
}
