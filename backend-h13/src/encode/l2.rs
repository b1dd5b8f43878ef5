//! The L2 block: where sources and the result sit in the on-chip buffer, strides in
//! 16-byte units (17 bits).

use super::set_unnamed_units;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2Region, L2_GRANULE};
use crate::task::{AliasBits, Engine, PoolMode, ReduceOp, SourceResidency, Surface, Task};
use crate::td::TdImage;
use anec_ir::TensorType;
use std::ops::Range;

/// Unnamed SourceCfg bit 24: set when a second source is read (sum, mul12).
const SOURCE_CFG_TWO_SOURCES: u32 = 1 << 24;
/// A second source region starts on this alignment after the first.
const SECOND_SOURCE_ALIGN: u64 = 0x40;
/// L2Cfg.PaddingMode of pooling: the values Apple's `SetPaddingMode` writes for the
/// padding modes its L2 configuration requires of average (1) and max (3) pooling on the
/// H13's successors (ZinAneTd<8u>/<11u> `HandleL2Config`); convolution keeps 0 (zero
/// padding). Inferred for H13, whose L2Cfg has the same field.
const PADDING_MODE_AVG_POOL: u64 = 1;
const PADDING_MODE_MAX_POOL: u64 = 3;
/// PaddingMode of a maximum (and, inferred, minimum) reduction on either engine (every
/// reduce_max of the current corpus; sums keep 0).
const PADDING_MODE_REDUCE_EXTREMUM: u64 = 1;

/// The channel stride of a row the NE streams is at most 0x100 bytes (every NE task of the
/// current corpus with W >= 128).
pub(crate) const NE_CHANNEL_CAP: u64 = 0x100;
/// The planar engine's piece when it streams a row ([`row_piece`]).
const PE_PIECE: u64 = 0x400;

/// The row pads of an NE copy streaming rows of several channels that fill whole banks
/// ([`streams_padded`]): source rows +0x50, result rows +0xa0, fitted on the one record
/// that shows this form (`encoder_slice_lastdim`: 8 channels of 0x100-byte pieces, rows
/// 0x850 and 0x8a0); no rule derives them yet (`header-common-l2.md` §4c).
const STREAM_SOURCE_PAD: u64 = 0x50;
const STREAM_RESULT_PAD: u64 = 0xa0;

/// Bytes of its first source's rows `t` streams through L2 in one piece (the cap of the
/// L2 channel stride; `header-common-l2.md` §4c): the NE streams rows wider than 0x100
/// bytes in 0x100-byte pieces (every NE task of the corpus); the planar engine streams the
/// one source it loads for itself alone, outside a reduction, in 0x400-byte pieces when
/// its rows are wider (its copy of 2048-wide rows into a runtime matmul's kernel,
/// `rrmm_r2rr_m64_k2048_n64_tx0_ty1`; every other planar-engine source of the corpus has
/// rows of at most 0x400 bytes); any other planar-engine task takes whole rows.
pub(crate) fn row_piece(t: &Task) -> u64 {
    let lone = t.sources.len() == 1
        && t.residency == SourceResidency::Load
        && t.l2_source.is_none()
        && t.l2_operand.is_none()
        && t.reduce.is_none();
    match t.engine {
        e if e.uses_ne() => NE_CHANNEL_CAP,
        _ if lone => PE_PIECE,
        _ => u64::MAX,
    }
}

/// True when `t` is an NE copy that streams rows of several channels filling whole banks
/// (C x 0x100 a multiple of 0x400) over several rows to memory: Apple pads its source
/// rows by 0x50, lays its result out by the result words in the same pieces with rows
/// padded by 0xa0 (L2BfrMode 0) and writes ShMax 4 (`encoder_slice_lastdim`). One channel
/// (the 64 x 256 rows of the chain records' tables and copies) keeps unpadded rows and a
/// result aliased to them; so does any other stream here, for want of a record.
pub(crate) fn streams_padded(t: &Task) -> bool {
    let [src] = t.sources.as_slice() else { return false };
    let row = u64::from(src.ty.w) * src.ty.dtype.size() as u64;
    let plane = NE_CHANNEL_CAP * u64::from(src.ty.c);
    t.engine == Engine::NePass
        && row > NE_CHANNEL_CAP
        && src.ty.h > 1
        && plane.is_multiple_of(BANK_SPAN)
        && t.table.is_none()
        && !t.vectors.any()
        && !t.transposed_write
        && !t.channel_sum
        && !t.channel_max
        && t.residency == SourceResidency::Load
        && t.l2_source.is_none()
        && t.l2_operand.is_none()
        && t.l2_result.is_none()
        && t.token.is_none()
        && t.kernel_write.is_none()
        && t.runtime_kernel.is_none()
}

