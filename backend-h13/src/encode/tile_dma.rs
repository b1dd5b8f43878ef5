//! The tile-DMA blocks: source 1 and 2 reads and the destination write, strides in 64-byte
//! units relative to the buffer's BAR.

use super::common::fmt_code;
use super::set_units;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{DramReuse, SourceResidency, Surface, Task, Token};
use crate::td::TdImage;
use anec_ir::DType;

/// Unnamed source-2 DMA configuration word (0x170): cache hints only when there is one
/// source (0x8880), hints 2/0xE/0xC when a second source is read (0x33880).
const SRC2_CFG_IDLE: u32 = 0x8880;
const SRC2_CFG_USED: u32 = 0x33880;
/// Unnamed source-2 format word (0x1A8): Truncate 3, MemFmt fp16 when used.
const SRC2_FMT_BASE: u32 = 0x30;
/// Unnamed word 0x1AC: 0x100 whenever the NE runs.
const WORD_1AC_NE: u32 = 0x100;

/// The destination cache hint of a task writing a runtime kernel.
const KERNEL_WRITE_HINT: u64 = 0xF;

/// Row, plane and depth stride fields of each block (Apple's names differ between them).
const SRC_STRIDES: [&str; 3] = ["RowStride.Stride", "PlaneStride.PlaneStride", "DepthStride.Stride"];
const DST_STRIDES: [&str; 3] = ["RowStride.RowStride", "PlaneStride.PlaneStride", "DepthStride.DepthStride"];

/// Strides (64-byte units) and the format fields both tile-DMA blocks share: FmtMode 1 and
/// Truncate 3 (every fp16 surface of both generations), or those of an 8-bit memory format
/// the block reads ([`read_format`]).
fn set_layout(td: &mut TdImage, block: &str, strides: [&str; 3], s: &Surface, read: bool) -> Result<(), BackendError> {
    let bytes = [s.strides.row, s.strides.plane, s.strides.depth];
    for (field, b) in strides.iter().zip(bytes) {
        set_units(td, &format!("{block}.{field}"), b, 64)?;
    }
    let (mode, truncate) = if read { read_format(s.ty.dtype) } else { FP16_FORMAT };
    td.set(&format!("{block}.Fmt.FmtMode"), mode)?;
    td.set(&format!("{block}.Fmt.Truncate"), truncate)?;
    td.set(&format!("{block}.Fmt.MemFmt"), fmt_code(s.ty.dtype)?)
}

/// FmtMode and Truncate of a tile DMA moving fp16 (every surface of both generations'
/// programs: Fmt word 0x1002031 with Interleave 1 and MemFmt 2).
const FP16_FORMAT: (u64, u64) = (1, 3);

/// FmtMode and Truncate of the source tile DMA reading memory of `dtype`: an 8-bit
/// memory format (u8 or i8) is read with FmtMode 0 and Truncate 0, fp16 with 1 and 3.
/// Evidence: one record, Apple's `cast_b_to_f16_1x1x64x1` (a bool input, element code 3,
/// cast to fp16 by a planar-engine identity with InFmt 0), whose source Fmt word is
/// 0x1000000 (Interleave 1, FmtMode 0, Truncate 0, MemFmt 0) where every fp16 source has
/// 0x1002031; its L2 SourceCfg.DMAFmt, which mirrors FmtMode, is 0 ([`encode_l2_fmt`]).
/// An 8-bit destination has no record; it keeps the fp16 fields.
fn read_format(dtype: DType) -> (u64, u64) {
    match dtype {
        DType::U8 | DType::I8 => (0, 0),
        DType::F16 | DType::F32 => FP16_FORMAT,
    }
}

/// L2.SourceCfg.DMAFmt of a loaded first source: the tile DMA's FmtMode (fields DMAFmt,
/// DMAInterleave, DMACmpVec and DMAOffsetCh of SourceCfg mirror FmtMode, Interleave,
/// CmpVec and OffsetCh of the tile-DMA Fmt word). The L2 encoder writes 1, FmtMode of
/// every fp16 source; an 8-bit source's is 0 (Apple's `cast_b_to_f16_1x1x64x1`:
/// SourceCfg 0x500132 where fp16 sources have 0x500172). Called after the L2 block.
pub fn encode_l2_fmt(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    if td.get("TileDMASrc.DMAConfig.En") != Some(1) {
        return Ok(());
    }
    match td.get("TileDMASrc.Fmt.FmtMode") {
        Some(mode) => td.set("L2.SourceCfg.DMAFmt", mode),
        None => Err(BackendError::Internal(format!("'{}': no TileDMASrc.Fmt.FmtMode field", t.layer))),
    }
}

