//! The registers of the planar engine's per-channel reduction (Common.Cfg 0x51), as Apple's
//! current compiler writes it (`docs/rationale/current-compiler/reduction.md`,
//! `softmax.md`; records `reduce_*` and `norm_softmax_*` of
//! `shared/fixtures/apple-h13-oracles/`):
//!
//! - the view: Common Cin = Cout, InDim = OutDim and the depth words 0x12c (source) and
//!   0x140 (result), equal, state the box each channel of which is reduced; NumGroups
//!   repeats it over groups;
//! - its L2 layout when loaded: row stride = every depth slice of one row side by side
//!   (`[h][d][c][w]`), word 0x1f4 = one depth slice (Cin x channel stride), 0x1f8 = D
//!   slices; a channel stride holding the whole row, or the strip of 0x80 bytes of a
//!   longer row (read in strips straight from the tile DMA, like the NE's streamed
//!   source);
//! - read in place (SourceType 0, an earlier task's result): word 0x1f8 the step between
//!   the groups' views (0 with one group), word 0x1f4 the writer's plane (the depth
//!   stride with depth slices), the channel and row strides within a view;
//! - the PE block: the op in the low bits of word 0x22c (0 sum, 2 max, 3 min), bit 4 the
//!   square of each element, bit 12 the reciprocal and bit 13 the reciprocal square root
//!   of the result, with Cfg 0x61 a second operand (bit 19) from L2 and operand 1 (the
//!   first source, broadcast by word 0x158's operand-1 flags) negated (bit 16);
//!   BiasScale (0x230), PreScale (0x234) 1.0 with an fp16 epsilon in the low half for
//!   rsqrt, the fp32 final scale (0x238: 1/N for a mean);
//! - the result, one value per channel of each group's view: to DRAM laid out like the
//!   source (ResultType 2, L2BfrMode 1, one group), or by the result words (L2BfrMode 0)
//!   kept in L2 (ResultType 0) or written to DRAM as packed rows (ResultType 1): one
//!   16-byte line per channel, or with word 0x158 = 0x400 one packed row of the values
//!   per group; word 0x220 the step between groups, the row word at least every group
//!   (the layer norms keep rstd one row after the mean).

use super::error::SimError;
use super::memory::Region;
use super::reader::Reader;
use super::td::{Common, Operands, PeReduce, PostOp, ReduceOp};
use super::td_common::{OPERAND1_C, OPERAND1_FLAGS, OPERAND1_PACKED};
use super::td_dma::{L2Layout, Tiles};
use half::f16;

/// Bytes of the strip a reduction reads of a longer row (64 fp16 values).
pub const STRIP: u64 = 0x80;

/// Word 0x158 of a reduction whose results are packed into one row.
pub const PACKED_RESULT: u32 = 0x400;

/// Word 0x22c bit 12: the reciprocal of the reduced value.
const RECIPROCAL: u32 = 1 << 12;

/// Bytes of an L2 line.
const LINE: u64 = 16;

/// The depth of the source and the result (words 0x12c and 0x140): 1 except for a
/// planar-engine reduction, whose view may have depth slices (equal in both words).
pub fn depth(r: &mut Reader, reduce: bool) -> Result<usize, SimError> {
    if !reduce {
        let depth = "depth > 1 is modelled for a planar-engine reduction (Common.Cfg 0x51) only";
        r.fixed_word(0x12C, u32::MAX, &[1], &format!("source depth: {depth}"))?;
        r.fixed_word(0x140, u32::MAX, &[1], &format!("result depth: {depth}"))?;
        return Ok(1);
    }
    let d = r.word(0x12C, u32::MAX);
    if d == 0 {
        return Err(r.err("word 0x12c", 0, "source depth: a zero extent is not modelled"));
    }
    let out = r.word(0x140, u32::MAX);
    if out != d {
        let reason = format!("result depth: a reduction states its view, the source depth {d}, as the result's");
        return Err(r.err("word 0x140", out.into(), reason));
    }
    Ok(usize::try_from(d).unwrap_or(usize::MAX))
}

