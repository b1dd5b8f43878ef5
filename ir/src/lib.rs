//! The anec dialect: the compiler's own intermediate representation.
//!
//! A [`Module`] holds one network as ops over SSA tensor values ([`TensorType`] in N, C, D,
//! H, W order). Each [`OpCode`] has a verifier in [`verify`]; the module prints in MLIR's
//! generic op syntax ([`mod@print`]) and parses back ([`parse`]) to an equal module.
//!
//! [`mil`] holds the MIL program tree that the MIL front ends build and `passes` lowers.
//!
//! This crate depends on nothing else of the project.

pub mod attr;
pub mod diagnostic;
pub mod hints;
pub mod mil;
pub mod module;
pub mod opcode;
pub mod parse;
pub mod print;
pub mod types;
pub mod verify;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod testutil;

pub use attr::{Attr, Attrs};
pub use diagnostic::Diagnostic;
pub use module::{Blob, Layout, Location, Module, Op, Port, Value, ValueId};
pub use opcode::OpCode;
pub use parse::{parse_module, ParseError};
pub use print::print_module;
pub use types::{DType, TensorType};
pub use verify::{verify_module, VerifyError};
