//! The anec compiler's library API and the home of the `anec` command-line tool.
//!
//! A build script or a test compiles a model with [`compile_file`]:
//! ```no_run
//! let opts = anec::Options::new(anec::Target::H13g);
//! let out = anec::compile_file(std::path::Path::new("examples/conv/net.plist"), &opts)?;
//! anec::write_atomically(std::path::Path::new("out/conv.hwx"), &out.hwx_bytes()?)?;
//! # Ok::<(), anec::Error>(())
//! ```
//! The pipeline reads in one function, [`compile_module`]: front end, passes (verify),
//! backend, container.

pub mod diagnostic;
pub mod error;
pub mod input;
pub mod output;
pub mod target;

pub use error::Error;
pub use input::{load_function, load_mil, InputKind, DEFAULT_FUNCTION};
pub use output::write_atomically;
pub use target::Target;

use anec_codegen::Hwx;
use anec_ir::Module;
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
}

impl Options {
    /// Options for a target with no extra banner arguments.
    pub fn new(target: Target) -> Self {
        Options { target, banner_args: Vec::new(), function: DEFAULT_FUNCTION.to_string() }
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
}

impl Compiled {
    /// The `.hwx` file bytes.
    pub fn hwx_bytes(&self) -> Result<Vec<u8>, Error> {
        anec_codegen::write_hwx(&self.hwx).map_err(|source| Error::Codegen { file: "<hwx>".into(), source })
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

/// The whole pipeline on a module: passes, then the target's backend.
pub fn compile_module(module: Module, file: &str, opts: &Options) -> Result<Compiled, Error> {
    let validated = anec_passes::run(module).map_err(|source| Error::Invalid { file: file.to_string(), source })?;
    let backend_opts = anec_backend_h13::Options { ident: opts.ident() };
    let hwx = match opts.target {
        Target::H13g => anec_backend_h13::compile(&validated, &backend_opts),
    }
    .map_err(|source| Error::Backend { file: file.to_string(), source })?;
    Ok(Compiled { module: validated.module().clone(), hwx })
}

/// Loads and compiles a model file.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Compiled, Error> {
    let module = load_function(path, &opts.function)?;
    compile_module(module, &path.display().to_string(), opts)
}
