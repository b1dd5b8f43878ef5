//! Decoding of the data-movement blocks of a TD: tile-DMA sources and destination
//! (DRAM base, strides, format) and the L2 source and result regions.
//!
//! DRAM strides are 26-bit two's-complement fields at bit 6 counted in 64-byte units
//! (seed 001: "each direct-memory-access stride is a 26-bit signed field located at bit
//! 6"); base addresses are unsigned in the same units. The second source lives in unnamed
//! words as our encoder and Apple's sum.hwx write it: 0x188 base, 0x18c/0x190/0x194 row,
//! plane and depth strides (same encoding), 0x1a8 its format word. L2 addresses and
//! strides are 17-bit fields at bit 4 in 16-byte units; the second source's L2 region is
//! in unnamed words 0x1fc (base), 0x200 (channel stride), 0x204 (row stride).
//!
//! The first source may be off (TileDMASrc.DMAConfig.En 0) when L2.SourceCfg.SourceType is
//! 0: the task reads the L2 region an earlier task left (Apple's split convolution,
//! `docs/rationale/current-compiler/convolution.md` §2). The destination may be off
//! (DMAConfig.En 0, DstLoc 0, no WBase) when L2.ResultCfg.ResultType is 0: the result is
//! kept in L2 for the next task, laid out by the convolution-result words (Apple's
//! NE-producer / PE-consumer pairs, `current-compiler/elementwise.md` §1, §6). Words
//! 0x1fc..0x20c then describe the operand such a consumer reads from L2. A planar-engine
//! reduction's source region has depth slices (`td_reduce.rs`).

use super::error::SimError;
use super::memory::{Fmt, Region};
use super::reader::{sign_extend, Reader};
use super::td::{Common, Header, Operands, PadMode, Tile};
use super::td_reduce;

/// Bits of a DRAM base or stride word (26 bits at bit 6).
const DRAM_MASK: u32 = 0xFFFF_FFC0;
/// Bits of an L2 address or stride word (17 bits at bit 4).
const L2_MASK: u32 = 0x001F_FFF0;
/// Cache-hint bits of the second source's DMA configuration (word 0x170).
const SRC2_CACHE_HINTS: u32 = 0x0003_FFC0;

/// Tile-DMA fields that only carry cache hints.
const CACHE_HINTS: [&str; 3] = ["CacheHint", "CacheHintReuse", "CacheHintNoReuse"];

fn units64(r: &mut Reader, name: &str) -> Result<i64, SimError> {
    Ok(r.signed(name)? * 64)
}

fn base64(r: &mut Reader, name: &str) -> Result<i64, SimError> {
    Ok(i64::try_from(r.get(name)? * 64).unwrap_or(i64::MAX))
}

/// A raw unnamed DRAM stride word: the field at bit 6 sign-extended, in bytes.
fn raw_stride(r: &mut Reader, offset: u16) -> i64 {
    sign_extend(u64::from(r.word(offset, DRAM_MASK) >> 6), 26) * 64
}

/// How a tile DMA moves its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moves {
    /// The first source loaded from DRAM: fp16 with FmtMode 1 and Truncate 3, an 8-bit
    /// format (u8, i8) with FmtMode 0 and Truncate 0 (Apple's `cast_b_to_f16_1x1x64x1`,
    /// source Fmt word 0x1000000; the element is read as the integer it is and the engine
    /// converts it by InFmt).
    Load,
    /// A destination, or a source that is not loaded but states a format: FmtMode 1 and
    /// Truncate 3 (every such block of both generations' programs).
    Other,
}

/// The format fields both tile-DMA blocks share; MemFmt must equal the engine format.
fn tile_fmt(r: &mut Reader, block: &str, engine: Fmt, engine_field: &str, moves: Moves) -> Result<Fmt, SimError> {
    tile_fmt_interleaved(r, block, engine, engine_field, &[1], moves).map(|(f, _)| f)
}

