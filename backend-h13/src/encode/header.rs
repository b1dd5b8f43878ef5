//! The TD header: task id, end of network, buffer BARs, engine enable. The links to the
//! next task (NextSize, NextPointer) depend on its serialized size and are written when
//! the chain is laid out (`program::chain`).

use super::ChainPos;
use crate::error::BackendError;
use crate::task::Task;
use crate::td::TdImage;

/// LogEvents Apple writes in every TD.
const LOG_EVENTS: u64 = 0x422;
/// DebugLogEvents Apple writes in every TD.
const DEBUG_LOG_EVENTS: u64 = 0xFF_F86A;
/// BAR of `__const`, which holds kernels and activation tables.
pub const CONST_BAR: u64 = 1;

/// Writes header words 0x00..0x28.
pub fn encode(td: &mut TdImage, t: &Task, pos: ChainPos) -> Result<(), BackendError> {
    td.set("aneTD.Header[0].TID", u64::from(pos.index))?;
    td.set("aneTD.Header[0].EON", u64::from(pos.is_last()))?;
    td.set("aneTD.Header[2].LogEvents", LOG_EVENTS)?;
    td.set("aneTD.Header[4].DebugLogEvents", DEBUG_LOG_EVENTS)?;
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
    td.set("aneTD.Header[8].ENE", t.engine.ene())?;
    if t.reads_kernel_memory() {
        td.set("aneTD.Header[9].KBase0", CONST_BAR)?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    }
    Ok(())
}
