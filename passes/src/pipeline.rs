//! The pass pipeline, as one literal list.

use crate::legalize::{legalize, LegalizeError, Route};
use crate::target::Target;
use crate::tile;
use crate::validate::{validate, Validated, ValidationError};
use anec_ir::Module;

/// Why the pipeline stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PipelineError {
    /// The module failed the IR verifier (a front-end or pass bug, or an invalid `.mlir`).
    #[error("{0}")]
    Invalid(#[from] ValidationError),
    /// Layers the target chip does not run (the validators of `legalize`).
    #[error("{0}")]
    Rejected(#[from] LegalizeError),
}

/// Runs every pass in order and returns the module, verified and legal on `target`.
///
/// The list: verify ([`validate`]), rewrite the layers the chip runs only as several
/// ([`tile::run`]) and verify again, then the per-layer validators on the chip
/// ([`legalize`], the same verdicts `anec check` reports). Segmentation and layout passes
/// join here, one line each, as they land.
pub fn run(module: Module, target: Target, route: Route) -> Result<Validated, PipelineError> {
    let validated = validate(module)?;
    let validated = match tile::run(validated.module(), target) {
        std::borrow::Cow::Owned(tiled) => validate(tiled)?,
        std::borrow::Cow::Borrowed(_) => validated,
    };
    legalize(&validated, target, route)?;
    Ok(validated.legal_on(target))
}
