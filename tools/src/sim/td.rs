//! One TD decoded by field name into a typed task: the header (chain, BARs, engine
//! enable), the Common block and the assembly of the per-block decoders of `td_dma.rs`
//! (tile DMA, L2) and `td_engine.rs` (kernel DMA, NE, PE).
//!
//! Every named field of the register map is looked at; each one is either interpreted,
//! accepted as having no effect on values (cache hints, event logging, scheduling), or
//! restricted to the values the modelled behaviour covers. Anything else is a
//! [`SimError::Field`] naming the TD, the field and the value.

use super::error::SimError;
use super::memory::{Dims, Fmt, Region};
use super::reader::Reader;
use super::td_dma::{self, L2Layout};
use super::td_engine;
use anec_backend_h13::td::TdImage;

/// A buffer range of the kernel memory (relative to the BAR `KBase0` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// Byte offset from the BAR.
    pub addr: u64,
    /// Bytes.
    pub size: u64,
}

/// A tile-DMA transfer between DRAM (a BAR buffer) and L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    /// BAR of the DRAM buffer.
    pub bar: u8,
    /// Byte offset of the first element in the buffer.
    pub base: i64,
    /// Byte strides between rows, channels (planes) and depth slices.
    pub row: i64,
    /// See `row`.
    pub plane: i64,
    /// See `row`.
    pub depth: i64,
    /// Element format in DRAM and L2.
    pub fmt: Fmt,
    /// Byte stride between groups (the batch the planar engine loops over; 0 when unused).
    pub group: i64,
}

/// The convolution window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Kernel height and width.
    pub kh: usize,
    /// See `kh`.
    pub kw: usize,
    /// Vertical and horizontal step.
    pub sy: usize,
    /// See `sy`.
    pub sx: usize,
    /// Top and left padding (the trailing padding follows from the output size).
    pub py: usize,
    /// See `py`.
    pub px: usize,
}

/// How positions outside the source are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadMode {
    /// They read as zero (PaddingMode 0, and 1 of average pooling).
    Zero,
    /// They are left out of the window (PaddingMode 3 of max pooling).
    Skip,
}

/// The MAC stage of the NE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mac {
    /// Convolution with the coefficients of the kernel DMA (KernelMode 0).
    Kernel {
        /// Coefficient format (KernelFmt).
        fmt: Fmt,
        /// log2 of the output channels per coefficient chunk (OCGSize).
        ocg_size: u32,
        /// The enabled coefficient chunks, channel 0 first.
        chunks: Vec<Stream>,
    },
    /// Unity kernel: the sum over the window of each channel (KernelMode 1).
    Sum,
    /// Unity kernel with MaxPoolMode (MACCfg bit 19): the maximum over the window.
    Max,
}

/// The NE's nonlinear stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nonlinear {
    /// NonlinearMode 0.
    None,
    /// NonlinearMode 1: max(x, 0).
    Relu,
    /// NonlinearMode 2: the activation table of coefficient channel 0.
    Table(Stream),
}

/// A neural-engine task.
#[derive(Debug, Clone, PartialEq)]
pub struct NeTask {
    /// Window geometry.
    pub window: Window,
    /// Convolution groups.
    pub groups: usize,
    /// Padding treatment.
    pub pad: PadMode,
    /// MAC stage.
    pub mac: Mac,
    /// BAR of the kernel memory (KBase0), when read.
    pub kbar: Option<u8>,
    /// MatrixVectorBias, when MatrixBiasEn.
    pub matrix_bias: Option<f32>,
    /// The per-channel bias stream and its AccBias multiplier, when BiasMode.
    pub acc_bias: Option<(f32, Stream)>,
    /// PostScale.
    pub post_scale: f32,
    /// The per-channel post-scale stream, when PostScaleMode.
    pub scale_stream: Option<Stream>,
    /// Nonlinear stage.
    pub nonlinear: Nonlinear,
}

/// A planar-engine operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeOp {
    /// a + b.
    Add,
    /// a * b.
    Mul,
    /// max(a, b).
    Max,
    /// min(a, b).
    Min,
    /// a * a (one source).
    Square,
}

