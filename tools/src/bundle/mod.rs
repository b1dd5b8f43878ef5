//! Runs a program bundle: the operations of one function of an `.e5`, in order, on host
//! tensors. A Cast converts between the caller's layout and a program's, an AneInference
//! runs its `.hwx` on the register-level simulator ([`crate::SimProgram`]), a CpuInference
//! runs the recorded MIL op on the reference interpreter ([`crate::run_mil`]).
//!
//! Inputs and outputs are keyed by the function's tensor names and shaped as the source
//! model declares them (`dim` of their descriptors).

mod cast;
mod cpu;

use crate::{SimError, SimProgram, Tensor};
use anec_codegen::e5::{ArgFrameT, E5ProgramT, FunctionT, OpAttrsT, OpType, OperationT, SectionT};
use std::collections::BTreeMap;
use std::path::Path;

/// Why a bundle could not run.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The descriptor does not hold what the run needs (a function, a section, a symbol).
    #[error("{0}")]
    Descriptor(String),
    /// A caller's input is missing, unknown or misshapen.
    #[error("{reason}; the function's inputs are: {expected}")]
    Input {
        /// What is wrong.
        reason: String,
        /// Every input with its shape.
        expected: String,
    },
    /// A program of the bundle could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The program's path.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The simulator refused or failed a program.
    #[error("operation {op} ({file}): {source}")]
    Sim {
        /// The operation.
        op: String,
        /// The program.
        file: String,
        /// Why.
        source: SimError,
    },
    /// The reference interpreter failed a CPU operation.
    #[error("operation {op}: {reason}")]
    Cpu {
        /// The operation.
        op: String,
        /// Why.
        reason: String,
    },
}

/// Runs function `function` of `program` (its `.hwx` files in `dir`) on `inputs`; returns
/// the function's outputs by name.
pub fn run_bundle(
    program: &E5ProgramT,
    dir: &Path,
    function: &str,
    inputs: &BTreeMap<String, Tensor>,
) -> Result<BTreeMap<String, Tensor>, BundleError> {
    let b = Bundle::new(program);
    let f = b.function(function)?;
    let mut env = bind(&b, f, inputs)?;
    for op in f.blocks.iter().flatten().flat_map(|bl| bl.operations.iter().flatten()) {
        let results = operation(&b, dir, op, &env)?;
        for (i, t) in op.outputs.iter().flatten().zip(results) {
            env.insert(b.symbol(*i)?.to_string(), t);
        }
    }
    let mut out = BTreeMap::new();
    for &i in f.outputs.iter().flatten() {
        let name = b.symbol(i)?;
        let t = env.get(name).ok_or_else(|| descriptor(format!("no operation writes output `{name}`")))?;
        out.insert(name.to_string(), t.clone());
    }
    Ok(out)
}

/// The function names of a program, in order.
pub fn function_names(program: &E5ProgramT) -> Vec<String> {
    let sections = program.sections.iter().flatten();
    sections.filter_map(|s| s.function.as_ref().and_then(|f| f.name.clone())).collect()
}

/// The inputs of function `function`: names and source shapes.
pub fn function_inputs(program: &E5ProgramT, function: &str) -> Result<Vec<(String, Vec<usize>)>, BundleError> {
    let b = Bundle::new(program);
    let f = b.function(function)?;
    f.inputs.iter().flatten().map(|&i| Ok((b.symbol(i)?.to_string(), b.shape_of(f, i)?))).collect()
}

/// Lookups into a program.
struct Bundle<'a> {
    p: &'a E5ProgramT,
}

impl<'a> Bundle<'a> {
    fn new(p: &'a E5ProgramT) -> Self {
        Bundle { p }
    }

    fn sections(&self) -> impl Iterator<Item = &'a SectionT> {
        self.p.sections.iter().flatten()
    }

    fn function(&self, name: &str) -> Result<&'a FunctionT, BundleError> {
        let f = self.sections().filter_map(|s| s.function.as_deref()).find(|f| f.name.as_deref() == Some(name));
        f.ok_or_else(|| {
            descriptor(format!(
                "the bundle has no function `{name}` (functions: {})",
                function_names(self.p).join(", ")
            ))
        })
    }

    fn section(&self, name: Option<&str>) -> Result<&'a SectionT, BundleError> {
        let s = self.sections().find(|s| s.name.as_deref() == name);
        s.ok_or_else(|| descriptor(format!("no section `{}`", name.unwrap_or_default())))
    }

    fn frame(&self, op: &OperationT) -> Result<&'a ArgFrameT, BundleError> {
        let s = self.section(op.arg_frame.as_deref())?;
        s.arg_frame.as_deref().ok_or_else(|| descriptor(format!("{} has no argument frame", name(op))))
    }

    fn symbol(&self, i: u32) -> Result<&'a str, BundleError> {
        let s = self.p.symbol_names.as_ref().and_then(|v| v.get(i as usize));
        s.map(String::as_str).ok_or_else(|| descriptor(format!("symbol {i} is out of range")))
    }

    /// The source shape of symbol `i`, from the first operand describing it.
    fn shape_of(&self, f: &FunctionT, i: u32) -> Result<Vec<usize>, BundleError> {
        for op in f.blocks.iter().flatten().flat_map(|b| b.operations.iter().flatten()) {
            let frame = self.frame(op)?;
            let ins = op.inputs.iter().flatten().zip(frame.inputs.iter().flatten());
            let outs = op.outputs.iter().flatten().zip(frame.outputs.iter().flatten());
            if let Some((_, o)) = ins.chain(outs).find(|(&s, _)| s == i) {
                let dims = o.descriptor.as_ref().and_then(|d| d.dim.clone()).unwrap_or_default();
                return dims
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| descriptor(format!("dimension {d} is too large"))))
                    .collect();
            }
        }
        Err(descriptor(format!("no operation reads or writes `{}`", self.symbol(i)?)))
    }
}