/// A planar-engine row whose unpadded size is a multiple of 0x400 gets 0x20 of padding
/// (0x400 -> 0x420 in sum.hwx and every PE operand of the current corpus).
const PE_PAD_EVERY: u64 = 0x400;
const PE_PAD: u64 = 0x20;
/// NE rows read row after row with narrow channels (<= 0x40 bytes) get 0x20 (short rows or
/// a stride-2 window) or 0x30 of padding; wider channels or a single row none.
const NE_NARROW_CHANNEL: u64 = 0x40;
const NE_SHORT_ROW: u64 = 0x200;
const NE_PAD_SHORT: u64 = 0x20;
const NE_PAD: u64 = 0x30;
/// A second source starts at the end of the first rounded up to 0x40, one more 0x40 when
/// that lands on a 0x400 boundary (the current corpus: 0x8000 -> 0x8040; sum.hwx 0x440).
const SECOND_SOURCE_BANK: u64 = 0x400;

/// A convolution's source row gets 0x30 of padding at stride 1 when its unpadded row is
/// at least 0x400, otherwise 0x20 (every convolution of the current corpus: 64x8x8 ->
/// 0x430, 16 channels of a 4-group convolution 0x200 -> 0x220, stride 2 0x20).
const CONV_PAD_WIDE_ROW: u64 = 0x400;

/// The channels of a task's source or result one L2 region holds: one group's when the
/// hardware loops over the groups of a grouped convolution.
fn region_channels(t: &Task, c: u32) -> u32 {
    match t.conv.groups {
        g if g > 1 && t.engine.is_conv() => c / g,
        _ => c,
    }
}

/// A planar-engine reduction of a split row reads it in strips of 64 values: its channel
/// stride is at most 0x80 bytes (`reduce_probe_mean_ax3`'s 4 x 128 view).
const REDUCE_CHANNEL_CAP: u64 = 0x80;
/// A reduction's L2 row (every depth slice of one row) is a whole number of 0x20 bytes
/// (one channel of 16 bytes: 0x20; four depth slices of 16: 0x40), plus the bank pad.
const REDUCE_ROW_ALIGN: u64 = 0x20;

/// The L2 region of a source of `t` at `base`. A reduction's view with depth D > 1
/// stores the D slices of each row side by side, as D x C channels.
pub(crate) fn source_region(t: &Task, s: &Surface, base: u64, gen: &Generation) -> L2Region {
    let ty = s.ty;
    let c = region_channels(t, ty.c);
    if let Some(r) = t.reduce {
        return reduce_region(c * ty.d.max(1), s, base, r.split);
    }
    let cap = row_piece(t);
    let plane = L2Region::unpadded_row(c, ty.w, ty.dtype, cap);
    let channel = plane / u64::from(c.max(1));
    let pad = match t.engine {
        _ if streams_padded(t) => STREAM_SOURCE_PAD,
        // The one-row source of a runtime matmul's tasks: no padding (every copy and
        // matmul task of `matmul-runtime.md` §3).
        _ if t.kernel_write.is_some() || t.runtime_kernel.is_some() => 0,
        // A planar-engine row is a whole number of 0x20 bytes (Apple's cast of a
        // `[1, 1, 64, 1]` bool: rows of one byte, stride 0x20), 0x20 more on multiples of
        // 0x400, as a reduction's (`reduce_region`).
        Engine::Pe => {
            let row = round_up(plane, REDUCE_ROW_ALIGN);
            row - plane + if row.is_multiple_of(PE_PAD_EVERY) { PE_PAD } else { 0 }
        }
        Engine::NeConv if !gen.conv_source_pad => 0,
        // Rows streamed in pieces: none (Apple's regime-B matmul slices, rows of K
        // pieces of 0x100 bytes).
        Engine::NeConv if u64::from(ty.w) * ty.dtype.size() as u64 > cap => 0,
        Engine::NeConv if t.conv.sy == 1 && plane >= CONV_PAD_WIDE_ROW => NE_PAD,
        Engine::NeConv => NE_PAD_SHORT,
        _ => {
            if channel > NE_NARROW_CHANNEL || ty.h <= 1 {
                0
            } else if t.conv.sy == 2 || plane <= NE_SHORT_ROW {
                NE_PAD_SHORT
            } else {
                NE_PAD
            }
        }
    };
    L2Region::new(base, c, ty.h, ty.w, ty.dtype, cap, pad)
}

/// The source region of a planar-engine reduction over `c` channels (depth slices
/// included): rows rounded up to 0x20 bytes, 0x20 more when that is a multiple of 0x400
/// (every reduction of the current corpus); a split row's channels of at most 0x80 bytes.
pub(crate) fn reduce_region(c: u32, s: &Surface, base: u64, split: bool) -> L2Region {
    let cap = if split { REDUCE_CHANNEL_CAP } else { u64::MAX };
    let plane = L2Region::unpadded_row(c, s.ty.w, s.ty.dtype, cap);
    let row = round_up(plane, REDUCE_ROW_ALIGN);
    let pad = row - plane + if row.is_multiple_of(PE_PAD_EVERY) { PE_PAD } else { 0 };
    L2Region::new(base, c, s.ty.h, s.ty.w, s.ty.dtype, cap, pad)
}

