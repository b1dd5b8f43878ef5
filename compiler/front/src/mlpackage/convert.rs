//! The protobuf MIL `Program` to [`anec_ir::mil::Program`], laid out as coremlc writes the
//! text: functions and every keyword list sorted by name (protobuf maps are unordered;
//! coremlc sorts them), op inputs inside the parentheses and op attributes (`name`, `val`,
//! ...) inside the brackets, an argument with several bindings as a tuple `(a, b)`, opsets
//! `CoreML5`..`CoreML8` as `ios15`..`ios18`.

use super::proto::{self, argument::binding::Binding, tensor_value, value as pv, value::immediate_value};
use super::types::{value_type, Form};
use super::values::value;
use anec_ir::mil::{Arg, Function, Ident, NamedArg, Param, Program, Span, Stmt};
use std::collections::BTreeMap;

/// The text version the conversion produces: coremlc's current layout.
pub const TEXT_VERSION: &str = "1.3";

/// Converts a protobuf program; every problem is one message naming its function and op.
pub fn program(p: &proto::Program, version: &str) -> Result<Program, Vec<String>> {
    let form = Form { short_scalars: version != "1.0" };
    let mut errors = Vec::new();
    let attrs = named_values(&p.attributes, form).unwrap_or_else(|e| {
        errors.push(format!("program attributes: {e}"));
        Vec::new()
    });
    let mut functions = Vec::new();
    for (name, f) in &p.functions {
        match function(name, f, form) {
            Ok(f) => functions.push(f),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(Program { version: version.to_string(), attrs, functions })
    } else {
        Err(errors)
    }
}

fn function(name: &str, f: &proto::Function, form: Form) -> Result<Function, Vec<String>> {
    let here = |e: String| vec![format!("function `{name}`: {e}")];
    let opset = opset(&f.opset).map_err(here)?;
    let block =
        f.block_specializations.get(&f.opset).ok_or_else(|| here(format!("no block for its opset `{}`", f.opset)))?;
    let inputs = f.inputs.iter().map(|p| param(p, form)).collect::<Result<Vec<_>, _>>().map_err(here)?;
    let attrs = named_values(&f.attributes, form).map_err(here)?;
    let mut body = Vec::with_capacity(block.operations.len());
    let mut errors = Vec::new();
    for op in &block.operations {
        match stmt(op, form) {
            Ok(s) => body.push(s),
            Err(e) => errors.push(format!("function `{name}`, {}: {e}", op_label(op))),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let outputs = block.outputs.iter().map(Ident::new).collect();
    Ok(Function { name: name.to_string(), opset, inputs, attrs, body, outputs, span: Span::NONE })
}

/// `CoreML5`..`CoreML8` -> `ios15`..`ios18`.
fn opset(name: &str) -> Result<String, String> {
    match name.strip_prefix("CoreML").and_then(|v| v.parse::<u32>().ok()) {
        Some(v @ 5..=8) => Ok(format!("ios{}", v + 10)),
        _ => Err(format!("unsupported opset `{name}` (anec reads CoreML5 to CoreML8, i.e. ios15 to ios18)")),
    }
}

/// `op `conv` (`y`)`, naming the op by its `name` attribute or first result.
fn op_label(op: &proto::Operation) -> String {
    let name = op.attributes.get("name").and_then(string_of);
    match name.or_else(|| op.outputs.first().map(|o| o.name.as_str())) {
        Some(n) => format!("op `{}` (`{n}`)", op.r#type),
        None => format!("op `{}`", op.r#type),
    }
}

/// The string of a rank-0 string value.
fn string_of(v: &proto::Value) -> Option<&str> {
    let Some(pv::Value::ImmediateValue(i)) = v.value.as_ref() else { return None };
    let Some(immediate_value::Value::Tensor(t)) = i.value.as_ref() else { return None };
    match t.value.as_ref() {
        Some(tensor_value::Value::Strings(s)) => s.values.first().map(String::as_str),
        _ => None,
    }
}

fn stmt(op: &proto::Operation, form: Form) -> Result<Stmt, String> {
    if !op.blocks.is_empty() {
        return Err("nested blocks (control flow) are not supported".into());
    }
    let outputs = op.outputs.iter().map(|p| param(p, form)).collect::<Result<Vec<_>, _>>()?;
    let inputs = op
        .inputs
        .iter()
        .map(|(k, a)| argument(a, form).map(|v| named(k, v)).map_err(|e| format!("input `{k}`: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let attrs = named_values(&op.attributes, form)?;
    Ok(Stmt { outputs, op: Ident::new(&op.r#type), inputs, attrs, span: Span::NONE })
}

fn param(p: &proto::NamedValueType, form: Form) -> Result<Param, String> {
    let ty = value_type(p.r#type.as_ref(), form).map_err(|e| format!("`{}`: {e}", p.name))?;
    Ok(Param { ty, name: Ident::new(&p.name) })
}

/// One binding is the argument itself; several (or none) are a tuple.
fn argument(a: &proto::Argument, form: Form) -> Result<Arg, String> {
    let mut args = a.arguments.iter().map(|b| binding(b, form)).collect::<Result<Vec<_>, _>>()?;
    if args.len() == 1 {
        if let Some(only) = args.pop() {
            return Ok(only);
        }
    }
    Ok(Arg::Tuple(args, Span::NONE))
}

fn binding(b: &proto::argument::Binding, form: Form) -> Result<Arg, String> {
    match b.binding.as_ref().ok_or("an argument binding is empty")? {
        Binding::Name(n) => Ok(Arg::Name(Ident::new(n))),
        Binding::Value(v) => value(v, form).map(Arg::Value),
    }
}

/// A protobuf attribute map as sorted keyword arguments.
fn named_values(map: &BTreeMap<String, proto::Value>, form: Form) -> Result<Vec<NamedArg>, String> {
    map.iter()
        .map(|(k, v)| value(v, form).map(|v| named(k, Arg::Value(v))).map_err(|e| format!("attribute `{k}`: {e}")))
        .collect()
}

fn named(key: &str, value: Arg) -> NamedArg {
    NamedArg { name: Ident::new(key), value }
}
