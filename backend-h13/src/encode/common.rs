//! The Common block: dimensions, formats, convolution geometry, task configuration.

use crate::error::BackendError;
use crate::generation::{Generation, PassSharing};
use crate::layout::{round_up, L2_GRANULE};
use crate::task::{Engine, L2Form, SourceResidency, Task, Token};
use crate::td::TdImage;
use anec_ir::DType;

/// The rows a task's tile holds: all of its output's, except that a one-operand reduction
/// kept in L2 over more than 32 narrow rows (at most 8 wide) takes 32 at a time
/// (layer_norm's mean over 64, 256 and 512 rows; its two-operand variance keeps them all).
fn tile_height(t: &Task) -> u32 {
    let view = t.out_view();
    let narrow = t.reduce.is_some() && t.operands() == 1 && t.l2_result.is_some() && view.w <= REDUCE_NARROW_W;
    if narrow && view.h > REDUCE_TILE_ROWS {
        REDUCE_TILE_ROWS
    } else {
        view.h
    }
}

/// Width and rows of the narrow-reduction tile rule.
const REDUCE_NARROW_W: u32 = 8;
const REDUCE_TILE_ROWS: u32 = 32;

/// Word 0x158's packing bits of a planar-engine task: its result written packed (a
/// reduction's per-channel values, or a copy's C values, along W of one row: 0x400); its
/// first operand a packed row read back as channels (0x100; layer_norm over C).
fn pe_packing(t: &Task) -> u32 {
    if t.engine != Engine::Pe {
        return 0;
    }
    let packed_result = t.reduce.is_some_and(|r| r.packed) || t.l2_result.is_some_and(|v| v.form == L2Form::Packed);
    let packed_source = t.l2_source.is_some_and(|v| v.form == L2Form::Packed);
    (if packed_result { PACKED_RESULT } else { 0 }) | if packed_source { PACKED_OPERAND1 } else { 0 }
}

/// Word 0x158: operand 1 is a packed row of one value per channel.
const PACKED_OPERAND1: u32 = 0x100;

/// Word 0x158 of a reduction whose per-channel results go along W of one row (the
/// keep_dims = false `[1, C]` result of `reduce_probe_sum_ax2_3_1x64x8x8_flat`).
const PACKED_RESULT: u32 = 0x400;
/// Common.Cfg bits 4..6 of a planar-engine reduction: mode 5 (0x51 in every reduction of
/// the current corpus).
const CFG_REDUCE: u32 = 5 << 4;
const CFG_REDUCE_TWO: u32 = 6 << 4;

/// Unnamed word 0x148, 0x2041 in every Apple program (the seeds' "kernel-common record").
const WORD_148: u32 = 0x2041;
/// Unnamed low bits of Common.Cfg (0x15C): bit 0 on every task; on planar-engine tasks
/// also bit 1 when the second operand comes through the tile DMA and the operand count + 1
/// in bits 4..6 (0x33 two DRAM operands as in sum.hwx, 0x21 one operand; every PE task of
/// both generations' programs).
const CFG_UNNAMED: u32 = 0x1;
const CFG_SECOND_FROM_DMA: u32 = 0x2;

/// Elements the planar engine works on at once: 512 with one operand, 256 with two
/// (log2), the budget of its tile word.
const PE_TILE_BUDGET: [u32; 2] = [9, 8];
/// log2 of the planar-engine tile's width: at least 16, at most 512 elements.
const PE_TILE_COLS: (u32, u32) = (4, 9);

/// The ChCfg / tile-DMA format code of an element type (0 u8, 1 i8, 2 fp16).
pub fn fmt_code(dtype: DType) -> Result<u64, BackendError> {
    match dtype {
        DType::U8 => Ok(0),
        DType::I8 => Ok(1),
        DType::F16 => Ok(2),
        DType::F32 => Err(BackendError::Internal("fp32 tensors are converted before encoding".into())),
    }
}

/// Writes the block.
pub fn encode(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    encode_dims(td, t)?;
    encode_conv(td, t)?;
    td.set_unnamed(0x148, WORD_148)?;
    td.set("Common.TileCfg.TileHeight", u64::from(tile_height(t)))?;
    if t.engine == Engine::Pe {
        td.set_unnamed(0x154, pe_tile(t))?;
    }
    let broadcast = t.l2_operand.map_or(0, |o| o.broadcast);
    let flags = broadcast | pe_packing(t);
    if flags != 0 {
        td.set_unnamed(0x158, flags)?;
    }
    encode_cfg(td, t, gen)?;
    if t.acc_bias.is_some() || t.channel_sum {
        // Apple's rsqrt(x, eps) task (the unity kernel on the MAC path with AccBias).
        td.set("Common.DPE.Category", DPE_ACC_BIAS)?;
    }
    td.set("Common.TaskInfo.NID", u64::from(t.engine.uses_ne()))
}

