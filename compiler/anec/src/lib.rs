//! The anec compiler's library API and the home of the `anec` command-line tool.
//!
//! A build script or a test compiles a model with [`compile_file`]:
//! ```no_run
//! let opts = anec::Options::new(anec::Target::H13g);
//! let out = anec::compile_file(std::path::Path::new("examples/conv/net.plist"), &opts)?;
//! out.persist(std::path::Path::new("out/conv.hwx"))?;
//! # Ok::<(), anec::Error>(())
//! ```
//! The pipeline reads in one function, [`compile_module`]: front end, passes (verify and
//! the target chip's validators), backend, container. [`check`] answers, per layer and per
//! chip, whether a model runs on the engine, with the same validators (`anec check`).

pub mod bundle;
pub mod cache;
pub mod check;
pub mod diagnostic;
pub mod error;
pub mod input;
pub mod output;
pub mod progress;
pub mod run;
pub mod staged;
pub mod target;
mod verify;

pub use anec_backend_h13::Compat;
pub use bundle::{compile_bundle, compile_mil_bundle, Bundle};
pub use error::Error;
pub use input::{load_function, load_mil, InputKind, DEFAULT_FUNCTION};
pub use output::{write_atomically, write_atomically_with};
pub use staged::Staged;
pub use target::Target;
pub use verify::program as verify_program;

use anec_codegen::Hwx;
use anec_ir::Module;
use anec_passes::target::Target as Chip;
use anec_passes::{PipelineError, Route, Validated};
use progress::{Phase, Progress};
use std::path::Path;

/// Name and version written into the `LC_IDENT` banner.
pub const COMPILER_ID: &str = concat!("anec v", env!("CARGO_PKG_VERSION"));

/// Compile options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Target chip.
    pub target: Target,
    /// The command line recorded in the `LC_IDENT` banner after the target (e.g. `-i`, `-o`).
    pub banner_args: Vec<String>,
    /// The function of a MIL program to compile (`main` unless named).
    pub function: String,
    /// How the model reached the compiler (the route its validators gate): direct for a
    /// netplist or `.mlir`, conversion for MIL. [`compile_file`] sets it from the file.
    pub route: Route,
    /// Which generation of Apple's compiler the program follows (`--apple-compat`): the
    /// current one's sparse register records by default, or v4.2.1's dense TDs.
    pub compat: Compat,
    /// Where a large program's file is written before it reaches its destination: the
    /// output directory, so that [`Compiled::persist`] only renames it. `None`: the
    /// system's temporary directory. Nothing of the program depends on it.
    pub stage_dir: Option<std::path::PathBuf>,
}

impl Options {
    /// Options for a target with no extra banner arguments.
    pub fn new(target: Target) -> Self {
        Options {
            target,
            banner_args: Vec::new(),
            function: DEFAULT_FUNCTION.to_string(),
            route: Route::Direct,
            compat: Compat::default(),
            stage_dir: None,
        }
    }

    /// The `LC_IDENT` text in Apple's format: `ANEC v1`, the compiler, then one tab-indented
    /// line per flag.
    pub fn ident(&self) -> String {
        let mut s = format!("ANEC v1\n{COMPILER_ID}\n\t-t {}\n", self.target.name());
        for a in &self.banner_args {
            s.push('\t');
            s.push_str(a);
            s.push('\n');
        }
        s
    }
}

/// A compiled program.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    /// The verified module that was compiled.
    pub module: Module,
    /// The program.
    pub hwx: Hwx,
    /// Its buffers, and every intermediate's place and lifetime (`anec dump --plan`).
    pub plan: anec_passes::plan::MemoryPlan,
    /// The `.hwx` file, written once (the bytes the verifier read back, shared with it).
    file: Staged,
}

impl Compiled {
    /// The `.hwx` file bytes (a copy; [`Compiled::hwx_file`] borrows them).
    pub fn hwx_bytes(&self) -> Result<Vec<u8>, Error> {
        Ok(self.file.bytes().to_vec())
    }

    /// The `.hwx` file bytes.
    pub fn hwx_file(&self) -> &[u8] {
        self.file.bytes()
    }

    /// Puts the `.hwx` file at `path`, atomically: a rename when it was written in that
    /// directory ([`Options::stage_dir`]), else a copy.
    pub fn persist(self, path: &Path) -> Result<(), Error> {
        self.file.persist(path)
    }

    /// The Asahi `.anec` file bytes.
    pub fn anec_bytes(&self) -> Result<Vec<u8>, Error> {
        anec_codegen::write_anec(&self.hwx).map_err(|source| Error::Codegen { file: "<anec>".into(), source })
    }
}

