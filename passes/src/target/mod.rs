//! Compilation targets as data.
//!
//! A target is a chip named as Apple's compiler names it (`-t h13g`). Everything the
//! compiler knows about a chip is a value in a table, never a branch in code:
//!
//! - identity: the Mach-O `cpusubtype` of its `.hwx` files and its ANE ISA version
//!   (`ZinAneTd<N>`), both from `chip-features.md` §1;
//! - [`FeatureBytes`]: the bytes of the compiler's hardware-abstraction table that the layer
//!   validators read (seed 002, Table B.2), each with its source;
//! - [`Limits`]: extents, kernel sizes, group and channel widths and the per-layer caps,
//!   each with its source;
//! - the hardware (setter) features of its generation ([`hw_features`], `chip-features.md`
//!   §4).
//!
//! Every value carries a [`Source`]: what a seed states, what a reference states, or what
//! was inferred (and how). `docs/targets.md` is generated from the same tables.
//!
//! # How the seeds name chips
//!
//! The seeds phrase gates as "from the A14 generation", "gated to the A15 generation", "set
//! from the A13 onward". These are the capability *families* of ANEForge
//! (`aneforge/_targets.py`), named after the iPhone SoC of the first member, not SoC names:
//! family A13 = H13/H13g (A14, M1), A14 = H14/H14g (A15, M2), A15 = H15/H15g (A16, M3),
//! A16 = H16/H16g/H17 (A17 Pro, M4, A18, M5); H11/H12 are family "older". The SoC reading
//! cannot be right: "accepted from the A14 generation and rejected on the M1" would name the
//! A14 SoC, which is the same H13 generation as the M1 (cpusubtype 4, ISA 7, §1), and the
//! Texture setters are first REAL on H14 (`chip-features.md` §3). See [`Family`].

mod chips;
pub mod features;
pub mod hw_features;
pub mod limits;
pub mod render;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_render;

pub use features::{FeatureByte, FeatureBytes};
pub use hw_features::{HwFeature, SetterStatus};
pub use limits::{InclusiveRange, LimitRow, Limits};
pub use render::{target_features_text, target_list_text, targets_markdown};

use std::cmp::Ordering;
use std::fmt;

/// Where a value in the target tables comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A seed states the value for this chip (the text names the seed and table).
    Seed(&'static str),
    /// A reference states it (`chip-features.md`, ANEForge, the register tables).
    Reference(&'static str),
    /// Nothing states it; the text says how the value was chosen.
    Inferred(&'static str),
}

impl Source {
    /// `seed`, `reference` or `inferred`.
    pub const fn kind(self) -> &'static str {
        match self {
            Source::Seed(_) => "seed",
            Source::Reference(_) => "reference",
            Source::Inferred(_) => "inferred",
        }
    }

    /// The citation or the reasoning.
    pub const fn text(self) -> &'static str {
        match self {
            Source::Seed(t) | Source::Reference(t) | Source::Inferred(t) => t,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind(), self.text())
    }
}

/// A value and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its source.
    pub source: Source,
}

/// A value a seed states.
pub(crate) const fn seed<T>(value: T, text: &'static str) -> Sourced<T> {
    Sourced { value, source: Source::Seed(text) }
}

/// A value a reference states.
pub(crate) const fn reference<T>(value: T, text: &'static str) -> Sourced<T> {
    Sourced { value, source: Source::Reference(text) }
}

/// A value nothing states.
pub(crate) const fn inferred<T>(value: T, text: &'static str) -> Sourced<T> {
    Sourced { value, source: Source::Inferred(text) }
}

/// A neural-engine generation (the H number). Ordered oldest first.
///
/// The ISA version is not monotonic in the generation (H15 is ISA 8, H14 is ISA 11), so
/// "later chip" always means a later generation, never a larger ISA number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// H11 (A12).
    H11,
    /// H12 (A13).
    H12,
    /// H13 (A14, M1).
    H13,
    /// H14 (A15, M2).
    H14,
    /// H15 (A16, M3).
    H15,
    /// H16 (A17 Pro, M4).
    H16,
    /// H17 (A18, M5).
    H17,
}

impl Generation {
    /// `H11` .. `H17`.
    pub const fn name(self) -> &'static str {
        match self {
            Generation::H11 => "H11",
            Generation::H12 => "H12",
            Generation::H13 => "H13",
            Generation::H14 => "H14",
            Generation::H15 => "H15",
            Generation::H16 => "H16",
            Generation::H17 => "H17",
        }
    }

    /// Position from the oldest (H11 = 0); the column of [`hw_features`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A capability family: the seeds' "A13 / A14 / A15 generation" (ANEForge's tiers).