fn encode_dims(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    td.set("Common.InDim.Win", u64::from(src.ty.w))?;
    td.set("Common.InDim.Hin", u64::from(src.ty.h))?;
    td.set_unnamed(0x12C, src.ty.d)?;
    td.set("Common.ChCfg.InFmt", fmt_code(src.ty.dtype)?)?;
    // Bits [3:2] of ChCfg carry the second operand's format (unnamed; 2 in sum/mul12 and
    // for an fp16 operand in L2).
    let second = t.sources.get(1).map(|s| s.ty.dtype).or(t.l2_operand.map(|_| DType::F16));
    if let Some(dtype) = second {
        td.set_unnamed_bits(0x130, (fmt_code(dtype)? as u32) << 2)?;
    }
    td.set("Common.ChCfg.OutFmt", fmt_code(t.dest.ty.dtype)?)?;
    // A grouped convolution states the channels of one group.
    let groups = if t.engine.is_conv() { t.conv.groups.max(1) } else { 1 };
    td.set("Common.Cin.Cin", u64::from(src.ty.c / groups))?;
    let out = t.out_view();
    td.set("Common.Cout.Cout", u64::from(out.c / groups))?;
    td.set("Common.OutDim.Wout", u64::from(out.w))?;
    td.set("Common.OutDim.Hout", u64::from(out.h))?;
    td.set_unnamed(0x140, out.d)
}

fn encode_conv(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let g = &t.conv;
    td.set("Common.ConvCfg.Kw", u64::from(g.kw))?;
    td.set("Common.ConvCfg.Kh", u64::from(g.kh))?;
    td.set("Common.ConvCfg.OCGSize", u64::from(g.ocg_size))?;
    td.set("Common.ConvCfg.Sx", u64::from(g.sx))?;
    td.set("Common.ConvCfg.Sy", u64::from(g.sy))?;
    td.set("Common.ConvCfg.Px", u64::from(g.pad_left))?;
    td.set("Common.ConvCfg.Py", u64::from(g.pad_top))?;
    td.set("Common.ConvCfg.Ox", 1)?;
    td.set("Common.ConvCfg.Oy", 1)?;
    // The planar engine loops over the batch as groups (the current compiler: 2x512 adds
    // write NumGroups 2); the NE's batch is 1 here.
    let groups = if t.engine == Engine::Pe { t.dest.ty.n.max(1) } else { g.groups };
    td.set("Common.GroupConvCfg.NumGroups", u64::from(groups))?;
    // A channel sum reads every channel through the plain (non-unicast) unity kernel.
    let unicast = (t.engine.channelwise() && !t.channel_sum) || g.unicast;
    td.set("Common.GroupConvCfg.UnicastEn", u64::from(unicast))?;
    // A channel maximum's one output channel reads every input channel.
    let cin = if t.channel_max { t.sources.first().map_or(1, |s| s.ty.c) } else { 1 };
    td.set("Common.GroupConvCfg.UnicastCin", u64::from(cin))
}

