//! Cutting a network into segments that run one after the other, each compiled to a
//! program of its own (docs/formats/bundle.md):
//!
//! - [`mil`]: a MIL function around the statements left to the CPU (CPU fallback);
//! - [`module`]: an anec module around the layers that run as a dispatch segment of their
//!   own (the hidden layers a netplist author reaches, seed 003).

pub mod mil;
pub mod module;

pub use mil::{cut, is_constant, reads, Step};