/// A planar-engine task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeTask {
    /// The elementwise operation.
    pub op: PeOp,
    /// The second operand is negated (PE config bit 18: sub).
    pub negate: bool,
    /// The fp16 scale of BiasScale (high half).
    pub scale: f32,
    /// The fp16 bias of BiasScale (low half).
    pub bias: f32,
}

/// The engine a task runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    /// Neural engine (ENE 1 or 3).
    Ne(NeTask),
    /// Planar engine only (ENE 0).
    Pe(PeTask),
}

/// One decoded TD.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Index in the chain.
    pub index: usize,
    /// Source dimensions (every source has them).
    pub in_dims: Dims,
    /// Result dimensions.
    pub out_dims: Dims,
    /// The tile-DMA sources (one or two).
    pub sources: Vec<Tile>,
    /// The tile-DMA destination.
    pub dest: Tile,
    /// L2 regions of each source.
    pub l2_sources: Vec<Region>,
    /// L2 region of the result.
    pub l2_result: Region,
    /// What computes.
    pub unit: Unit,
    /// How many times the task runs, each time one group stride further in every tile
    /// (the planar engine's batch loop, NumGroups; 1 for NE tasks, whose NumGroups are
    /// convolution groups).
    pub repeats: usize,
}

/// Where the chain goes after a TD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// EON: the last TD of the network.
    pub end: bool,
    /// NextPointer: byte offset of the next TD in `__text`.
    pub next: u64,
}

/// Header fields with no effect on values (IDs, event logging).
const HEADER_IGNORED: [&str; 8] = [
    "aneTD.Header[0].TID",
    "aneTD.Header[0].NID",
    "aneTD.Header[0].LNID",
    "aneTD.Header[1].ExeCycles",
    "aneTD.Header[2].LogEvents",
    "aneTD.Header[3].Exceptions",
    "aneTD.Header[4].DebugLogEvents",
    "aneTD.Header[5].DebugExceptions",
];

/// Header fields of unknown effect, with the one value every Apple program holds.
const HEADER_FIXED: [(&str, u64); 18] = [
    ("aneTD.Header[6].DisallowAbort", 0),
    ("aneTD.Header[6].TDSkip", 0),
    ("aneTD.Header[6].KPC", 0),
    ("aneTD.Header[6].SPL", 1),
    ("aneTD.Header[6].TSR", 1),
    ("aneTD.Header[6].SPC", 0),
    ("aneTD.Header[6].DPC", 0),
    ("aneTD.Header[6].TSE", 1),
    ("aneTD.Header[6].NextPriority", 0),
    ("aneTD.Header[6].TDE", 0),
    ("aneTD.Header[6].SrcLoc", 1),
    ("aneTD.Header[6].DstLoc", 1),
    ("aneTD.Header[6].TQDis", 0),
    ("aneTD.Header[8].TBase", 0),
    ("aneTD.Header[9].KBase1", 0),
    ("aneTD.Header[9].KBE1", 0),
    ("aneTD.Header[9].KBase2", 0),
    ("aneTD.Header[9].KBE2", 0),
];

/// The TD header as the simulator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Chain link.
    pub link: Link,
    /// NextSize.
    pub next_size: u64,
    /// RBase0 and, when RBE1, RBase1.
    pub sources: [Option<u8>; 2],
    /// WBase.
    pub dest: u8,
    /// ENE.
    pub ene: u64,
    /// KBase0 when KBE0.
    pub kbar: Option<u8>,
}

fn bar(r: &mut Reader, base: &str, enable: &str, allowed: &[u64]) -> Result<Option<u8>, SimError> {
    let on = r.fixed(enable, allowed)? == 1;
    let b = r.get(base)?;
    match (on, b) {
        (true, _) => Ok(u8::try_from(b).ok()),
        (false, 0) => Ok(None),
        (false, _) => Err(r.err(base, b, format!("a BAR index with {enable} = 0 is not modelled"))),
    }
}