/// Common.Cfg per engine path, as Apple writes it for each, with fields derived from the
/// task:
/// - ActiveNE = log2 of the NE count rounded up to a power of two (Apple's
///   `HandleCommonConfigTileAndTaskInfo` writes `RoundUpToNextPow2Log2(NumNeededNEs)`),
///   one NE per output channel, at most 16 ([`active_ne`]).
/// - The scheduling fields (SmallSourceMode, ShPref, ShMin, ShMax) of a convolution by
///   [`conv_schedule`]; of a pass task by the generation; of pooling SmallSourceMode for a
///   source row within one L2 granule (inferred from conv.hwx) and 4/4/4.
fn encode_cfg(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let double_buf = u64::from(gen.acc_double_buffer);
    let (small, [pref, min, max], double_buf, unnamed) = match t.engine {
        // The channel sum of softmax's denominator: SmallSourceMode with 4/4/4 (0x44405).
        Engine::NePass if t.channel_sum => (true, [SH_SMALL; 3], double_buf, CFG_UNNAMED),
        Engine::NePass if t.table.is_some() && t.residency == SourceResidency::Resident => {
            (false, table_sharing(t), double_buf, CFG_UNNAMED)
        }
        Engine::NePass if is_matmul_prep(t) => (false, prep_sharing(t), double_buf, CFG_UNNAMED),
        // A regime-B matmul's P writing x^T to memory (`matmul.md` §3: 3/0/3).
        Engine::NePass if t.interleave.dest > 1 && t.transposed_write => {
            (false, [PREP_SH, 0, PREP_SH], double_buf, CFG_UNNAMED)
        }
        Engine::NePass if t.kernel_write.is_some() && t.transposed_write => {
            (false, KERNEL_TRANSPOSE_SH, double_buf, CFG_UNNAMED)
        }
        Engine::NePass if super::l2::streams_padded(t) => (false, STREAM_SH, double_buf, CFG_UNNAMED),
        Engine::NePass => (false, pass_sharing(t, gen.pass_shared), double_buf, CFG_UNNAMED),
        // A convolution reading in place what the planar engine wrote just before it
        // (Dependent 2) shares as the exp2 table after the softmax's subtract does
        // (`chain_pair_mul_mm`'s C after the scale on x^T: 1/1/1).
        Engine::NeConv if t.residency == SourceResidency::Resident && t.l2_link.is_some_and(|l| l.dependent == 2) => {
            (false, table_sharing(t), double_buf, CFG_UNNAMED)
        }
        Engine::NeConv => {
            let (small, sh) = conv_schedule(t);
            let sh = if !small && t.kept_for_pe { kept_row_sharing(t).unwrap_or(sh) } else { sh };
            (small, sh, double_buf, CFG_UNNAMED)
        }
        Engine::NePool => (small_source(t), [4, 4, 4], double_buf, CFG_UNNAMED),
        Engine::Pe => (false, [0, 0, 0], 0, pe_cfg_bits(t)),
    };
    td.set("Common.Cfg.SmallSourceMode", u64::from(small))?;
    td.set("Common.Cfg.ShPref", pref)?;
    td.set("Common.Cfg.ShMin", min)?;
    td.set("Common.Cfg.ShMax", max)?;
    td.set("Common.Cfg.ActiveNE", active_ne(t))?;
    td.set("Common.Cfg.AccDoubleBufEn", double_buf)?;
    let transposed = t.engine.uses_ne() && (t.transposed_write || t.l2_result.is_some_and(|v| v.form.transposes()));
    td.set_unnamed_bits(0x15C, unnamed | if transposed { CFG_TRANSPOSED_RESULT } else { 0 })
}

/// Common.Cfg bit 28: the NE writes its result with C and W swapped (a `[1, C, 1, 1]`
/// result as one packed row of C values: real_div's reciprocal kept in L2; the transposer
/// before a reduction over C).
const CFG_TRANSPOSED_RESULT: u32 = 1 << 28;

/// True for a matmul's preparation task: an NE pass writing x transposed into L2 and
/// standing for writing the scratch token (`lower::matmul`).
fn is_matmul_prep(t: &Task) -> bool {
    matches!(t.token, Some(Token::Writes(_))) && t.l2_result.is_some_and(|v| v.form == L2Form::Transposed)
}

/// ShPref, ShMin, ShMax of a matmul's preparation task (fitted on Apple's 11 preparation
/// tasks, `matmul.md` §3): ShPref = ShMax = 3 when each transposed row of `Mc` values fits
/// one 16-byte granule, else 0; ShMin = ShMax only with several rows (`Mh > 1`).
fn prep_sharing(t: &Task) -> [u64; 3] {
    let v = t.out_view();
    let row = round_up(u64::from(v.c) * v.dtype.size() as u64, L2_GRANULE);
    let max = if row == L2_GRANULE { PREP_SH } else { 0 };
    [max, if v.h > 1 { max } else { 0 }, max]
}

/// ShPref, ShMin, ShMax of the NE copy writing xᵀ transposed as a runtime kernel (Cfg
/// 0x10231301 in both records, K 128 and M 64: `matmul-runtime.md` §3a; no rule known).
const KERNEL_TRANSPOSE_SH: [u64; 3] = [3, 1, 3];

/// ShPref, ShMin, ShMax of an NE copy streaming padded rows of several channels
/// (`l2::streams_padded`; Cfg 0x1c0001 in `encoder_slice_lastdim`, the one record).
const STREAM_SH: [u64; 3] = [0, 0, 4];

