//! One TD decoded by field name into a typed task: the assembly of the per-block decoders
//! of `td_header.rs` (chain, BARs, engine enable), `td_common.rs` (Common block),
//! `td_dma.rs` (tile DMA, L2), `td_engine.rs` (kernel DMA, NE, PE) and `td_pair.rs` (a
//! result kept in L2, an operand read from L2, a source streamed to the NE).
//!
//! Every named field of the register map is looked at; each one is either interpreted,
//! accepted as having no effect on values (cache hints, event logging, scheduling), or
//! restricted to the values the modelled behaviour covers. Anything else is a
//! [`SimError::Field`] naming the TD, the field and the value.

use super::error::SimError;
use super::kernel::Layout;
use super::memory::{Dims, Fmt, Region, L2_SIZE};
use super::reader::Reader;
use super::td_dma::{self, L2Layout, Tiles};
use super::td_engine;
use super::td_pair;
use anec_backend_h13::td::TdImage;

pub use super::td_common::{common, Common, Operands};
pub use super::td_header::{header, Header};

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
        /// Where the coefficients lie.
        layout: Box<Layout>,
        /// Output channel c reads input channel c only (UnicastEn with NumGroups 1).
        depthwise: bool,
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
    /// The absolute value of the result (PE config bit 6).
    pub abs: bool,
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
    /// The first source is not loaded: the task reads its L2 region as an earlier task
    /// left it (TileDMASrc.DMAConfig.En 0, L2.SourceCfg.SourceType 0).
    pub resident: bool,
    /// The tile-DMA destination.
    pub dest: Tile,
    /// L2 regions of each source.
    pub l2_sources: Vec<Region>,
    /// L2 region of the result (of the first repeat).
    pub l2_result: Region,
    /// Bytes between the L2 results of successive repeats (a convolution's groups lie
    /// side by side in one dense result; 0 for the planar engine's batch loop).
    pub result_step: u64,
    /// What computes.
    pub unit: Unit,
    /// How many times the task runs, each time one group stride further in every tile:
    /// NumGroups (the planar engine's batch loop, a convolution's groups; 1 for the NE's
    /// unity kernel).
    pub repeats: usize,
    /// The result goes to DRAM through the destination tile DMA; otherwise it is kept in
    /// L2 for a later task (ResultType 0, DstLoc 0, TileDMADst.DMAConfig.En 0).
    pub store: bool,
    /// The NE writes its `Cout x 1 x 1` result transposed, as one packed row of Cout
    /// values at the result base (Common.Cfg bit 28).
    pub packed: bool,
    /// The first source is streamed to the NE: its L2 channel stride (0x100) is shorter
    /// than its row, so the values go from the tile DMA to the NE through a staging area
    /// of one 0x100-byte piece per row and channel, whose bytes are not modelled.
    pub streamed: bool,
    /// The planar engine's operand(s) read from L2 where an earlier task left them.
    pub operand: Option<L2Operand>,
}

/// An operand the planar engine reads from L2 (Common.Cfg 0x31 / 0x41): a box of the
/// source's dimensions with extent 1 along each broadcast axis (word 0x158), or a packed
/// vector of one value per channel (0x200: channel c at base + c x element size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Operand {
    /// Where operand 2 lies.
    pub region: Region,
    /// The box it holds (broadcast to the source's dimensions when read).
    pub dims: Dims,
    /// Its element format (ChCfg bits 3:2).
    pub fmt: Fmt,
    /// Word 0x158.
    pub broadcast: u32,
    /// Operand 3 of a three-operand task (Cfg 0x41): the same box one row stride further.
    pub third: Option<Region>,
}

impl Task {
    /// The box the L2 result holds: `1 x 1 x Cout` when packed.
    pub fn result_dims(&self) -> Dims {
        match self.packed {
            true => Dims { c: 1, d: 1, h: 1, w: self.out_dims.c },
            false => self.out_dims,
        }
    }

    /// The box the first source occupies in L2: one 0x100-byte piece per row and channel
    /// when it is streamed.
    pub fn source_dims(&self) -> Dims {
        let size = self.sources.first().map_or(1, |t| t.fmt.size());
        match self.streamed {
            true => Dims { w: self.in_dims.w.min(td_pair::STREAM_PIECE / size), ..self.in_dims },
            false => self.in_dims,
        }
    }
}

/// Decodes TD `index` at the start of `bytes`: the task and where the chain goes.
pub fn decode(img: &TdImage, index: usize) -> Result<Task, SimError> {
    let mut r = Reader::new(img.clone(), index)?;
    let h = header(&mut r)?;
    let pe = h.ene == 0;
    let c = common(&mut r, &h)?;
    let tiles = td_dma::tiles(&mut r, &h, &c, pe)?;
    let l2 = td_dma::l2(&mut r, c.operands)?;
    let kernel = td_engine::kernel_dma(&mut r, h.kbar.is_some())?;
    let unit = td_engine::unit(&mut r, &h, &c, &kernel, l2.padding)?;
    check_l2_mode(&r, &l2)?;
    r.finish()?;
    assemble(&r, &c, tiles, &l2, unit)
}