/// Decodes the 0x28-byte header.
pub fn header(r: &mut Reader) -> Result<Header, SimError> {
    for name in HEADER_IGNORED {
        r.ignore(name)?;
    }
    for (name, v) in HEADER_FIXED {
        r.fixed(name, &[v])?;
    }
    // TBE names __text (TBase 0) as the base of NextPointer on every task but the last
    // (the current compiler); v4.2.1 leaves it clear.
    r.fixed("aneTD.Header[8].TBE", &[0, 1])?;
    r.fixed("aneTD.Header[9].KBase3", &[0])?;
    r.fixed("aneTD.Header[9].KBE3", &[0])?;
    let link = Link { end: r.get("aneTD.Header[0].EON")? == 1, next: r.get("aneTD.Header[7].NextPointer")? };
    let next_size = r.get("aneTD.Header[1].NextSize")?;
    let src0 = bar(r, "aneTD.Header[8].RBase0", "aneTD.Header[8].RBE0", &[1])?;
    let src1 = bar(r, "aneTD.Header[8].RBase1", "aneTD.Header[8].RBE1", &[0, 1])?;
    let dest = bar(r, "aneTD.Header[8].WBase", "aneTD.Header[8].WBE", &[1])?.unwrap_or(0);
    // ENE: 0 for a planar-engine task, ActiveNE + 1 for an NE task (checked against
    // Common.Cfg.ActiveNE when the Common block is read).
    let ene = r.fixed("aneTD.Header[8].ENE", &[0, 1, 2, 3, 4, 5])?;
    let kbar = bar(r, "aneTD.Header[9].KBase0", "aneTD.Header[9].KBE0", &[0, 1])?;
    Ok(Header { link, next_size, sources: [src0, src1], dest, ene, kbar })
}

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

