//! The TD header: task id, end of network, buffer BARs, engine enable. The links to the
//! next task (NextSize, NextPointer) depend on its serialized size and are written when
//! the chain is laid out (`program::chain`).

use super::ChainPos;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::Task;
use crate::td::TdImage;

/// LogEvents of every task; the first task adds the generation's first-task bit, the last
/// [`LOG_EVENTS_LAST`] (current corpus: 0x408 first, 0x400 middle, 0x422 last, 0x42a single).
const LOG_EVENTS: u64 = 0x400;
const LOG_EVENTS_LAST: u64 = 0x22;
/// DebugLogEvents: a low byte by chain position (0x68 first, 0x6a last or single, 0 in
/// between) and a high part by what the task computes (below); 0xfff86a for a single task
/// in both generations.
const DEBUG_LOG_FIRST: u64 = 0x68;
const DEBUG_LOG_LAST: u64 = 0x6A;
/// High part of DebugLogEvents: 0xfff8 for a task that computes, 0 for an NE pure pass
/// (a copy or layout change), 0xffd8 for the square-root family (sqrt, rsqrt, reciprocal).
const DEBUG_LOG_COMPUTE: u64 = 0xFFF8 << 8;
const DEBUG_LOG_SQRT: u64 = 0xFFD8 << 8;
const DEBUG_LOG_COPY: u64 = 0;

/// The high part of DebugLogEvents: what the task computes.
fn debug_class(t: &Task) -> u64 {
    use crate::activation::TableFn;
    match t.table {
        Some(TableFn::Sqrt | TableFn::Rsqrt | TableFn::Reciprocal) => DEBUG_LOG_SQRT,
        _ if t.engine == crate::task::Engine::NePass && is_copy(t) => DEBUG_LOG_COPY,
        _ => DEBUG_LOG_COMPUTE,
    }
}

/// An NE pass that only moves data: no activation, no affine stage.
fn is_copy(t: &Task) -> bool {
    t.nonlinear == crate::task::Nonlinear::None && t.affine == crate::task::NeAffine::default() && !t.vectors.any()
}
/// BAR of `__const`, which holds kernels and activation tables.
pub const CONST_BAR: u64 = 1;

/// Writes header words 0x00..0x28.
pub fn encode(td: &mut TdImage, t: &Task, pos: ChainPos, gen: &Generation) -> Result<(), BackendError> {
    let (first, last) = (pos.index == 0, pos.is_last());
    td.set("aneTD.Header[0].TID", u64::from(pos.index))?;
    td.set("aneTD.Header[0].LNID", u64::from(!first))?;
    td.set("aneTD.Header[0].EON", u64::from(last))?;
    let log = LOG_EVENTS | if first { gen.log_events_first } else { 0 } | if last { LOG_EVENTS_LAST } else { 0 };
    td.set("aneTD.Header[2].LogEvents", log)?;
    let position = if last {
        DEBUG_LOG_LAST
    } else if first {
        DEBUG_LOG_FIRST
    } else {
        0
    };
    td.set("aneTD.Header[4].DebugLogEvents", debug_class(t) | position)?;
    td.set("aneTD.Header[8].TBE", u64::from(!last))?;
    td.set("aneTD.Header[1].ExeCycles", exe_cycles(t))?;
    for flag in ["SPL", "TSR", "TSE", "SrcLoc", "DstLoc"] {
        td.set(&format!("aneTD.Header[6].{flag}"), 1)?;
    }
    encode_bars(td, t)
}

fn encode_bars(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let names = [("RBase0", "RBE0"), ("RBase1", "RBE1")];
    for (src, (base, enable)) in t.sources.iter().zip(names) {
        td.set(&format!("aneTD.Header[8].{base}"), u64::from(src.bar))?;
        td.set(&format!("aneTD.Header[8].{enable}"), 1)?;
    }
    td.set("aneTD.Header[8].WBase", u64::from(t.dest.bar))?;
    td.set("aneTD.Header[8].WBE", 1)?;
    td.set("aneTD.Header[8].ENE", super::common::engine_enable(t))?;
    if t.reads_kernel_memory() {
        td.set("aneTD.Header[9].KBase0", CONST_BAR)?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    }
    Ok(())
}

/// ExeCycles: Apple's estimate of a task's cost. No exact rule is known; this is a cost
/// model fitted to every elementwise and unary task of the current corpus (48 tasks, all
/// reproduced; leaving one case out, 4 of 48 miss by 1 or 2): per DRAM read, a term per
/// plane (N·C) and per 64-byte row segment; per DRAM write, a term per row (N·C·H) and per
/// segment; per NE task, a term per plane. Every v4.2.1 program is small enough for 0, as
/// Apple wrote. See `docs/conformance.md`.
fn exe_cycles(t: &Task) -> u64 {
    const READ_PLANE: f64 = 0.001_713_6;
    const READ_SEGMENT: f64 = 0.001_786_5;
    const WRITE_ROW: f64 = 0.001_732_3;
    const WRITE_SEGMENT: f64 = 0.000_118;
    const NE_PLANE: f64 = 0.000_501;
    let ty = t.dest.ty;
    let planes = f64::from(ty.n) * f64::from(ty.c);
    let rows = planes * f64::from(ty.h);
    let segments = rows * (u64::from(ty.w) * ty.dtype.size() as u64).div_ceil(64) as f64;
    let reads = t.sources.len() as f64;
    let ne = if t.engine.uses_ne() { 1.0 } else { 0.0 };
    let cost = reads * (READ_PLANE * planes + READ_SEGMENT * segments)
        + WRITE_ROW * rows
        + WRITE_SEGMENT * segments
        + ne * NE_PLANE * planes;
    cost.floor().clamp(0.0, f64::from(u16::MAX)) as u64
}