/// Word 0x158 of a reduction: 0 (one value per channel, a channel stride apart) or 0x400
/// (packed along one row); with a second operand (Cfg 0x61) also operand 1's broadcast
/// flags (0x1 W, 0x2 H, 0x4 depth, 0x8 C, 0x100 packed: the layer norms' mean, 0x7,
/// 0x501).
pub fn result_word(r: &mut Reader, operands: Operands) -> Result<u32, SimError> {
    let v = r.word(0x158, u32::MAX);
    let two = operands == Operands::TwoL2;
    let flags = v & !PACKED_RESULT;
    let ok = flags == 0
        || two
            && flags & !OPERAND1_FLAGS == 0
            && flags & (OPERAND1_PACKED | OPERAND1_C) != (OPERAND1_PACKED | OPERAND1_C);
    if ok {
        return Ok(v);
    }
    let reason = match two {
        false => "a reduction is modelled with 0 (one value per channel) or 0x400 (the values packed along one row)",
        true => {
            "a reduction of two operands is modelled with operand 1's flags (0x1, 0x2, 0x4, 0x8 or 0x100, not \
                 with 0x8) and 0x400 (the values packed along one row)"
        }
    };
    Err(r.err("word 0x158", v.into(), reason))
}

/// The L2 source region of a loaded reduction: `first` (base, channel and row strides)
/// with the depth stride of word 0x1f4 (one depth slice: Cin x channel stride), word
/// 0x1f8 the D slices of a row. The channel stride holds the whole row, or is the
/// [`STRIP`] of a longer one (read in strips).
pub fn source_region(r: &Reader, c: &Common, first: Region, slice: u64, all: u64) -> Result<Region, SimError> {
    let row = (c.in_dims.w as u64).saturating_mul(c.in_fmt[0].size() as u64);
    let field = "L2.SourceChannelStride.Stride";
    if first.channel < row && first.channel != STRIP {
        let reason = format!(
            "a reduction's channel stride holds the whole row ({row:#x} bytes), or is the {STRIP:#x}-byte strip of a \
             longer row (read in strips); it is {:#x}",
            first.channel
        );
        return Err(r.err(field, first.channel / 16, reason));
    }
    let want = first.channel.saturating_mul(c.in_dims.c as u64);
    if slice != want {
        let reason = format!(
            "one depth slice of a reduction's row is Cin x channel stride = {want:#x} bytes (the slices of a row lie \
             side by side)"
        );
        return Err(r.err("word 0x1f4", slice, reason));
    }
    let want = slice.saturating_mul(c.in_dims.d as u64);
    if all != want {
        let reason =
            format!("the {} depth slices of a reduction's row take D x word 0x1f4 = {want:#x} bytes", c.in_dims.d);
        return Err(r.err("word 0x1f8", all, reason));
    }
    Ok(Region { depth: slice, ..first })
}

/// The L2 source region of a reduction reading an earlier task's result in place, and
/// the step between the views of successive groups: word 0x1f8, 0 with one group, not 0
/// with NumGroups > 1; each group's view is read with the channel and row strides one
/// step further (`reduce_sum_axes_1`: views of one row, the transposed rows 0x420 apart;
/// softmax 1x64x8x8: the copy's rows; softmax 1x8x128x128: each row of 128 read as 4 rows
/// of 32, 0x40 apart, the groups 0x800 apart). Word 0x1f4 (the writer's plane) is the
/// depth stride of a view with depth slices (the layer norms' mean, broadcast along
/// them); with depth 1 it addresses nothing.
pub fn resident_region(
    r: &Reader,
    c: &Common,
    first: Region,
    slice: u64,
    step: u64,
) -> Result<(Region, u64), SimError> {
    let first = if c.in_dims.d > 1 { Region { depth: slice, ..first } } else { first };
    match (c.groups, step) {
        (1, 0) => Ok((first, 0)),
        (1, s) => {
            let reason = "a reduction of one group reading its source in place is modelled with 0 (no group step)";
            Err(r.err("word 0x1f8", s, reason))
        }
        (_, 0) => {
            let reason = "the groups of a reduction reading its source in place lie one step (word 0x1f8) apart; \
                          0 (every group on the same values) is not modelled";
            Err(r.err("word 0x1f8", 0, reason))
        }
        (_, s) => Ok((first, s)),
    }
}

