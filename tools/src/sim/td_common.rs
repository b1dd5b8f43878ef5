//! Decoding of the Common block of a TD: dimensions, formats, the window, groups, the
//! task configuration (Common.Cfg, whose unnamed bits say where the planar engine's
//! operands come from, whether it reduces, and whether the NE writes its result
//! transposed) and word 0x158 (how the operands read from L2 are broadcast; a
//! reduction's packed result).

use super::error::SimError;
use super::memory::{Dims, Fmt};
use super::reader::Reader;
use super::td::Window;
use super::td_header::Header;
use super::td_reduce;

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
    /// UnicastCin: 1, or Cin for the NE's maximum over the channels.
    pub unicast_cin: usize,
    /// Where the planar engine's operands come from (Common.Cfg unnamed bits; `One` on
    /// the NE).
    pub operands: Operands,
    /// Common.Cfg bit 28 (NE) or word 0x158 bit 0x400 (an elementwise planar-engine
    /// task): the result is written with C and W swapped.
    pub transposed: bool,
    /// The field that says so, for errors.
    pub transposed_field: &'static str,
    /// Common.Cfg 0x51 or 0x61 (planar engine): the per-channel reduction of the view (of
    /// one operand, or of two with 0x61: `operands` TwoL2).
    pub reduce: bool,
    /// Word 0x158 (planar engine): how the operand read from L2 is broadcast.
    pub broadcast: u32,
}

/// The field saying an NE task writes transposed.
pub const NE_TRANSPOSED_FIELD: &str = "Common.Cfg bit 28 (word 0x15c)";

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
    let (operands, cfg_transposed, reduce) = config(r, h)?;
    // On the NE word 0x158 is not read: a bit set there is left to `Reader::finish`.
    let broadcast = match (pe, reduce) {
        (true, true) => td_reduce::result_word(r, operands)?,
        (true, false) => broadcast(r, operands)?,
        (false, _) => 0,
    };
    let pe_transposed = pe && !reduce && broadcast & TRANSPOSED_RESULT != 0;
    let transposed_field = if pe { "word 0x158 bit 0x400" } else { NE_TRANSPOSED_FIELD };
    let depth = td_reduce::depth(r, reduce)?;
    let in_dims = Dims {
        c: extent(r, "Common.Cin.Cin")?,
        d: depth,
        h: extent(r, "Common.InDim.Hin")?,
        w: extent(r, "Common.InDim.Win")?,
    };
    let out_dims = Dims {
        c: extent(r, "Common.Cout.Cout")?,
        d: depth,
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
    let unicast_cin = unicast_cin(r, in_dims.c)?;
    // A reduction combines every row whatever tiles the engine walks them in (Apple's
    // layer norms: a kept reduction over 64 rows of 8 in tiles of 32); any other task is
    // modelled in one tile.
    let tile = r.get("Common.TileCfg.TileHeight")?;
    let one_tile = tile == out_dims.h as u64;
    if !(one_tile || reduce && tile >= 1 && tile <= out_dims.h as u64) {
        let reason = match reduce {
            true => "a reduction is modelled with tiles of 1 to Hout rows",
            false => "only one tile of the whole output height (Hout) is modelled",
        };
        return Err(r.err("Common.TileCfg.TileHeight", tile, reason));
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
        unicast_cin,
        operands,
        transposed: cfg_transposed || pe_transposed,
        transposed_field,
        reduce,
        broadcast,
    })
}

