//! The one error type of the crate.
//!
//! Every failure to read an input is an `Err` naming the input and the reason; nothing
//! here panics on malformed files.

use anec_codegen::CodegenError;

/// Errors of the dump and diff tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The input has the `.hwx` magic but does not parse as one.
    #[error("malformed .hwx file: {0}")]
    Hwx(#[source] CodegenError),
    /// The input has no `.hwx` magic and reads neither as an `.anec` nor as an `.e5` file.
    #[error("not a .hwx file (no 0xBEEFFACE magic), .anec file or .e5 file: as .anec, {anec}; as .e5, {e5}")]
    Unrecognized {
        /// Why it does not read as an `.anec` file.
        anec: Box<CodegenError>,
        /// Why it does not read as an `.e5` file.
        #[source]
        e5: Box<CodegenError>,
    },
    /// The two inputs of a diff are of different kinds that cannot be compared (an `.e5`
    /// against an `.hwx` or `.anec`).
    #[error("cannot compare a .{left} file with a .{right} file: the kinds differ")]
    KindsDiffer {
        /// The format of the left input.
        left: &'static str,
        /// The format of the right input.
        right: &'static str,
    },
    /// A decoded Apple record (`apple-h13-oracles/cases/*.json`) that does not read.
    #[error("malformed decoded record: {0}")]
    Record(String),
    /// One of the two inputs of a diff could not be read.
    #[error("{side} input: {source}")]
    Input {
        /// `"left"` or `"right"`.
        side: &'static str,
        /// Why it could not be read.
        #[source]
        source: Box<ToolError>,
    },
}

impl ToolError {
    /// Tags an error with the diff side it came from.
    pub(crate) fn on(self, side: &'static str) -> Self {
        Self::Input { side, source: Box::new(self) }
    }
}
