//! Decoding of the Common block of a TD: dimensions, formats, the window, groups, the
//! task configuration (Common.Cfg, whose unnamed bits say where the planar engine's
//! operands come from and whether the NE writes a packed row) and word 0x158 (how an
//! operand read from L2 is broadcast).

use super::error::SimError;
use super::memory::{Dims, Fmt};
use super::reader::Reader;
use super::td::Window;
use super::td_header::Header;

/// The Common block as the simulator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Common {
    /// Source dimensions.
    pub in_dims: Dims,
    /// Result dimensions.
    pub out_dims: Dims,
    /// InFmt and the second source's format (ChCfg bits 3:2).
    pub in_fmt: [Fmt; 2],
    /// OutFmt.
    pub out_fmt: Fmt,
    /// Window.
    pub window: Window,
    /// OCGSize.
    pub ocg_size: u32,
    /// NumGroups.
    pub groups: usize,
    /// UnicastEn.
    pub unicast: bool,
    /// Where the planar engine's operands come from (Common.Cfg unnamed bits; `One` on
    /// the NE).
    pub operands: Operands,
    /// Common.Cfg bit 28 (NE): the result is written as one packed row.
    pub packed: bool,
    /// Word 0x158 (planar engine): how the operand read from L2 is broadcast.
    pub broadcast: u32,
}

fn fmt(r: &Reader, field: &str, code: u64) -> Result<Fmt, SimError> {
    Fmt::from_code(code).ok_or_else(|| r.err(field, code, "only formats 0 (u8), 1 (i8) and 2 (fp16) are modelled"))
}

/// A dimension field, which must be at least 1.
fn extent(r: &mut Reader, name: &str) -> Result<usize, SimError> {
    match r.get(name)? {
        0 => Err(r.err(name, 0, "a zero extent is not modelled")),
        v => Ok(usize::try_from(v).unwrap_or(usize::MAX)),
    }
}

/// Decodes the Common block; the header's ENE selects the planar-engine values of its
/// unnamed words, its RBE1 must agree with the operand class of Common.Cfg.
pub fn common(r: &mut Reader, h: &Header) -> Result<Common, SimError> {
    let pe = h.ene == 0;
    let (operands, packed) = config(r, h)?;
    // On the NE word 0x158 is not read: a bit set there is left to `Reader::finish`.
    let broadcast = if pe { broadcast(r, operands)? } else { 0 };
    let depth = "depth > 1 is not modelled (the L2 depth layout is unknown)";
    r.fixed_word(0x12C, u32::MAX, &[1], &format!("source depth: {depth}"))?;
    r.fixed_word(0x140, u32::MAX, &[1], &format!("result depth: {depth}"))?;
    let in_dims = Dims {
        c: extent(r, "Common.Cin.Cin")?,
        d: 1,
        h: extent(r, "Common.InDim.Hin")?,
        w: extent(r, "Common.InDim.Win")?,
    };
    let out_dims = Dims {
        c: extent(r, "Common.Cout.Cout")?,
        d: 1,
        h: extent(r, "Common.OutDim.Hout")?,
        w: extent(r, "Common.OutDim.Wout")?,
    };
    let code = r.get("Common.ChCfg.InFmt")?;
    let in_fmt = fmt(r, "Common.ChCfg.InFmt", code)?;
    let code2 = u64::from(r.word(0x130, 0xC) >> 2);
    if operands == Operands::One && code2 != 0 {
        return Err(r.err("word 0x130 bits 3:2", code2, "a second-operand format without a second operand"));
    }
    let in_fmt2 = fmt(r, "word 0x130 bits 3:2", code2)?;
    let code = r.get("Common.ChCfg.OutFmt")?;
    let out_fmt = fmt(r, "Common.ChCfg.OutFmt", code)?;
    let window = window(r)?;
    let ocg_size = u32::try_from(r.get("Common.ConvCfg.OCGSize")?).unwrap_or(u32::MAX);
    let groups = extent(r, "Common.GroupConvCfg.NumGroups")?;
    let unicast = r.get("Common.GroupConvCfg.UnicastEn")? == 1;
    r.fixed("Common.GroupConvCfg.ElemMultMode", &[0])?;
    r.fixed("Common.GroupConvCfg.UnicastCin", &[1])?;
    let tile = r.get("Common.TileCfg.TileHeight")?;
    if tile != out_dims.h as u64 {
        return Err(r.err(
            "Common.TileCfg.TileHeight",
            tile,
            "only one tile of the whole output height (Hout) is modelled",
        ));
    }
    common_config(r, pe)?;
    Ok(Common {
        in_dims,
        out_dims,
        in_fmt: [in_fmt, in_fmt2],
        out_fmt,
        window,
        ocg_size,
        groups,
        unicast,
        operands,
        packed,
        broadcast,
    })
}

fn window(r: &mut Reader) -> Result<Window, SimError> {
    let w = Window {
        kh: extent(r, "Common.ConvCfg.Kh")?,
        kw: extent(r, "Common.ConvCfg.Kw")?,
        sy: extent(r, "Common.ConvCfg.Sy")?,
        sx: extent(r, "Common.ConvCfg.Sx")?,
        py: usize::try_from(r.get("Common.ConvCfg.Py")?).unwrap_or(usize::MAX),
        px: usize::try_from(r.get("Common.ConvCfg.Px")?).unwrap_or(usize::MAX),
    };
    r.fixed("Common.ConvCfg.Ox", &[1])?;
    r.fixed("Common.ConvCfg.Oy", &[1])?;
    Ok(w)
}

