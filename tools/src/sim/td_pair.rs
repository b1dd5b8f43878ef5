//! The registers that tie consecutive tasks together through L2, as Apple's current
//! compiler pairs an NE producer with a planar-engine consumer
//! (`docs/rationale/current-compiler/elementwise.md` §1, §4, §6):
//!
//! - a result kept in L2 (ResultType 0, destination tile DMA off, DstLoc 0), laid out by
//!   the convolution-result words, or by the NE with C and W swapped (Common.Cfg bit 28:
//!   a `C x 1 x 1` result becomes one packed row);
//! - an operand the planar engine reads from L2 (Common.Cfg 0x31 / 0x41), broadcast to the
//!   source's shape by the flags of word 0x158, and the first source read in place
//!   broadcast the same way (operand 1's flags);
//! - an NE source streamed from the tile DMA (a channel stride of 0x100 shorter than the
//!   row: the staging area holds one piece of each row, its bytes are not modelled), a
//!   planar-engine source in pieces of 0x400 bytes and a planar-engine reduction's source
//!   in strips of 0x80 bytes the same way; and the result of such a task laid out by the
//!   result words in the same pieces (streamed out through a staging area likewise).

use super::error::SimError;
use super::memory::{Dims, Region};
use super::reader::Reader;
use super::td::{Common, L2Operand, Operands};
use super::td_common::{
    BROADCAST_C, BROADCAST_H, BROADCAST_W, NE_TRANSPOSED_FIELD, OPERAND1_C, OPERAND1_D, OPERAND1_FLAGS, OPERAND1_H,
    OPERAND1_PACKED, OPERAND1_W, PER_CHANNEL,
};
use super::td_dma::{L2Layout, Tiles};
use super::td_reduce;

/// Bytes of the pieces of a row the NE streams: 0x100 (the channel-stride cap of every NE
/// task of the corpus with rows of 128 fp16 values or more) and 0x40 (a folded matmul's
/// preparation task, `matmul_m64_k256_n1024`).
const NE_PIECES: [u64; 2] = [0x100, 0x40];

/// Bytes of the pieces of a row the planar engine streams (outside a reduction): 0x400,
/// the channel stride of its copy of 2048-wide rows into a runtime matmul's kernel
/// (`rrmm_r2rr_m64_k2048_n64_tx0_ty1`); every other planar-engine source of the corpus
/// has rows of at most 0x400 bytes, taken whole.
const PE_PIECE: u64 = 0x400;

/// Bytes of an L2 line, the unit of every L2 stride.
const LINE: u64 = 16;

/// `n` elements of `size` bytes rounded up to whole L2 lines.
fn lines(n: usize, size: usize) -> u64 {
    (n as u64).saturating_mul(size as u64).div_ceil(LINE).saturating_mul(LINE)
}

/// A result is kept in L2 (ResultType 0) exactly when the destination tile DMA is off. A
/// transposed result written to DRAM streams out (L2BfrMode 1: Apple's matmul compute task
/// writing product rows); a transposed result kept in L2 (Common.Cfg bit 28 of an NE task, word 0x158 bit 0x400 of an
/// elementwise planar-engine task: the layer norms' packing copy) is kept in L2, laid out
/// by the result words with C and W swapped: channel stride (word 0x218) between the W columns,
/// each holding the C values of a pixel side by side; word 0x220 the W columns of a row
/// (W x channel stride); the row stride (0x21c) at least that (Apple's reciprocal of 64
/// channels: 0x80, 0x80, 0x80; the transposer of `reduce_sum_axes_1`, 64 x 8 x 8:
/// 0x80, 0x420, 0x400).
pub fn check_result(r: &Reader, c: &Common, tiles: &Tiles, l2: &L2Layout) -> Result<(), SimError> {
    if l2.kept == tiles.stored {
        let reason = "0 (the result kept in L2) exactly when the destination tile DMA is off \
                      (TileDMADst.DMAConfig.En 0)";
        return Err(r.err("L2.ResultCfg.ResultType", l2.result_type, reason));
    }
    if !c.transposed {
        return Ok(());
    }
    let field = c.transposed_field;
    let o = c.out_dims;
    if !l2.kept {
        // An NE result streamed to DRAM (L2BfrMode 1): the result words are not used.
        if l2.result_mode != 1 || c.transposed_field != NE_TRANSPOSED_FIELD {
            let reason = format!(
                "a transposed result written to DRAM is modelled for the NE, streamed (L2BfrMode 1); here {} x {} \
                 x {} with L2BfrMode {}",
                o.c, o.h, o.w, l2.result_mode
            );
            return Err(r.err(field, 1, reason));
        }
        return Ok(());
    }
    let res = l2.result;
    let plane = (o.w as u64).saturating_mul(res.channel);
    // Word 0x220 holds one row of W columns (the transposer before a reduction), or every
    // row (a folded matmul's product kept for its copy-out: `matmul_m64_k256_n1024`, 0x800,
    // 0x4000, 0x20000); the layout follows from the channel and row strides either way.
    let whole = plane.saturating_mul(o.h as u64);
    if (l2.result_plane != plane && l2.result_plane != whole) || res.row < plane {
        let reason = format!(
            "a transposed result of {} x {} x {} is modelled with word 0x220 = W x channel stride = {plane:#x} (or H \
             times that) and a row stride at least that; the channel, row and plane words are {:#x}, {:#x}, {:#x}",
            o.c, o.h, o.w, res.channel, res.row, l2.result_plane
        );
        return Err(r.err(field, 1, reason));
    }
    Ok(())
}

