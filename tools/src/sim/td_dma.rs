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
//! 0x1fc..0x20c then describe the operand such a consumer reads from L2.

use super::error::SimError;
use super::memory::{Fmt, Region};
use super::reader::{sign_extend, Reader};
use super::td::{Common, Header, Operands, PadMode, Tile};

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

/// The format fields both tile-DMA blocks share; MemFmt must equal the engine format.
fn tile_fmt(r: &mut Reader, block: &str, engine: Fmt, engine_field: &str) -> Result<Fmt, SimError> {
    r.fixed(&format!("{block}.Fmt.FmtMode"), &[1])?;
    r.fixed(&format!("{block}.Fmt.Truncate"), &[3])?;
    r.fixed(&format!("{block}.Fmt.Shift"), &[0])?;
    r.fixed(&format!("{block}.Fmt.OffsetCh"), &[0])?;
    r.fixed(&format!("{block}.Fmt.Interleave"), &[1])?;
    r.fixed(&format!("{block}.Fmt.CmpVec"), &[0])?;
    let name = format!("{block}.Fmt.MemFmt");
    let code = r.get(&name)?;
    match Fmt::from_code(code) {
        Some(f) if f == engine => Ok(f),
        Some(_) => {
            Err(r.err(name, code, format!("differs from {engine_field}; conversion in the tile DMA is not modelled")))
        }
        None => Err(r.err(name, code, "only formats 0 (u8), 1 (i8) and 2 (fp16) are modelled")),
    }
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

/// The tile-DMA sources and destination.
pub fn tiles(r: &mut Reader, h: &Header, c: &Common, pe: bool) -> Result<Tiles, SimError> {
    // An NE task with NumGroups > 1 runs its convolution groups one after the other, each
    // one GroupStride further in the source and the destination.
    let group_loop = !pe && c.groups > 1;
    let (first, loaded) = source1(r, h, c, group_loop)?;
    let mut sources = vec![first];
    if let Some(bar) = h.sources[1] {
        sources.push(source2(r, bar, c.in_fmt[1])?);
    }
    // 0x100 whenever the NE runs; the current compiler writes it in planar-engine tasks too.
    let allowed: &[u32] = if pe { &[0, 0x100] } else { &[0x100] };
    r.fixed_word(0x1AC, u32::MAX, allowed, "engine-path word")?;
    let (dest, stored) = dest(r, h, c, group_loop)?;
    Ok(Tiles { sources, loaded, dest, stored })
}

/// The idle fields of a source that is not loaded: no address, no stride, and either the
/// format word Apple writes then (0x1000000: Interleave 1 only) or the loaded one.
fn idle_source(r: &mut Reader, c: &Common) -> Result<Tile, SimError> {
    for name in [
        "TileDMASrc.BaseAddr.Addr",
        "TileDMASrc.RowStride.Stride",
        "TileDMASrc.PlaneStride.PlaneStride",
        "TileDMASrc.DepthStride.Stride",
        "TileDMASrc.GroupStride.Stride",
    ] {
        let v = r.get(name)?;
        if v != 0 {
            return Err(r.err(name, v, "a source that is not loaded (TileDMASrc.DMAConfig.En 0) is modelled with 0"));
        }
    }
    if r.get("TileDMASrc.Fmt.FmtMode")? == 0 {
        for (f, v) in [("Truncate", 0), ("Shift", 0), ("MemFmt", 0), ("OffsetCh", 0), ("Interleave", 1), ("CmpVec", 0)]
        {
            r.fixed(&format!("TileDMASrc.Fmt.{f}"), &[v])?;
        }
    } else {
        tile_fmt(r, "TileDMASrc", c.in_fmt[0], "Common.ChCfg.InFmt")?;
    }
    Ok(Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: c.in_fmt[0], group: 0 })
}

