//! The kernel-DMA block: 16 coefficient channels streaming weights or tables from
//! `__const` (BAR 1), each chunk in 64-byte units, then four header streams (bias,
//! post-scale, palette LUT, activation LUT) of which the first two carry per-channel
//! gain/offset vectors.
//!
//! The header streams are inferred, not seen in an Apple H13 program: the 12 words after
//! the 16 buffer sizes have no name in the register map, but their layout mirrors the
//! coefficient arrays (4 configs at 0xF4, 4 base addresses at 0x104, 4 sizes at 0x114),
//! Apple writes CacheHint 2 (0x80) into exactly the 4 config words of every NE task as it
//! does into the 16 coefficient configs (the analog of `InitializeKernelDmaSrcConfig`,
//! which sets the coefficient, post-scale, bias, palette-LUT and nonlinear-LUT cache
//! hints on later ANEs), and the seed's relocation table lists the bias, post-scale,
//! palette and activation streams in that order (seed 001, Table 23.5). See
//! `docs/conformance.md`.

use super::{set_units, set_unnamed_units};
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::Task;
use crate::td::TdImage;

/// Number of kernel-DMA channels.
pub const CHANNELS: usize = 16;
/// CacheHint of every channel when the NE runs.
const CACHE_HINT: u64 = 2;
/// Unnamed word 0x2C: 0x40 whenever a kernel stream is read (conv, sigmoid; 0 for ReLU),
/// 0x60 when the kernel is in the sparse form (every stride-2 convolution of the current
/// corpus).
const KERNEL_STREAM_WORD: u32 = 0x40;
const KERNEL_STREAM_SPARSE: u32 = 0x20;
/// Config words of the four header streams (0xF4..0x100, after the 16 buffer sizes):
/// CacheHint 2 (0x80) whenever the NE runs, in every Apple program; En (bit 0) added for
/// a stream that is read.
const STREAM_CONFIG_WORDS: [u16; 4] = [0xF4, 0xF8, 0xFC, 0x100];
const STREAM_IDLE_CONFIG: u32 = 0x80;
/// Enable bit of a header-stream config word (bit 0, as CoeffDMAConfig.En).
const STREAM_ENABLE: u32 = 1;
/// Base-address words of the header streams (64-byte units at bit 6, as CoeffBaseAddr).
pub const STREAM_BASE_WORDS: [u16; 4] = [0x104, 0x108, 0x10C, 0x110];
/// Size words of the header streams (64-byte units at bit 6, as CoeffBfrSize).
const STREAM_SIZE_WORDS: [u16; 4] = [0x114, 0x118, 0x11C, 0x120];

/// Writes the block. A planar-engine task writes only the idle cache hints and stream
/// sizes, and only in the generations that write idle words (v4.2.1 leaves it zero).
pub fn encode(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    if !t.engine.uses_ne() {
        if gen.pe_idle_words {
            for i in 0..CHANNELS {
                td.set(&format!("KernelDMASrc.CoeffDMAConfig[{i}].CacheHint"), CACHE_HINT)?;
            }
            idle_streams(td, gen)?;
        }
        return Ok(());
    }
    if t.kernel.len() > CHANNELS {
        return Err(BackendError::Internal(format!("{} kernel chunks > {CHANNELS}", t.kernel.len())));
    }
    if t.reads_kernel_memory() {
        let sparse = if t.conv.sparse { KERNEL_STREAM_SPARSE } else { 0 };
        td.set_unnamed(0x2C, KERNEL_STREAM_WORD | sparse)?;
    }
    let idle_size = !t.kernel.is_empty() || gen.idle_channel_size_without_kernel;
    for i in 0..CHANNELS {
        encode_channel(td, t, i, idle_size)?;
    }
    idle_streams(td, gen)?;
    for (i, chunk) in t.vectors.streams().iter().enumerate() {
        if let Some(c) = chunk {
            td.set_unnamed(STREAM_CONFIG_WORDS[i], STREAM_IDLE_CONFIG | STREAM_ENABLE)?;
            set_unnamed_units(td, STREAM_BASE_WORDS[i], c.offset, 6, 26)?;
            set_unnamed_units(td, STREAM_SIZE_WORDS[i], c.size, 6, 26)?;
        }
    }
    Ok(())
}

/// The four header streams, idle: CacheHint 2 and the generation's idle size.
fn idle_streams(td: &mut TdImage, gen: &Generation) -> Result<(), BackendError> {
    for (cfg, size) in STREAM_CONFIG_WORDS.iter().zip(STREAM_SIZE_WORDS) {
        td.set_unnamed(*cfg, STREAM_IDLE_CONFIG)?;
        set_unnamed_units(td, size, gen.idle_stream_size, 6, 26)?;
    }
    Ok(())
}

fn encode_channel(td: &mut TdImage, t: &Task, i: usize, idle_size: bool) -> Result<(), BackendError> {
    let cfg = format!("KernelDMASrc.CoeffDMAConfig[{i}]");
    td.set(&format!("{cfg}.CacheHint"), CACHE_HINT)?;
    let size_field = format!("KernelDMASrc.CoeffBfrSize[{i}].MemBfrSize");
    match t.kernel.get(i) {
        Some(chunk) => {
            td.set(&format!("{cfg}.En"), 1)?;
            set_units(td, &format!("KernelDMASrc.CoeffBaseAddr[{i}].Addr"), chunk.offset, 64)?;
            set_units(td, &size_field, chunk.size, 64)
        }
        // Unused channels keep a one-unit buffer size where Apple writes one.
        None if idle_size => td.set(&size_field, 1),
        None => Ok(()),
    }
}
