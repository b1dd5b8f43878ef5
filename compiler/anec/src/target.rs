//! The chips anec generates code for: a subset of the chip table in
//! `anec_passes::target`, which every other part (validators, `anec check`, `--print`)
//! reads. A chip of that table without an entry here is validated but not compiled.

/// A chip with a code generator in anec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Apple M1 (H13 neural engine): `backend-h13`.
    H13g,
}

impl Target {
    /// Every chip with a code generator, with its name in the chip table.
    pub const ALL: [(Target, &'static str); 1] = [(Target::H13g, "h13g")];

    /// The names of the chips with a code generator.
    pub fn names() -> Vec<&'static str> {
        Target::ALL.iter().map(|(_, n)| *n).collect()
    }

    /// The code generator for the chip called `name`, if anec has one.
    pub fn with_code_generator(name: &str) -> Option<Target> {
        Target::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// The chip's name.
    pub fn name(self) -> &'static str {
        match self {
            Target::H13g => "h13g",
        }
    }
}