/// The operand a planar-engine task reads from L2 (words 0x1fc base, 0x200 channel
/// stride, 0x204 row stride, 0x208 depth stride), shaped by word 0x158: extent 1 along
/// each axis operand 2 is broadcast along, or (0x200) one value per channel packed in one
/// row, whose channel word must be that row (C elements rounded up to 16 bytes). With
/// three operands (Cfg 0x41) operands 2 and 3 are per-channel rows broadcast over depth,
/// rows and columns: packed (0x200), one line per channel (0), or one value (0x80);
/// operand 3 lies one row stride after operand 2 and must not overlap it.
pub fn operand(r: &Reader, c: &Common, l2: &L2Layout) -> Result<Option<L2Operand>, SimError> {
    let Some(words) = l2.operand else { return Ok(None) };
    let fmt = c.in_fmt[1];
    let b = c.broadcast;
    let three = c.operands == Operands::ThreeL2;
    // A three-operand task's rows are per channel: broadcast over W, H and depth.
    let implied = if three { BROADCAST_W | BROADCAST_H | DEPTH } else { 0 };
    let flags = (BROADCAST_W, BROADCAST_H, DEPTH, BROADCAST_C, PER_CHANNEL);
    let (region, dims) = broadcast_box(r, c, words, fmt.size(), b | implied, flags, "word 0x200")?;
    let third = match three {
        true => {
            let span = region.end(dims, fmt.size()) - region.base;
            if words.row < span {
                let reason = format!(
                    "operand 3 lies one row stride after operand 2; a stride shorter than the {span:#x}-byte vector \
                     would overlap it"
                );
                return Err(r.err("word 0x204", words.row, reason));
            }
            Some(Region { base: region.base.saturating_add(words.row), ..region })
        }
        false => None,
    };
    Ok(Some(L2Operand { region, dims, fmt, broadcast: b, third }))
}

/// An internal flag of [`operand`]: operand 2 broadcast over depth (never set by word
/// 0x158, whose third-loop flag 0x40 is refused; implied for three operands).
const DEPTH: u32 = 1 << 31;

/// The box the first source holds and its region: the source dimensions, or (word 0x158
/// bits 0x1, 0x2, 0x4, 0x8, 0x100: operand 1 broadcast, softmax's per-row reciprocal, the
/// layer norms' mean) extent 1 along each broadcast axis, or one value per channel packed
/// in one row (its channel stride the row). Operand 1 is broadcast only when read in
/// place (SourceType 0).
pub fn source_box(r: &Reader, c: &Common, l2: &L2Layout, first: Region) -> Result<(Dims, Region), SimError> {
    let b = c.broadcast & OPERAND1_FLAGS;
    if b == 0 {
        return Ok((c.in_dims, first));
    }
    if !l2.resident {
        let reason = "operand-1 broadcast flags are modelled for a first source read in place (SourceType 0)";
        return Err(r.err("word 0x158", b.into(), reason));
    }
    let flags = (OPERAND1_W, OPERAND1_H, OPERAND1_D, OPERAND1_C, OPERAND1_PACKED);
    let (region, dims) = broadcast_box(r, c, first, c.in_fmt[0].size(), b, flags, "L2.SourceChannelStride.Stride")?;
    Ok((dims, region))
}

