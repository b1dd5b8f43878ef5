//! The registers that tie consecutive tasks together through L2, as Apple's current
//! compiler pairs an NE producer with a planar-engine consumer
//! (`docs/rationale/current-compiler/elementwise.md` §1, §4, §6):
//!
//! - a result kept in L2 (ResultType 0, destination tile DMA off, DstLoc 0), laid out by
//!   the convolution-result words, or written as one packed row (Common.Cfg bit 28);
//! - an operand the planar engine reads from L2 (Common.Cfg 0x31 / 0x41), broadcast to the
//!   source's shape by the flags of word 0x158;
//! - an NE source streamed from the tile DMA (a channel stride of 0x100 shorter than the
//!   row: the staging area holds one piece of each row, its bytes are not modelled).

use super::error::SimError;
use super::memory::{Dims, Region};
use super::reader::Reader;
use super::td::{Common, L2Operand, Operands};
use super::td_common::{BROADCAST_C, BROADCAST_H, BROADCAST_W, PER_CHANNEL};
use super::td_dma::{L2Layout, Tiles};

/// Bytes of the piece of a row the NE streams (the channel-stride cap of every NE task of
/// the corpus with rows of 128 fp16 values or more).
pub const STREAM_PIECE: usize = 0x100;

/// Bytes of an L2 line, the unit of every L2 stride.
const LINE: u64 = 16;

/// `n` elements of `size` bytes rounded up to whole L2 lines.
fn lines(n: usize, size: usize) -> u64 {
    (n as u64).saturating_mul(size as u64).div_ceil(LINE).saturating_mul(LINE)
}

/// A result is kept in L2 (ResultType 0) exactly when the destination tile DMA is off; a
/// packed result (Common.Cfg bit 28) is an NE result of `Cout x 1 x 1` kept in L2 whose
/// channel, row and plane words are all one packed row, `Cout` elements rounded up to
/// 16 bytes (Apple's reciprocal of 64 channels: 0x80, 0x80, 0x80).
pub fn check_result(r: &Reader, c: &Common, tiles: &Tiles, l2: &L2Layout) -> Result<(), SimError> {
    if l2.kept == tiles.stored {
        let reason = "0 (the result kept in L2) exactly when the destination tile DMA is off \
                      (TileDMADst.DMAConfig.En 0)";
        return Err(r.err("L2.ResultCfg.ResultType", if l2.kept { 0 } else { 2 }, reason));
    }
    if !c.packed {
        return Ok(());
    }
    let field = "Common.Cfg bit 28 (word 0x15c)";
    let o = c.out_dims;
    if !l2.kept || o.h != 1 || o.w != 1 {
        let reason = format!(
            "a packed result (one row of Cout values) is modelled for an NE result of Cout x 1 x 1 kept in L2 \
             (here {} x {} x {}, {})",
            o.c,
            o.h,
            o.w,
            if l2.kept { "kept in L2" } else { "written to DRAM" }
        );
        return Err(r.err(field, 1, reason));
    }
    let row = lines(o.c, tiles.dest.fmt.size());
    let res = l2.result;
    if (res.channel, res.row, l2.result_plane) != (row, row, row) {
        let reason = format!(
            "a packed result of {} channels is modelled with channel, row and plane words (0x218, 0x21c, 0x220) \
             all {row:#x}; they are {:#x}, {:#x}, {:#x}",
            o.c, res.channel, res.row, l2.result_plane
        );
        return Err(r.err(field, 1, reason));
    }
    Ok(())
}

/// The operand a planar-engine task reads from L2 (words 0x1fc base, 0x200 channel
/// stride, 0x204 row stride), shaped by word 0x158: extent 1 along each broadcast axis,
/// or (0x200) one value per channel packed in one row, whose channel word must be that
/// row (C elements rounded up to 16 bytes). With three operands (Cfg 0x41) operand 3 is
/// the same vector one row stride further, which must not overlap operand 2.
pub fn operand(r: &Reader, c: &Common, l2: &L2Layout) -> Result<Option<L2Operand>, SimError> {
    let Some(words) = l2.operand else { return Ok(None) };
    let x = c.in_dims;
    let fmt = c.in_fmt[1];
    let b = c.broadcast;
    let (region, dims) = if b == PER_CHANNEL {
        let row = lines(x.c, fmt.size());
        if words.channel != row {
            let reason = format!(
                "a packed vector of {} channels (word 0x158 = 0x200) is one row of {row:#x} bytes: its channel word \
                 holds that row",
                x.c
            );
            return Err(r.err("word 0x200", words.channel, reason));
        }
        let region = Region { channel: fmt.size() as u64, ..words };
        (region, Dims { c: x.c, d: 1, h: 1, w: 1 })
    } else {
        let keep = |flag: u32, n: usize| if b & flag != 0 { 1 } else { n };
        (words, Dims { c: keep(BROADCAST_C, x.c), d: 1, h: keep(BROADCAST_H, x.h), w: keep(BROADCAST_W, x.w) })
    };
    let third = match c.operands {
        Operands::ThreeL2 => {
            if words.row < words.channel {
                let reason = format!(
                    "operand 3 lies one row stride after operand 2; a stride shorter than the {:#x}-byte vector \
                     would overlap it",
                    words.channel
                );
                return Err(r.err("word 0x204", words.row, reason));
            }
            Some(Region { base: region.base.saturating_add(words.row), ..region })
        }
        _ => None,
    };
    Ok(Some(L2Operand { region, dims, fmt, broadcast: b, third }))
}

/// An NE source loaded for this task alone (SourceType 2) whose channel stride is the
/// 0x100-byte piece and shorter than its row is streamed: the NE reads the DRAM values as
/// the tile DMA delivers them.
pub fn streamed(c: &Common, tiles: &Tiles, l2: &L2Layout, ne: bool) -> bool {
    let Some(first) = l2.sources.first() else { return false };
    let row = c.in_dims.w.saturating_mul(c.in_fmt[0].size());
    ne && tiles.loaded && !l2.keep_source && !l2.resident && first.channel == STREAM_PIECE as u64 && row > STREAM_PIECE
}