/// The caller's inputs, checked against the function's.
fn bind(
    b: &Bundle<'_>,
    f: &FunctionT,
    given: &BTreeMap<String, Tensor>,
) -> Result<BTreeMap<String, Tensor>, BundleError> {
    let mut specs = Vec::new();
    for &i in f.inputs.iter().flatten() {
        specs.push((b.symbol(i)?.to_string(), b.shape_of(f, i)?));
    }
    let expected = specs.iter().map(|(n, s)| format!("{n} {s:?}")).collect::<Vec<_>>().join(", ");
    let fail = |reason: String| BundleError::Input { reason, expected: expected.clone() };
    if let Some(k) = given.keys().find(|k| !specs.iter().any(|(n, _)| n == *k)) {
        return Err(fail(format!("the function has no input named {k:?}")));
    }
    for (n, shape) in &specs {
        let t = given.get(n).ok_or_else(|| fail(format!("input {n:?} is missing")))?;
        if &t.shape != shape {
            return Err(fail(format!("input {n:?} has shape {:?}, the function's is {shape:?}", t.shape)));
        }
    }
    Ok(given.clone())
}

/// Runs one operation; returns its outputs in order.
fn operation(
    b: &Bundle<'_>,
    dir: &Path,
    op: &OperationT,
    env: &BTreeMap<String, Tensor>,
) -> Result<Vec<Tensor>, BundleError> {
    let frame = b.frame(op)?;
    let mut inputs = Vec::new();
    for &i in op.inputs.iter().flatten() {
        let n = b.symbol(i)?;
        inputs.push(
            env.get(n).ok_or_else(|| descriptor(format!("{} reads `{n}` before any operation writes it", name(op))))?,
        );
    }
    let attrs = &b.section(op.attrs_section.as_deref())?.attrs;
    match (op.op_type, attrs) {
        (OpType::Cast, OpAttrsT::CastAttrs(a)) => cast::run(op, frame, a, &inputs),
        (OpType::AneInference, OpAttrsT::AneInferenceAttrs(a)) => {
            let file = a.program_symbol.clone().unwrap_or_default();
            ane(op, frame, &dir.join(&file), &inputs)
        }
        (OpType::CpuInference, OpAttrsT::CpuInferenceAttrs(a)) => cpu::run(op, frame, a, &inputs),
        (ty, _) => Err(descriptor(format!("{} of type {ty:?} is not something anec runs", name(op)))),
    }
}

/// An AneInference: the program on the simulator, its ports bound in operand order.
fn ane(op: &OperationT, frame: &ArgFrameT, path: &Path, inputs: &[&Tensor]) -> Result<Vec<Tensor>, BundleError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| BundleError::Io { file: file.clone(), source })?;
    let sim_err = |source| BundleError::Sim { op: name(op).to_string(), file: file.clone(), source };
    let sim = SimProgram::load(&bytes).map_err(sim_err)?;
    let ports: Vec<String> = frame.ports.iter().flatten().map(|p| p.name.clone().unwrap_or_default()).collect();
    let key = |p: &str| p.strip_suffix("@output").unwrap_or(p).to_string();
    let mut bound = BTreeMap::new();
    for (p, t) in ports.iter().zip(inputs) {
        let spec = sim.inputs().iter().find(|s| s.key == key(p));
        let t = spec.and_then(|s| t.reshaped(&s.shape));
        let t = t.ok_or_else(|| {
            descriptor(format!("{file} binds no input `{p}` of {} elements", t_len(inputs, p, &ports)))
        })?;
        bound.insert(key(p), t);
    }
    let mut out = sim.run(&bound).map_err(sim_err)?;
    let shapes =
        frame.outputs.iter().flatten().map(|o| o.descriptor.as_ref().and_then(|d| d.dim.clone()).unwrap_or_default());
    let outs = ports.iter().skip(inputs.len()).zip(shapes);
    outs.map(|(p, dim)| {
        let t = out.remove(&key(p)).ok_or_else(|| descriptor(format!("{file} computes no `{p}`")))?;
        let shape: Vec<usize> = dim.iter().map(|&d| d as usize).collect();
        t.reshaped(&shape).ok_or_else(|| descriptor(format!("{file} computes `{p}` as {:?}, not {shape:?}", t.shape)))
    })
    .collect()
}

/// The element count of the input bound to port `p`, for a message.
fn t_len(inputs: &[&Tensor], p: &str, ports: &[String]) -> usize {
    ports.iter().position(|q| q == p).and_then(|i| inputs.get(i)).map_or(0, |t| t.len())
}

fn name(op: &OperationT) -> &str {
    op.name.as_deref().unwrap_or("an operation")
}

fn descriptor(message: String) -> BundleError {
    BundleError::Descriptor(message)
}
