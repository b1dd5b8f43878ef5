//! The reference interpreter: MIL semantics on hand-computed cases, and agreement between
//! `run_mil` on a MIL program and `run_module` on its lowering (which checks the lowering)
//! for the real MNIST model, the conformance inputs and small programs of every op family.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

mod agree_edges;
mod agree_nn;
mod agree_pointwise;
mod agree_shape;
mod fixtures;
mod robust;
mod semantics;
