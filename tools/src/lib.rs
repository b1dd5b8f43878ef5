//! Inspection tools for compiled Apple Neural Engine programs: dump and diff.
//!
//! - [`dump_file`] lists every field of an `.hwx` (detected by its `0xBEEFFACE` magic)
//!   or `.anec` file as stable text: the header, every load command, the thread states
//!   by name, the symbols, each task descriptor by register-map field, the weight chunks.
//! - [`diff_files`] / [`diff_files_with`] compare two programs field by field and
//!   return [`Difference`]s; [`DiffOptions`] can ignore `LC_IDENT` and symbol hashes.
//!
//! Both read the same field tree (`tree`), so what a diff reports is what a dump shows.
//! [`oracle`] compares a program with a decoded record of Apple's current compiler.
//!
//! - [`reference`](mod@reference): the reference interpreter ([`run_module`], [`run_mil`]), plain f32
//!   evaluation of a source program.
//! - [`sim`]: the register-level simulator ([`SimProgram`]): runs an `.hwx` on host
//!   tensors by interpreting its task descriptors.
//!
//! Malformed input is a [`ToolError`], never a panic. Nothing here prints; the `anec`
//! CLI does (see `docs/tools.md`).

pub mod bundle;
pub mod diff;
pub mod dump;
pub mod error;
pub mod npy;
pub mod oracle;
pub mod reference;
pub mod sim;
pub mod tensor;

mod compare;
mod names;
mod program;
mod tree;

pub use diff::{diff_files, diff_files_with, DiffOptions, Difference};
pub use dump::dump_file;
pub use error::ToolError;
pub use reference::{run_mil, run_module, RefError};
pub use sim::{IoSpec, SimError, SimProgram};
pub use tensor::Tensor;
