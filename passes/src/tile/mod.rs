//! Tiling: layers the chip cannot run as one layer, rewritten as layers it can, before
//! the chip's validators see them (so `anec check` and `anec compile` judge the
//! rewritten layers). One rewrite per file:
//!
//! - [`patch_embedding`]: a convolution whose kernel equals its stride (non-overlapping
//!   patches) and exceeds the chip's kernel limit (a ViT's 16 x 16 patch embedding) as
//!   data moves and a 1 x 1 convolution.
//!
//! Tiling inside the code generator (output channels beyond the kernel DMA's grouping,
//! rows beyond the L2, weights beyond the kernel memory, depth slices of a transposing
//! pass) splits one layer's tasks and lives in the backend (`backend-h13/src/lower/`).

pub mod patch_embedding;

use crate::target::Target;
use anec_ir::Module;
use std::borrow::Cow;

/// `m` with every rewrite applied for `target` (borrowed when none applies).
pub fn run(m: &Module, target: Target) -> Cow<'_, Module> {
    match patch_embedding::expand(m, target) {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(m),
    }
}