fn check_l2_mode(r: &Reader, l2: &L2Layout) -> Result<(), SimError> {
    if l2.result_mode != l2.dst_mode {
        let reason = format!("differs from L2.ResultCfg.L2BfrMode = {}; only equal modes are modelled", l2.result_mode);
        return Err(r.err("TileDMADst.DMAConfig.L2BfrMode", l2.dst_mode, reason));
    }
    Ok(())
}

/// A source read from L2 (SourceType 0) exactly when the tile DMA does not load it, and
/// only for a task with one source that runs once.
fn check_resident(r: &Reader, tiles: &Tiles, l2: &L2Layout, repeats: usize) -> Result<(), SimError> {
    let field = "L2.SourceCfg.SourceType";
    if l2.resident == tiles.loaded {
        let reason = match tiles.loaded {
            true => "0 (read from L2, not loaded) with TileDMASrc.DMAConfig.En 1",
            false => "a source that is not loaded (TileDMASrc.DMAConfig.En 0) is read from L2 with SourceType 0 only",
        };
        return Err(r.err(field, if l2.resident { 0 } else { 1 }, reason));
    }
    if l2.resident && (tiles.sources.len() > 1 || repeats > 1) {
        let reason = "a source read from L2 is modelled for a task with one source that runs once (NumGroups 1)";
        return Err(r.err(field, 0, reason));
    }
    Ok(())
}

/// The dense L2 result of a convolution under L2BfrMode 1 (Apple's current compiler
/// writes no result strides): channel stride = Wout x element size rounded up to 16
/// bytes, row stride = every output channel of every group x channel stride.
fn conv_result(r: &Reader, c: &Common, base: u64, size: usize, groups: usize) -> Result<Region, SimError> {
    let channel = (c.out_dims.w as u64).saturating_mul(size as u64).div_ceil(16).saturating_mul(16);
    let row = channel.saturating_mul(c.out_dims.c as u64).saturating_mul(groups as u64);
    let region = Region { base, channel, row, depth: 0 };
    let end = base.saturating_add(row.saturating_mul(c.out_dims.h as u64));
    if end > L2_SIZE as u64 {
        let reason = format!(
            "the dense convolution result (rows of {row:#x} bytes, {} rows) ends at {end:#x}, past the {L2_SIZE:#x}-byte L2",
            c.out_dims.h
        );
        return Err(r.err("L2.ResultBase.Addr", base / 16, reason));
    }
    Ok(region)
}

fn assemble(r: &Reader, c: &Common, tiles: Tiles, l2: &L2Layout, unit: Unit) -> Result<Task, SimError> {
    let first = l2.sources.first().copied().ok_or_else(|| r.err("L2.SourceCfg", 0, "no source region"))?;
    let conv = matches!(&unit, Unit::Ne(NeTask { mac: Mac::Kernel { .. }, .. }));
    let repeats = match unit {
        Unit::Pe(_) => c.groups,
        Unit::Ne(_) if conv => c.groups,
        Unit::Ne(_) => 1,
    };
    check_resident(r, &tiles, l2, repeats)?;
    // L2BfrMode 1: a convolution's result is dense (see `conv_result`); any other task's
    // is laid out like the first source (Apple's relu, sigmoid and sum write no result
    // strides). L2BfrMode 0: by the convolution-result strides.
    let l2_result = match (l2.result_mode, conv) {
        (1, true) => conv_result(r, c, l2.result.base, tiles.dest.fmt.size(), repeats)?,
        (1, false) => Region { base: l2.result.base, ..first },
        _ => l2.result,
    };
    // A convolution's groups write their channels side by side.
    let result_step = if conv { (c.out_dims.c as u64).saturating_mul(l2_result.channel) } else { 0 };
    td_pair::check_result(r, c, &tiles, l2)?;
    let operand = td_pair::operand(r, c, l2)?;
    let streamed = td_pair::streamed(c, &tiles, l2, matches!(unit, Unit::Ne(_)));
    Ok(Task {
        index: r.td(),
        in_dims: c.in_dims,
        out_dims: c.out_dims,
        sources: tiles.sources,
        resident: l2.resident,
        dest: tiles.dest,
        l2_sources: l2.sources.clone(),
        l2_result,
        result_step,
        repeats,
        unit,
        store: tiles.stored,
        packed: c.packed,
        streamed,
        operand,
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
        let mut chunks = [None; 16];
        (0..3).for_each(|i| chunks[i] = Some(Stream { addr: 0x40 * i as u64, size: 0x40 }));
        let layout = Layout {
            fmt: Fmt::F16,
            ocg_size: 0,
            chunks,
            sparse: false,
            bias: false,
            groups: 1,
            cin: 3,
            cout: 3,
            kh: 1,
            kw: 1,
        };
        assert_eq!(ne.mac, Mac::Kernel { layout: Box::new(layout), depthwise: false });
        assert_eq!(t.l2_result, Region { base: 0x30, channel: 0x10, row: 0x30, depth: 0 });
        let (t, _) = apple("sum");
        assert_eq!(t.unit, Unit::Pe(PeTask { op: PeOp::Add, negate: false, abs: false, scale: 1.0, bias: 0.0 }));
        assert_eq!((t.sources[0].bar, t.sources[1].bar), (6, 5));
        assert_eq!((t.sources[1].row, t.sources[1].plane, t.sources[1].depth), (0x40, 0x40, 0x1000));
        assert_eq!(t.l2_sources[1], Region { base: 0x440, channel: 0x10, row: 0x420, depth: 0 });
    }
}
