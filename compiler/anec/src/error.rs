//! The driver's error: every failure of a compile, as one line that names the file.

use std::path::PathBuf;
use thiserror::Error;

/// Why a compile or a tool failed.
#[derive(Debug, Error)]
pub enum Error {
    /// The input could not be read or parsed.
    #[error("{0}")]
    Front(#[from] anec_front::FrontError),
    /// The module failed verification (a front-end or pass bug, or an invalid IR file).
    #[error("{file}: invalid module:\n{source}")]
    Invalid {
        /// Input file.
        file: String,
        /// Every verifier error.
        source: anec_passes::ValidationError,
    },
    /// The backend could not place a layer.
    #[error("{file}: {source}")]
    Backend {
        /// Input file.
        file: String,
        /// The backend's reason.
        source: anec_backend_h13::BackendError,
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
    /// An unknown target name.
    #[error("unknown target '{0}'; valid targets: {valid}", valid = crate::target::Target::names().join(", "))]
    UnknownTarget(String),
    /// An input format the compiler does not read (yet).
    #[error("{0}: unsupported input format (expected a .plist netplist or a .mlir anec module)")]
    UnsupportedInput(PathBuf),
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