/// [`tile_fmt`] with the interleaves `allowed` (a destination written as a runtime
/// kernel); returns the format and the interleave.
fn tile_fmt_interleaved(
    r: &mut Reader,
    block: &str,
    engine: Fmt,
    engine_field: &str,
    allowed: &[u64],
    moves: Moves,
) -> Result<(Fmt, usize), SimError> {
    let name = format!("{block}.Fmt.MemFmt");
    let code = r.get(&name)?;
    let fmt = match Fmt::from_code(code) {
        Some(f) if f == engine => f,
        Some(_) => {
            let reason = format!("differs from {engine_field}; conversion in the tile DMA is not modelled");
            return Err(r.err(name, code, reason));
        }
        None => return Err(r.err(name, code, "only formats 0 (u8), 1 (i8) and 2 (fp16) are modelled")),
    };
    let (mode, truncate) = match (moves, fmt) {
        (Moves::Load, Fmt::U8 | Fmt::I8) => (0, 0),
        _ => (1, 3),
    };
    r.fixed(&format!("{block}.Fmt.FmtMode"), &[mode])?;
    r.fixed(&format!("{block}.Fmt.Truncate"), &[truncate])?;
    r.fixed(&format!("{block}.Fmt.Shift"), &[0])?;
    r.fixed(&format!("{block}.Fmt.OffsetCh"), &[0])?;
    let interleave = usize::try_from(r.fixed(&format!("{block}.Fmt.Interleave"), allowed)?).unwrap_or(1);
    r.fixed(&format!("{block}.Fmt.CmpVec"), &[0])?;
    Ok((fmt, interleave))
}

/// The tile-DMA blocks as the simulator uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tiles {
    /// The sources; the first one's fields are idle when it is not loaded.
    pub sources: Vec<Tile>,
    /// TileDMASrc.DMAConfig.En: the first source is loaded from DRAM.
    pub loaded: bool,
    /// The destination; its fields are idle (but the format, OutFmt) when it is off.
    pub dest: Tile,
    /// TileDMADst.DMAConfig.En: the result is written to DRAM.
    pub stored: bool,
}

/// What a tile's GroupStride does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GroupUse {
    /// The planar engine's batch loop (or none): 0 or the depth stride.
    Batch,
    /// An NE convolution's groups: where the next group's channels start, any stride but 0.
    ConvGroups,
    /// A reduction's groups (NumGroups > 1: the rows of its view, `reduce_sum_axes_1`):
    /// where the next group's values are, any stride but 0.
    ReduceGroups,
    /// Never applied (a reduction that runs once): any value.
    Unused,
}

/// The tile-DMA sources and destination.
pub fn tiles(r: &mut Reader, h: &Header, c: &Common, pe: bool) -> Result<Tiles, SimError> {
    // An NE task with NumGroups > 1 runs its convolution groups one after the other, each
    // one GroupStride further in the source and the destination. A reduction's view keeps
    // the tensor's batch stride there while its depth stride is the view's (Apple's
    // `reduce_probe_mean_ax1_2_3_1x32x4x4`: depth 0x40, group 0x2000); with NumGroups 1
    // it is never applied. A reduction with NumGroups > 1 writes each group's results one
    // GroupStride further (`reduce_sum_axes_1`: 0x40 beside a depth stride of 0x200).
    let group_use = match (pe, c.groups) {
        (false, g) if g > 1 => GroupUse::ConvGroups,
        (true, 1) if c.reduce => GroupUse::Unused,
        (true, _) if c.reduce => GroupUse::ReduceGroups,
        _ => GroupUse::Batch,
    };
    let (first, loaded) = source1(r, h, c, group_use)?;
    let mut sources = vec![first];
    if let Some(bar) = h.sources[1] {
        sources.push(source2(r, bar, c.in_fmt[1])?);
    }
    // 0x100 whenever the NE runs; the current compiler writes it in planar-engine tasks too.
    let allowed: &[u32] = if pe { &[0, 0x100] } else { &[0x100] };
    r.fixed_word(0x1AC, u32::MAX, allowed, "engine-path word")?;
    let (dest, stored) = dest(r, h, c, group_use)?;
    Ok(Tiles { sources, loaded, dest, stored })
}

