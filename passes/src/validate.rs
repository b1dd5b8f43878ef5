//! Validation: the IR verifier, run as the gate before any code generation.
//!
//! A [`Validated`] can only be built here, so holding one proves the module verified; it
//! also carries, when it comes from [`crate::pipeline::run`], the chip whose validators
//! it passed ([`Validated::target`]). Which ops share a task is the backend's fusion
//! rules' decision (`crate::fuse`), made on the module it finally lowers.

use crate::target::Target;
use anec_ir::verify::{verify_module, VerifyError};
use anec_ir::Module;
use std::fmt;

/// A module that passed verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    module: Module,
    target: Option<Target>,
}

impl Validated {
    /// The verified module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The verified module, taken out.
    pub fn into_module(self) -> Module {
        self.module
    }

    /// The chip whose per-layer validators the module passed (`None` when it was only
    /// verified, as `anec run` does).
    pub fn target(&self) -> Option<Target> {
        self.target
    }

    /// Records that the module passed the validators of `target` (the pipeline's last step).
    pub(crate) fn legal_on(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
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
    Ok(Validated { module, target: None })
}