/// UnicastCin: 1 (each output channel reads one input channel, or the kernel's), or Cin
/// (the NE's maximum over every input channel; the engine decoder ties it to OpMode 3).
fn unicast_cin(r: &mut Reader, cin: usize) -> Result<usize, SimError> {
    let field = "Common.GroupConvCfg.UnicastCin";
    match r.get(field)? {
        1 => Ok(1),
        v if v == cin as u64 => Ok(cin),
        v => Err(r.err(field, v, format!("1, or Cin = {cin} (the NE's maximum over the channels), is modelled"))),
    }
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

/// Common.Cfg bit 28 on the NE: the result is written with C and W swapped.
const CFG_TRANSPOSED: u32 = 1 << 28;

/// Common.Cfg 0x51 on the planar engine: bit 0 with mode 5 in bits 4..6, the
/// per-channel reduction; 0x61 (mode 6) the reduction of two operands, the second read
/// from L2 (the layer norms' variance, `normalization.md` §2).
const CFG_REDUCE: u32 = 0x51;
const CFG_REDUCE_TWO: u32 = 0x61;

/// Common.Cfg's unnamed bits: the operand class (checked against RBE1), on the NE the
/// transposed-result bit 28, on the planar engine the reduction (0x51, 0x61).
fn config(r: &mut Reader, h: &Header) -> Result<(Operands, bool, bool), SimError> {
    let v = r.other_bits(0x15C);
    let rbe1 = h.sources[1].is_some();
    let class = match (h.ene == 0, v) {
        (false, 0x1) => Some((Operands::One, false, false)),
        (false, v) if v == 0x1 | CFG_TRANSPOSED => Some((Operands::One, true, false)),
        (true, 0x21) => Some((Operands::One, false, false)),
        (true, CFG_REDUCE) => Some((Operands::One, false, true)),
        (true, CFG_REDUCE_TWO) => Some((Operands::TwoL2, false, true)),
        (true, 0x33 | 0x43) => Some((Operands::TwoDram, false, false)),
        (true, 0x31) => Some((Operands::TwoL2, false, false)),
        (true, 0x41) => Some((Operands::ThreeL2, false, false)),
        _ => None,
    };
    let allowed = if h.ene == 0 { "0x21, 0x31, 0x33, 0x41, 0x43, 0x51 or 0x61" } else { "0x1 or 0x10000001" };
    let Some((operands, transposed, reduce)) = class else {
        let reason = format!("{allowed} is modelled for this engine path");
        return Err(r.err("word 0x15c unnamed bits", v.into(), reason));
    };
    if rbe1 != (operands == Operands::TwoDram) {
        let reason = "RBE1 (a second source through the tile DMA) is set exactly when Common.Cfg's unnamed bits \
                      are 0x33 or 0x43";
        return Err(r.err("aneTD.Header[8].RBE1", u64::from(rbe1), reason));
    }
    Ok((operands, transposed, reduce))
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
/// Word 0x158 flags of operand 1 (the first source, read in place): broadcast along W,
/// H, C; a packed vector of one value per channel.
pub const OPERAND1_W: u32 = 0x1;
/// See [`OPERAND1_W`].
pub const OPERAND1_H: u32 = 0x2;
/// See [`OPERAND1_W`] (the third loop: depth).
pub const OPERAND1_D: u32 = 0x4;
/// See [`OPERAND1_W`].
pub const OPERAND1_C: u32 = 0x8;
/// See [`OPERAND1_W`].
pub const OPERAND1_PACKED: u32 = 0x100;
/// Word 0x158 bit 0x400 of an elementwise planar-engine task: its result is written
/// packed, the view's channels along W (C and W swapped, as the NE's Common.Cfg bit 28).
pub const TRANSPOSED_RESULT: u32 = 0x400;
/// Every operand-1 flag, every operand-2 flag.
pub const OPERAND1_FLAGS: u32 = OPERAND1_W | OPERAND1_H | OPERAND1_D | OPERAND1_C | OPERAND1_PACKED;
const OPERAND2_FLAGS: u32 = BROADCAST_W | BROADCAST_H | BROADCAST_C | PER_CHANNEL;

/// Word 0x158 of a planar-engine task: 0 unless an operand comes from L2. With two
/// operands (Cfg 0x31), the flags of one of them: operand 2's W, H, C (none: the
/// operand has the source's shape) or packed per-channel vector (with or without the W
/// and H flags it implies), or operand 1's (softmax's normalize step: 0x1, 0x101). With
/// three (Cfg 0x41) the per-channel rows: packed (0x200) or one line per channel (0),
/// or one value for every channel (0x80).
fn broadcast(r: &mut Reader, operands: Operands) -> Result<u32, SimError> {
    let v = r.word(0x158, u32::MAX);
    let (one, two) = (v & OPERAND1_FLAGS, v & OPERAND2_FLAGS);
    let ok = match operands {
        Operands::TwoDram => v == 0,
        // A copy that packs its result (0x400) or unpacks a packed source (0x100): the
        // layer norms over C (`norm_layer_norm_ax1_1x64x1x1`).
        Operands::One => [0, OPERAND1_PACKED, TRANSPOSED_RESULT].contains(&v),
        Operands::TwoL2 => {
            v & !(OPERAND1_FLAGS | OPERAND2_FLAGS | TRANSPOSED_RESULT) == 0
                && (one == 0 || two == 0)
                && !(two & PER_CHANNEL != 0 && two & BROADCAST_C != 0)
                && !(one & OPERAND1_PACKED != 0 && one & OPERAND1_C != 0)
        }
        Operands::ThreeL2 => v & !(BROADCAST_C | PER_CHANNEL) == 0 && v != BROADCAST_C | PER_CHANNEL,
    };
    if ok {
        return Ok(v);
    }
    let reason = match operands {
        Operands::TwoDram => "operand broadcast flags without an operand read from L2 (Cfg 0x31 / 0x41)",
        Operands::One => {
            "one operand is modelled with 0, 0x100 (operand 1 a packed vector) or 0x400 (the result packed); \
             broadcast flags need an operand read from L2 (Cfg 0x31 / 0x41)"
        }
        Operands::TwoL2 => {
            "the flags of one operand are modelled: operand 2's 0x10 (W), 0x20 (H), 0x80 (C) or 0x200 (a packed \
             per-channel vector, not with 0x80), or operand 1's 0x1, 0x2, 0x4, 0x8 or 0x100 (not with 0x8), and \
             0x400 (the result packed); operand 2's third loop (0x40) is not"
        }
        Operands::ThreeL2 => {
            "three operands (Cfg 0x41) are modelled as per-channel rows: 0x200 (packed), 0 (one line per \
             channel) or 0x80 (one value)"
        }
    };
    Err(r.err("word 0x158", v.into(), reason))
}
