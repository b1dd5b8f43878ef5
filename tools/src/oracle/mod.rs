//! Apple's decoded programs as ground truth: reading a record of the corpus
//! (`shared/fixtures/apple-h13-oracles/`, [`record`]) and comparing one of our programs
//! with it ([`compare`]), as `anec diff ours.hwx case.json` and the conformance harness
//! (`tests/tests/oracles.rs`) do.

pub mod compare;
pub mod record;

pub use compare::{compare, compare_hwx, Comparison};
pub use record::{form_ab_halfword, Record};