/// The idle fields of a source that is not loaded: no address, no stride, and either the
/// format word Apple writes then (0x1000000: Interleave 1 only) or the loaded one. With
/// an SPC token the surface's layout is stated (any address and strides; Apple's softmax
/// over C: strides 0x400, the loaded format); nothing is read from it.
fn idle_source(r: &mut Reader, c: &Common, token: bool) -> Result<Tile, SimError> {
    for name in [
        "TileDMASrc.BaseAddr.Addr",
        "TileDMASrc.RowStride.Stride",
        "TileDMASrc.PlaneStride.PlaneStride",
        "TileDMASrc.DepthStride.Stride",
        "TileDMASrc.GroupStride.Stride",
    ] {
        let v = r.get(name)?;
        if v != 0 && !token {
            return Err(r.err(name, v, "a source that is not loaded (TileDMASrc.DMAConfig.En 0) is modelled with 0"));
        }
    }
    if r.get("TileDMASrc.Fmt.FmtMode")? == 0 {
        for (f, v) in [("Truncate", 0), ("Shift", 0), ("MemFmt", 0), ("OffsetCh", 0), ("Interleave", 1), ("CmpVec", 0)]
        {
            r.fixed(&format!("TileDMASrc.Fmt.{f}"), &[v])?;
        }
    } else {
        tile_fmt(r, "TileDMASrc", c.in_fmt[0], "Common.ChCfg.InFmt", Moves::Other)?;
    }
    Ok(Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: c.in_fmt[0], group: 0, interleave: 1 })
}

fn source1(r: &mut Reader, h: &Header, c: &Common, group_use: GroupUse) -> Result<(Tile, bool), SimError> {
    let loaded = r.get("TileDMASrc.DMAConfig.En")? == 1;
    if h.spc && loaded {
        let reason = "SPC (standing for reading a memory surface) is modelled on a task whose tile-DMA source is off";
        return Err(r.err("aneTD.Header[6].SPC", 1, reason));
    }
    // A source that is not loaded names a BAR only as the token of SPC.
    if (loaded || h.spc) != h.sources[0].is_some() {
        let reason = "RBE0 (the source's BAR) is set exactly when TileDMASrc.DMAConfig.En or SPC is";
        return Err(r.err("aneTD.Header[8].RBE0", u64::from(h.sources[0].is_some()), reason));
    }
    if loaded != h.src_dram {
        let reason = "SrcLoc (the source is in DRAM) is set exactly when TileDMASrc.DMAConfig.En is";
        return Err(r.err("aneTD.Header[6].SrcLoc", u64::from(h.src_dram), reason));
    }
    r.fixed("TileDMASrc.DMAConfig.CrH", &[0])?;
    // DependencyMode 1: the idle source of an SPC token waits for the surface's writer; a
    // loaded source may wait for the task before, which wrote what it loads (Apple's
    // regime-B matmul: the first slice after the x^T writer). Tasks run in order here.
    r.fixed(
        "TileDMASrc.DMAConfig.DependencyMode",
        if h.spc {
            &[1]
        } else if loaded {
            &[0, 1]
        } else {
            &[0]
        },
    )?;
    for hint in CACHE_HINTS {
        r.ignore(&format!("TileDMASrc.DMAConfig.{hint}"))?;
    }
    r.word(0x170, SRC2_CACHE_HINTS);
    for i in 0..4 {
        r.fixed(&format!("TileDMASrc.PixelOffset[{i}].Offset"), &[0])?;
    }
    if !loaded {
        return Ok((idle_source(r, c, h.spc)?, false));
    }
    // A source read as a surface of B channels interleaved element by element (a
    // regime-B matmul's x^T, `matmul.md` §1): the destination's layout, read back.
    let (fmt, interleave) =
        tile_fmt_interleaved(r, "TileDMASrc", c.in_fmt[0], "Common.ChCfg.InFmt", &KERNEL_INTERLEAVES, Moves::Load)?;
    let t = Tile {
        bar: h.sources[0].unwrap_or(0),
        base: base64(r, "TileDMASrc.BaseAddr.Addr")?,
        row: units64(r, "TileDMASrc.RowStride.Stride")?,
        plane: units64(r, "TileDMASrc.PlaneStride.PlaneStride")?,
        depth: units64(r, "TileDMASrc.DepthStride.Stride")?,
        fmt,
        group: units64(r, "TileDMASrc.GroupStride.Stride")?,
        interleave,
    };
    group_stride(r, "TileDMASrc.GroupStride.Stride", &t, group_use)?;
    Ok((t, true))
}