/// The box (and region) of an operand with the broadcast `flags` (W, H, depth, C, packed)
/// of word 0x158 = `b`: a packed vector's region has the element size as its channel
/// stride, and its channel word (`field`) must be the packed row.
fn broadcast_box(
    r: &Reader,
    c: &Common,
    words: Region,
    size: usize,
    b: u32,
    (w, h, d, ch, packed): (u32, u32, u32, u32, u32),
    field: &str,
) -> Result<(Region, Dims), SimError> {
    let x = c.in_dims;
    let keep = |flag: u32, n: usize| if b & flag != 0 { 1 } else { n };
    if b & packed != 0 {
        let row = lines(x.c, size);
        if words.channel != row {
            let reason = format!(
                "a packed vector of {} channels (word 0x158 = {:#x}) is one row of {row:#x} bytes: its channel word \
                 holds that row",
                x.c, c.broadcast
            );
            let shown = if field.starts_with("L2.") { words.channel / 16 } else { words.channel };
            return Err(r.err(field, shown, reason));
        }
        return Ok((Region { channel: size as u64, ..words }, Dims { c: x.c, d: 1, h: 1, w: 1 }));
    }
    Ok((words, Dims { c: keep(ch, x.c), d: keep(d, x.d), h: keep(h, x.h), w: keep(w, x.w) }))
}

/// An NE source loaded for this task alone (SourceType 2) whose channel stride is one of
/// the NE's pieces (0x100, or 0x40) and shorter than its row is streamed: the NE reads the DRAM values as
/// the tile DMA delivers them. So is a planar-engine source whose channel stride is the
/// planar engine's 0x400-byte piece, and a planar-engine reduction's whose channel
/// stride is the 0x80-byte strip (`td_reduce.rs`), each shorter than its row.
pub fn streamed(c: &Common, tiles: &Tiles, l2: &L2Layout, ne: bool) -> bool {
    let Some(first) = l2.sources.first() else { return false };
    let pieces: &[u64] = match (ne, c.reduce) {
        (true, _) => &NE_PIECES,
        (false, true) => &[td_reduce::STRIP],
        (false, false) => &[PE_PIECE],
    };
    let row = (c.in_dims.w as u64).saturating_mul(c.in_fmt[0].size() as u64);
    let piece = first.channel;
    tiles.loaded && !l2.keep_source && !l2.resident && pieces.contains(&piece) && row > piece
}

/// The result of a task whose source streams (`source_streamed`), written to DRAM and laid
/// out by the result words (L2BfrMode 0) with a channel stride of the source's piece,
/// shorter than the result's row, streams out the same way: the engine hands each piece
/// to the destination tile DMA through a staging area of one piece per row and channel
/// (Apple's NE copy of `encoder_slice_lastdim`: channel 0x100 for rows of 375 values).
/// Its plane words (0x220, 0x224) must be the channels' pieces of one row, as Apple's
/// (0x800 for 8 channels); anything else is a load error naming word 0x220.
pub fn result_streamed(r: &Reader, c: &Common, l2: &L2Layout, source_streamed: bool) -> Result<bool, SimError> {
    let Some(first) = l2.sources.first() else { return Ok(false) };
    let piece = l2.result.channel;
    let row = (c.out_dims.w as u64).saturating_mul(c.out_fmt.size() as u64);
    if !source_streamed || l2.kept || l2.result_mode != 0 || c.transposed || piece != first.channel || row <= piece {
        return Ok(false);
    }
    let plane = (c.out_dims.c as u64).saturating_mul(piece);
    if l2.result_plane != plane || l2.result_plane2 != plane {
        let reason = format!(
            "a result streamed in pieces of {piece:#x} bytes is modelled with words 0x220 and 0x224 = its {} \
             channels' pieces of a row ({plane:#x}); word 0x224 is {:#x}",
            c.out_dims.c, l2.result_plane2
        );
        return Err(r.err("word 0x220", l2.result_plane, reason));
    }
    Ok(true)
}