/// Reads a model file into the anec dialect, choosing the front end by file name (the
/// `main` function of a MIL program; see [`load_function`] for another).
pub fn load(path: &Path) -> Result<Module, Error> {
    load_function(path, DEFAULT_FUNCTION)
}

/// The chip table's entry of a target with a code generator: the one place an
/// [`anec::Target`](Target) becomes an [`anec_passes::target::Target`](Chip).
pub fn chip(target: Target) -> Result<Chip, Error> {
    anec_passes::target::lookup(target.name()).map_err(Error::UnknownChip)
}

/// The target with a code generator in anec for a chip, if there is one.
pub fn code_generator(chip: Chip) -> Option<Target> {
    Target::with_code_generator(chip.name())
}

/// The route of an input kind: conversion for MIL, direct for netplists and `.mlir`.
pub fn route_of(kind: InputKind) -> Route {
    match kind {
        InputKind::Mil => Route::Conversion,
        InputKind::Netplist | InputKind::AnecIr => Route::Direct,
    }
}

/// The passes on a module for `chip`: the verifier and the chip's validators.
pub fn validate_for(module: Module, file: &str, chip: Chip, route: Route) -> Result<Validated, Error> {
    anec_passes::run(module, chip, route).map_err(|e| match e {
        PipelineError::Invalid(source) => Error::Invalid { file: file.to_string(), source },
        PipelineError::Rejected(source) => Error::Rejected { file: file.to_string(), source },
    })
}

/// The whole pipeline on a module: passes, then the target's backend.
pub fn compile_module(module: Module, file: &str, opts: &Options) -> Result<Compiled, Error> {
    compile_module_with(module, file, opts, &progress::Silent)
}

/// [`compile_module`], telling `progress` of each phase.
pub fn compile_module_with(
    module: Module,
    file: &str,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<Compiled, Error> {
    progress.phase(Phase::Validate);
    let validated = validate_for(module, file, chip(opts.target)?, opts.route)?;
    progress.phase(Phase::PackWeights);
    let backend_opts = anec_backend_h13::Options { ident: opts.ident(), compat: opts.compat };
    let program = match opts.target {
        Target::H13g => anec_backend_h13::compile_deferred(&validated, &backend_opts),
    }
    .map_err(|source| Error::Backend { file: file.to_string(), source })?;
    progress.phase(Phase::Write);
    let mut hwx = program.hwx;
    let staged = Staged::write_deferred(&mut hwx, &program.deferred, opts.stage_dir.as_deref(), file)?;
    drop(program.deferred);
    let codegen = |source| Error::Codegen { file: file.to_string(), source };
    hwx.consts = const_window(staged.bytes()).map_err(codegen)?;
    verify::program(staged.bytes(), &hwx, file)?;
    Ok(Compiled { module: validated.into_module(), hwx, plan: program.plan, file: staged })
}

/// The `__const` section of a written program, as a window of its bytes: the program's
/// model then holds its constants once, in the file (no second copy of the weights).
fn const_window(file: &anec_ir::mil::SharedBytes) -> Result<anec_ir::mil::SharedBytes, anec_codegen::CodegenError> {
    let f = anec_codegen::parse_hwx_structure(file)?;
    let bad = || anec_codegen::CodegenError::Malformed("the written program has no __const inside the file".into());
    let c = f.section("__TEXT", "__const").ok_or_else(bad)?;
    let start = c.offset as usize;
    let end = usize::try_from(c.size).ok().and_then(|n| start.checked_add(n)).ok_or_else(bad)?;
    file.slice(start..end).ok_or_else(bad)
}

/// Loads and compiles a model file.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Compiled, Error> {
    compile_file_with(path, opts, &progress::Silent)
}

/// [`compile_file`], telling `progress` of each phase.
pub fn compile_file_with(path: &Path, opts: &Options, progress: &dyn Progress) -> Result<Compiled, Error> {
    let kind = InputKind::of(path)?;
    let opts = Options { route: route_of(kind), ..opts.clone() };
    progress.phase(Phase::Read);
    let module = match kind {
        InputKind::Mil => {
            let model = load_mil(path)?;
            progress.phase(Phase::Lower);
            anec_passes::lower::lower_mil(&model, &opts.function).map_err(Error::Diagnostics)?
        }
        _ => load_function(path, &opts.function)?,
    };
    compile_module_with(module, &path.display().to_string(), &opts, progress)
}