fn source1(r: &mut Reader, h: &Header, c: &Common, group_loop: bool) -> Result<(Tile, bool), SimError> {
    let loaded = r.get("TileDMASrc.DMAConfig.En")? == 1;
    if loaded != h.sources[0].is_some() {
        let reason = "RBE0 (the source's BAR) is set exactly when TileDMASrc.DMAConfig.En is";
        return Err(r.err("aneTD.Header[8].RBE0", u64::from(h.sources[0].is_some()), reason));
    }
    if loaded != h.src_dram {
        let reason = "SrcLoc (the source is in DRAM) is set exactly when TileDMASrc.DMAConfig.En is";
        return Err(r.err("aneTD.Header[6].SrcLoc", u64::from(h.src_dram), reason));
    }
    r.fixed("TileDMASrc.DMAConfig.CrH", &[0])?;
    r.fixed("TileDMASrc.DMAConfig.DependencyMode", &[0])?;
    for hint in CACHE_HINTS {
        r.ignore(&format!("TileDMASrc.DMAConfig.{hint}"))?;
    }
    r.word(0x170, SRC2_CACHE_HINTS);
    for i in 0..4 {
        r.fixed(&format!("TileDMASrc.PixelOffset[{i}].Offset"), &[0])?;
    }
    if !loaded {
        return Ok((idle_source(r, c)?, false));
    }
    let t = Tile {
        bar: h.sources[0].unwrap_or(0),
        base: base64(r, "TileDMASrc.BaseAddr.Addr")?,
        row: units64(r, "TileDMASrc.RowStride.Stride")?,
        plane: units64(r, "TileDMASrc.PlaneStride.PlaneStride")?,
        depth: units64(r, "TileDMASrc.DepthStride.Stride")?,
        fmt: tile_fmt(r, "TileDMASrc", c.in_fmt[0], "Common.ChCfg.InFmt")?,
        group: units64(r, "TileDMASrc.GroupStride.Stride")?,
    };
    group_stride(r, "TileDMASrc.GroupStride.Stride", &t, group_loop)?;
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
    };
    group_stride(r, "word 0x198 (second-source group stride)", &t, false)?;
    Ok(t)
}

fn dest(r: &mut Reader, h: &Header, c: &Common, group_loop: bool) -> Result<(Tile, bool), SimError> {
    let on = r.get("TileDMADst.DMAConfig.En")? == 1;
    if on != h.dest.is_some() {
        let reason = "WBE (the result's BAR) is set exactly when TileDMADst.DMAConfig.En is";
        return Err(r.err("aneTD.Header[8].WBE", u64::from(h.dest.is_some()), reason));
    }
    if on != h.dst_dram {
        let reason = "DstLoc (the result goes to DRAM) is set exactly when TileDMADst.DMAConfig.En is";
        return Err(r.err("aneTD.Header[6].DstLoc", u64::from(h.dst_dram), reason));
    }
    r.fixed("TileDMADst.DMAConfig.CrH", &[0])?;
    r.fixed("TileDMADst.DMAConfig.BypassEOW", &[0])?;
    r.ignore("TileDMADst.DMAConfig.CacheHint")?;
    if !on {
        return Ok((idle_dest(r, c)?, false));
    }
    r.fixed("TileDMADst.Fmt.CmpVecFill", &[0])?;
    // Whether the row ends are zero-filled touches no element the program reads back.
    r.ignore("TileDMADst.Fmt.ZeroPadLast")?;
    r.ignore("TileDMADst.Fmt.ZeroPadFirst")?;
    let t = Tile {
        bar: h.dest.unwrap_or(0),
        base: base64(r, "TileDMADst.BaseAddr.Addr")?,
        row: units64(r, "TileDMADst.RowStride.RowStride")?,
        plane: units64(r, "TileDMADst.PlaneStride.PlaneStride")?,
        depth: units64(r, "TileDMADst.DepthStride.DepthStride")?,
        fmt: tile_fmt(r, "TileDMADst", c.out_fmt, "Common.ChCfg.OutFmt")?,
        group: units64(r, "TileDMADst.GroupStride.GroupStride")?,
    };
    group_stride(r, "TileDMADst.GroupStride.GroupStride", &t, group_loop)?;
    Ok((t, true))
}