/// Word 0x22c of a reduction: the op in the low bits (0 sum, 2 max, 3 min), bit 4 the
/// square of each element, bits 12 and 13 the reciprocal and the reciprocal square root
/// of the result, bit 19 a second operand (exactly with Cfg 0x61), bit 16 operand 1
/// negated (only with it).
const OP_BITS: u32 = 0x3;
const SQUARE: u32 = 1 << 4;
const RSQRT: u32 = 1 << 13;
const SECOND: u32 = 1 << 19;
const NEGATE1: u32 = 1 << 16;

/// The planar-engine block of a reduction (words 0x22c..0x238) and its result form.
pub fn pe_block(r: &mut Reader, c: &Common) -> Result<PeReduce, SimError> {
    let cfg = r.word(0x22C, u32::MAX);
    let two = c.operands == Operands::TwoL2;
    let op = match cfg & OP_BITS {
        0 => Some(ReduceOp::Sum),
        2 => Some(ReduceOp::Max),
        3 => Some(ReduceOp::Min),
        _ => None,
    };
    let post = match (cfg & RECIPROCAL != 0, cfg & RSQRT != 0) {
        (false, false) => Some(PostOp::None),
        (true, false) => Some(PostOp::Reciprocal),
        (false, true) => Some(PostOp::Rsqrt),
        (true, true) => None,
    };
    let known = OP_BITS | SQUARE | RECIPROCAL | RSQRT | SECOND | NEGATE1;
    let valid = cfg & !known == 0 && (cfg & SECOND != 0) == two && (cfg & NEGATE1 == 0 || two);
    let (Some(op), Some(post), true) = (op, post, valid) else {
        let reason = "a reduction's op sits in the low bits: 0 (sum), 2 (max) or 3 (min), with bit 4 (square), bit \
                      12 (reciprocal) or 13 (rsqrt), bit 19 exactly with a second operand (Cfg 0x61) and bit 16 \
                      (operand 1 negated) only then; no other bit (negating operand 2, abs) is modelled";
        return Err(r.err("word 0x22c", cfg.into(), reason));
    };
    let bias_scale = r.word(0x230, u32::MAX);
    let half = |v: u32| f16::from_bits((v & 0xFFFF) as u16).to_f32();
    // PreScale 1.0 in the high half; the low half an epsilon added before the rsqrt.
    let pre = r.word(0x234, u32::MAX);
    if pre >> 16 != 0x3C00 || pre & 0xFFFF != 0 && post != PostOp::Rsqrt {
        let reason = "PE PreScale (fp16 in the high half) 1.0, the low half 0 or, with the rsqrt post-op, an fp16 \
                      epsilon";
        return Err(r.err("word 0x234", pre.into(), reason));
    }
    let epsilon = half(pre);
    let bits = r.word(0x238, u32::MAX);
    let final_scale = f32::from_bits(bits);
    if !final_scale.is_finite() || !epsilon.is_finite() {
        let reason = "a reduction's final scale (fp32) and epsilon (fp16) are modelled finite";
        return Err(r.err("word 0x238", bits.into(), reason));
    }
    Ok(PeReduce {
        op,
        bias: half(bias_scale),
        scale: half(bias_scale >> 16),
        final_scale,
        epsilon,
        post,
        square: cfg & SQUARE != 0,
        negate1: cfg & NEGATE1 != 0,
        packed: c.broadcast & PACKED_RESULT != 0,
    })
}