/// The L2's 16-byte granules repeat their banks every 0x400 bytes: a row of a region kept
/// between tasks that fills whole banks gets 0x20 of padding, one that fills half of them
/// 0x10 (`header-common-l2.md` §4: 0x400 -> 0x420, 0x600 -> 0x610, 0x200 -> 0x210,
/// 0x800 -> 0x820, 0x1000 -> 0x1020; 0x80 stays).
const BANK_SPAN: u64 = 0x400;
const HALF_BANK_SPAN: u64 = 0x200;
const KEPT_PAD_FULL: u64 = 0x20;
const KEPT_PAD_HALF: u64 = 0x10;

/// Bytes of the row budget an NE pass shares between the rows it writes together, and
/// the most rows it shares (2^3): `encode::common`'s ShMax of a pass task.
const NE_PASS_ROW_BUDGET: u64 = 256;
const NE_PASS_MAX_ROWS_LOG2: u32 = 3;

/// Who writes a region kept in L2 between tasks, as far as the padding of its rows
/// depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeptRows {
    /// The planar engine (or the NE in place over such a region).
    Planar,
    /// An NE pass (a copy or a table, not transposing).
    NePass,
}

/// True when an NE task writes rows whose channels are `channel` bytes without padding:
/// channels of at least 0x100 bytes, which it streams in 0x100-byte pieces (softmax
/// 1x8x128x128's copy and exponents 0x800, the 64x256 chain's and chain_resffn's copy of
/// x 0x200, layer_norm 1x128x16x16's transposed x 0x1000: 9 regions).
pub(crate) fn ne_rows_unpadded(channel: u64) -> bool {
    channel >= NE_CHANNEL_CAP
}

/// The rows an NE pass over rows of `row_bytes` (one channel of one row) writes
/// together: 2^ShMax, ShMax = min(3, log2 H, log2(256 / row bytes)).
fn ne_pass_rows(h: u32, row_bytes: u64) -> u64 {
    let fit = (NE_PASS_ROW_BUDGET / row_bytes.max(1)).max(1).ilog2();
    1 << h.max(1).ilog2().min(fit).min(NE_PASS_MAX_ROWS_LOG2)
}

/// True when `rows` consecutive rows `row` bytes apart, `chunk` bytes of each (one
/// channel), fall on distinct banks of the 0x400-byte span.
fn rows_on_distinct_banks(row: u64, chunk: u64, rows: u64) -> bool {
    let starts: Vec<u64> = (0..rows).map(|i| i * row % BANK_SPAN).collect();
    starts.iter().enumerate().all(|(i, &a)| {
        starts.iter().skip(i + 1).all(|&b| {
            let gap = a.abs_diff(b);
            gap >= chunk && BANK_SPAN - gap >= chunk
        })
    })
}

/// The layout at `base` of a tensor of `ty` kept in L2 between tasks, C channels of W per
/// row, and its row padding (only with several rows): 0x20 for a row that fills whole
/// banks, 0x10 for one that fills half of them; for a region an NE pass writes, none when
/// it streams the rows ([`ne_rows_unpadded`]), else further granules until the rows it
/// writes together (2^ShMax) put each channel's piece on distinct banks (softmax
/// 1x8x64x64's copy: two rows of 0x80 at 0x480, not 0x420). `scripts/corpus/norm/
/// kept_rows.py`: 23 of the 24 kept regions of rows of the corpus; the miss is the
/// centred x of layer_norm over C (0x1030, read by an NE transposer).
pub(crate) fn kept_region(base: u64, ty: &TensorType, writer: KeptRows) -> L2Region {
    let plane = L2Region::unpadded_row(ty.c, ty.w, ty.dtype, u64::MAX);
    let channel = plane / u64::from(ty.c.max(1));
    let general = if plane.is_multiple_of(BANK_SPAN) {
        KEPT_PAD_FULL
    } else if plane.is_multiple_of(HALF_BANK_SPAN) {
        KEPT_PAD_HALF
    } else {
        0
    };
    let together = ne_pass_rows(ty.h, channel);
    let spread = |p: &u64| rows_on_distinct_banks(plane + p, channel, together);
    let pad = match writer {
        _ if ty.h <= 1 => 0,
        KeptRows::Planar => general,
        KeptRows::NePass if ne_rows_unpadded(channel) => 0,
        KeptRows::NePass => (general..BANK_SPAN).step_by(L2_GRANULE as usize).find(spread).unwrap_or(general),
    };
    L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, u64::MAX, pad)
}