fn source2(r: &mut Reader, bar: u8, fmt: Fmt) -> Result<Tile, SimError> {
    let code = match fmt {
        Fmt::U8 => 0,
        Fmt::I8 => 1,
        Fmt::F16 => 2,
    };
    let meaning = "second-source format word (Truncate 3, MemFmt = ChCfg bits 3:2)";
    r.fixed_word(0x1A8, u32::MAX, &[0x30 | (code << 12)], meaning)?;
    let t = Tile {
        bar,
        base: i64::from(r.word(0x188, DRAM_MASK)),
        row: raw_stride(r, 0x18C),
        plane: raw_stride(r, 0x190),
        depth: raw_stride(r, 0x194),
        fmt,
        group: raw_stride(r, 0x198),
        interleave: 1,
    };
    group_stride(r, "word 0x198 (second-source group stride)", &t, GroupUse::Batch)?;
    Ok(t)
}

/// TileDMADst.DMAConfig and its two unnamed ordering bits.
const DST_DMA_CONFIG: u16 = 0x258;
const OVERWRITES_READ_BITS: u32 = (1 << 19) | (1 << 24);

fn dest(r: &mut Reader, h: &Header, c: &Common, group_use: GroupUse) -> Result<(Tile, bool), SimError> {
    let on = r.get("TileDMADst.DMAConfig.En")? == 1;
    if h.dpc && on {
        let reason = "DPC (standing for writing a memory surface) is modelled on a task whose destination is off";
        return Err(r.err("aneTD.Header[6].DPC", 1, reason));
    }
    // A destination that is off names a BAR only as the token of DPC.
    if (on || h.dpc) != h.dest.is_some() {
        let reason = "WBE (the result's BAR) is set exactly when TileDMADst.DMAConfig.En or DPC is";
        return Err(r.err("aneTD.Header[8].WBE", u64::from(h.dest.is_some()), reason));
    }
    if on != h.dst_dram {
        let reason = "DstLoc (the result goes to DRAM) is set exactly when TileDMADst.DMAConfig.En is";
        return Err(r.err("aneTD.Header[6].DstLoc", u64::from(h.dst_dram), reason));
    }
    r.fixed("TileDMADst.DMAConfig.CrH", &[0])?;
    r.fixed("TileDMADst.DMAConfig.BypassEOW", &[0])?;
    r.ignore("TileDMADst.DMAConfig.CacheHint")?;
    // Bits 19 and 24, set together by a writer that overwrites DRAM an earlier task read
    // (the backend's `hazard`): ordering, which running the tasks in order already gives.
    let meaning = "TileDMADst.DMAConfig bits 19 and 24 (a write after earlier reads)";
    r.fixed_word(DST_DMA_CONFIG, OVERWRITES_READ_BITS, &[0, if on { OVERWRITES_READ_BITS } else { 0 }], meaning)?;
    if !on {
        return Ok((idle_dest(r, c, h.dpc)?, false));
    }
    r.fixed("TileDMADst.Fmt.CmpVecFill", &[0])?;
    // Whether the row ends are zero-filled touches no element the program reads back.
    r.ignore("TileDMADst.Fmt.ZeroPadLast")?;
    r.ignore("TileDMADst.Fmt.ZeroPadFirst")?;
    let (fmt, interleave) =
        tile_fmt_interleaved(r, "TileDMADst", c.out_fmt, "Common.ChCfg.OutFmt", &KERNEL_INTERLEAVES, Moves::Other)?;
    let t = Tile {
        bar: h.dest.unwrap_or(0),
        base: base64(r, "TileDMADst.BaseAddr.Addr")?,
        row: units64(r, "TileDMADst.RowStride.RowStride")?,
        plane: units64(r, "TileDMADst.PlaneStride.PlaneStride")?,
        depth: units64(r, "TileDMADst.DepthStride.DepthStride")?,
        fmt,
        group: units64(r, "TileDMADst.GroupStride.GroupStride")?,
        interleave,
    };
    group_stride(r, "TileDMADst.GroupStride.GroupStride", &t, group_use)?;
    Ok((t, true))
}