/// Writes the source block: the first source's read, or, for a task whose source is
/// already in L2, only the idle cache hints.
pub fn encode_src(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    if let Some(Token::Reads(s)) = t.token {
        // Idle, but standing for reading the scratch surface (DependencyMode 1).
        set_idle_hints(td, "TileDMASrc.DMAConfig")?;
        td.set("TileDMASrc.DMAConfig.DependencyMode", 1)?;
        set_layout(td, "TileDMASrc", SRC_STRIDES, &s, false)?;
        td.set("TileDMASrc.Fmt.Interleave", 1)?;
        if gen.group_stride {
            set_units(td, "TileDMASrc.GroupStride.Stride", s.strides.batch, 64)?;
        }
    } else if t.residency == SourceResidency::Resident {
        set_idle_hints(td, "TileDMASrc.DMAConfig")?;
        td.set("TileDMASrc.Fmt.Interleave", 1)?;
    } else {
        td.set("TileDMASrc.DMAConfig.En", 1)?;
        let (hint, no_reuse) = match t.dram_reuse {
            DramReuse::Once => (2, 0xC),
            DramReuse::ReadAgain => (0xE, 0xE),
            DramReuse::LastRead => (0xC, 0xC),
            DramReuse::LastSlice => (4, 4),
        };
        // Waiting for the task before, which wrote the bytes it loads.
        td.set("TileDMASrc.DMAConfig.DependencyMode", u64::from(t.waits_for_writer))?;
        td.set("TileDMASrc.DMAConfig.CacheHint", hint)?;
        td.set("TileDMASrc.DMAConfig.CacheHintReuse", 0xE)?;
        td.set("TileDMASrc.DMAConfig.CacheHintNoReuse", no_reuse)?;
        // The first element's offset in its buffer (a constant's place in `__const`).
        set_units(td, "TileDMASrc.BaseAddr.Addr", src.offset, 64)?;
        set_layout(td, "TileDMASrc", SRC_STRIDES, src, true)?;
        td.set("TileDMASrc.Fmt.Interleave", u64::from(t.interleave.source))?;
        if gen.group_stride {
            set_units(td, "TileDMASrc.GroupStride.Stride", group_stride(t, src), 64)?;
        }
    }
    match t.sources.get(1) {
        Some(src2) => encode_src2(td, src2, gen)?,
        None => td.set_unnamed(0x170, SRC2_CFG_IDLE)?,
    }
    if t.engine.uses_ne() || gen.pe_idle_words {
        td.set_unnamed(0x1AC, WORD_1AC_NE)?;
    }
    Ok(())
}

/// Cache hints 2 / 2 / 2 of a DMA that does not run (the second source's idle word).
fn set_idle_hints(td: &mut TdImage, cfg: &str) -> Result<(), BackendError> {
    for hint in ["CacheHint", "CacheHintReuse", "CacheHintNoReuse"] {
        td.set(&format!("{cfg}.{hint}"), 2)?;
    }
    Ok(())
}

/// The GroupStride of a tile: one group's channels of a grouped convolution (the
/// hardware loops over the groups), otherwise the batch stride (the planar engine's
/// batch loop; the depth stride when N = 1).
fn group_stride(t: &Task, s: &Surface) -> u64 {
    match t.conv.groups {
        g if g > 1 && t.engine.is_conv() => s.strides.plane * u64::from(s.ty.c / g),
        _ => s.strides.batch,
    }
}

/// The second source lives in unnamed words 0x170 (config), 0x188..0x194 (base, row,
/// plane, depth strides, raw bytes at bit 6) and 0x1A8 (format).
fn encode_src2(td: &mut TdImage, s: &Surface, gen: &Generation) -> Result<(), BackendError> {
    td.set_unnamed(0x170, SRC2_CFG_USED)?;
    let mut strides =
        vec![(0x188, s.offset), (0x18C, s.strides.row), (0x190, s.strides.plane), (0x194, s.strides.depth)];
    if gen.group_stride {
        strides.push((0x198, s.strides.batch));
    }
    for (offset, bytes) in strides {
        super::set_unnamed_units(td, offset, bytes, 6, 26)?;
    }
    let fmt = fmt_code(s.ty.dtype)? as u32;
    td.set_unnamed(0x1A8, SRC2_FMT_BASE | (fmt << 12))
}

/// TileDMADst.DMAConfig, and its two unnamed bits (19, 24) that Apple sets on a writer
/// overwriting DRAM an earlier task of the program read (`hazard`).
const DST_DMA_CONFIG: u16 = 0x258;
const OVERWRITES_READ_BITS: u32 = (1 << 19) | (1 << 24);

/// Writes the destination block.
pub fn encode_dst(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let d = &t.dest;
    // A runtime kernel is written to be read back through the kernel DMA (CacheHint 0xF,
    // every copy of `matmul-runtime.md` §3a).
    let hint = if t.kernel_write.is_some() || t.interleave.dest > 1 { KERNEL_WRITE_HINT } else { 3 };
    td.set("TileDMADst.DMAConfig.CacheHint", hint)?;
    if let (Some(Token::Writes(s)), Some(_)) = (t.token, t.l2_result) {
        // Idle, but standing for writing the scratch surface: its layout is stated.
        return set_dst_layout(td, t, &s, gen);
    }
    if t.l2_result.is_some() {
        // The result stays in L2: the destination DMA is idle (0xc0, Interleave only).
        return td.set("TileDMADst.Fmt.Interleave", 1);
    }
    td.set("TileDMADst.DMAConfig.En", 1)?;
    td.set("TileDMADst.DMAConfig.L2BfrMode", u64::from(super::l2::result_aliased(t, gen)))?;
    if t.overwrites_read {
        td.set_unnamed_bits(DST_DMA_CONFIG, OVERWRITES_READ_BITS)?;
    }
    set_dst_layout(td, t, d, gen)
}

/// The destination's base, strides and format (written or only declared).
fn set_dst_layout(td: &mut TdImage, t: &Task, d: &Surface, gen: &Generation) -> Result<(), BackendError> {
    set_units(td, "TileDMADst.BaseAddr.Addr", d.offset, 64)?;
    set_layout(td, "TileDMADst", DST_STRIDES, d, false)?;
    if gen.group_stride {
        set_units(td, "TileDMADst.GroupStride.GroupStride", group_stride(t, d), 64)?;
    }
    let pad = u64::from(t.engine.uses_ne() || gen.pe_idle_words);
    td.set("TileDMADst.Fmt.ZeroPadLast", pad)?;
    td.set("TileDMADst.Fmt.ZeroPadFirst", pad)?;
    // A runtime kernel's B channels interleaved element by element (the kernel layout).
    td.set("TileDMADst.Fmt.Interleave", u64::from(t.kernel_write.unwrap_or(t.interleave.dest)))
}
