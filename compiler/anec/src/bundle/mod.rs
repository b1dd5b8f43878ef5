//! The program bundle (`anec compile --emit bundle`): what a runtime loads. One `.e5`
//! dispatch descriptor naming, for every function of the model, the operations that run
//! in order, over the `.hwx` program of each engine segment (docs/formats/bundle.md).
//!
//! - [`compile_bundle`] compiles every function (every MIL function, every netplist
//!   procedure; an `.mlir` module is one function). A function the engine runs whole is one
//!   segment; with `cpu_fallback`, a MIL function with layers the chip rejects is cut
//!   around them ([`mil`]) into engine segments and CPU operations ([`cpu`]).
//! - [`Bundle::e5_bytes`] writes the descriptor ([`e5`], tensor layouts in
//!   [`descriptor`]); [`Bundle::write`] writes it and the programs into a directory.

pub mod cpu;
pub mod descriptor;
pub mod e5;
mod mil;

use crate::{compile_module, write_atomically, Compiled, Error, InputKind, Options};
use anec_codegen::e5::{CpuInferenceAttrsT, TensorDataType};
use anec_ir::mil::MilModel;
use anec_ir::{DType, Module};
use descriptor::HostTensor;
use std::path::{Path, PathBuf};

/// Every function of a model, compiled.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The model as the user named it (for messages).
    pub file: String,
    /// The model's file name, without directories (recorded in the build info).
    pub input_name: String,
    /// The options recorded with each program (`-t h13g`, ...).
    pub options: String,
    /// The functions, in the model's order.
    pub functions: Vec<FunctionBundle>,
}

/// One function: its external tensors and the steps that compute its outputs.
#[derive(Debug, Clone)]
pub struct FunctionBundle {
    /// The function's (or procedure's) name.
    pub name: String,
    /// The tensors a caller binds as inputs.
    pub inputs: Vec<HostTensor>,
    /// The tensors the function returns.
    pub outputs: Vec<HostTensor>,
    /// The steps, in the order they run.
    pub steps: Vec<Step>,
}

/// One step of a function.
#[derive(Debug, Clone)]
pub enum Step {
    /// An engine segment: one program.
    Engine(Box<EngineStep>),
    /// A layer the CPU runs.
    Cpu(CpuStep),
}

/// An engine segment.
#[derive(Debug, Clone)]
pub struct EngineStep {
    /// The program's file name in the bundle.
    pub file: String,
    /// The compiled program.
    pub compiled: Compiled,
    /// The tensors it reads (source shapes).
    pub inputs: Vec<HostTensor>,
    /// The tensors it writes.
    pub outputs: Vec<HostTensor>,
}

/// A layer left to the CPU.
#[derive(Debug, Clone)]
pub struct CpuStep {
    /// What the runtime executes.
    pub attrs: CpuInferenceAttrsT,
    /// The tensors it reads.
    pub inputs: Vec<HostTensor>,
    /// The tensors it writes.
    pub outputs: Vec<HostTensor>,
}

/// Which form each engine segment's program is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramForm {
    /// `.hwx` (what the `.e5` names).
    Hwx,
    /// The Asahi `.anec` form, one file per segment.
    Anec,
}

impl EngineStep {
    /// The `.hwx` bytes.
    pub fn bytes(&self) -> &[u8] {
        self.compiled.hwx_file()
    }
}

impl Bundle {
    /// The `.e5` bytes.
    pub fn e5_bytes(&self) -> Result<Vec<u8>, Error> {
        let program = e5::program(self)?;
        anec_codegen::write_e5(&program).map_err(|source| Error::Codegen { file: self.file.clone(), source })
    }

    /// The engine segments of every function, in order.
    pub fn engine_steps(&self) -> impl Iterator<Item = &EngineStep> {
        self.functions.iter().flat_map(|f| &f.steps).filter_map(|s| match s {
            Step::Engine(e) => Some(e.as_ref()),
            Step::Cpu(_) => None,
        })
    }

