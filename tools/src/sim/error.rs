//! The simulator's error type: every malformed program, unmodelled field value, out-of-range
//! access and wrong input is a [`SimError`] value naming where (TD index, field) and why.

use anec_codegen::CodegenError;

/// Why a program could not be loaded or run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The `.hwx` container does not parse.
    #[error("malformed .hwx file: {0}")]
    Hwx(#[source] CodegenError),
    /// The program as a whole is inconsistent or uses something not modelled (TD chain,
    /// BAR table, tensor element types).
    #[error("program: {0}")]
    Program(String),
    /// A TD field holds a value the simulator does not model, or values that contradict
    /// each other.
    #[error("TD {td}: {field} = {value:#x}: {reason}")]
    Field {
        /// Index of the TD in the chain.
        td: usize,
        /// The register-map name of the field (`NE.MACCfg.OpMode`) or the unnamed word
        /// (`word 0x22c`).
        field: String,
        /// The value found.
        value: u64,
        /// What is modelled instead.
        reason: String,
    },
    /// A TD reads or writes outside a buffer (DRAM, L2 or kernel memory).
    #[error("TD {td}: {reason}")]
    Access {
        /// Index of the TD in the chain.
        td: usize,
        /// Which fields give the address and what the buffer holds.
        reason: String,
    },
    /// The inputs given to `run` do not match the program's inputs.
    #[error("{reason}; the program's inputs are: {expected}")]
    Input {
        /// What is wrong.
        reason: String,
        /// Every input of the program with its shape and element type.
        expected: String,
    },
}

impl SimError {
    /// A field error of TD `td`.
    pub(crate) fn field(td: usize, field: impl Into<String>, value: u64, reason: impl Into<String>) -> Self {
        SimError::Field { td, field: field.into(), value, reason: reason.into() }
    }

    /// An access error of TD `td`.
    pub(crate) fn access(td: usize, reason: impl Into<String>) -> Self {
        SimError::Access { td, reason: reason.into() }
    }
}

impl SimError {
    /// The TD the error is about, when it is about one.
    pub fn td(&self) -> Option<usize> {
        match self {
            SimError::Field { td, .. } | SimError::Access { td, .. } => Some(*td),
            _ => None,
        }
    }
}