/// True when the result region is aliased to the destination DMA (L2BfrMode 1, no
/// convolution result strides): every non-windowed task, and convolutions in the
/// generations that alias them.
pub(crate) fn result_aliased(t: &Task, gen: &Generation) -> bool {
    let packed = t.reduce.is_some_and(|r| r.packed);
    let plain = !t.engine.windowed() && !packed && !streams_padded(t);
    plain || (t.engine.is_conv() && gen.conv_result_aliased)
}

/// The result region at `base` of a task whose result is not aliased to its source:
/// laid out as the destination, unpadded; a padded stream's in its pieces, padded.
fn result_region(t: &Task, base: u64) -> L2Region {
    let ty = t.dest.ty;
    match streams_padded(t) {
        true => L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, NE_CHANNEL_CAP, STREAM_RESULT_PAD),
        false => L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, u64::MAX, 0),
    }
}

/// Writes the block.
pub fn encode(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    match t.pool {
        Some(PoolMode::Avg) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_AVG_POOL)?,
        Some(PoolMode::Max) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_MAX_POOL)?,
        None if t.reduce.is_some_and(|r| r.op != ReduceOp::Sum) || t.channel_max => {
            td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_REDUCE_EXTREMUM)?
        }
        None => {}
    }
    encode_source_cfg(td, t)?;
    let r1 = first_region(t, src, gen);
    let mut end = match (t.l2_source, t.residency) {
        (Some(_), SourceResidency::Resident) => encode_source_in_place(td, t, &r1)?,
        (Some(_), _) => encode_loaded_region(td, &r1, src.ty.d)?,
        (None, _) => encode_source(td, t, src, &r1)?,
    };
    // The bytes the loaded first source spans: an aliased result takes its layout.
    let first_span = if t.l2_source.is_none() { end.saturating_sub(t.l2_base()) } else { 0 };
    if let Some(o) = t.l2_operand {
        // The second operand where the previous task left it (its plane2 word stays 0).
        let r2 = o.vector.region;
        // A reduction's view with depth slices: one slice's plane (as word 0x1F4).
        let plane = r2.plane / depth_slices(t, src);
        for (offset, bytes) in [(0x1FC, r2.base), (0x200, r2.channel), (0x204, r2.row), (0x208, plane)] {
            set_unnamed_units(td, offset, bytes, 4, 17)?;
        }
        end = end.max(r2.end());
    }
    if let Some(src2) = t.sources.get(1) {
        td.set_unnamed_bits(0x1E4, SOURCE_CFG_TWO_SOURCES)?;
        let r2 = source_region(t, src2, second_base(end), gen);
        // Beyond the L2 its base overflows its word: refused as the capacity it is.
        check_capacity(t, r2.end(), None)?;
        let words = [(0x1FC, r2.base), (0x200, r2.channel), (0x204, r2.row), (0x208, r2.plane), (0x20C, r2.plane)];
        for (offset, bytes) in words {
            set_unnamed_units(td, offset, bytes, 4, 17)?;
        }
        end = r2.end();
    }
    let aliased = result_aliased(t, gen) && !t.engine.is_conv();
    check_capacity(t, end, aliased.then_some(first_span))?;
    encode_result(td, t, end, gen)
}

/// The first source's region: where an earlier task or the recipe put it, or after the
/// task's result or operand.
fn first_region(t: &Task, src: &Surface, gen: &Generation) -> L2Region {
    match t.l2_source {
        Some(v) => v.region,
        None => source_region(t, src, t.l2_base(), gen),
    }
}

/// A second source starts after the first (and the operand) on 0x40, one more 0x40 when
/// that lands on a 0x400 boundary.
fn second_base(end: u64) -> u64 {
    let base = round_up(end, SECOND_SOURCE_ALIGN);
    if base.is_multiple_of(SECOND_SOURCE_BANK) {
        base + SECOND_SOURCE_ALIGN
    } else {
        base
    }
}

/// Rows of its destination a result streamed to memory holds in L2 at a time: the live
/// part of its region for the alias rule (`matmul-runtime.md` §6: one row contradicts
/// env_mm_r3rr_m128, three rows rrmm_r3rr_m64).
const STREAMED_ROWS: u64 = 2;

/// The L2 byte ranges a task reads and writes, as `lower::l2_chain::hazard_aliases` sees
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct L2Use {
    /// Sources the tile DMA loads.
    pub loaded: Vec<Range<u64>>,
    /// Sources read where an earlier task left them (the first source, the operand).
    pub read: Vec<Range<u64>>,
    /// The result: kept in L2 whole; streamed to memory, its first `STREAMED_ROWS` rows.
    pub result: Range<u64>,
}