/// The ShMax of a preparation task whose transposed rows fit a granule.
const PREP_SH: u64 = 3;

/// Bytes of the row budget an NE pass task's ShMax counts rows of.
const PASS_ROW_BUDGET: u64 = 256;

/// ShPref, ShMin, ShMax of an NE pass task.
fn pass_sharing(t: &Task, rule: PassSharing) -> [u64; 3] {
    match rule {
        PassSharing::Fixed(v) => v,
        PassSharing::ByRows => {
            // Rows as the NE reads them (the result's are the same unless transposed).
            let src = t.sources.first().map_or(t.dest.ty, |s| s.ty);
            let row = u64::from(src.w) * src.dtype.size() as u64;
            let fit = (PASS_ROW_BUDGET / row.max(1)).max(1).ilog2();
            let max = u64::from(t.dest.ty.h.max(1).ilog2().min(fit)).min(SH_MAX_LARGE);
            [0, 0, max]
        }
    }
}

/// ShPref = ShMin = ShMax of an NE table task reading what an earlier task left in L2
/// (softmax's exp2 step, fitted on the 14 softmax records): 4 when it has several rows,
/// else [`one_row_sharing`].
fn table_sharing(t: &Task) -> [u64; 3] {
    let view = t.sources.first().map_or(t.dest.ty, |s| s.ty);
    if view.h > 1 {
        return [SH_SMALL; 3];
    }
    one_row_sharing(u64::from(view.w) * view.dtype.size() as u64)
}

/// ShPref = ShMin = ShMax of a one-row NE compute task whose result a planar-engine task
/// reads where it is kept: how many times its row fits the 256-byte budget (log2, at most
/// 4; 0 for a row above 256 bytes). The exp2 table of the one-row softmax (1x1x64 and
/// 64x1x64: 1, 1x1x512 and 8x1x128: 0) and the convolution of attention's Q·Kᵀ keeping
/// the scores for the softmax (rows of 0x80: 1, `chains.md` §1.1); not a pass, a
/// transposed write or a result an NE task reads (`chain_pair_mm_mm`'s first product: 0).
fn one_row_sharing(row: u64) -> [u64; 3] {
    let f = if row > PASS_ROW_BUDGET { 0 } else { u64::from((PASS_ROW_BUDGET / row.max(1)).ilog2()).min(SH_SMALL) };
    [f; 3]
}

/// The sharing of a convolution keeping its one-row result for a planar-engine task (not
/// written transposed): [`one_row_sharing`] of its output row; `None` otherwise.
fn kept_row_sharing(t: &Task) -> Option<[u64; 3]> {
    let out = t.out_view();
    let kept = t.l2_result.is_some_and(|v| v.form == L2Form::Standard) && !t.transposed_write;
    (kept && out.h == 1).then(|| one_row_sharing(u64::from(out.w) * out.dtype.size() as u64))
}

/// Output width up to which a convolution runs in SmallSourceMode, and the largest kernel
/// chunk it allows (the 0x12080-byte chunks of the 768-channel 1x1 record still do).
const SMALL_OUTPUT_WIDTH: u32 = 8;
const SMALL_SOURCE_CHUNK: u64 = 0x12080;
/// Coefficients per output channel from which a convolution prefers sharing
/// (ShPref = ShMin = ShMax); lighter ones write only ShMax.
const HEAVY_TAPS: u64 = 256;
/// The largest ShMax of a convolution outside SmallSourceMode, and its value inside.
const SH_MAX_LARGE: u64 = 3;
const SH_SMALL: u64 = 4;

/// SmallSourceMode and (ShPref, ShMin, ShMax) of a convolution (rationale §3 of
/// `docs/rationale/current-compiler/convolution.md`; every convolution of both
/// generations): an output at most 8 wide whose chunks are at most 0x12080 bytes runs in
/// SmallSourceMode with 4/4/4; otherwise ShMax = min(3, floor(log2 Hout)), and ShPref =
/// ShMin = ShMax when each output channel reads at least 256 coefficients, else 0.
pub fn conv_schedule(t: &Task) -> (bool, [u64; 3]) {
    let largest = t.kernel.iter().map(|c| c.size).max().unwrap_or(0);
    // The convolution's own output (before a transposed write swaps it).
    let out = t.out_view();
    if out.w <= SMALL_OUTPUT_WIDTH && largest <= SMALL_SOURCE_CHUNK {
        return (true, [SH_SMALL; 3]);
    }
    let max = u64::from(out.h.max(1).ilog2()).min(SH_MAX_LARGE);
    // Input channels each output channel reads: one for depthwise, a group's otherwise.
    let groups = t.conv.groups.max(1);
    let cin = if t.conv.unicast { 1 } else { t.sources.first().map_or(0, |s| s.ty.c / groups) };
    let taps = u64::from(cin) * u64::from(t.conv.kh) * u64::from(t.conv.kw);
    let shared = if taps >= HEAVY_TAPS { max } else { 0 };
    (false, [shared, shared, max])
}

