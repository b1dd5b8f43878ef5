//! Validation: the IR verifier, run as the gate before any code generation.
//!
//! A [`Validated`] can only be built here, so holding one proves the module verified; it
//! also carries the fusion groups the backend encodes one task each.

use crate::fuse::{self, Group};
use anec_ir::verify::{verify_module, VerifyError};
use anec_ir::Module;
use std::fmt;

/// A module that passed verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    module: Module,
    groups: Vec<Group>,
}

impl Validated {
    /// The verified module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The fused groups, in execution order (every op in exactly one group).
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }
}

/// Every problem the verifier found.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationError {
    /// One entry per problem.
    pub errors: Vec<VerifyError>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for ValidationError {}

/// Verifies `module`.
pub fn validate(module: Module) -> Result<Validated, ValidationError> {
    verify_module(&module).map_err(|errors| ValidationError { errors })?;
    let groups = fuse::groups(&module);
    Ok(Validated { module, groups })
}