/// What `t` occupies in L2: the regions `encode` writes.
pub(crate) fn l2_use(t: &Task, gen: &Generation) -> Result<L2Use, BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    let span = |r: &L2Region| r.base..r.end();
    let r1 = first_region(t, src, gen);
    let mut u = L2Use::default();
    match t.residency {
        SourceResidency::Resident => u.read.push(span(&r1)),
        _ => u.loaded.push(span(&r1)),
    }
    let mut end = r1.end();
    if let Some(o) = t.l2_operand {
        u.read.push(span(&o.vector.region));
        end = end.max(o.vector.region.end());
    }
    if let Some(src2) = t.sources.get(1) {
        let r2 = source_region(t, src2, second_base(end), gen);
        u.loaded.push(span(&r2));
        end = r2.end();
    }
    u.result = match t.l2_result {
        Some(v) => span(&v.region),
        None => {
            let rows = STREAMED_ROWS * t.dest.strides.row.max(L2_GRANULE);
            end..end + result_region(t, end).size.min(rows)
        }
    };
    Ok(u)
}

/// Bytes of L2 the TD's region addresses reach: ResultBase and SourceBase hold 17 bits of
/// 16-byte units (2 MiB).
pub(crate) const L2_ADDRESSABLE: u64 = (1 << 17) * 16;

/// True when `t`'s sources and result fit the L2 a task addresses (the check [`encode`]
/// makes), so a lowering can split a task that does not before encoding it.
pub(crate) fn fits(t: &Task, gen: &Generation) -> bool {
    let mut td = TdImage::new(&t.layer);
    !matches!(encode(&mut td, t, gen), Err(BackendError::Unsupported { op, .. }) if op == CAPACITY)
}

/// True when the NE reads `t`'s first source from memory in pieces (rows wider than its
/// piece).
fn source_streamed(t: &Task) -> bool {
    let row = t.sources.first().map_or(0, |s| u64::from(s.ty.w) * s.ty.dtype.size() as u64);
    t.residency != SourceResidency::Resident && t.l2_source.is_none() && row > row_piece(t)
}

/// The `op` of the error [`check_capacity`] returns.
const CAPACITY: &str = "task";

/// The task's sources and (when written to memory) its result, which follows them, must
/// fit the L2 the engine addresses; otherwise the layer needs tiling, which is refused by
/// name rather than left to a register overflow. A result aliased to its source's layout
/// (L2BfrMode 1, no result strides; `aliased` holds the loaded source's bytes) is counted
/// as the larger of that layout and the whole dense result (how the simulator models an
/// NE result whose source streams in pieces); other NE results stream out in pieces of at
/// most 0x100 bytes per row and channel.
fn check_capacity(t: &Task, sources_end: u64, aliased: Option<u64>) -> Result<(), BackendError> {
    // An NE pass writing transposed to memory what it reads in pieces streams its result
    // out in pieces too (as the simulator models it; Apple's regime-B preparation task
    // writes a 2 MiB x^T through a staging area after its 0x20000-byte source).
    let streamed_out = t.engine == Engine::NePass && t.transposed_write && source_streamed(t);
    let cap = if t.engine.uses_ne() && (aliased.is_none() || streamed_out) { NE_CHANNEL_CAP } else { u64::MAX };
    let aliased = aliased.filter(|_| !streamed_out);
    let d = t.dest.ty;
    let result = match t.l2_result {
        None if streams_padded(t) => result_region(t, 0).size,
        None => (L2Region::unpadded_row(d.c, d.w, d.dtype, cap) * u64::from(d.h)).max(aliased.unwrap_or(0)),
        Some(_) => 0,
    };
    let end = sources_end + result;
    if end <= L2_ADDRESSABLE {
        return Ok(());
    }
    Err(BackendError::Unsupported {
        line: 0,
        layer: t.layer.clone(),
        op: CAPACITY.into(),
        reason: format!(
            "its sources and result need {end:#x} bytes of L2, more than the {L2_ADDRESSABLE:#x} a task addresses \
             (tiling a layer over several tasks is not implemented yet)"
        ),
    })
}

/// The depth slices a row of `t`'s view holds side by side in L2: a reduction's view
/// with D > 1 (layer_norm and reduce over C, H and W); 1 for any other task.
fn depth_slices(t: &Task, src: &Surface) -> u64 {
    if t.reduce.is_some() {
        u64::from(src.ty.d.max(1))
    } else {
        1
    }
}

/// The first source's region words (`r1`, placed after the task's result or operand);
/// the end of the region.
fn encode_source(td: &mut TdImage, t: &Task, src: &Surface, r1: &L2Region) -> Result<u64, BackendError> {
    td.set("L2.SourceBase.Addr", r1.base >> 4)?;
    super::set_units(td, "L2.SourceChannelStride.Stride", r1.channel, 16)?;
    super::set_units(td, "L2.SourceRowStride.Stride", r1.row, 16)?;
    // One depth slice of a row, then the whole row (they differ for a view with D > 1).
    set_unnamed_units(td, 0x1F4, r1.plane / depth_slices(t, src), 4, 17)?;
    if t.residency != SourceResidency::Resident {
        set_unnamed_units(td, 0x1F8, r1.plane, 4, 17)?;
    }
    Ok(r1.end())
}

