//! The reference interpreter: plain f32 evaluation of a source program, independent of the
//! engine, for checking compiled programs and the simulator against.
//!
//! - [`run_module`] evaluates an anec-dialect [`anec_ir::Module`] (what netplists, `.mlir`
//!   files and lowered MIL become): inputs keyed by port name, outputs keyed by port name
//!   without `@output`, tensors in the logical `[N, C, H, W]` order (`[N, C, D, H, W]`
//!   when D > 1).
//! - [`run_mil`] evaluates a MIL function directly with coremltools' op semantics, without
//!   going through the lowering, so a lowering bug shows up as a disagreement with
//!   [`run_module`] on the lowered module. Inputs and outputs are keyed by MIL variable
//!   names and have MIL shapes; [`mil_to_program`] / [`program_to_mil`] convert between a
//!   MIL tensor and the program layout the lowering gives it (its rank mapping).
//!
//! Arithmetic is f32 throughout (constants in fp16 convert exactly, sums accumulate in
//! f32, transcendental functions are evaluated in f64 and rounded once); nothing is rounded
//! to fp16, so the comparison tolerance lives with the caller. Anything malformed or not
//! implemented is a [`RefError`] naming the op; nothing panics on input.
//! `docs/simulator.md` ("Reference interpreter") lists the ops and the decisions.

pub mod kernels;
mod layout;
mod mil;
mod module;

pub use layout::{mil_to_program, program_to_mil};
pub use mil::run_mil;
pub use module::run_module;

/// Why a reference run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// A missing, unknown or malformed input tensor (the message lists the expected ones).
    #[error("{0}")]
    Input(String),
    /// An anec op could not be evaluated.
    #[error("{opcode} '{name}': {reason}")]
    ModuleOp {
        /// The opcode (`anec.conv`).
        opcode: String,
        /// The op's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A MIL statement could not be evaluated (unknown op, bad arguments, shape mismatch).
    #[error("MIL `{op}` (result `{var}`): {reason}")]
    MilOp {
        /// The MIL op type (`conv`).
        op: String,
        /// The statement's first result variable.
        var: String,
        /// Why.
        reason: String,
    },
    /// A problem with the program as a whole (unknown function, undefined output).
    #[error("{0}")]
    Program(String),
}
