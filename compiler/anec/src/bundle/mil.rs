//! MIL functions in a bundle. A function the engine runs whole is one segment. With CPU
//! fallback, the layers `anec check` rejects are found (a rejected anec layer leads back to
//! its MIL statement by source position; a model without text, an `.mlpackage`, is printed
//! and read back to get positions), the function is cut around them
//! ([`anec_passes::segment::cut`]) and every engine segment is compiled as a function of
//! its own.

use super::descriptor::HostTensor;
use super::{cpu, engine_step, FunctionBundle, Step};
use crate::{check, Error, Options};
use anec_codegen::e5::TensorDataType;
use anec_ir::mil::{Function, LineIndex, MilModel, ScalarType, Type};
use anec_passes::segment::{self, Step as Cut};
use std::collections::{BTreeSet, HashMap};

/// The message prefix of a statement left out only because an input did not lower.
const INHERITED: &str = "not lowered: an input";

/// Every function of the model.
pub fn functions(model: &MilModel, opts: &Options, cpu_fallback: bool) -> Result<Vec<FunctionBundle>, Error> {
    model.program.functions.iter().map(|f| function(model, f, opts, cpu_fallback)).collect()
}

/// One function: whole if the engine runs it, else cut when `cpu_fallback`.
fn function(model: &MilModel, f: &Function, opts: &Options, cpu_fallback: bool) -> Result<FunctionBundle, Error> {
    let types = declared(f);
    let inputs = tensors(model, f.inputs.iter().map(|p| p.name.name.as_str()), &types)?;
    let outputs = tensors(model, f.outputs.iter().map(|o| o.name.as_str()), &types)?;
    let whole = engine(model, f, &format!("{}.hwx", f.name), opts);
    let steps = match whole {
        Ok(step) => vec![step],
        Err(e) if cpu_fallback && rejected(&e) => cut(model, f, opts, e)?,
        Err(e) => return Err(e),
    };
    Ok(FunctionBundle { name: f.name.clone(), inputs, outputs, steps })
}

/// Whether an error is a rejection of layers (which CPU fallback may work around).
fn rejected(e: &Error) -> bool {
    matches!(e, Error::Rejected { .. } | Error::Backend { .. } | Error::Diagnostics(_))
}

/// Function `f` (of `model`) compiled as program `file`.
fn engine(model: &MilModel, f: &Function, file: &str, opts: &Options) -> Result<Step, Error> {
    let types = declared(f);
    let inputs = tensors(model, f.inputs.iter().map(|p| p.name.name.as_str()), &types)?;
    let outputs = tensors(model, f.outputs.iter().map(|o| o.name.as_str()), &types)?;
    let sub = MilModel {
        program: anec_ir::mil::Program { functions: vec![f.clone()], ..model.program.clone() },
        ..model.clone()
    };
    let module = anec_passes::lower_mil(&sub, &f.name).map_err(Error::Diagnostics)?;
    let opts = Options { banner_args: super::banner(&model.file, file), ..opts.clone() };
    let compiled = crate::compile_module(module, &model.file, &opts)?;
    Ok(Step::Engine(Box::new(engine_step(file.to_string(), compiled, &inputs, &outputs))))
}

/// The function cut around the layers the chip rejects.
fn cut(model: &MilModel, f: &Function, opts: &Options, original: Error) -> Result<Vec<Step>, Error> {
    let printed;
    let (model, f) = if model.text.is_some() {
        (model, f)
    } else {
        printed = with_text(model)?;
        let f = printed
            .program
            .function(&f.name)
            .ok_or_else(|| bundle_error(model, "the printed program lost a function"))?;
        (&printed, f)
    };
    let on_cpu = cpu_statements(model, f, opts)?;
    if on_cpu.is_empty() {
        return Err(original);
    }
    let cut = segment::cut(f, &on_cpu).map_err(|m| bundle_error(model, &m))?;
    let types = declared(f);
    let mut steps = Vec::new();
    for step in cut {
        steps.push(match step {
            Cut::Engine(sub) => engine(model, &sub, &format!("{}.hwx", sub.name), opts)?,
            Cut::Cpu { stmt, inputs, outputs } => {
                let s = &f.body[stmt];
                let attrs = cpu::record(model, f, s, &inputs)
                    .map_err(|m| bundle_error(model, &format!("CPU layer `{}`: {m}", s.op.name)))?;
                let inputs = tensors(model, inputs.iter().map(String::as_str), &types)?;
                let outputs = tensors(model, outputs.iter().map(String::as_str), &types)?;
                Step::Cpu(super::CpuStep { attrs, inputs, outputs })
            }
        });
    }
    Ok(steps)
}