/// The words of a source read where an earlier task left it; the end of the region. A
/// planar-engine task looping over groups takes the region's rows as its groups
/// (`reduce_sum_axes_1`, softmax's per-row reductions: the plane as the row stride, the
/// padded row as the group step); any other reads it as laid out.
fn encode_source_in_place(td: &mut TdImage, t: &Task, r: &L2Region) -> Result<u64, BackendError> {
    let grouped = t.engine == Engine::Pe && t.dest.ty.n > 1;
    // A reduction viewing each row as four reads a quarter row after the other (softmax
    // 1x8x128x128: 0x40; the 64x256 chain: 0x80).
    let quarter = match (t.reduce, t.sources.first()) {
        (Some(red), Some(s)) if red.split => Some(round_up(u64::from(s.ty.w) * s.ty.dtype.size() as u64, L2_GRANULE)),
        _ => None,
    };
    let row = quarter.unwrap_or(if grouped { r.plane } else { r.row });
    td.set("L2.SourceBase.Addr", r.base >> 4)?;
    super::set_units(td, "L2.SourceChannelStride.Stride", r.channel, 16)?;
    super::set_units(td, "L2.SourceRowStride.Stride", row, 16)?;
    set_unnamed_units(td, 0x1F4, r.plane, 4, 17)?;
    if grouped {
        set_unnamed_units(td, 0x1F8, r.row, 4, 17)?;
    }
    Ok(r.end())
}

/// The words of a source the tile DMA loads into a region the recipe chose (softmax keeps
/// x where its last task will write the result); the end of the region.
fn encode_loaded_region(td: &mut TdImage, r: &L2Region, depth: u32) -> Result<u64, BackendError> {
    td.set("L2.SourceBase.Addr", r.base >> 4)?;
    super::set_units(td, "L2.SourceChannelStride.Stride", r.channel, 16)?;
    super::set_units(td, "L2.SourceRowStride.Stride", r.row, 16)?;
    // One depth slice of a row, then the whole row (a reduction's view with D > 1).
    set_unnamed_units(td, 0x1F4, r.plane / u64::from(depth.max(1)), 4, 17)?;
    set_unnamed_units(td, 0x1F8, r.plane, 4, 17)?;
    Ok(r.end())
}

/// SourceCfg: SourceType 2 for a source read for this task alone, 1 for one kept in L2
/// for the next tasks, 0 (and no alias or DMA-format bits) for one already there (the
/// split convolution of the current corpus: 0x500171, then 0x100).
fn encode_source_cfg(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    if let Some(link) = t.l2_link {
        if t.residency != SourceResidency::Resident {
            // Loaded again from memory, after a planar-engine task (layer_norm's last step).
            td.set("L2.SourceCfg.DMAFmt", 1)?;
            td.set("L2.SourceCfg.SourceType", if t.residency == SourceResidency::Load { 2 } else { 1 })?;
        }
        if link.dma_fmt {
            td.set("L2.SourceCfg.DMAFmt", 1)?;
        }
        let bits = [
            ("AliasConvSrc", link.conv_src),
            ("AliasConvRslt", link.conv_result),
            ("AliasPlanarRslt", link.planar_result),
        ];
        for (field, on) in bits {
            td.set(&format!("L2.SourceCfg.{field}"), u64::from(on))?;
        }
        td.set("L2.SourceCfg.Dependent", u64::from(link.dependent))?;
        return td.set("L2.SourceCfg.DMAInterleave", 1);
    }
    if t.l2_source.is_some() && t.residency == SourceResidency::Resident {
        // Read in place, aliasing the previous task's result (0x120).
        td.set("L2.SourceCfg.AliasConvRslt", 1)?;
        return td.set("L2.SourceCfg.DMAInterleave", 1);
    }
    let source_type = match t.residency {
        SourceResidency::Load => 2,
        SourceResidency::LoadAndKeep => 1,
        SourceResidency::Resident => {
            return td.set("L2.SourceCfg.DMAInterleave", 1);
        }
    };
    if let Some(a) = t.l2_aliases {
        // The bits the recipe derived from the regions of the tasks before.
        set_bits(td, "SourceCfg", &DMA_BITS)?;
        set_alias_bits(td, "SourceCfg", a.source)?;
    } else {
        // A task reading an operand another task left in L2 drops the planar aliases (0x172).
        let aliases = if t.l2_operand.is_some() { &CONV_ALIASES[..] } else { &ALIASES[..] };
        set_bits(td, "SourceCfg", aliases)?;
    }
    // A surface of B channels interleaved (a regime-B matmul's x^T).
    td.set("L2.SourceCfg.DMAInterleave", u64::from(t.interleave.source))?;
    td.set("L2.SourceCfg.SourceType", source_type)
}

