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
    td.set("aneTD.Header[4].DebugLogEvents", DEBUG_LOG_COMPUTE | position)?;
    td.set("aneTD.Header[8].TBE", u64::from(!last))?;
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