/// The idle destination of a task that keeps its result in L2 (Apple: 0xc0, 0, 0, 0, 0,
/// 0, 0x1000000): no address, no stride, the format word Interleave 1 only. The result's
/// format is OutFmt. With a DPC token the surface's layout is stated (any address and
/// strides, the format of a destination that is on); nothing is written to it.
fn idle_dest(r: &mut Reader, c: &Common, token: bool) -> Result<Tile, SimError> {
    for name in [
        "TileDMADst.BaseAddr.Addr",
        "TileDMADst.RowStride.RowStride",
        "TileDMADst.PlaneStride.PlaneStride",
        "TileDMADst.DepthStride.DepthStride",
        "TileDMADst.GroupStride.GroupStride",
    ] {
        let v = r.get(name)?;
        if v != 0 && !token {
            return Err(r.err(name, v, "a destination that is off (TileDMADst.DMAConfig.En 0) is modelled with 0"));
        }
    }
    if token {
        r.fixed("TileDMADst.Fmt.CmpVecFill", &[0])?;
        r.ignore("TileDMADst.Fmt.ZeroPadLast")?;
        r.ignore("TileDMADst.Fmt.ZeroPadFirst")?;
        tile_fmt(r, "TileDMADst", c.out_fmt, "Common.ChCfg.OutFmt", Moves::Other)?;
    } else {
        let meaning = "TileDMADst.Fmt of a destination that is off (Interleave 1 only)";
        r.fixed_word(0x270, u32::MAX, &[0x0100_0000], meaning)?;
    }
    Ok(Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: c.out_fmt, group: 0, interleave: 1 })
}

/// A group stride: the stride between the groups (batch entries) the planar engine loops
/// over. v4.2.1 writes 0; the current compiler the batch stride, which follows the depth
/// slices (one depth slice per batch entry is what is modelled). In a convolution's group
/// loop it is where the next group's channels start: any stride but 0.
fn group_stride(r: &Reader, field: &str, t: &Tile, group_use: GroupUse) -> Result<(), SimError> {
    if group_use == GroupUse::Unused {
        return Ok(());
    }
    if matches!(group_use, GroupUse::ConvGroups | GroupUse::ReduceGroups) {
        if t.group == 0 {
            let reason = match group_use {
                GroupUse::ConvGroups => {
                    "NumGroups > 1 on the NE reads and writes each group one GroupStride further; \
                     0 (every group on the same channels) is not modelled"
                }
                _ => {
                    "a reduction with NumGroups > 1 reads and writes each group one GroupStride further; \
                     0 (every group on the same values) is not modelled"
                }
            };
            return Err(r.err(field, 0, reason));
        }
        return Ok(());
    }
    if t.group == 0 || t.group == t.depth {
        return Ok(());
    }
    let reason = format!("only 0 or the depth stride ({:#x}) is modelled", t.depth);
    Err(r.err(field, t.group as u64, reason))
}

/// The L2 block as the simulator uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L2Layout {
    /// One region per tile-DMA source.
    pub sources: Vec<Region>,
    /// SourceType 0: the first source is read from L2 as it is, not loaded.
    pub resident: bool,
    /// The group step of a reduction's source read in place (word 0x1f8; 0 otherwise).
    pub source_step: u64,
    /// SourceType 1: the first source is loaded and kept for a later task.
    pub keep_source: bool,
    /// Words 0x1fc (base), 0x200 (channel stride), 0x204 (row stride) of an operand read
    /// from L2 (Common.Cfg 0x31 / 0x41).
    pub operand: Option<Region>,
    /// The result region (strides only meaningful for `result_mode` 0).
    pub result: Region,
    /// Word 0x220 (the result's plane size, L2BfrMode 0; a reduction's group step).
    pub result_plane: u64,
    /// Word 0x224 (L2BfrMode 0).
    pub result_plane2: u64,
    /// L2.ResultCfg.ResultType: 0 kept in L2, 1 a reduction's packed row to DRAM, 2 to
    /// DRAM.
    pub result_type: u64,
    /// ResultType 0: the result is kept in L2 (not written to DRAM).
    pub kept: bool,
    /// L2.ResultCfg.L2BfrMode.
    pub result_mode: u64,
    /// TileDMADst.DMAConfig.L2BfrMode.
    pub dst_mode: u64,
    /// L2.ResultCfg.DMAInterleave (B of a result written as a runtime kernel, else 1).
    pub result_interleave: u64,
    /// L2.SourceCfg.DMAInterleave (B of a loaded source read interleaved, else 1).
    pub source_interleave: u64,
    /// L2Cfg.PaddingMode.
    pub padding: PadMode,
}