/// The idle destination of a task that keeps its result in L2 (Apple: 0xc0, 0, 0, 0, 0,
/// 0, 0x1000000): no address, no stride, the format word Interleave 1 only. The result's
/// format is OutFmt.
fn idle_dest(r: &mut Reader, c: &Common) -> Result<Tile, SimError> {
    for name in [
        "TileDMADst.BaseAddr.Addr",
        "TileDMADst.RowStride.RowStride",
        "TileDMADst.PlaneStride.PlaneStride",
        "TileDMADst.DepthStride.DepthStride",
        "TileDMADst.GroupStride.GroupStride",
    ] {
        let v = r.get(name)?;
        if v != 0 {
            return Err(r.err(name, v, "a destination that is off (TileDMADst.DMAConfig.En 0) is modelled with 0"));
        }
    }
    let meaning = "TileDMADst.Fmt of a destination that is off (Interleave 1 only)";
    r.fixed_word(0x270, u32::MAX, &[0x0100_0000], meaning)?;
    Ok(Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: c.out_fmt, group: 0 })
}

/// A group stride: the stride between the groups (batch entries) the planar engine loops
/// over. v4.2.1 writes 0; the current compiler the batch stride, which follows the depth
/// slices (one depth slice per batch entry is what is modelled). In a convolution's group
/// loop (`group_loop`) it is where the next group's channels start: any stride but 0.
fn group_stride(r: &Reader, field: &str, t: &Tile, group_loop: bool) -> Result<(), SimError> {
    if group_loop {
        if t.group == 0 {
            let reason = "NumGroups > 1 on the NE reads and writes each group one GroupStride further; \
                          0 (every group on the same channels) is not modelled";
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
    /// SourceType 1: the first source is loaded and kept for a later task.
    pub keep_source: bool,
    /// Words 0x1fc (base), 0x200 (channel stride), 0x204 (row stride) of an operand read
    /// from L2 (Common.Cfg 0x31 / 0x41).
    pub operand: Option<Region>,
    /// The result region (strides only meaningful for `result_mode` 0).
    pub result: Region,
    /// Word 0x220 (the result's plane size, L2BfrMode 0).
    pub result_plane: u64,
    /// ResultType 0: the result is kept in L2 (not written to DRAM).
    pub kept: bool,
    /// L2.ResultCfg.L2BfrMode.
    pub result_mode: u64,
    /// TileDMADst.DMAConfig.L2BfrMode.
    pub dst_mode: u64,
    /// L2Cfg.PaddingMode.
    pub padding: PadMode,
}

fn l2_units(r: &mut Reader, name: &str) -> Result<u64, SimError> {
    Ok(r.get(name)? * 16)
}

/// The four alias bits of SourceCfg and ResultCfg.
const ALIAS: [&str; 4] = ["AliasConvSrc", "AliasConvRslt", "AliasPlanarSrc", "AliasPlanarRslt"];

/// Which alias bits (ConvSrc, ConvRslt, PlanarSrc, PlanarRslt) a configuration may hold:
/// all set; all clear (a task after another in L2); the convolution pair only (a
/// planar-engine task reading an operand from L2: SourceCfg 0x172).
const ALL_SET: [u64; 4] = [1, 1, 1, 1];
const ALL_CLEAR: [u64; 4] = [0, 0, 0, 0];
const CONV_ONLY: [u64; 4] = [1, 1, 0, 0];

/// The configuration bits SourceCfg and ResultCfg share: the four alias bits in one of
/// the `aliases` patterns (they change no value modelled), DMAFmt one of `dma_fmt`,
/// DMAInterleave 1, no DMACmpVec or DMAOffsetCh.
fn l2_cfg(r: &mut Reader, cfg: &str, aliases: &[[u64; 4]], dma_fmt: &[u64]) -> Result<(), SimError> {
    let mut found = [0; 4];
    for (v, f) in found.iter_mut().zip(ALIAS) {
        *v = r.get(&format!("L2.{cfg}.{f}"))?;
    }
    if !aliases.contains(&found) {
        let shown: Vec<String> = aliases.iter().map(|a| format!("{a:?}")).collect();
        let bits = found.iter().enumerate().fold(0, |m, (i, &b)| m | (b << i));
        let reason = format!(
            "the alias bits [ConvSrc, ConvRslt, PlanarSrc, PlanarRslt] are {found:?}; {} is modelled here",
            shown.join(" or ")
        );
        return Err(r.err(format!("L2.{cfg} alias bits"), bits, reason));
    }
    r.fixed(&format!("L2.{cfg}.DMAFmt"), dma_fmt)?;
    for (f, v) in [("DMAInterleave", 1), ("DMACmpVec", 0), ("DMAOffsetCh", 0)] {
        r.fixed(&format!("L2.{cfg}.{f}"), &[v])?;
    }
    Ok(())
}

/// Decodes the L2 block (and the destination's L2BfrMode).
pub fn l2(r: &mut Reader, operands: Operands) -> Result<L2Layout, SimError> {
    r.fixed("L2.L2Cfg.InputReLU", &[0])?;
    let padding = match r.fixed("L2.L2Cfg.PaddingMode", &[0, 1, 3])? {
        3 => PadMode::Skip,
        _ => PadMode::Zero,
    };
    // SourceType 2 loads the source, 1 loads it and keeps it for a later task, 0 reads it
    // from L2 as an earlier task left it (Apple's 0x100: no alias bits, DMAFmt 0).
    let source_type = r.fixed("L2.SourceCfg.SourceType", &[0, 1, 2])?;
    let resident = source_type == 0;
    let from_l2 = matches!(operands, Operands::TwoL2 | Operands::ThreeL2);
    let aliases: &[[u64; 4]] = match (resident, from_l2) {
        (true, _) => &[ALL_SET, ALL_CLEAR],
        (false, true) => &[CONV_ONLY],
        (false, false) => &[ALL_SET],
    };
    l2_cfg(r, "SourceCfg", aliases, if resident { &[0, 1] } else { &[1] })?;
    r.fixed("L2.SourceCfg.Dependent", &[0])?;
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
    // depth 1 (the only depth modelled) nothing is addressed through them.
    r.word(0x1F4, L2_MASK);
    r.word(0x1F8, L2_MASK);
    let mut sources = vec![first];
    let raw = |r: &mut Reader, o: u16| u64::from(r.word(o, L2_MASK));
    let mut operand = None;
    if two_dram || from_l2 {
        let second = Region { base: raw(r, 0x1FC), channel: raw(r, 0x200), row: raw(r, 0x204), depth: 0 };
        r.word(0x208, L2_MASK);
        if two_dram {
            r.word(0x20C, L2_MASK);
            sources.push(second);
        } else {
            r.fixed_word(0x20C, u32::MAX, &[0], "plane2 word of an operand read from L2")?;
            operand = Some(second);
        }
    }
    let (result, result_plane, kept, result_mode) = l2_result(r)?;
    let dst_mode = r.get("TileDMADst.DMAConfig.L2BfrMode")?;
    Ok(L2Layout {
        sources,
        resident,
        keep_source: source_type == 1,
        operand,
        result,
        result_plane,
        kept,
        result_mode,
        dst_mode,
        padding,
    })
}

/// The result region, word 0x220, whether the result is kept in L2 (ResultType 0), and
/// L2BfrMode.
fn l2_result(r: &mut Reader) -> Result<(Region, u64, bool, u64), SimError> {
    // Apple's current compiler writes 0x50017a (alias bits set), 0x14a (clear) and, for a
    // result kept in L2, 0x500170.
    l2_cfg(r, "ResultCfg", &[ALL_SET, ALL_CLEAR], &[1])?;
    let kept = r.fixed("L2.ResultCfg.ResultType", &[0, 2])? == 0;
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
        return Ok((Region { base, channel: 0, row: 0, depth: 0 }, 0, kept, mode));
    }
    let channel = l2_units(r, strides[0])?;
    let row = l2_units(r, strides[1])?;
    let plane = u64::from(r.word(0x220, L2_MASK));
    if kept {
        r.fixed_word(0x224, u32::MAX, &[0], "second result plane word of a result kept in L2")?;
    } else {
        r.word(0x224, L2_MASK);
    }
    Ok((Region { base, channel, row, depth: 0 }, plane, kept, mode))
}
