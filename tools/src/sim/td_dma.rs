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

use super::error::SimError;
use super::memory::{Fmt, Region};
use super::reader::{sign_extend, Reader};
use super::td::{Common, Header, PadMode, Tile};

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

/// The tile-DMA sources and destination.
pub fn tiles(r: &mut Reader, h: &Header, c: &Common, pe: bool) -> Result<(Vec<Tile>, Tile), SimError> {
    let mut sources = vec![source1(r, h, c)?];
    if let Some(bar) = h.sources[1] {
        sources.push(source2(r, bar, c.in_fmt[1])?);
    }
    // 0x100 whenever the NE runs; the current compiler writes it in planar-engine tasks too.
    let allowed: &[u32] = if pe { &[0, 0x100] } else { &[0x100] };
    r.fixed_word(0x1AC, u32::MAX, allowed, "engine-path word")?;
    Ok((sources, dest(r, h, c)?))
}

fn source1(r: &mut Reader, h: &Header, c: &Common) -> Result<Tile, SimError> {
    r.fixed("TileDMASrc.DMAConfig.En", &[1])?;
    r.fixed("TileDMASrc.DMAConfig.CrH", &[0])?;
    r.fixed("TileDMASrc.DMAConfig.DependencyMode", &[0])?;
    for hint in CACHE_HINTS {
        r.ignore(&format!("TileDMASrc.DMAConfig.{hint}"))?;
    }
    r.word(0x170, SRC2_CACHE_HINTS);
    for i in 0..4 {
        r.fixed(&format!("TileDMASrc.PixelOffset[{i}].Offset"), &[0])?;
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
    group_stride(r, "TileDMASrc.GroupStride.Stride", &t)?;
    Ok(t)
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
    group_stride(r, "word 0x198 (second-source group stride)", &t)?;
    Ok(t)
}

fn dest(r: &mut Reader, h: &Header, c: &Common) -> Result<Tile, SimError> {
    r.fixed("TileDMADst.DMAConfig.En", &[1])?;
    r.fixed("TileDMADst.DMAConfig.CrH", &[0])?;
    r.fixed("TileDMADst.DMAConfig.BypassEOW", &[0])?;
    r.ignore("TileDMADst.DMAConfig.CacheHint")?;
    r.fixed("TileDMADst.Fmt.CmpVecFill", &[0])?;
    // Whether the row ends are zero-filled touches no element the program reads back.
    r.ignore("TileDMADst.Fmt.ZeroPadLast")?;
    r.ignore("TileDMADst.Fmt.ZeroPadFirst")?;
    let t = Tile {
        bar: h.dest,
        base: base64(r, "TileDMADst.BaseAddr.Addr")?,
        row: units64(r, "TileDMADst.RowStride.RowStride")?,
        plane: units64(r, "TileDMADst.PlaneStride.PlaneStride")?,
        depth: units64(r, "TileDMADst.DepthStride.DepthStride")?,
        fmt: tile_fmt(r, "TileDMADst", c.out_fmt, "Common.ChCfg.OutFmt")?,
        group: units64(r, "TileDMADst.GroupStride.GroupStride")?,
    };
    group_stride(r, "TileDMADst.GroupStride.GroupStride", &t)?;
    Ok(t)
}

/// A group stride: the stride between the groups (batch entries) the planar engine loops
/// over. v4.2.1 writes 0; the current compiler the batch stride, which follows the depth
/// slices (one depth slice per batch entry is what is modelled).
fn group_stride(r: &Reader, field: &str, t: &Tile) -> Result<(), SimError> {
    if t.group == 0 || t.group == t.depth {
        return Ok(());
    }
    let reason = format!("only 0 or the depth stride ({:#x}) is modelled", t.depth);
    Err(r.err(field, t.group as u64, reason))
}

/// The L2 block as the simulator uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L2Layout {
    /// One region per source.
    pub sources: Vec<Region>,
    /// The result region (strides only meaningful for `result_mode` 0).
    pub result: Region,
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

/// The configuration bits SourceCfg and ResultCfg share, each with its one modelled value.
fn l2_cfg(r: &mut Reader, cfg: &str) -> Result<(), SimError> {
    for (f, v) in [
        ("AliasConvSrc", 1),
        ("AliasConvRslt", 1),
        ("AliasPlanarSrc", 1),
        ("AliasPlanarRslt", 1),
        ("DMAFmt", 1),
        ("DMAInterleave", 1),
        ("DMACmpVec", 0),
        ("DMAOffsetCh", 0),
    ] {
        r.fixed(&format!("L2.{cfg}.{f}"), &[v])?;
    }
    Ok(())
}

/// Decodes the L2 block (and the destination's L2BfrMode).
pub fn l2(r: &mut Reader, two_sources: bool) -> Result<L2Layout, SimError> {
    r.fixed("L2.L2Cfg.InputReLU", &[0])?;
    let padding = match r.fixed("L2.L2Cfg.PaddingMode", &[0, 1, 3])? {
        3 => PadMode::Skip,
        _ => PadMode::Zero,
    };
    l2_cfg(r, "SourceCfg")?;
    r.fixed("L2.SourceCfg.SourceType", &[2])?;
    r.fixed("L2.SourceCfg.Dependent", &[0])?;
    let flag = if two_sources { 1 << 24 } else { 0 };
    r.fixed_word(0x1E4, 1 << 24, &[flag], "SourceCfg bit 24 (a second source is read)")?;
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
    if two_sources {
        let raw = |r: &mut Reader, o: u16| u64::from(r.word(o, L2_MASK));
        sources.push(Region { base: raw(r, 0x1FC), channel: raw(r, 0x200), row: raw(r, 0x204), depth: 0 });
        r.word(0x208, L2_MASK);
        r.word(0x20C, L2_MASK);
    }
    let (result, result_mode) = l2_result(r)?;
    let dst_mode = r.get("TileDMADst.DMAConfig.L2BfrMode")?;
    Ok(L2Layout { sources, result, result_mode, dst_mode, padding })
}

fn l2_result(r: &mut Reader) -> Result<(Region, u64), SimError> {
    l2_cfg(r, "ResultCfg")?;
    r.fixed("L2.ResultCfg.ResultType", &[2])?;
    let mode = r.fixed("L2.ResultCfg.L2BfrMode", &[0, 1])?;
    let base = l2_units(r, "L2.ResultBase.Addr")?;
    let strides = ["L2.ConvResultChannelStride.Stride", "L2.ConvResultRowStride.Stride"];
    if mode == 1 {
        for s in strides {
            r.fixed(s, &[0])?;
        }
        return Ok((Region { base, channel: 0, row: 0, depth: 0 }, mode));
    }
    let channel = l2_units(r, strides[0])?;
    let row = l2_units(r, strides[1])?;
    r.word(0x220, L2_MASK);
    r.word(0x224, L2_MASK);
    Ok((Region { base, channel, row, depth: 0 }, mode))
}