fn l2_units(r: &mut Reader, name: &str) -> Result<u64, SimError> {
    Ok(r.get(name)? * 16)
}

/// The four alias bits of SourceCfg and ResultCfg.
const ALIAS: [&str; 4] = ["AliasConvSrc", "AliasConvRslt", "AliasPlanarSrc", "AliasPlanarRslt"];

/// Which alias bits (ConvSrc, ConvRslt, PlanarSrc, PlanarRslt) a configuration may hold:
/// all set; all clear (a task after another in L2); the convolution pair only, or the
/// planar result only (a planar-engine task loading its source and reading an operand
/// from L2: SourceCfg 0x172, and 0x400142 after a planar-engine producer).
const ALL_SET: [u64; 4] = [1, 1, 1, 1];
const ALL_CLEAR: [u64; 4] = [0, 0, 0, 0];
const CONV_ONLY: [u64; 4] = [1, 1, 0, 0];
const PLANAR_RESULT_ONLY: [u64; 4] = [0, 0, 0, 1];
/// The convolution pair with one planar alias (Apple's runtime matmul after its first
/// task: 0x100172, 0x400172, 0x40017a; `matmul-runtime.md` §6, no value depends on them).
const CONV_PLANAR_SRC: [u64; 4] = [1, 1, 1, 0];
const CONV_PLANAR_RESULT: [u64; 4] = [1, 1, 0, 1];
/// What a loaded source's and a result's configuration may hold (a loaded source inside
/// an L2 section after a task of its engine: none, `header-common-l2.md` §7).
const LOADED: [[u64; 4]; 5] = [ALL_SET, ALL_CLEAR, CONV_ONLY, CONV_PLANAR_SRC, CONV_PLANAR_RESULT];
const RESULT: [[u64; 4]; 5] = [ALL_SET, ALL_CLEAR, CONV_ONLY, CONV_PLANAR_SRC, CONV_PLANAR_RESULT];

