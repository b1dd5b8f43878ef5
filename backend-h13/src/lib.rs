//! The H13 (Apple M1) neural-engine backend.
//!
//! [`compile`] takes a [`anec_passes::Validated`] module and produces the content of an
//! `.hwx` program ([`anec_codegen::hwx::model::Hwx`]): one task descriptor per layer,
//! encoded field by field through the register map, chained, with the weight banks and
//! activation tables in `__const`.
//!
//! Layout: `regmap` (fields and blocks), `td` (the register image), `task` (engine-level
//! facts of one TD), `lower` (ops to tasks, one recipe file per op family; `window` checks
//! kernel/stride/padding, `affine` lowers gain/offset), `encode` (tasks to registers, one
//! file per block), `stream` (a task's register records, dense or sparse, written and
//! read), `chain` (tasks linked in `__text`, written and read), `generation` (what differs
//! between Apple's compiler generations, as data: `--apple-compat`), `layout`, `buffers`,
//! `weights`, `activation`, `consts`, `program`.

pub mod activation;
pub mod affine;
pub mod buffers;
pub mod chain;
pub mod consts;
pub mod deferred;
pub mod encode;
pub mod error;
pub mod fuse;
pub mod generation;
pub mod hazard;
pub mod layout;
pub mod lower;
pub mod plan;
pub mod program;
pub mod regmap;
pub mod stream;
pub mod task;
pub mod td;
pub mod weights;
pub mod window;
pub mod zeroed;

pub use deferred::{Bank, Deferred};
pub use error::BackendError;
pub use generation::Compat;
pub use program::{compile, compile_deferred, Options, Program};