/// The planar-engine Cfg bits: bit 0, bit 1 for a second operand read by the tile DMA,
/// operands + 1 in bits 4..6 (0x21 one operand, 0x31 the second in L2, 0x33 both through
/// the DMA, 0x41 three).
fn pe_cfg_bits(t: &Task) -> u32 {
    if t.reduce.is_some() {
        // One operand: mode 5 (0x51); a second from L2: mode 6 (0x61, layer_norm's variance).
        let mode = if t.operands() > 1 { CFG_REDUCE_TWO } else { CFG_REDUCE };
        return CFG_UNNAMED | mode;
    }
    let dma = if t.sources.len() > 1 { CFG_SECOND_FROM_DMA } else { 0 };
    CFG_UNNAMED | dma | ((t.operands() + 1) << 4)
}

/// The planar engine's tile (word 0x154): log2 rows << 4 | log2 columns, columns the
/// row width rounded up to a power of two within [16, 512], rows what the element budget
/// (512 with one operand, 256 with two) leaves, at most the height (every PE task of the
/// current corpus that reads its sources from DRAM; sum.hwx's 4). The tile of a reduction
/// of a split row is at most 64 columns wide (its rows are read in strips of 64:
/// `reduce_probe_mean_ax3`'s 4 x 128 view has 0x26).
fn pe_tile(t: &Task) -> u32 {
    let log2_ceil = |v: u32| v.max(1).next_power_of_two().trailing_zeros();
    if let Some(tile) = stats_operand_tile(t).or_else(|| in_l2_tile(t)) {
        return tile;
    }
    let (lo, hi) = PE_TILE_COLS;
    let hi = if t.reduce.is_some_and(|r| r.split) { REDUCE_TILE_COLS } else { hi };
    let view = t.out_view();
    let cols = log2_ceil(view.w).clamp(lo, hi);
    if streams_in_place(t) {
        return (IN_L2_TILE_BUDGET.saturating_sub(cols) << 4) | cols;
    }
    let budget = PE_TILE_BUDGET[usize::from(t.operands() > 1)];
    let rows = log2_ceil(view.h).min(budget.saturating_sub(cols));
    (rows << 4) | cols
}

/// True for a one-operand planar-engine task that starts on the rows of the NE task just
/// before as they arrive: its source read in place, Dependent with no alias bit (SourceCfg
/// 0x104). Its tile takes the budget of 2^7 elements of a source in L2, not bounded by
/// the height, as the statistic-operand tasks' (attention's maximum over the kept scores:
/// 0x16; the sums reading the exponents with AliasPlanarRslt keep the DMA budget, 0x6 /
/// 0x7 / 0x9; `elementwise.md` §4).
fn streams_in_place(t: &Task) -> bool {
    let dependent_only = t
        .l2_link
        .is_some_and(|l| l.dependent == DEPENDENT_NE && !(l.conv_src || l.conv_result || l.planar_result || l.dma_fmt));
    t.operands() == 1 && t.residency == SourceResidency::Resident && dependent_only
}

/// SourceCfg.Dependent naming the NE as the producer.
const DEPENDENT_NE: u8 = 1;
/// log2 of the elements of a planar-engine tile whose source is in L2.
const IN_L2_TILE_BUDGET: u32 = STATS_TILE_BUDGET;

/// The tile of a planar-engine task reading both operands from L2, the second a per-row
/// statistic broadcast along W (softmax's subtract, fitted on its 13 records): 16 x 16
/// when the view has several rows; otherwise up to 128 columns, and 2^7 elements in all.
fn stats_operand_tile(t: &Task) -> Option<u32> {
    let o = t.l2_operand?;
    if t.l2_source.is_none() || o.broadcast & OPERAND2_ALONG_W == 0 {
        return None;
    }
    let view = t.out_view();
    if view.h > 1 {
        return Some(STATS_TILE_ROWS);
    }
    let cols = view.w.max(1).next_power_of_two().trailing_zeros().min(STATS_TILE_BUDGET);
    Some(((STATS_TILE_BUDGET - cols) << 4) | cols)
}

