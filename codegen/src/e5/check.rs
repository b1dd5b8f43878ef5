//! What makes an E5 program consistent, checked by the writer before packing and by the
//! reader after unpacking: the format version, every symbol index in range, every section
//! holding the payload its kind names, and every operation's two sections present with
//! attributes of the operation's type and one operand layout per input and output; an
//! AneInference names its program by a plain file name (never a path out of the bundle).

use super::{ArgFrameT, E5ProgramT, FunctionT, OpAttrsT, OpType, OperationT, SectionKind, SectionT, FORMAT_VERSION};
use crate::CodegenError;
use std::collections::HashMap;

/// Checks a whole program.
pub fn program(p: &E5ProgramT) -> Result<(), CodegenError> {
    if p.format_version != FORMAT_VERSION {
        return Err(CodegenError::bad("E5 format_version", 0, p.format_version as u64, "4"));
    }
    let symbols = p.symbol_names.as_ref().map_or(0, Vec::len);
    let sections = p.sections.as_deref().unwrap_or_default();
    let mut by_name = HashMap::new();
    for s in sections {
        section(s)?;
        let name = s.name.as_deref().unwrap_or_default();
        if by_name.insert(name, s).is_some() {
            return invalid(format!("two sections are named `{name}`"));
        }
    }
    let functions: Vec<&FunctionT> = sections.iter().filter_map(|s| s.function.as_deref()).collect();
    if functions.is_empty() {
        return invalid("the program has no function section".into());
    }
    for f in functions {
        function(f, symbols, &by_name)?;
    }
    Ok(())
}

/// A section holds exactly the payload its kind names.
fn section(s: &SectionT) -> Result<(), CodegenError> {
    let name = s.name.as_deref().unwrap_or_default();
    let has = [s.function.is_some(), s.arg_frame.is_some(), !matches!(s.attrs, OpAttrsT::NONE)];
    let want = match s.kind {
        SectionKind::Function => [true, false, false],
        SectionKind::ArgFrame => [false, true, false],
        SectionKind::OpAttrs => [false, false, true],
        other => return invalid(format!("section `{name}` has kind {}, which anec does not know", other.0)),
    };
    if has != want {
        return invalid(format!("section `{name}` of kind {:?} does not hold exactly that payload", s.kind));
    }
    Ok(())
}

/// A function's symbols are in range and its operations consistent.
fn function(f: &FunctionT, symbols: usize, sections: &HashMap<&str, &SectionT>) -> Result<(), CodegenError> {
    let name = f.name.as_deref().unwrap_or_default();
    let indices = f.inputs.iter().chain(&f.outputs).flatten().copied();
    let aliases = f.intermediates.iter().flatten().map(|a| a.symbol_index);
    for i in indices.chain(aliases) {
        symbol(i, symbols, &format!("function `{name}`"))?;
    }
    for a in f.intermediates.iter().flatten() {
        if u64::from(a.addr_offset) >= f.intermediate_size.max(1) {
            let what = a.name.as_deref().unwrap_or_default();
            return invalid(format!("intermediate `{what}` of `{name}` starts beyond its buffer"));
        }
    }
    for op in f.blocks.iter().flatten().flat_map(|b| b.operations.iter().flatten()) {
        operation(op, symbols, sections)?;
    }
    Ok(())
}

/// An operation's symbols are in range; its sections exist, of the right kinds and types.
fn operation(op: &OperationT, symbols: usize, sections: &HashMap<&str, &SectionT>) -> Result<(), CodegenError> {
    let name = op.name.as_deref().unwrap_or_default();
    let (inputs, outputs) = (op.inputs.as_deref().unwrap_or_default(), op.outputs.as_deref().unwrap_or_default());
    for &i in inputs.iter().chain(outputs) {
        symbol(i, symbols, &format!("operation `{name}`"))?;
    }
    let frame = op.arg_frame.as_deref().and_then(|s| sections.get(s)).and_then(|s| s.arg_frame.as_deref());
    let Some(frame) = frame else { return invalid(format!("operation `{name}` has no argument frame section")) };
    arg_frame(frame, inputs.len(), outputs.len(), name)?;
    let attrs = op.attrs_section.as_deref().and_then(|s| sections.get(s)).map(|s| &s.attrs);
    let Some(attrs) = attrs else { return invalid(format!("operation `{name}` has no attributes section")) };
    if !attrs_match(op.op_type, attrs) {
        return invalid(format!("operation `{name}` of type {:?} has attributes of another type", op.op_type));
    }
    if let OpAttrsT::AneInferenceAttrs(a) = attrs {
        program_file(a.program_symbol.as_deref().unwrap_or_default(), name)?;
    }
    Ok(())
}

/// A program is named by a file name beside the `.e5`: no directory, nothing that leaves
/// the bundle's folder.
fn program_file(file: &str, op: &str) -> Result<(), CodegenError> {
    let plain = !file.is_empty() && file != "." && file != ".." && !file.contains(['/', '\\', '\0']);
    if !plain {
        return invalid(format!("operation `{op}` names program {file:?}, which is not a file name beside the .e5"));
    }
    Ok(())
}

/// One operand layout per input and output.
fn arg_frame(frame: &ArgFrameT, inputs: usize, outputs: usize, op: &str) -> Result<(), CodegenError> {
    let (i, o) = (frame.inputs.as_ref().map_or(0, Vec::len), frame.outputs.as_ref().map_or(0, Vec::len));
    if (i, o) != (inputs, outputs) {
        return invalid(format!(
            "the argument frame of `{op}` describes {i} inputs and {o} outputs, the operation has {inputs} and {outputs}"
        ));
    }
    Ok(())
}

/// Whether the attribute table is the one of the operation's type.
fn attrs_match(ty: OpType, attrs: &OpAttrsT) -> bool {
    matches!(
        (ty, attrs),
        (OpType::Cast, OpAttrsT::CastAttrs(_))
            | (OpType::AneInference, OpAttrsT::AneInferenceAttrs(_))
            | (OpType::EirInference, OpAttrsT::EirInferenceAttrs(_))
            | (OpType::CpuInference, OpAttrsT::CpuInferenceAttrs(_))
            | (OpType::BnnsCpuInference, OpAttrsT::BnnsCpuInferenceAttrs(_))
            | (OpType::MlcCpuInference, OpAttrsT::MlcCpuInferenceAttrs(_))
            | (OpType::MpsGraphInference, OpAttrsT::MpsGraphInferenceAttrs(_))
            | (OpType::E5MinimalCpu, OpAttrsT::E5MinimalCpuAttrs(_))
            | (OpType::Quant, OpAttrsT::QuantAttrs(_))
            | (OpType::Dequant, OpAttrsT::DequantAttrs(_))
            | (OpType::Barrier, OpAttrsT::BarrierAttrs(_))
            | (OpType::JitCall, OpAttrsT::JitCallAttrs(_))
    )
}

fn symbol(i: u32, symbols: usize, owner: &str) -> Result<(), CodegenError> {
    if i as usize >= symbols {
        return invalid(format!("{owner} names symbol {i}, but there are {symbols} symbol names"));
    }
    Ok(())
}

fn invalid(message: String) -> Result<(), CodegenError> {
    Err(CodegenError::Invalid(message))
}