/// The alias bits a configuration may hold: one of a list of patterns, or any (the link
/// bits of a source read in place, which say which earlier task wrote it).
#[derive(Debug, Clone, Copy)]
enum Aliases {
    OneOf(&'static [[u64; 4]]),
    Any,
}

/// The configuration bits SourceCfg and ResultCfg share: the four alias bits as
/// `aliases` allows (they change no value modelled), DMAFmt one of `dma_fmt`,
/// DMAInterleave 1, no DMACmpVec or DMAOffsetCh.
fn l2_cfg(r: &mut Reader, cfg: &str, aliases: Aliases, dma_fmt: &[u64], interleaves: &[u64]) -> Result<u64, SimError> {
    let mut found = [0; 4];
    for (v, f) in found.iter_mut().zip(ALIAS) {
        *v = r.get(&format!("L2.{cfg}.{f}"))?;
    }
    if let Aliases::OneOf(allowed) = aliases {
        if !allowed.contains(&found) {
            let shown: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
            let bits = found.iter().enumerate().fold(0, |m, (i, &b)| m | (b << i));
            let reason = format!(
                "the alias bits [ConvSrc, ConvRslt, PlanarSrc, PlanarRslt] are {found:?}; {} is modelled here",
                shown.join(" or ")
            );
            return Err(r.err(format!("L2.{cfg} alias bits"), bits, reason));
        }
    }
    r.fixed(&format!("L2.{cfg}.DMAFmt"), dma_fmt)?;
    for (f, v) in [("DMACmpVec", 0), ("DMAOffsetCh", 0)] {
        r.fixed(&format!("L2.{cfg}.{f}"), &[v])?;
    }
    r.fixed(&format!("L2.{cfg}.DMAInterleave"), interleaves)
}

/// The interleaves a destination written as a runtime kernel may use: B = 1, 2, 4 or 8
/// channels element by element (Apple's copies: 2, 4, 8).
pub const KERNEL_INTERLEAVES: [u64; 4] = [1, 2, 4, 8];

/// Decodes the L2 block (and the destination's L2BfrMode).
pub fn l2(r: &mut Reader, c: &Common) -> Result<L2Layout, SimError> {
    let operands = c.operands;
    r.fixed("L2.L2Cfg.InputReLU", &[0])?;
    // A reduction has no window to pad: Apple writes 1 for max and min, 0 for sums.
    let modes: &[u64] = if c.reduce { &[0, 1] } else { &[0, 1, 3] };
    let padding = match r.fixed("L2.L2Cfg.PaddingMode", modes)? {
        3 => PadMode::Skip,
        _ => PadMode::Zero,
    };
    // SourceType 2 loads the source, 1 loads it and keeps it for a later task, 0 reads it
    // from L2 as an earlier task left it (Apple's 0x100: no alias bits, DMAFmt 0). The
    // alias bits and Dependent of a source read in place link it to the task that wrote
    // it (Apple's softmax: 0x120, 0x400100, 0x108, 0x400104); they change no value.
    let source_type = r.fixed("L2.SourceCfg.SourceType", &[0, 1, 2])?;
    let resident = source_type == 0;
    let from_l2 = matches!(operands, Operands::TwoL2 | Operands::ThreeL2);
    let aliases = match (resident, from_l2) {
        (true, _) => Aliases::Any,
        (false, true) => Aliases::OneOf(&[CONV_ONLY, PLANAR_RESULT_ONLY]),
        (false, false) => Aliases::OneOf(&LOADED),
    };
    // DMAFmt mirrors the tile DMA's FmtMode: 1 for a loaded fp16 source, 0 for a loaded
    // 8-bit one (MemFmt equals InFmt; Apple's `cast_b_to_f16_1x1x64x1`: SourceCfg 0x500132).
    let eight_bit = matches!(c.in_fmt[0], Fmt::U8 | Fmt::I8);
    let dma_fmt: &[u64] = match (resident, eight_bit) {
        (true, _) => &[0, 1],
        (false, true) => &[0],
        (false, false) => &[1],
    };
    // A loaded source may interleave B channels (checked against the tile DMA's
    // Fmt.Interleave in `td::decode`).
    let interleaves: &[u64] = if resident { &[1] } else { &KERNEL_INTERLEAVES };
    let source_interleave = l2_cfg(r, "SourceCfg", aliases, dma_fmt, interleaves)?;
    if resident {
        r.ignore("L2.SourceCfg.Dependent")?;
    } else {
        r.fixed("L2.SourceCfg.Dependent", &[0])?;
    }
    let two_dram = operands == Operands::TwoDram;
    let flag = if two_dram { 1 << 24 } else { 0 };
    r.fixed_word(0x1E4, 1 << 24, &[flag], "SourceCfg bit 24 (a second source is read through the tile DMA)")?;
    let first = Region {
        base: l2_units(r, "L2.SourceBase.Addr")?,
        channel: l2_units(r, "L2.SourceChannelStride.Stride")?,
        row: l2_units(r, "L2.SourceRowStride.Stride")?,
        depth: 0,
    };
    // 0x1f4/0x1f8 (and 0x208/0x20c, 0x220/0x224 below) hold a region's plane size; with
    // depth 1 nothing is addressed through them. A reduction's view may have depth
    // slices: 0x1f4 is then the depth stride.
    let slice = u64::from(r.word(0x1F4, L2_MASK));
    let all = u64::from(r.word(0x1F8, L2_MASK));
    let (first, source_step) = match (c.reduce, resident) {
        (true, false) => (td_reduce::source_region(r, c, first, slice, all)?, 0),
        (true, true) => td_reduce::resident_region(r, c, first, slice, all)?,
        (false, _) => (first, 0),
    };
    let mut sources = vec![first];
    let raw = |r: &mut Reader, o: u16| u64::from(r.word(o, L2_MASK));
    let mut operand = None;
    if two_dram || from_l2 {
        let second = Region { base: raw(r, 0x1FC), channel: raw(r, 0x200), row: raw(r, 0x204), depth: 0 };
        let plane = raw(r, 0x208);
        if two_dram {
            r.word(0x20C, L2_MASK);
            sources.push(second);
        } else {
            // Word 0x208 of an operand read from L2: its plane, which is its depth stride
            // when the view has depth slices (the layer norms' variance reads x's slices
            // 0x10 apart).
            r.fixed_word(0x20C, u32::MAX, &[0], "plane2 word of an operand read from L2")?;
            operand = Some(Region { depth: plane, ..second });
        }
    }
    let res = l2_result(r, c.reduce)?;
    let dst_mode = r.get("TileDMADst.DMAConfig.L2BfrMode")?;
    Ok(L2Layout {
        sources,
        resident,
        source_step,
        keep_source: source_type == 1,
        operand,
        result: res.region,
        result_plane: res.plane,
        result_plane2: res.plane2,
        result_type: res.result_type,
        kept: res.result_type == 0,
        result_mode: res.mode,
        dst_mode,
        result_interleave: res.interleave,
        source_interleave,
        padding,
    })
}

/// The result words of the L2 block.
struct ResultWords {
    region: Region,
    plane: u64,
    plane2: u64,
    result_type: u64,
    mode: u64,
    interleave: u64,
}

/// The result region, words 0x220 and 0x224, ResultType and L2BfrMode. ResultType 1 (a
/// reduction's packed row written to DRAM) only on a reduction (`reduce`), which may also
/// keep a second plane word (0x224) with a result kept in L2.
fn l2_result(r: &mut Reader, reduce: bool) -> Result<ResultWords, SimError> {
    // Apple's current compiler writes 0x50017a (alias bits set), 0x14a (clear), for a
    // result kept in L2 0x500170 or 0x140, for a reduction's packed row 0x141 or 0x500171.
    // A result written as a runtime kernel interleaves B channels (DMAInterleave = B,
    // checked against the destination's Fmt.Interleave in `td::decode`).
    let interleave = l2_cfg(r, "ResultCfg", Aliases::OneOf(&RESULT), &[1], &KERNEL_INTERLEAVES)?;
    let types: &[u64] = if reduce { &[0, 1, 2] } else { &[0, 2] };
    let result_type = r.fixed("L2.ResultCfg.ResultType", types)?;
    let kept = result_type == 0;
    let mode = r.fixed("L2.ResultCfg.L2BfrMode", &[0, 1])?;
    let base = l2_units(r, "L2.ResultBase.Addr")?;
    let strides = ["L2.ConvResultChannelStride.Stride", "L2.ConvResultRowStride.Stride"];
    if mode == 1 {
        if kept {
            let reason =
                "a result kept in L2 (ResultType 0) is modelled with L2BfrMode 0 (laid out by the result words)";
            return Err(r.err("L2.ResultCfg.L2BfrMode", 1, reason));
        }
        // The layout follows from the task (see `td::assemble`); no result strides.
        for s in strides {
            r.fixed(s, &[0])?;
        }
        for w in [0x220, 0x224] {
            r.fixed_word(w, u32::MAX, &[0], "convolution-result plane word with L2BfrMode 1")?;
        }
        let region = Region { base, channel: 0, row: 0, depth: 0 };
        return Ok(ResultWords { region, plane: 0, plane2: 0, result_type, mode, interleave });
    }
    let channel = l2_units(r, strides[0])?;
    let row = l2_units(r, strides[1])?;
    let plane = u64::from(r.word(0x220, L2_MASK));
    // A kept result's second plane word is 0, or (a reduction's) checked with its layout.
    let plane2 = if kept && !reduce {
        u64::from(r.fixed_word(0x224, u32::MAX, &[0], "second result plane word of a result kept in L2")?)
    } else {
        u64::from(r.word(0x224, L2_MASK))
    };
    if interleave != 1 {
        return Err(r.err(
            "L2.ResultCfg.DMAInterleave",
            interleave,
            "an interleaved result is modelled with L2BfrMode 1",
        ));
    }
    Ok(ResultWords { region: Region { base, channel, row, depth: 0 }, plane, plane2, result_type, mode, interleave })
}
