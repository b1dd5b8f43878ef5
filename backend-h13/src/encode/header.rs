//! The TD header: task id, end of network, buffer BARs, engine enable. The links to the
//! next task (NextSize, NextPointer) depend on its serialized size and are written when
//! the chain is laid out (`program::chain`).

use super::ChainPos;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{SourceResidency, Task, Token};
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

/// An NE pass that only moves data: no activation, no affine stage, no channel maximum.
fn is_copy(t: &Task) -> bool {
    !t.channel_max
        && t.nonlinear == crate::task::Nonlinear::None
        && t.affine == crate::task::NeAffine::default()
        && !t.vectors.any()
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
    td.set("aneTD.Header[1].ExeCycles", super::exe_cycles::exe_cycles(t))?;
    // SPL on the first task, TSR and TSE on the last; SrcLoc when the task reads its
    // source from memory, DstLoc when it writes memory (every chain of the current
    // corpus; a single task sets all five).
    let reads = t.residency != SourceResidency::Resident;
    let writes = t.l2_result.is_none();
    // A task standing for writing a scratch surface also ends a section (TSR, TSE) and
    // sets DPC; one standing for reading it starts one (SPL) and sets SPC.
    let (token_w, token_r) = match t.token {
        Some(Token::Writes(_)) => (true, false),
        Some(Token::Reads(_)) => (false, true),
        None => (false, false),
    };
    // A task writing a runtime kernel for a later task ends a section too; the task after
    // it opens one (`matmul-runtime.md` §4).
    let ends = last || token_w || t.kernel_write.is_some() || t.closes_section;
    let flags = [
        ("SPL", first || token_r || t.opens_section),
        ("TSR", ends),
        ("TSE", ends),
        ("SrcLoc", reads),
        ("DstLoc", writes),
        ("DPC", token_w),
        ("SPC", token_r),
    ];
    for (flag, on) in flags {
        td.set(&format!("aneTD.Header[6].{flag}"), u64::from(on))?;
    }
    // A planar-engine result kept for a later planar-engine task (softmax's statistics).
    td.set("aneTD.Header[6].DisallowAbort", u64::from(t.pe_links.feeds_pe))?;
    encode_kernel_producer(td, t, pos)?;
    encode_bars(td, t)
}

/// A kernel an earlier task of the program wrote: header TDE and the eleventh word, that
/// task's TID (`matmul-runtime.md` §4).
fn encode_kernel_producer(td: &mut TdImage, t: &Task, pos: ChainPos) -> Result<(), BackendError> {
    let Some(back) = t.runtime_kernel.and_then(|k| k.producer_back) else { return Ok(()) };
    let tid = pos.index.checked_sub(back).ok_or_else(|| {
        BackendError::Internal(format!(
            "'{}': its kernel's producer is {back} tasks before task {}",
            t.layer, pos.index
        ))
    })?;
    td.set_extra_header(Some(tid));
    Ok(())
}

fn encode_bars(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let names = [("RBase0", "RBE0"), ("RBase1", "RBE1")];
    let skip = usize::from(t.residency == SourceResidency::Resident);
    for (src, (base, enable)) in t.sources.iter().zip(names).skip(skip) {
        td.set(&format!("aneTD.Header[8].{base}"), u64::from(src.bar))?;
        td.set(&format!("aneTD.Header[8].{enable}"), 1)?;
    }
    match t.token {
        Some(Token::Reads(s)) => {
            td.set("aneTD.Header[8].RBase0", u64::from(s.bar))?;
            td.set("aneTD.Header[8].RBE0", 1)?;
        }
        Some(Token::Writes(s)) => {
            td.set("aneTD.Header[8].WBase", u64::from(s.bar))?;
            td.set("aneTD.Header[8].WBE", 1)?;
        }
        None => {}
    }
    if t.l2_result.is_none() {
        td.set("aneTD.Header[8].WBase", u64::from(t.dest.bar))?;
        td.set("aneTD.Header[8].WBE", 1)?;
    }
    td.set("aneTD.Header[8].ENE", super::common::engine_enable(t))?;
    if let Some(k) = t.runtime_kernel {
        td.set("aneTD.Header[9].KBase0", u64::from(k.bar))?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    } else if t.reads_kernel_memory() {
        td.set("aneTD.Header[9].KBase0", CONST_BAR)?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    }
    Ok(())
}
