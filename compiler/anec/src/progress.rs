//! The phases of a compile, reported as they begin, so that a front end can show progress
//! (the CLI's bar on a terminal) without the library printing anything.

/// A phase of a compile, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading the model and its weights.
    Read,
    /// Lowering MIL to the anec dialect.
    Lower,
    /// The verifier and the chip's validators.
    Validate,
    /// Code generation: tasks, their registers and the weight banks' places.
    PackWeights,
    /// Writing the program, the weight banks packed straight into it, and checking it.
    Write,
}

impl Phase {
    /// The phase in a few words.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Lower => "lower",
            Phase::Validate => "validate",
            Phase::PackWeights => "pack weights",
            Phase::Write => "write",
        }
    }
}

/// Told of each phase as it begins.
pub trait Progress {
    /// Phase `p` begins.
    fn phase(&self, p: Phase);
}

/// Reports to nobody.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: Phase) {}
}
