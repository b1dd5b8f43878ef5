//! The Common block: dimensions, formats, convolution geometry, task configuration.

use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{Engine, Task};
use crate::td::TdImage;
use anec_ir::DType;

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
    td.set("Common.TileCfg.TileHeight", u64::from(t.dest.ty.h))?;
    if t.engine == Engine::Pe {
        td.set_unnamed(0x154, pe_tile(t))?;
    }
    encode_cfg(td, t, gen)?;
    if t.acc_bias.is_some() {
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
    if let Some(src2) = t.sources.get(1) {
        // Bits [3:2] of ChCfg carry the second source's format (unnamed; 2 in sum/mul12).
        td.set_unnamed_bits(0x130, (fmt_code(src2.ty.dtype)? as u32) << 2)?;
    }
    td.set("Common.ChCfg.OutFmt", fmt_code(t.dest.ty.dtype)?)?;
    td.set("Common.Cin.Cin", u64::from(src.ty.c))?;
    td.set("Common.Cout.Cout", u64::from(t.dest.ty.c))?;
    td.set("Common.OutDim.Wout", u64::from(t.dest.ty.w))?;
    td.set("Common.OutDim.Hout", u64::from(t.dest.ty.h))?;
    td.set_unnamed(0x140, t.dest.ty.d)
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
    td.set("Common.GroupConvCfg.UnicastEn", u64::from(t.engine.channelwise()))?;
    td.set("Common.GroupConvCfg.UnicastCin", 1)
}

/// Common.Cfg per engine path, as Apple writes it for each (one program of each kind),
/// with two fields derived from the task:
/// - ActiveNE = log2 of the NE count rounded up to a power of two (Apple's
///   `HandleCommonConfigTileAndTaskInfo` writes `RoundUpToNextPow2Log2(NumNeededNEs)`),
///   one NE per output channel, at most 16 ([`active_ne`]).
/// - SmallSourceMode for windowed tasks whose source row fits one 16-byte L2 granule
///   (inferred: conv.hwx, Win 1, sets it; no wider Apple convolution is here).
fn encode_cfg(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let double_buf = u64::from(gen.acc_double_buffer);
    let rows = usize::from(t.dest.ty.h > 1);
    let ([pref, min, max], double_buf, unnamed) = match t.engine {
        Engine::NePass => (gen.pass_shared[rows], double_buf, CFG_UNNAMED),
        Engine::NeConv | Engine::NePool => ([4, 4, 4], double_buf, CFG_UNNAMED),
        Engine::Pe => ([0, 0, 0], 0, pe_cfg_bits(t)),
    };
    td.set("Common.Cfg.SmallSourceMode", u64::from(small_source(t)))?;
    td.set("Common.Cfg.ShPref", pref)?;
    td.set("Common.Cfg.ShMin", min)?;
    td.set("Common.Cfg.ShMax", max)?;
    td.set("Common.Cfg.ActiveNE", active_ne(t))?;
    td.set("Common.Cfg.AccDoubleBufEn", double_buf)?;
    td.set_unnamed_bits(0x15C, unnamed)
}

/// The planar-engine Cfg bits: bit 0, bit 1 for a second operand read by the tile DMA,
/// operands + 1 in bits 4..6.
fn pe_cfg_bits(t: &Task) -> u32 {
    let operands = t.sources.len() as u32;
    let dma = if operands > 1 { CFG_SECOND_FROM_DMA } else { 0 };
    CFG_UNNAMED | dma | ((operands + 1) << 4)
}

/// The planar engine's tile (word 0x154): log2 rows << 4 | log2 columns, columns the
/// row width rounded up to a power of two within [16, 512], rows what the element budget
/// (512 with one operand, 256 with two) leaves, at most the height (every PE task of the
/// current corpus that reads its sources from DRAM; sum.hwx's 4).
fn pe_tile(t: &Task) -> u32 {
    let log2_ceil = |v: u32| v.max(1).next_power_of_two().trailing_zeros();
    let (lo, hi) = PE_TILE_COLS;
    let cols = log2_ceil(t.dest.ty.w).clamp(lo, hi);
    let budget = PE_TILE_BUDGET[usize::from(t.sources.len() > 1)];
    let rows = log2_ceil(t.dest.ty.h).min(budget.saturating_sub(cols));
    (rows << 4) | cols
}

/// Bytes of one L2 granule (the unit of every L2 stride).
const L2_GRANULE: u64 = 16;

/// True for a windowed task whose source row fits one L2 granule.
fn small_source(t: &Task) -> bool {
    let row = t.sources.first().map_or(u64::MAX, |s| u64::from(s.ty.w) * s.ty.dtype.size() as u64);
    t.engine.windowed() && row <= L2_GRANULE
}

/// DPE.Category of a task that adds AccBias on the unity kernel's MAC path (1 in Apple's
/// rsqrt; 0 everywhere else in the corpus).
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
    u64::from(ne_count(t.dest.ty.c).trailing_zeros())
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
