//! Errors of the H13 backend: a layer the backend cannot place, or a value that does not
//! fit its register field.

use thiserror::Error;

/// Why the H13 backend could not encode a module.
#[derive(Debug, Error, PartialEq)]
pub enum BackendError {
    /// A value does not fit the register field it is written to.
    #[error("layer '{layer}': value {value} does not fit register field {field} ({width} bits, max {max})")]
    FieldOverflow {
        /// Layer being encoded.
        layer: String,
        /// Field name.
        field: String,
        /// The value.
        value: u64,
        /// Field width.
        width: u8,
        /// Largest value the field holds.
        max: u64,
    },
    /// A field name the register map does not have (a backend bug).
    #[error("internal error: no register field named '{0}' in the H13 register map")]
    UnknownField(String),
    /// A raw word write at an offset that holds named fields or lies outside the blocks.
    #[error("internal error: TD offset {0:#x} is not an unnamed data word")]
    NotAnUnnamedWord(u16),
    /// The layer has no H13 lowering.
    #[error("{}layer '{layer}' ({op}): not supported on h13g: {reason}", at_line(*line))]
    Unsupported {
        /// Source line of the layer (0 when unknown).
        line: u32,
        /// Layer name.
        layer: String,
        /// Op name.
        op: String,
        /// Why.
        reason: String,
    },
    /// Several layers failed; every one is reported (one per line, in op order).
    #[error("{}", join_lines(.0))]
    Several(Vec<BackendError>),
    /// The module is malformed in a way the verifier should have caught.
    #[error("internal error: {0}")]
    Internal(String),
}

/// `line N: ` for a known source line, nothing otherwise.
fn at_line(line: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}

/// The errors' messages, one per line.
fn join_lines(errs: &[BackendError]) -> String {
    errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}
