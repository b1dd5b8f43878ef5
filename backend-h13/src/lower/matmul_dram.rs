//! Regime B of a constant-weight matmul: x^T does not fit L2 beside x
//! (`docs/rationale/current-compiler/matmul.md` §1, Apple's
//! `env_mm_r2rb_m512_k2048_n2048_tx0_ty1`), so it goes through memory, 8 channels
//! interleaved element by element. Apple's recipe:
//!
//! 1. **P**: the transposing pass writes x^T to its buffer (the BAR-3 scratch) with
//!    Fmt.Interleave 8, row = plane = 8 channels' rows; it ends an L2 section;
//! 2. **C**, in slices of the output channels (`conv::lower_conv`'s split, upward, each
//!    slice loading x^T again since the NE streams its rows in pieces): each slice reads
//!    x^T interleaved and writes its columns of the product rows; the slices run in L2
//!    sections of two (SPL on the first, TSR/TSE on the second), the first of a section
//!    setting the convolution's alias bits, the second none; every slice but the last
//!    keeps x^T cached (CacheHint 0xE), the last releases it (4).
//!
//! [`plan`] re-strides the x^T buffers after binding, [`apply`] sets the tasks' words.
//! The sections of two and the cache hints rest on the one record (`header-common-l2.md`
//! §7).

use crate::buffers::Buffers;
use crate::task::{AliasBits, DramReuse, L2Aliases, Task};
use anec_ir::{Module, OpCode};
use anec_passes::Group;

/// Channels interleaved in x^T's memory surface.
pub const INTERLEAVE: u32 = 8;

/// Re-strides the buffer of every x^T a regime-B matmul writes (P's result when P and x
/// do not fit L2 together, its only reader a 1x1 convolution writing transposed, `K` a
/// multiple of 8): 8 channels' rows per plane, the same bytes.
pub fn plan(m: &Module, groups: &[Group], bufs: &mut Buffers) {
    for (i, g) in groups.iter().enumerate() {
        let Some(prep) = m.ops.get(g.head) else { continue };
        let Some(&v) = prep.results.first() else { continue };
        let reader = groups.get(i + 1).filter(|c| c.swap.is_some()).and_then(|c| m.ops.get(c.head));
        let conv = reader
            .filter(|c| c.opcode == OpCode::Conv && c.operands.first() == Some(&v) && super::matmul::pointwise(c));
        // (The cheap tests first: `sole` looks through the module.)
        let lone = || super::matmul_source::lone(g) && super::matmul_source::sole(m, v);
        if conv.is_none() || !lone() || !super::matmul::is_prep(m, prep) || super::matmul::fits(m, prep) {
            continue;
        }
        let Some(s) = bufs.surfaces.get_mut(&v).filter(|s| s.ty.c.is_multiple_of(INTERLEAVE)) else { continue };
        let plane = s.strides.row * u64::from(INTERLEAVE);
        s.strides.row = plane;
        s.strides.plane = plane;
        bufs.interleaved.insert(v);
    }
}

/// Sets the words of regime B on the tasks of group `g`: P's interleaved write, or the
/// convolution slices' interleaved reads, sections and cache hints.
pub fn apply(m: &Module, g: &Group, tasks: &mut [Task], bufs: &Buffers) {
    let Some(head) = m.ops.get(g.head) else { return };
    if head.results.first().is_some_and(|v| bufs.interleaved.contains(v)) {
        for t in tasks.iter_mut() {
            t.interleave.dest = INTERLEAVE;
            t.closes_section = true;
        }
        return;
    }
    let reads = head.opcode == OpCode::Conv && head.operands.first().is_some_and(|v| bufs.interleaved.contains(v));
    if !reads {
        return;
    }
    let n = tasks.len();
    let conv = AliasBits { conv_src: true, conv_result: true, ..AliasBits::default() };
    for (i, t) in tasks.iter_mut().enumerate() {
        let opens = i % 2 == 0;
        t.interleave.source = INTERLEAVE;
        t.opens_section = opens;
        t.closes_section = !opens;
        t.dram_reuse = if i + 1 == n { DramReuse::LastSlice } else { DramReuse::ReadAgain };
        let bits = if opens { conv } else { AliasBits::default() };
        t.l2_aliases = Some(L2Aliases { source: bits, result: bits });
    }
}