fn encode_result(td: &mut TdImage, t: &Task, base: u64, gen: &Generation) -> Result<(), BackendError> {
    if let Some(a) = t.l2_aliases {
        // The bits the recipe derived from the regions of the tasks before.
        set_bits(td, "ResultCfg", &DMA_BITS)?;
        set_alias_bits(td, "ResultCfg", a.result)?;
    } else if t.residency == SourceResidency::Resident || t.l2_operand.is_some() {
        // A task after another in L2 (a resident source or an L2 operand) has no alias bits.
        set_bits(td, "ResultCfg", &DMA_BITS)?;
    } else {
        set_bits(td, "ResultCfg", &ALIASES)?;
    }
    if let Some(v) = t.l2_result {
        // Kept for a later task: ResultType 0, laid out by the result strides.
        let r = v.region;
        super::set_units(td, "L2.ResultBase.Addr", r.base, 16)?;
        if t.reduce.is_some() {
            return encode_reduce_result(td, t, true);
        }
        super::set_units(td, "L2.ConvResultChannelStride.Stride", r.channel, 16)?;
        super::set_units(td, "L2.ConvResultRowStride.Stride", r.row, 16)?;
        return set_unnamed_units(td, 0x220, r.plane, 4, 17);
    }
    if t.reduce.is_some_and(|r| r.packed) {
        td.set("L2.ResultCfg.ResultType", 1)?;
        super::set_units(td, "L2.ResultBase.Addr", base, 16)?;
        return encode_reduce_result(td, t, false);
    }
    td.set("L2.ResultCfg.ResultType", 2)?;
    // The result leaves L2 as a runtime kernel, or a regime-B matmul's x^T, B channels
    // interleaved.
    td.set("L2.ResultCfg.DMAInterleave", u64::from(t.kernel_write.unwrap_or(t.interleave.dest)))?;
    let aliased = result_aliased(t, gen);
    td.set("L2.ResultCfg.L2BfrMode", u64::from(aliased))?;
    super::set_units(td, "L2.ResultBase.Addr", base, 16)?;
    if !aliased {
        let r = result_region(t, base);
        super::set_units(td, "L2.ConvResultChannelStride.Stride", r.channel, 16)?;
        super::set_units(td, "L2.ConvResultRowStride.Stride", r.row, 16)?;
        set_unnamed_units(td, 0x220, r.plane, 4, 17)?;
        set_unnamed_units(td, 0x224, r.plane, 4, 17)?;
    }
    Ok(())
}

/// The result strides of a reduction kept in L2 or written packed (ResultType 1): per
/// group, one 16-byte line per view channel, or one packed row of them. Words: channel
/// stride = the line (or the packed row), row stride = every group, 0x220 = one group,
/// 0x224 = one group again when the groups are lines, or when one packed row goes to
/// memory (every reduction of the softmax and reduction records: `reduce_sum_axes_1`
/// 0x10 / 0x80 / 0x10 / 0; `_flat` 0x80 x 4; softmax 64x8x8's maximum 0x10 / 0x2000 /
/// 0x400 / 0x400; 1x64x1x64's 0x80 / 0x80 / 0x80 / 0).
fn encode_reduce_result(td: &mut TdImage, t: &Task, kept: bool) -> Result<(), BackendError> {
    let view = t.out_view();
    let packed = t.reduce.is_some_and(|r| r.packed);
    let groups = u64::from(t.dest.ty.n.max(1));
    let packed_row = round_up(u64::from(view.c) * view.dtype.size() as u64, L2_GRANULE);
    let (line, group) = if packed { (packed_row, packed_row) } else { (L2_GRANULE, L2_GRANULE * u64::from(view.c)) };
    let second = match (packed, groups > 1) {
        (true, false) if !kept => group,
        (false, true) => group,
        _ => 0,
    };
    // Kept for one group: the row the recipe's region gives, if longer (the two-row
    // [mean; rstd] of layer_norm: 0x10 -> 0x20).
    let kept_row = t.l2_result.map_or(0, |v| v.region.row);
    let row = if kept && groups == 1 { group.max(kept_row) } else { group * groups };
    super::set_units(td, "L2.ConvResultChannelStride.Stride", line, 16)?;
    super::set_units(td, "L2.ConvResultRowStride.Stride", row, 16)?;
    set_unnamed_units(td, 0x220, group, 4, 17)?;
    set_unnamed_units(td, 0x224, second, 4, 17)
}

/// The alias and DMA-format bits Apple sets in both SourceCfg and ResultCfg, the subset
/// without the planar aliases, and the DMA-format bits alone.
const ALIASES: [&str; 6] =
    ["AliasConvSrc", "AliasConvRslt", "AliasPlanarSrc", "AliasPlanarRslt", "DMAFmt", "DMAInterleave"];