/// The statements of `f` holding a layer `anec check` rejects on the target.
fn cpu_statements(model: &MilModel, f: &Function, opts: &Options) -> Result<BTreeSet<usize>, Error> {
    let report = check::check_mil(model, &f.name, crate::chip(opts.target)?)?;
    let lines = LineIndex::new(model.text.as_deref().unwrap_or_default());
    let at: HashMap<(u32, u32), usize> = f
        .body
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (line, col) = lines.line_col(s.span);
            ((u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX)), i)
        })
        .collect();
    let mut out = BTreeSet::new();
    for layer in &report.layers {
        let Some(r) = layer.verdict.rejection() else { continue };
        if r.rule.starts_with(INHERITED) {
            continue;
        }
        match at.get(&(layer.location.line, layer.location.col)) {
            Some(&i) => out.insert(i),
            None => {
                return Err(bundle_error(
                    model,
                    &format!("layer `{}` ({}) has no source statement to run on the CPU", layer.name, layer.op),
                ))
            }
        };
    }
    Ok(out)
}

/// The model with its program printed and read back, so statements have positions.
fn with_text(model: &MilModel) -> Result<MilModel, Error> {
    let text = anec_ir::mil::print::print_program(&model.program);
    let file = format!("{} (printed MIL)", model.file);
    let program = anec_front::parse_mil_program(&text, &file).map_err(Error::Diagnostics)?;
    Ok(MilModel { program, blobs: model.blobs.clone(), file, text: Some(text) })
}

/// The declared type of every variable of `f`.
fn declared(f: &Function) -> HashMap<&str, &Type> {
    let inputs = f.inputs.iter().map(|p| (p.name.name.as_str(), &p.ty));
    inputs.chain(f.body.iter().flat_map(|s| s.outputs.iter().map(|o| (o.name.name.as_str(), &o.ty)))).collect()
}

/// Host tensors of the variables `names`.
fn tensors<'a>(
    model: &MilModel,
    names: impl Iterator<Item = &'a str>,
    types: &HashMap<&str, &Type>,
) -> Result<Vec<HostTensor>, Error> {
    names
        .map(|n| {
            let ty = types.get(n).ok_or_else(|| bundle_error(model, &format!("`{n}` has no declared type")))?;
            let shape = ty.static_shape().ok_or_else(|| bundle_error(model, &format!("`{n}` has no static shape")))?;
            let dtype = ty
                .dtype()
                .and_then(dtype)
                .ok_or_else(|| bundle_error(model, &format!("`{n}` has an element type the E5 does not describe")))?;
            Ok(HostTensor { name: n.to_string(), shape, dtype })
        })
        .collect()
}

/// The E5 element type of a MIL element type.
fn dtype(t: ScalarType) -> Option<TensorDataType> {
    Some(match t {
        ScalarType::Fp16 => TensorDataType::Float16,
        ScalarType::Fp32 => TensorDataType::Float32,
        ScalarType::Int8 => TensorDataType::Int8,
        ScalarType::Uint8 => TensorDataType::UInt8,
        ScalarType::Int16 => TensorDataType::Int16,
        ScalarType::Int32 => TensorDataType::Int32,
        ScalarType::Bool => TensorDataType::Bool,
        _ => return None,
    })
}

fn bundle_error(model: &MilModel, message: &str) -> Error {
    Error::Bundle { file: model.file.clone(), message: message.to_string() }
}