/// Common.Cfg's named fields, TaskInfo, DPE and the unnamed Common words but 0x158 and
/// Common.Cfg's unnamed bits (see [`config`]).
fn common_config(r: &mut Reader, pe: bool) -> Result<(), SimError> {
    // Scheduling hints: they change how the work is spread, not what it computes.
    for name in ["SmallSourceMode", "ShPref", "ShMin", "ShMax", "AccDoubleBufEn"] {
        r.ignore(&format!("Common.Cfg.{name}"))?;
    }
    let active = r.get("Common.Cfg.ActiveNE")?;
    let ene = r.get("aneTD.Header[8].ENE")?;
    if !pe && ene != active + 1 {
        return Err(r.err("aneTD.Header[8].ENE", ene, format!("an NE task's ENE is ActiveNE + 1 = {}", active + 1)));
    }
    for name in ["TaskID", "TaskQ", "NID"] {
        r.ignore(&format!("Common.TaskInfo.{name}"))?;
    }
    r.fixed("Common.Cfg.ContextSwitchIn", &[0])?;
    r.fixed("Common.Cfg.ContextSwitchOut", &[0])?;
    // 1 marks Apple's AccBias-on-the-MAC-path task (rsqrt); it changes no value modelled.
    r.fixed("Common.DPE.Category", &[0, 1])?;
    r.fixed_word(0x148, u32::MAX, &[0x2041], "kernel-common record")?;
    if pe {
        // The planar engine's tile shape (log2 rows << 4 | log2 columns): how the work is
        // cut, not what it computes.
        r.word(0x154, u32::MAX);
    } else {
        r.fixed_word(0x154, u32::MAX, &[0], "planar-engine tile word of an NE task")?;
    }
    Ok(())
}

/// Where a task's operands come from: Common.Cfg's unnamed bits, 1 | (operands + 1) << 4
/// | bit 1 when the second operand comes through the tile DMA (rationale
/// `current-compiler/elementwise.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// 0x21 on the planar engine (and every NE task): one source.
    One,
    /// 0x33 (and 0x43): the second source through the tile DMA (RBE1).
    TwoDram,
    /// 0x31: the second operand read from L2 where an earlier task left it.
    TwoL2,
    /// 0x41: a second and a third operand from L2, row 0 and row 1 of one region.
    ThreeL2,
}

/// Common.Cfg bit 28 on the NE: the result is written transposed into one packed row.
const CFG_PACKED: u32 = 1 << 28;

/// Common.Cfg's unnamed bits: the operand class (checked against RBE1) and, on the NE,
/// the packed-result bit 28.
fn config(r: &mut Reader, h: &Header) -> Result<(Operands, bool), SimError> {
    let v = r.other_bits(0x15C);
    let rbe1 = h.sources[1].is_some();
    let class = match (h.ene == 0, v) {
        (false, 0x1) => Some((Operands::One, false)),
        (false, v) if v == 0x1 | CFG_PACKED => Some((Operands::One, true)),
        (true, 0x21) => Some((Operands::One, false)),
        (true, 0x33 | 0x43) => Some((Operands::TwoDram, false)),
        (true, 0x31) => Some((Operands::TwoL2, false)),
        (true, 0x41) => Some((Operands::ThreeL2, false)),
        _ => None,
    };
    let allowed = if h.ene == 0 { "0x21, 0x31, 0x33, 0x41 or 0x43" } else { "0x1 or 0x10000001" };
    let Some((operands, packed)) = class else {
        let reason = format!("{allowed} is modelled for this engine path");
        return Err(r.err("word 0x15c unnamed bits", v.into(), reason));
    };
    if rbe1 != (operands == Operands::TwoDram) {
        let reason = "RBE1 (a second source through the tile DMA) is set exactly when Common.Cfg's unnamed bits \
                      are 0x33 or 0x43";
        return Err(r.err("aneTD.Header[8].RBE1", u64::from(rbe1), reason));
    }
    Ok((operands, packed))
}

/// Word 0x158 flags: operand 2 broadcast along W, H, C; a packed vector of one value per
/// channel, broadcast over H and W.
pub const BROADCAST_W: u32 = 0x10;
/// See [`BROADCAST_W`].
pub const BROADCAST_H: u32 = 0x20;
/// See [`BROADCAST_W`].
pub const BROADCAST_C: u32 = 0x80;
/// See [`BROADCAST_W`].
pub const PER_CHANNEL: u32 = 0x200;

/// Word 0x158 of a planar-engine task: 0 unless an operand comes from L2; then any of the
/// W, H, C broadcast flags (none: the operand has the source's shape) or the packed
/// per-channel vector, which is the only layout of the three-operand rows.
fn broadcast(r: &mut Reader, operands: Operands) -> Result<u32, SimError> {
    let v = r.word(0x158, u32::MAX);
    let axes = BROADCAST_W | BROADCAST_H | BROADCAST_C;
    let ok = match operands {
        Operands::One | Operands::TwoDram => v == 0,
        Operands::TwoL2 => v & !axes == 0 || v == PER_CHANNEL,
        Operands::ThreeL2 => v == PER_CHANNEL,
    };
    if ok {
        return Ok(v);
    }
    let reason = match operands {
        Operands::One | Operands::TwoDram => {
            "operand-2 broadcast flags without an operand read from L2 (Cfg 0x31 / 0x41)"
        }
        Operands::TwoL2 => {
            "the flags 0x10 (W), 0x20 (H), 0x80 (C) in any combination, or 0x200 alone (a packed \
                            per-channel vector), are modelled"
        }
        Operands::ThreeL2 => {
            "three operands (Cfg 0x41) are modelled as the rows of a packed per-channel vector (0x200)"
        }
    };
    Err(r.err("word 0x158", v.into(), reason))
}
