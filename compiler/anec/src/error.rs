//! The driver's error: every failure of a compile, as one line that names the file.

use std::path::PathBuf;
use thiserror::Error;

/// Why a compile or a tool failed.
#[derive(Debug, Error)]
pub enum Error {
    /// The input could not be read or parsed.
    #[error("{0}")]
    Front(#[from] anec_front::FrontError),
    /// Errors in a user's file with source positions (MIL text, weights, lowering); the
    /// CLI renders each with its source line and a caret.
    #[error("{}", DisplayAll(.0))]
    Diagnostics(Vec<anec_ir::Diagnostic>),
    /// The module failed verification (a front-end or pass bug, or an invalid IR file).
    #[error("{file}: invalid module:\n{source}")]
    Invalid {
        /// Input file.
        file: String,
        /// Every verifier error.
        source: anec_passes::ValidationError,
    },
    /// Layers the target chip does not run: the per-layer validators (one line per layer,
    /// each with its location, the rule and the feature byte or limit; `anec check` reports
    /// the same).
    #[error("{source}")]
    Rejected {
        /// Input file.
        file: String,
        /// Every rejected layer.
        source: anec_passes::LegalizeError,
    },
    /// The model passes a chip's validators but anec has no code generator for the chip.
    #[error("{file}: no code generator for {target} yet: the model passes {target}'s validators (see `anec check -t {target}`)")]
    NoCodeGenerator {
        /// Input file.
        file: String,
        /// The chip.
        target: String,
    },
    /// A target name that is not in the chip table.
    #[error("{0}")]
    UnknownChip(anec_passes::target::UnknownTarget),
    /// The backend could not place one or more layers (one line per layer, each naming
    /// the file).
    #[error("{}", per_line(file, &source.to_string()))]
    Backend {
        /// Input file.
        file: String,
        /// The backend's reason.
        source: anec_backend_h13::BackendError,
    },
    /// The program anec generated fails the check run on every program before it is
    /// written (`verify`): a compiler bug, never the user's; nothing is written.
    #[error("{file}: internal compiler error: the program generated for layer '{layer}' fails verification: {reason} (please report this)")]
    Unverified {
        /// Input file.
        file: String,
        /// The layer of the task at fault ("the program" when no task is named).
        layer: String,
        /// What the check found (the TD, the field or region).
        reason: String,
    },
    /// The container could not be written or read.
    #[error("{file}: {source}")]
    Codegen {
        /// File being written or read.
        file: String,
        /// The container error.
        source: anec_codegen::CodegenError,
    },
    /// An `.mlir` input did not parse.
    #[error("{file}:{source}")]
    IrParse {
        /// Input file.
        file: String,
        /// The parse error (line:col: message).
        source: anec_ir::ParseError,
    },
    /// A tool failed on a file.
    #[error("{file}: {source}")]
    Tool {
        /// The file.
        file: String,
        /// The tool's error.
        source: anec_tools::ToolError,
    },
    /// A bundle could not be put together (`--emit bundle`): the file and why.
    #[error("{file}: {message}")]
    Bundle {
        /// The model.
        file: String,
        /// Why.
        message: String,
    },
    /// `--allow-cpu-fallback` with `--emit hwx`, which writes one program.
    #[error("--allow-cpu-fallback cuts a model into several programs: use --emit bundle (the .e5 and its .hwx programs) or --emit anec")]
    FallbackNeedsSegments,
    /// An input format the compiler does not read (yet).
    #[error("{0}: unsupported input format (expected a .plist netplist, a .mil, .mlmodelc or .mlpackage MIL model, or a .mlir anec module)")]
    UnsupportedInput(PathBuf),
    /// `--emit mil` on an input that is not MIL.
    #[error("{0}: --emit mil needs a MIL input (.mil, .mlmodelc or .mlpackage)")]
    EmitNeedsMil(PathBuf),
    /// An `anec sim` / `anec run` input that does not fit the program (unknown, missing or
    /// repeated name, other shape, unsupported `.npy` dtype); lists the program's inputs.
    #[error("{program}: {problem}; the program's inputs are: {inputs}")]
    Inputs {
        /// The program or model.
        program: String,
        /// What is wrong.
        problem: String,
        /// Every input with its shape and element type.
        inputs: String,
    },
    /// A MIL function that the model does not define.
    #[error("{file}: no function `{function}` (the model defines: {functions})")]
    NoFunction {
        /// The model.
        file: String,
        /// The function asked for.
        function: String,
        /// The functions it has.
        functions: String,
    },
    /// The simulator could not load or run a program.
    #[error("{file}: simulator: {source}")]
    Sim {
        /// The program.
        file: String,
        /// Why.
        source: anec_tools::SimError,
    },
    /// The reference interpreter could not evaluate the model.
    #[error("{file}: reference interpreter: {source}")]
    Reference {
        /// The model.
        file: String,
        /// Why.
        source: anec_tools::RefError,
    },
    /// An `.npy` file could not be read or written.
    #[error("{0}")]
    Npy(#[from] anec_tools::npy::NpyError),
    /// A file-system error.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with its path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Displays diagnostics one per line.
struct DisplayAll<'a>(&'a [anec_ir::Diagnostic]);

impl std::fmt::Display for DisplayAll<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// `file: line` for every line of `text`.
fn per_line(file: &str, text: &str) -> String {
    text.lines().map(|l| format!("{file}: {l}")).collect::<Vec<_>>().join("\n")
}