/// A reduction's L2 result region (of the first group) and the step between the results
/// of successive groups. To DRAM one value per channel (ResultType 2): laid out like the
/// source (`first`) at ResultBase (L2BfrMode 1), one group. By the result words
/// (L2BfrMode 0), kept (ResultType 0) or a packed row to DRAM (ResultType 1): per group
/// C lines (channel stride) or one packed row of C values (channel word = word 0x220 =
/// the row rounded up to 16 bytes), groups word 0x220 apart, the row word every group,
/// word 0x224 0 or word 0x220.
pub fn result(
    r: &Reader,
    c: &Common,
    tiles: &Tiles,
    l2: &L2Layout,
    p: &PeReduce,
    first: Region,
) -> Result<(Region, u64), SimError> {
    let groups = c.groups as u64;
    let n = c.out_dims.c as u64;
    let size = tiles.dest.fmt.size() as u64;
    match (l2.result_type, p.packed) {
        (2, false) => {
            if l2.result_mode != 1 {
                let reason = "a reduction's result written to DRAM one value per channel (ResultType 2) is modelled \
                              laid out like its source (L2BfrMode 1)";
                return Err(r.err("L2.ResultCfg.L2BfrMode", l2.result_mode, reason));
            }
            if groups != 1 {
                let reason = "a reduction written to DRAM one value per channel (ResultType 2) is modelled with one \
                              group; grouped results are kept in L2 or written as packed rows (ResultType 0 or 1)";
                return Err(r.err("Common.GroupConvCfg.NumGroups", groups, reason));
            }
            Ok((Region { base: l2.result.base, ..first }, 0))
        }
        (2, true) => Err(r.err(
            "word 0x158",
            PACKED_RESULT.into(),
            "a reduction's results packed into one row are written with ResultType 1 (to DRAM) or 0 (kept in L2), \
             not 2",
        )),
        (1, false) => {
            let reason = "ResultType 1 (a packed row to DRAM) is modelled with word 0x158 = 0x400";
            Err(r.err("L2.ResultCfg.ResultType", 1, reason))
        }
        (_, packed) => {
            if l2.result_mode != 0 {
                let reason = "a reduction's packed row (ResultType 1) is modelled laid out by the result words \
                              (L2BfrMode 0)";
                return Err(r.err("L2.ResultCfg.L2BfrMode", l2.result_mode, reason));
            }
            words(r, l2, packed, groups, n, size)
        }
    }
}

/// The result words of a reduction laid out by them (see [`result`]).
fn words(r: &Reader, l2: &L2Layout, packed: bool, groups: u64, n: u64, size: u64) -> Result<(Region, u64), SimError> {
    let res = l2.result;
    let plane = l2.result_plane;
    if packed {
        let row = n.saturating_mul(size).div_ceil(LINE).saturating_mul(LINE);
        if res.channel != row || plane != row {
            let reason = format!(
                "a packed row of {n} results (word 0x158 = 0x400) is modelled with the channel word and word 0x220 \
                 both the row, {row:#x} bytes; they are {:#x}, {plane:#x}",
                res.channel
            );
            return Err(r.err("L2.ConvResultChannelStride.Stride", res.channel / 16, reason));
        }
    } else {
        let span = res.channel.saturating_mul(n.saturating_sub(1)).saturating_add(size);
        if plane < span {
            let reason = format!(
                "the {n} results of a group, one channel stride ({:#x}) apart, take {span:#x} bytes; word 0x220 (the \
                 step between groups) is shorter",
                res.channel
            );
            return Err(r.err("word 0x220", plane, reason));
        }
    }
    if res.row < groups.saturating_mul(plane) {
        let reason = format!("the row word spans every group: at least {groups} x word 0x220 ({plane:#x})");
        return Err(r.err("L2.ConvResultRowStride.Stride", res.row / 16, reason));
    }
    if l2.result_plane2 != 0 && l2.result_plane2 != plane {
        let reason = format!("a reduction's second plane word is 0 or word 0x220 ({plane:#x})");
        return Err(r.err("word 0x224", l2.result_plane2, reason));
    }
    Ok((res, plane))
}
