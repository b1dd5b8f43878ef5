//! The one error type of the crate.
//!
//! Reader errors say what was expected and at which file offset; writer errors name the
//! field whose value does not fit, with the value and the limit. Nothing here panics: a
//! malformed file or an out-of-range value is always an `Err`.

/// Errors of the container writers and readers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    /// The input ends before a structure that must be there.
    #[error(
        "truncated input: {what} needs {needed} bytes at offset {offset:#x}, but the input is {len:#x} bytes long"
    )]
    Truncated {
        /// The structure being read.
        what: String,
        /// Its file offset.
        offset: u64,
        /// How many bytes it needs.
        needed: u64,
        /// The input length.
        len: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("bad {what} at offset {offset:#x}: found {found:#x}, expected {expected}")]
    BadValue {
        /// The field.
        what: String,
        /// Its file offset.
        offset: u64,
        /// The value found.
        found: u64,
        /// What was expected, in words.
        expected: String,
    },
    /// The file is well formed but holds something the content model cannot express.
    #[error("malformed file: {0}")]
    Malformed(String),
    /// A value does not fit the fixed-width field it must be written to.
    #[error("{what} = {value:#x} does not fit its field (maximum {max:#x})")]
    Overflow {
        /// The field.
        what: String,
        /// The value.
        value: u64,
        /// The largest value the field holds.
        max: u64,
    },
    /// The content to write is inconsistent or invalid.
    #[error("invalid program: {0}")]
    Invalid(String),
    /// The content uses something no reference file shows, so its layout is unknown.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A file differs from what the writer produces for the content read from it.
    #[error("not canonical: byte {offset:#x} is {found:#04x}, the writer produces {expected}")]
    NotCanonical {
        /// First differing file offset.
        offset: u64,
        /// The file's byte there (0 when the file is shorter).
        found: u8,
        /// The writer's byte there, or "end of file".
        expected: String,
    },
}

impl CodegenError {
    /// A value that does not fit a field of `max`.
    pub(crate) fn overflow(what: impl Into<String>, value: u64, max: u64) -> Self {
        Self::Overflow { what: what.into(), value, max }
    }

    /// A field with an unexpected value.
    pub(crate) fn bad(what: impl Into<String>, offset: u64, found: u64, expected: impl Into<String>) -> Self {
        Self::BadValue { what: what.into(), offset, found, expected: expected.into() }
    }
}
