//! A CpuInference: the recorded MIL op rebuilt as a one-statement MIL function (operands as
//! its inputs, constants as literal values) and run on the reference interpreter.

use super::{descriptor, name, BundleError};
use crate::{run_mil, Tensor};
use anec_codegen::e5::{
    ArgFrameT, CpuArgumentKind, CpuArgumentT, CpuConstantT, CpuInferenceAttrsT, OperandT, OperationT, TensorDataType,
};
use anec_ir::mil::elements::from_le_bytes;
use anec_ir::mil::{
    Arg, BlobTable, Dim, Function, Ident, Literal, MilModel, NamedArg, Param, Program, ScalarType, Span, Stmt, Type,
    Value, ValueData,
};
use std::collections::BTreeMap;

/// Runs a CPU operation.
pub(super) fn run(
    op: &OperationT,
    frame: &ArgFrameT,
    a: &CpuInferenceAttrsT,
    inputs: &[&Tensor],
) -> Result<Vec<Tensor>, BundleError> {
    let fail = |reason: String| BundleError::Cpu { op: name(op).to_string(), reason };
    let params = |list: &Option<Vec<OperandT>>, prefix: &str| -> Result<Vec<Param>, BundleError> {
        list.iter()
            .flatten()
            .enumerate()
            .map(|(k, o)| Ok(Param { ty: operand_type(o).map_err(fail)?, name: Ident::new(format!("{prefix}{k}")) }))
            .collect()
    };
    let (ins, outs) = (params(&frame.inputs, "in")?, params(&frame.outputs, "out")?);
    let args = a.arguments.iter().flatten().map(argument).collect::<Result<Vec<_>, _>>().map_err(fail)?;
    let stmt = Stmt {
        outputs: outs.clone(),
        op: Ident::new(a.op.clone().unwrap_or_default()),
        inputs: args,
        attrs: Vec::new(),
        span: Span::NONE,
    };
    let func = Function {
        name: "cpu".into(),
        opset: a.opset.clone().unwrap_or_default(),
        inputs: ins,
        attrs: Vec::new(),
        body: vec![stmt],
        outputs: outs.iter().map(|p| p.name.clone()).collect(),
        span: Span::NONE,
    };
    let program = Program { version: "1.3".into(), attrs: Vec::new(), functions: vec![func] };
    let model = MilModel { program, blobs: BlobTable::new(), file: name(op).to_string(), text: None };
    let given: BTreeMap<String, Tensor> =
        inputs.iter().enumerate().map(|(k, t)| (format!("in{k}"), (*t).clone())).collect();
    let mut out = run_mil(&model, "cpu", &given).map_err(|e| fail(e.to_string()))?;
    (0..outs.len())
        .map(|k| {
            out.remove(&format!("out{k}")).ok_or_else(|| descriptor(format!("{} computes no output {k}", name(op))))
        })
        .collect()
}

/// The MIL type of an operand: its source shape and element type.
fn operand_type(o: &OperandT) -> Result<Type, String> {
    let d = o.descriptor.as_ref().ok_or("an operand without a descriptor")?;
    let dtype = match d.storage_type {
        TensorDataType::Float16 => ScalarType::Fp16,
        TensorDataType::Float32 => ScalarType::Fp32,
        TensorDataType::Int8 => ScalarType::Int8,
        TensorDataType::UInt8 => ScalarType::Uint8,
        TensorDataType::Int16 => ScalarType::Int16,
        TensorDataType::Int32 => ScalarType::Int32,
        TensorDataType::Bool => ScalarType::Bool,
        other => return Err(format!("an operand of type {other:?}")),
    };
    Ok(Type::Tensor { dtype, shape: d.dim.iter().flatten().map(|&v| Dim::Known(v)).collect() })
}

/// One keyword argument of the statement.
fn argument(a: &CpuArgumentT) -> Result<NamedArg, String> {
    let operand = |i: &u32| Arg::Name(Ident::new(format!("in{i}")));
    let ops = a.operands.as_deref().unwrap_or_default();
    let value = match a.kind {
        CpuArgumentKind::Operand => operand(ops.first().ok_or("an operand argument without an operand")?),
        CpuArgumentKind::OperandTuple => Arg::Tuple(ops.iter().map(operand).collect(), Span::NONE),
        CpuArgumentKind::Constant => {
            Arg::Value(constant(a.constant.as_deref().ok_or("a constant argument without a value")?)?)
        }
        other => return Err(format!("an argument of kind {}", other.0)),
    };
    Ok(NamedArg { name: Ident::new(a.name.clone().unwrap_or_default()), value })
}

/// A recorded constant as a MIL value with a literal.
fn constant(c: &CpuConstantT) -> Result<Value, String> {
    let name = c.dtype.as_deref().unwrap_or_default();
    let dtype = ScalarType::from_name(name).ok_or_else(|| format!("element type `{name}`"))?;
    let shape: Vec<Dim> = c.shape.iter().flatten().map(|&v| Dim::Known(v)).collect();
    let bytes = c.data.as_deref().unwrap_or_default();
    let lit = if dtype == ScalarType::String {
        Literal::Str(String::from_utf8(bytes.to_vec()).map_err(|_| "a string constant that is not UTF-8")?)
    } else {
        let count = c.shape.iter().flatten().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?));
        let items = from_le_bytes(bytes, dtype, count.ok_or("a constant too large to hold")?)?;
        if shape.is_empty() {
            items.into_iter().next().ok_or("an empty scalar constant")?
        } else {
            Literal::List(items)
        }
    };
    Ok(Value { ty: Type::Tensor { dtype, shape }, data: ValueData::Literal(lit), span: Span::NONE })
}