///
/// ANEForge `_targets.py` `_ARCH_FAMILY`: older = h11, h12; A13 = h13, h13g; A14 = h14,
/// h14g; A15 = h15, h15g; A16 = h16, h16g, h17 (H17 "adds no op capabilities over A16").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// H11, H12: below "MIL is only supported for H13+ ANE architectures".
    Older,
    /// H13, H13g (A14, M1).
    A13,
    /// H14, H14g (A15, M2).
    A14,
    /// H15, H15g (A16, M3).
    A15,
    /// H16, H16g, H17 (A17 Pro, M4, A18, M5).
    A16,
}

impl Family {
    /// `older`, `A13` .. `A16`.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Older => "older",
            Family::A13 => "A13",
            Family::A14 => "A14",
            Family::A15 => "A15",
            Family::A16 => "A16",
        }
    }
}

/// Everything known about one chip (one row of the table in `chips.rs`).
#[derive(Debug, PartialEq)]
pub struct ChipSpec {
    /// Apple's target name (`h13g`).
    pub name: &'static str,
    /// The products that carry it (`M1`).
    pub marketing: &'static str,
    /// Its generation.
    pub generation: Generation,
    /// Its capability family.
    pub family: Family,
    /// The Mach-O `cpusubtype` of its `.hwx` files (`chip-features.md` §1).
    pub cpusubtype: u32,
    /// Its ANE ISA version, the `N` of `ZinAneTd<N>` (`chip-features.md` §1).
    pub isa_version: u32,
    /// The feature bytes the validators read.
    pub features: FeatureBytes,
    /// Its limits.
    pub limits: Limits,
}

/// A chip the compiler can name: a cheap handle to its [`ChipSpec`].
#[derive(Clone, Copy)]
pub struct Target(&'static ChipSpec);

impl Target {
    /// Every target, oldest generation first (base die before its `g` variant).
    pub fn all() -> impl ExactSizeIterator<Item = Target> {
        chips::ALL.iter().map(|&spec| Target(spec))
    }

    /// The names of every target, in [`Target::all`] order.
    pub fn names() -> Vec<&'static str> {
        Target::all().map(Target::name).collect()
    }

    /// The whole table row.
    pub fn spec(self) -> &'static ChipSpec {
        self.0
    }

    /// Apple's target name (`h13g`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The products that carry the chip (`M1`).
    pub fn marketing_name(self) -> &'static str {
        self.0.marketing
    }

    /// The Mach-O `cpusubtype` of its `.hwx` files.
    pub fn cpusubtype(self) -> u32 {
        self.0.cpusubtype
    }

    /// The ANE ISA version (`ZinAneTd<N>`).
    pub fn isa_version(self) -> u32 {
        self.0.isa_version
    }

    /// The generation; compare these to order chips.
    pub fn generation(self) -> Generation {
        self.0.generation
    }

    /// The capability family (the seeds' "A13 .. A16 generation").
    pub fn family(self) -> Family {
        self.0.family
    }

    /// The value of one feature byte.
    pub fn feature(self, byte: FeatureByte) -> u8 {
        self.0.features.get(byte).value
    }

    /// All feature bytes with their sources.
    pub fn features(self) -> &'static FeatureBytes {
        &self.0.features
    }

    /// The limits with their sources.
    pub fn limits(self) -> &'static Limits {
        &self.0.limits
    }

    /// What the `ZinAneTd<N>::Set<feature>` setter does on this chip's generation, or `None`
    /// when `feature` is not a setter of `chip-features.md` §4.
    pub fn setter_status(self, feature: &str) -> Option<SetterStatus> {
        hw_features::find(feature).map(|f| f.status(self.generation()))
    }
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Target {}

impl std::hash::Hash for Target {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl PartialOrd for Target {
    fn partial_cmp(&self, other: &Target) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Oldest generation first; within a generation the base die before the `g` variant.
impl Ord for Target {
    fn cmp(&self, other: &Target) -> Ordering {
        (self.generation(), self.name()).cmp(&(other.generation(), other.name()))
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({})", self.name())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target name that is not in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    /// The name as given.
    pub name: String,
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown target `{}`; valid targets: {}", self.name, Target::names().join(", "))
    }
}

impl std::error::Error for UnknownTarget {}

/// Looks a target up by Apple's name (ASCII case is ignored: `H13G` is `h13g`).
pub fn lookup(name: &str) -> Result<Target, UnknownTarget> {
    Target::all().find(|t| t.name().eq_ignore_ascii_case(name)).ok_or_else(|| UnknownTarget { name: name.to_owned() })
}
