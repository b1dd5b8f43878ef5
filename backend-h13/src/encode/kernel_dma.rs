//! The kernel-DMA block: 16 coefficient channels streaming weights or tables from
//! `__const` (BAR 1), each chunk in 64-byte units.

use super::set_units;
use crate::error::BackendError;
use crate::task::Task;
use crate::td::TdImage;

/// Number of kernel-DMA channels.
pub const CHANNELS: usize = 16;
/// CacheHint of every channel when the NE runs.
const CACHE_HINT: u64 = 2;
/// Unnamed word 0x2C: 0x40 whenever a kernel stream is read (conv, sigmoid; 0 for ReLU).
const KERNEL_STREAM_WORD: u32 = 0x40;
/// Unnamed words 0xF4..0x100 (four words after the 16 buffer sizes): 0x80 whenever the NE
/// runs, in every Apple program.
const TRAILER_WORDS: [u16; 4] = [0xF4, 0xF8, 0xFC, 0x100];
const TRAILER_VALUE: u32 = 0x80;

/// Writes the block; it stays all zero for planar-engine-only tasks, as Apple leaves it.
pub fn encode(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    if !t.engine.uses_ne() {
        return Ok(());
    }
    if t.kernel.len() > CHANNELS {
        return Err(BackendError::Internal(format!("{} kernel chunks > {CHANNELS}", t.kernel.len())));
    }
    if !t.kernel.is_empty() {
        td.set_unnamed(0x2C, KERNEL_STREAM_WORD)?;
    }
    for i in 0..CHANNELS {
        encode_channel(td, t, i)?;
    }
    for w in TRAILER_WORDS {
        td.set_unnamed(w, TRAILER_VALUE)?;
    }
    Ok(())
}

fn encode_channel(td: &mut TdImage, t: &Task, i: usize) -> Result<(), BackendError> {
    let cfg = format!("KernelDMASrc.CoeffDMAConfig[{i}]");
    td.set(&format!("{cfg}.CacheHint"), CACHE_HINT)?;
    let size_field = format!("KernelDMASrc.CoeffBfrSize[{i}].MemBfrSize");
    match t.kernel.get(i) {
        Some(chunk) => {
            td.set(&format!("{cfg}.En"), 1)?;
            set_units(td, &format!("KernelDMASrc.CoeffBaseAddr[{i}].Addr"), chunk.offset, 64)?;
            set_units(td, &size_field, chunk.size, 64)
        }
        // Unused channels keep a one-unit buffer size, as Apple writes them.
        None => td.set(&size_field, 1),
    }
}