/// Decodes the Common block; `pe` selects the planar-engine values of its unnamed words.
pub fn common(r: &mut Reader, pe: bool, two_sources: bool) -> Result<Common, SimError> {
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
    if !two_sources && code2 != 0 {
        return Err(r.err("word 0x130 bits 3:2", code2, "a second-source format without a second source"));
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
    common_config(r, pe, two_sources)?;
    Ok(Common { in_dims, out_dims, in_fmt: [in_fmt, in_fmt2], out_fmt, window, ocg_size, groups, unicast })
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

/// Common.Cfg, TaskInfo, DPE and the unnamed Common words.
fn common_config(r: &mut Reader, pe: bool, two_sources: bool) -> Result<(), SimError> {
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
    let v = r.other_bits(0x15C);
    let cfg = cfg_unnamed(pe, two_sources);
    if !cfg.contains(&v) {
        return Err(r.err("word 0x15c unnamed bits", v.into(), format!("{cfg:#x?} is modelled for this engine path")));
    }
    Ok(())
}

/// The unnamed bits of Common.Cfg: bit 0 always; on planar-engine tasks bit 1 when the
/// second operand comes from DRAM, and the operation class in bits 4..6 (2 one operand,
/// 3 two operands, 4 an operand broadcast from L2).
fn cfg_unnamed(pe: bool, two_sources: bool) -> Vec<u32> {
    match (pe, two_sources) {
        (false, _) => vec![0x1],
        (true, false) => vec![0x21],
        (true, true) => vec![0x33, 0x43],
    }
}

/// Decodes TD `index` at the start of `bytes`: the task and where the chain goes.
pub fn decode(img: &TdImage, index: usize) -> Result<Task, SimError> {
    let mut r = Reader::new(img.clone(), index)?;
    let h = header(&mut r)?;
    let pe = h.ene == 0;
    let two = h.sources[1].is_some();
    let c = common(&mut r, pe, two)?;
    let (sources, dest) = td_dma::tiles(&mut r, &h, &c, pe)?;
    let l2 = td_dma::l2(&mut r, two)?;
    let kernel = td_engine::kernel_dma(&mut r, h.kbar.is_some())?;
    let unit = td_engine::unit(&mut r, &h, &c, &kernel, l2.padding)?;
    check_l2_mode(&r, &l2)?;
    r.finish()?;
    assemble(&r, &c, sources, dest, &l2, unit)
}

fn check_l2_mode(r: &Reader, l2: &L2Layout) -> Result<(), SimError> {
    if l2.result_mode != l2.dst_mode {
        let reason = format!("differs from L2.ResultCfg.L2BfrMode = {}; only equal modes are modelled", l2.result_mode);
        return Err(r.err("TileDMADst.DMAConfig.L2BfrMode", l2.dst_mode, reason));
    }
    Ok(())
}

fn assemble(
    r: &Reader,
    c: &Common,
    sources: Vec<Tile>,
    dest: Tile,
    l2: &L2Layout,
    unit: Unit,
) -> Result<Task, SimError> {
    let first = l2.sources.first().copied().ok_or_else(|| r.err("L2.SourceCfg", 0, "no source region"))?;
    // L2BfrMode 1: the result is laid out like the first source (Apple's relu, sigmoid
    // and sum write no result strides); 0: by the convolution-result strides.
    let l2_result = match l2.result_mode {
        1 => Region { base: l2.result.base, ..first },
        _ => l2.result,
    };
    Ok(Task {
        index: r.td(),
        in_dims: c.in_dims,
        out_dims: c.out_dims,
        sources,
        dest,
        l2_sources: l2.sources.clone(),
        l2_result,
        repeats: if matches!(unit, Unit::Pe(_)) { c.groups } else { 1 },
        unit,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    /// TD 0 of Apple's program `name`, decoded, and whether it ends the network.
    fn apple(name: &str) -> (Task, bool) {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../shared/fixtures/apple-h13/hwx/{name}.hwx"));
        let f = anec_codegen::parse_hwx(&std::fs::read(path).unwrap()).unwrap();
        let tasks = anec_backend_h13::chain::read(&f.text, 0x9D, 1).unwrap();
        (decode(&tasks[0].task.image, 0).unwrap(), tasks.len() == 1)
    }

    #[test]
    fn apple_relu_and_sigmoid_are_pass_tasks() {
        let (t, end) = apple("relu");
        assert!(end);
        assert_eq!(t.in_dims, Dims { c: 1, d: 1, h: 1, w: 77 });
        assert_eq!((t.sources[0].bar, t.sources[0].row, t.dest.bar), (5, 0xC0, 4));
        assert_eq!(t.l2_sources[0], Region { base: 0, channel: 0xA0, row: 0xA0, depth: 0 });
        // L2BfrMode 1: the result takes the source's layout at ResultBase.
        assert_eq!(t.l2_result, Region { base: 0xA0, channel: 0xA0, row: 0xA0, depth: 0 });
        let Unit::Ne(ne) = t.unit else { panic!("relu is an NE task") };
        assert_eq!((ne.mac, ne.nonlinear, ne.post_scale, ne.kbar), (Mac::Sum, Nonlinear::Relu, 1.0, None));
        let Unit::Ne(ne) = apple("sigmoid").0.unit else { panic!("sigmoid is an NE task") };
        assert_eq!((ne.nonlinear, ne.kbar), (Nonlinear::Table(Stream { addr: 0, size: 0x80 }), Some(1)));
    }

    #[test]
    fn apple_conv_reads_three_chunks_and_sum_is_a_planar_add() {
        let (t, _) = apple("conv");
        let Unit::Ne(ne) = t.unit else { panic!("conv is an NE task") };
        let chunks = (0..3).map(|i| Stream { addr: 0x40 * i, size: 0x40 }).collect();
        assert_eq!(ne.mac, Mac::Kernel { fmt: Fmt::F16, ocg_size: 0, chunks });
        assert_eq!(t.l2_result, Region { base: 0x30, channel: 0x10, row: 0x30, depth: 0 });
        let (t, _) = apple("sum");
        assert_eq!(t.unit, Unit::Pe(PeTask { op: PeOp::Add, negate: false, scale: 1.0, bias: 0.0 }));
        assert_eq!((t.sources[0].bar, t.sources[1].bar), (6, 5));
        assert_eq!((t.sources[1].row, t.sources[1].plane, t.sources[1].depth), (0x40, 0x40, 0x1000));
        assert_eq!(t.l2_sources[1], Region { base: 0x440, channel: 0x10, row: 0x420, depth: 0 });
    }
}
