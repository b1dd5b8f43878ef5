//! Passes over the anec dialect.
//!
//! The pipeline a compile runs is the literal list in [`pipeline::run`]. Its result is a
//! [`Validated`] module: backends accept only that type, so no code is generated from a
//! module that has not passed the verifier and the legality checks.
//!
//! [`legalize`] holds the per-layer validators of the target chip (seed 002, Table B.2) in
//! their two roles: the dry run behind `anec check` ([`legalize::check`]) and the
//! legalizer of the pipeline ([`legalize::legalize`]).
//!
//! [`lower::lower_mil`] lowers a MIL function (the MIL front ends' output) to the anec
//! dialect; see `docs/mil.md`, "Lowering to the anec dialect".

pub mod fuse;
pub mod legalize;
pub mod lower;
pub mod pipeline;
pub mod plan;
pub mod rewrite;
pub mod segment;
pub mod target;
pub mod tile;
pub mod validate;

pub use fuse::Group;
pub use legalize::{LegalizeError, Route};
pub use lower::lower_mil;
pub use pipeline::{run, PipelineError};
pub use validate::{validate, Validated, ValidationError};
