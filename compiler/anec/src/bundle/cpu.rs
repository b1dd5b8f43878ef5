//! A layer left to the CPU, recorded so a runtime can execute it: its MIL op, opset and
//! every keyword argument, either an operand of the operation (a variable another step
//! writes) or a constant's type, shape and little-endian bytes.

use anec_codegen::e5::{CpuArgumentKind, CpuArgumentT, CpuConstantT, CpuInferenceAttrsT};
use anec_ir::mil::elements::to_le_bytes;
use anec_ir::mil::{Arg, Function, Literal, MilModel, ScalarType, Stmt, Value, ValueData};

/// The attributes of the CPU operation for statement `stmt` of `func`, whose operation
/// reads the variables `inputs` (in that order).
pub fn record(model: &MilModel, func: &Function, stmt: &Stmt, inputs: &[String]) -> Result<CpuInferenceAttrsT, String> {
    let mut arguments = Vec::new();
    for a in stmt.inputs.iter().chain(stmt.attrs.iter().filter(|a| a.name.name != "name")) {
        arguments.push(argument(model, func, &a.name.name, &a.value, inputs)?);
    }
    let layer = stmt.name_attr().or_else(|| stmt.outputs.first().map(|o| o.name.name.as_str())).unwrap_or("");
    Ok(CpuInferenceAttrsT {
        op: Some(stmt.op.name.clone()),
        layer: Some(layer.to_string()),
        opset: Some(func.opset.clone()),
        arguments: Some(arguments),
        location: Some(location(model, stmt)),
    })
}

/// `file:line:col` of the statement (the file's name, no directories: a bundle holds no
/// machine paths), or the file alone when the model has no text.
fn location(model: &MilModel, stmt: &Stmt) -> String {
    let file = super::file_name(&model.file);
    match model.text.as_deref() {
        Some(text) if !stmt.span.is_none() => {
            let (line, col) = stmt.span.line_col(text);
            format!("{file}:{line}:{col}")
        }
        _ => file,
    }
}

/// One keyword argument.
fn argument(
    model: &MilModel,
    func: &Function,
    name: &str,
    arg: &Arg,
    inputs: &[String],
) -> Result<CpuArgumentT, String> {
    let operand = |v: &str| inputs.iter().position(|i| i == v).and_then(|p| u32::try_from(p).ok());
    let (kind, operands, constant) = match arg {
        Arg::Name(id) => match operand(&id.name) {
            Some(i) => (CpuArgumentKind::Operand, Some(vec![i]), None),
            None => (CpuArgumentKind::Constant, None, Some(constant_named(model, func, &id.name)?)),
        },
        Arg::Value(v) => (CpuArgumentKind::Constant, None, Some(constant(model, v)?)),
        Arg::Tuple(items, _) => {
            let ids = items.iter().map(|i| match i {
                Arg::Name(id) => operand(&id.name).ok_or_else(|| format!("`{name}` mixes constants into a tuple")),
                _ => Err(format!("`{name}` mixes constants into a tuple")),
            });
            (CpuArgumentKind::OperandTuple, Some(ids.collect::<Result<Vec<_>, _>>()?), None)
        }
    };
    Ok(CpuArgumentT { name: Some(name.to_string()), kind, operands, constant: constant.map(Box::new) })
}

/// The value of the `const` statement defining `var`.
fn constant_named(model: &MilModel, func: &Function, var: &str) -> Result<CpuConstantT, String> {
    let stmt = func.body.iter().find(|s| s.outputs.iter().any(|o| o.name.name == var));
    let Some(stmt) = stmt else { return Err(format!("`{var}` is not defined")) };
    if stmt.op.name != "const" {
        return Err(format!("`{var}` is computed by `{}`, which a CPU operation cannot record", stmt.op.name));
    }
    match stmt.arg("val") {
        Some(Arg::Value(v)) => constant(model, v),
        _ => Err(format!("the constant `{var}` has no value")),
    }
}

/// A typed value as type name, shape and bytes.
fn constant(model: &MilModel, v: &Value) -> Result<CpuConstantT, String> {
    let dtype = v.ty.dtype().ok_or("a constant that is not a tensor or scalar")?;
    let shape = v.ty.static_shape().ok_or("a constant without a static shape")?;
    let data = match &v.data {
        ValueData::Literal(l) => literal_bytes(l, dtype)?,
        ValueData::BlobFile { .. } => {
            let key = v.data.blob_key().ok_or("a BLOBFILE reference without path and offset")?;
            model.blobs.get(&key).ok_or("a BLOBFILE the model does not hold")?.bytes.as_slice().to_vec()
        }
    };
    Ok(CpuConstantT { dtype: Some(dtype.name().to_string()), shape: Some(shape), data: Some(data) })
}

/// The little-endian bytes of a literal's elements (a string's UTF-8 bytes).
fn literal_bytes(l: &Literal, dtype: ScalarType) -> Result<Vec<u8>, String> {
    match (dtype, l) {
        (ScalarType::String, Literal::Str(s)) => Ok(s.as_bytes().to_vec()),
        _ => to_le_bytes(&l.flatten(), dtype),
    }
}