/// The tile of a planar-engine task (not a reduction) reading its source in place and
/// keeping its result in L2, over several channels of one row at least 16 wide: rows
/// over the channels, 2^7 elements in all (`chain_lnproj` T2: 64 x 256 -> 0x07,
/// `chain_pair_mul_mm` T1: 256 x 64 -> 0x16, the attention records' subtract 0x16). The
/// same task writing memory keeps the budget of a DMA source (`chain_base_layer_norm`
/// T2: 0x08); one channel, several rows or a row narrower than 16 too (the layer_norm
/// and softmax plans of a vector, `norm_softmax_a1`). Fitted on these records.
fn in_l2_tile(t: &Task) -> Option<u32> {
    let view = t.out_view();
    let cols = view.w.max(1).next_power_of_two().trailing_zeros();
    let resident = t.residency == SourceResidency::Resident && t.l2_result.is_some() && t.reduce.is_none();
    if !(resident && view.c > 1 && view.h == 1 && cols >= PE_TILE_COLS.0) {
        return None;
    }
    let cols = cols.min(STATS_TILE_BUDGET);
    Some(((STATS_TILE_BUDGET - cols) << 4) | cols)
}

/// Word 0x158: the second operand is broadcast along W.
const OPERAND2_ALONG_W: u32 = 0x10;
/// The tile of a statistic-operand task over several rows (0x44), and the log2 element
/// budget of one over a single row.
const STATS_TILE_ROWS: u32 = 0x44;
const STATS_TILE_BUDGET: u32 = 7;

/// log2 of the widest tile of a planar-engine reduction (64 columns).
pub const REDUCE_TILE_COLS: u32 = 6;

/// True for a windowed task whose source row fits one L2 granule.
fn small_source(t: &Task) -> bool {
    let row = t.sources.first().map_or(u64::MAX, |s| u64::from(s.ty.w) * s.ty.dtype.size() as u64);
    t.engine.windowed() && row <= L2_GRANULE
}

/// DPE.Category of a task on the unity kernel's multiply-accumulate path (1 in Apple's
/// rsqrt with AccBias and in softmax's channel sum; 0 everywhere else in the corpus).
const DPE_ACC_BIAS: u64 = 1;

/// The number of NEs.
const NES: u32 = 16;

/// The NEs a task writing `channels` output channels spreads over: one per channel,
/// rounded up to a power of two, at most all 16.
pub fn ne_count(channels: u32) -> u32 {
    channels.max(1).next_power_of_two().min(NES)
}

/// log2 of the NEs a task spreads over: one per output channel the NE writes, rounded up
/// to a power of two, at most 16 (every NE task of both generations' programs: relu and
/// sigmoid with 1 channel 0, conv 3->3 2, 9 or more channels 4); 0 for planar-engine tasks.
pub fn active_ne(t: &Task) -> u64 {
    if !t.engine.uses_ne() {
        return 0;
    }
    u64::from(task_nes(t).trailing_zeros())
}

/// NEs of a task writing a packed vector into L2: 8 whatever the channel count (Apple's
/// reciprocal of 64 and of 768 channels; no rule is known).
pub const PACKED_VECTOR_NES: u32 = 8;

/// The NEs an NE task runs on.
pub fn task_nes(t: &Task) -> u32 {
    match t.l2_result {
        Some(v) if v.form == L2Form::Packed => PACKED_VECTOR_NES,
        // A transposed result's channels are the source's columns.
        // (A convolution's are its output channels, as below.)
        Some(v) if v.form == L2Form::Transposed && !t.engine.is_conv() => ne_count(t.dest.ty.w),
        // A pass writing transposed: its channels are the source's columns, as above; a
        // convolution's are its output channels.
        _ if t.transposed_write && t.engine == Engine::NePass => ne_count(t.out_view().w),
        _ if t.transposed_write => ne_count(t.out_view().c),
        _ => ne_count(t.dest.ty.c),
    }
}

/// Header ENE: ActiveNE + 1 for NE tasks, 0 for planar-engine tasks (every task of both
/// generations' programs).
pub fn engine_enable(t: &Task) -> u64 {
    if t.engine.uses_ne() {
        active_ne(t) + 1
    } else {
        0
    }
}