    /// Writes `<stem>.e5` and every program (or only the `.anec` programs) into `dir`,
    /// each file atomically; returns the paths written.
    pub fn write(&self, dir: &Path, stem: &str, form: ProgramForm) -> Result<Vec<PathBuf>, Error> {
        let mut written = Vec::new();
        for e in self.engine_steps() {
            let path = match form {
                ProgramForm::Hwx => dir.join(&e.file),
                ProgramForm::Anec => dir.join(Path::new(&e.file).with_extension("anec")),
            };
            match form {
                ProgramForm::Hwx => write_atomically(&path, e.bytes())?,
                ProgramForm::Anec => write_atomically(&path, &e.compiled.anec_bytes()?)?,
            }
            written.push(path);
        }
        if form == ProgramForm::Hwx {
            let path = dir.join(format!("{stem}.e5"));
            write_atomically(&path, &self.e5_bytes()?)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// Compiles every function of the model at `path` into a bundle. `cpu_fallback` lets a
/// MIL layer the chip rejects run on the CPU between engine segments; without it such a
/// layer is an error, as in a plain compile.
pub fn compile_bundle(path: &Path, opts: &Options, cpu_fallback: bool) -> Result<Bundle, Error> {
    let file = path.display().to_string();
    let kind = InputKind::of(path)?;
    let opts = Options { route: crate::route_of(kind), ..opts.clone() };
    let functions = match kind {
        InputKind::Mil => return compile_mil_bundle(&crate::load_mil(path)?, &opts, cpu_fallback),
        InputKind::Netplist => {
            let procedures = anec_front::parse_netplist_procedures(path)?;
            let modules = procedures.into_iter().map(|p| (p.name, p.module));
            modules.map(|(name, m)| module_function(&name, m, &file, &opts)).collect::<Result<_, _>>()?
        }
        InputKind::AnecIr => {
            let module = crate::load_function(path, crate::DEFAULT_FUNCTION)?;
            vec![module_function(crate::DEFAULT_FUNCTION, module, &file, &opts)?]
        }
    };
    Ok(bundle(file, &opts, functions))
}

/// [`compile_bundle`] of a MIL model already read (conversion route).
pub fn compile_mil_bundle(model: &MilModel, opts: &Options, cpu_fallback: bool) -> Result<Bundle, Error> {
    let opts = Options { route: anec_passes::Route::Conversion, ..opts.clone() };
    let functions = mil::functions(model, &opts, cpu_fallback)?;
    Ok(bundle(model.file.clone(), &opts, functions))
}

/// The bundle of compiled functions of model `file`.
fn bundle(file: String, opts: &Options, functions: Vec<FunctionBundle>) -> Bundle {
    let options = format!("-t {}", opts.target.name());
    Bundle { input_name: file_name(&file), file, options, functions }
}

/// The last component of a path as text (a bundle records no directories).
pub(crate) fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// A netplist procedure or `.mlir` module: one engine segment, or (direct route) one per
/// layer that cuts its own dispatch segment and one per run of layers between them
/// ([`anec_passes::segment::module`]). External tensors are the ports, in the engine's
/// N, C, H, W (and D) shape.
fn module_function(name: &str, module: Module, file: &str, opts: &Options) -> Result<FunctionBundle, Error> {
    let inputs = ports(&module, &module.inputs, file)?;
    let outputs = ports(&module, &module.outputs, file)?;
    let parts = match opts.route {
        anec_passes::Route::Direct => {
            anec_passes::segment::module::cut(&module, anec_passes::segment::module::cuts_own_segment)
                .map_err(|message| Error::Bundle { file: file.to_string(), message })?
        }
        anec_passes::Route::Conversion => vec![module],
    };
    let single = parts.len() == 1;
    let mut steps = Vec::new();
    for (k, part) in parts.into_iter().enumerate() {
        let program = if single { format!("{name}.hwx") } else { format!("{name}_{k}.hwx") };
        let (ins, outs) = (ports(&part, &part.inputs, file)?, ports(&part, &part.outputs, file)?);
        let opts = Options { banner_args: banner(file, &program), ..opts.clone() };
        let step = engine_step(program, compile_module(part, file, &opts)?, &ins, &outs);
        steps.push(Step::Engine(Box::new(step)));
    }
    Ok(FunctionBundle { name: name.to_string(), inputs, outputs, steps })
}

/// The banner arguments of a bundle's program: file names, no directories.
pub(crate) fn banner(model: &str, program: &str) -> Vec<String> {
    vec![format!("-i {}", file_name(model)), format!("-o {program}")]
}

/// Host tensors of a module's ports: `[N, C, H, W]`, D after C when it is more than 1.
fn ports(m: &Module, list: &[anec_ir::Port], file: &str) -> Result<Vec<HostTensor>, Error> {
    list.iter()
        .map(|p| {
            let missing = || Error::Bundle { file: file.into(), message: format!("port `{}` has no type", p.name) };
            let ty = m.ty(p.value).ok_or_else(missing)?;
            let mut shape = vec![u64::from(ty.n), u64::from(ty.c), u64::from(ty.h), u64::from(ty.w)];
            if ty.d > 1 {
                shape.insert(2, u64::from(ty.d));
            }
            let name = p.name.strip_suffix("@output").unwrap_or(&p.name).to_string();
            Ok(HostTensor { name, shape, dtype: dtype(ty.dtype) })
        })
        .collect()
}

/// An engine step of a compiled program.
fn engine_step(file: String, compiled: Compiled, inputs: &[HostTensor], outputs: &[HostTensor]) -> EngineStep {
    EngineStep { file, compiled, inputs: inputs.to_vec(), outputs: outputs.to_vec() }
}

/// The E5 element type of an anec dialect element type.
fn dtype(d: DType) -> TensorDataType {
    match d {
        DType::F16 => TensorDataType::Float16,
        DType::F32 => TensorDataType::Float32,
        DType::U8 => TensorDataType::UInt8,
        DType::I8 => TensorDataType::Int8,
    }
}
