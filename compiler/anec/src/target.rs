//! Compilation targets, named as Apple's compiler names them.

use crate::error::Error;

/// A chip the compiler emits programs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Apple M1 (H13 neural engine).
    H13g,
}

impl Target {
    /// Every target with its name.
    pub const ALL: [(Target, &'static str); 1] = [(Target::H13g, "h13g")];

    /// The target's names.
    pub fn names() -> Vec<&'static str> {
        Target::ALL.iter().map(|(_, n)| *n).collect()
    }

    /// Looks a target up by name.
    pub fn parse(name: &str) -> Result<Target, Error> {
        Target::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t).ok_or_else(|| Error::UnknownTarget(name.into()))
    }

    /// The target's name.
    pub fn name(self) -> &'static str {
        match self {
            Target::H13g => "h13g",
        }
    }
}