const CONV_ALIASES: [&str; 4] = ["AliasConvSrc", "AliasConvRslt", "DMAFmt", "DMAInterleave"];
const DMA_BITS: [&str; 2] = ["DMAFmt", "DMAInterleave"];

/// Sets the four alias bits of `cfg` as `a` says.
fn set_alias_bits(td: &mut TdImage, cfg: &str, a: AliasBits) -> Result<(), BackendError> {
    let bits = [
        ("AliasConvSrc", a.conv_src),
        ("AliasConvRslt", a.conv_result),
        ("AliasPlanarSrc", a.planar_src),
        ("AliasPlanarRslt", a.planar_result),
    ];
    for (field, on) in bits {
        td.set(&format!("L2.{cfg}.{field}"), u64::from(on))?;
    }
    Ok(())
}

/// Sets each of `bits` (one-bit fields, DMAFmt 1) of `cfg`.
fn set_bits(td: &mut TdImage, cfg: &str, bits: &[&str]) -> Result<(), BackendError> {
    for f in bits {
        td.set(&format!("L2.{cfg}.{f}"), 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Strides;
    use anec_ir::{DType, Layout};

    /// A task of `engine` copying a `c x h x w` fp16 tensor (`sources` copies of it).
    fn copy(engine: Engine, c: u32, h: u32, w: u32, sources: usize) -> Task {
        let ty = TensorType::nchw(1, c, h, w, DType::F16);
        let s = Surface { bar: 4, ty, strides: Strides::of(&ty, &Layout::default()), offset: 0 };
        Task::new("t", engine, vec![s; sources], Surface { bar: 5, ..s })
    }

    #[test]
    fn streamed_rows_follow_apples_records() {
        let gen = crate::generation::CURRENT;
        // encoder_slice_lastdim: 8 channels of 375-wide rows, padded pieces.
        let t = copy(Engine::NePass, 8, 375, 375, 1);
        assert!(streams_padded(&t) && !result_aliased(&t, &gen));
        let src = source_region(&t, &t.sources[0], 0, &gen);
        assert_eq!((src.channel, src.plane, src.row), (0x100, 0x800, 0x850));
        let res = result_region(&t, src.end());
        assert_eq!((res.base, res.channel, res.plane, res.row), (0xc2d30, 0x100, 0x800, 0x8a0));
        // One channel (the chain records' 64 x 256 rows), channels short of whole banks,
        // one row: unpadded pieces, the result aliased.
        for t in [
            copy(Engine::NePass, 1, 64, 256, 1),
            copy(Engine::NePass, 2, 375, 375, 1),
            copy(Engine::NePass, 8, 1, 375, 1),
        ] {
            let src = source_region(&t, &t.sources[0], 0, &gen);
            assert!(!streams_padded(&t) && result_aliased(&t, &gen));
            assert_eq!((src.channel, src.row), (0x100, src.plane));
        }
        // The planar engine: a lone loaded source in 0x400-byte pieces (the K = 2048
        // copy), two sources whole.
        assert_eq!(row_piece(&copy(Engine::Pe, 64, 1, 2048, 1)), 0x400);
        assert_eq!(row_piece(&copy(Engine::Pe, 64, 1, 2048, 2)), u64::MAX);
        let t = copy(Engine::Pe, 64, 1, 2048, 1);
        assert_eq!(source_region(&t, &t.sources[0], 0, &gen).channel, 0x400);
    }

    /// The row stride `kept_region` gives a `c x h x w` tensor.
    fn row(c: u32, h: u32, w: u32, rows: KeptRows) -> u64 {
        kept_region(0, &TensorType::nchw(1, c, h, w, DType::F16), rows).row
    }

    #[test]
    fn kept_rows_follow_apples_records() {
        // The NE copies of softmax and layer_norm over several rows.
        assert_eq!(row(64, 8, 8, KeptRows::NePass), 0x420);
        assert_eq!(row(8, 64, 64, KeptRows::NePass), 0x480);
        assert_eq!(row(12, 64, 64, KeptRows::NePass), 0x610);
        assert_eq!(row(1, 64, 64, KeptRows::NePass), 0x80);
        assert_eq!(row(128, 16, 16, KeptRows::NePass), 0x1020);
        // softmax's differences, written by the planar engine.
        assert_eq!(row(8, 64, 64, KeptRows::Planar), 0x420);
        assert_eq!(row(12, 64, 64, KeptRows::Planar), 0x610);
        assert_eq!(row(8, 128, 128, KeptRows::Planar), 0x820);
        assert_eq!(row(1, 64, 256, KeptRows::Planar), 0x210);
        // Rows the NE streams, and a single row.
        assert_eq!(row(8, 128, 128, KeptRows::NePass), 0x800);
        assert_eq!(row(1, 64, 256, KeptRows::NePass), 0x200);
        assert_eq!(row(64, 1, 64, KeptRows::Planar), 0x2000);
    }
}
