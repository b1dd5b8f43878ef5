//! The pass pipeline, as one literal list.

use crate::validate::{validate, Validated, ValidationError};
use anec_ir::Module;

/// Runs every pass in order and returns the validated module.
///
/// Today the list is: verify, then fusion grouping (inside [`validate`]). Segmentation, segmentation, layout and tiling passes join here,
/// one line each, as they land.
pub fn run(module: Module) -> Result<Validated, ValidationError> {
    validate(module)
}
