//! Protobuf MIL values to [`anec_ir::mil::Value`]: immediate tensors (numbers stored as
//! floats, ints, long ints, doubles, bools, strings or packed bytes), tuples, lists,
//! dictionaries, and `blobFileValue` references (which become `BLOBFILE(path, offset)`).
//!
//! Numbers take the kind of the declared element type (a float type gives
//! [`Literal::Float`] whatever the storage), so the tree equals what the text parser builds
//! from coremlc's output. Tensors nest by their declared shape; rank 0 is a bare literal.

use super::elements::elements;
use super::proto::{self, value, value::immediate_value};
use super::types::{value_type, Form};
use anec_ir::mil::{Literal, ScalarType, Span, Type, Value, ValueData};

/// Converts a `Value`.
pub fn value(v: &proto::Value, form: Form) -> Result<Value, String> {
    let ty = value_type(v.r#type.as_ref(), form)?;
    let data = match v.value.as_ref().ok_or("a value has no contents")? {
        value::Value::BlobFileValue(b) => blob_file(b, form),
        value::Value::ImmediateValue(i) => ValueData::Literal(immediate(i, &ty, form)?),
    };
    Ok(Value { ty, data, span: Span::NONE })
}

/// `BLOBFILE(path = string("..."), offset = uint64(N))`.
fn blob_file(b: &value::BlobFileValue, form: Form) -> ValueData {
    let path = Value {
        ty: form.scalar(ScalarType::String),
        data: ValueData::Literal(Literal::Str(b.file_name.clone())),
        span: Span::NONE,
    };
    let offset = Value {
        ty: form.scalar(ScalarType::Uint64),
        data: ValueData::Literal(Literal::Int(i128::from(b.offset))),
        span: Span::NONE,
    };
    ValueData::BlobFile { path: Box::new(path), offset: Box::new(offset) }
}

fn immediate(i: &value::ImmediateValue, ty: &Type, form: Form) -> Result<Literal, String> {
    match i.value.as_ref().ok_or("an immediate value is empty")? {
        immediate_value::Value::Tensor(t) => tensor(t, ty),
        immediate_value::Value::Tuple(t) => literals(&t.values, form).map(Literal::Tuple),
        immediate_value::Value::List(l) => literals(&l.values, form).map(Literal::List),
        immediate_value::Value::Dictionary(d) => d
            .values
            .iter()
            .map(|kv| Ok((inner_literal(kv.key.as_ref(), form)?, inner_literal(kv.value.as_ref(), form)?)))
            .collect::<Result<Vec<_>, String>>()
            .map(Literal::Dict),
    }
}

fn literals(values: &[proto::Value], form: Form) -> Result<Vec<Literal>, String> {
    values.iter().map(|v| inner_literal(Some(v), form)).collect()
}

/// The literal of a value nested in a tuple, list or dictionary.
fn inner_literal(v: Option<&proto::Value>, form: Form) -> Result<Literal, String> {
    match value(v.ok_or("a dictionary entry is missing")?, form)?.data {
        ValueData::Literal(l) => Ok(l),
        ValueData::BlobFile { .. } => Err("a weight file reference inside a tuple, list or dictionary".into()),
    }
}

/// A tensor's elements, nested by its declared static shape.
fn tensor(t: &proto::TensorValue, ty: &Type) -> Result<Literal, String> {
    let (Some(dtype), Some(shape)) = (ty.dtype(), ty.static_shape()) else {
        return Err("a tensor value needs a tensor type with a static shape".into());
    };
    let count = ty.elements().and_then(|n| usize::try_from(n).ok()).ok_or("a tensor value is too large")?;
    let storage = t.value.as_ref().ok_or("a tensor value has no storage")?;
    let flat = elements(storage, dtype, count)?;
    if flat.len() != count {
        return Err(format!("a tensor value has {} elements but its shape {shape:?} needs {count}", flat.len()));
    }
    if shape.is_empty() {
        return flat.into_iter().next().ok_or_else(|| "a scalar value is empty".to_string());
    }
    let mut it = flat.into_iter();
    Ok(nest(&mut it, &shape))
}

/// Groups row-major elements into nested lists of `shape`.
fn nest(it: &mut impl Iterator<Item = Literal>, shape: &[u64]) -> Literal {
    match shape {
        [] => it.next().unwrap_or(Literal::Int(0)),
        [n] => Literal::List(it.take(*n as usize).collect()),
        [n, rest @ ..] => Literal::List((0..*n).map(|_| nest(it, rest)).collect()),
    }
}
