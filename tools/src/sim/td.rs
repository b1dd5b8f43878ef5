//! One TD decoded by field name into a typed task: the assembly of the per-block decoders
//! of `td_header.rs` (chain, BARs, engine enable), `td_common.rs` (Common block),
//! `td_dma.rs` (tile DMA, L2), `td_engine.rs` (kernel DMA, NE, PE), `td_pair.rs` (a
//! result kept in L2, an operand read from L2, a source streamed to the NE) and
//! `td_reduce.rs` (the planar engine's reduction: its view, L2 layout and PE block).
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
use super::td_reduce;
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
    /// Channels interleaved element by element in each plane (Fmt.Interleave: B of a
    /// destination written as a runtime kernel, else 1; `dma::store`).
    pub interleave: usize,
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
    /// Unity kernel with OpMode 3 and UnicastCin = Cin: output channel 0 is the maximum
    /// over every input channel of the same pixel (Apple's reduce_max over C).
    ChannelMax,
    /// Unity kernel with OpMode 0 and no UnicastEn: output channel 0 is the sum over every
    /// input channel of the same pixel (Apple's softmax over C).
    ChannelSum,
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
    /// A ReLU of the result (PE config bit 5).
    pub relu: bool,
    /// The fp16 scale of BiasScale (high half).
    pub scale: f32,
    /// The fp16 bias of BiasScale (low half).
    pub bias: f32,
}

/// What a planar-engine reduction combines (PE word 0x22c, low bits: 0, 2, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// The sum (a mean is the sum times 1/N, the final scale).
    Sum,
    /// The maximum.
    Max,
    /// The minimum.
    Min,
}

/// What a planar-engine reduction does with its reduced value last (word 0x22c bits 12
/// and 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostOp {
    /// Nothing.
    None,
    /// Bit 12: `1 / v` (softmax's denominator).
    Reciprocal,
    /// Bit 13: `1 / sqrt(v)` (the layer norms' rstd).
    Rsqrt,
}

/// A planar-engine reduction (Common.Cfg 0x51, or 0x61 with a second operand from L2):
/// per element of a channel of the view `u = ±a (+ b)`, squared when word 0x22c bit 4
/// says so, combined by `op` over depth, rows and columns, then
/// `post((v + bias) * scale * final_scale + epsilon)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeReduce {
    /// What it combines.
    pub op: ReduceOp,
    /// The fp16 bias of BiasScale (low half of word 0x230).
    pub bias: f32,
    /// The fp16 scale of BiasScale (high half).
    pub scale: f32,
    /// The fp32 of word 0x238 (1/N for a mean).
    pub final_scale: f32,
    /// The fp16 low half of word 0x234, added before the post-op (the layer norms' epsilon
    /// with rsqrt; 0 otherwise).
    pub epsilon: f32,
    /// The post-op.
    pub post: PostOp,
    /// Word 0x22c bit 4: each element is squared before it is combined.
    pub square: bool,
    /// Word 0x22c bit 16: operand 1 is negated (the layer norms' `x - mean`, the mean
    /// operand 1).
    pub negate1: bool,
    /// Word 0x158 bit 0x400: the results of a group go along W of one packed row (channel
    /// c at c x element size); otherwise one value per channel, one channel stride apart.
    pub packed: bool,
}

#[cfg(test)]
impl PeReduce {
    /// A reduction `op` with the final scale `final_scale` and nothing else.
    pub fn plain(op: ReduceOp, final_scale: f32) -> PeReduce {
        PeReduce {
            op,
            bias: 0.0,
            scale: 1.0,
            final_scale,
            epsilon: 0.0,
            post: PostOp::None,
            square: false,
            negate1: false,
            packed: false,
        }
    }
}

/// The engine a task runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    /// Neural engine (ENE 1 or 3).
    Ne(NeTask),
    /// Planar engine only (ENE 0).
    Pe(PeTask),
    /// The planar engine's per-channel reduction (ENE 0, Common.Cfg 0x51).
    Reduce(PeReduce),
}

/// One decoded TD.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Index in the chain.
    pub index: usize,
    /// Source dimensions (every source has them).
    pub in_dims: Dims,
    /// Result dimensions (Common OutDim, Cout and word 0x140; a reduction states its view,
    /// equal to the source's).
    pub out_dims: Dims,
    /// The tile-DMA sources (one or two).
    pub sources: Vec<Tile>,
    /// The first source is not loaded: the task reads its L2 region as an earlier task
    /// left it (TileDMASrc.DMAConfig.En 0, L2.SourceCfg.SourceType 0).
    pub resident: bool,
    /// Bytes between the first source's L2 regions of successive repeats: the group step
    /// (word 0x1f8) of a reduction reading its source in place with NumGroups > 1; 0
    /// otherwise (a loaded source moves by its tile's GroupStride instead).
    pub source_step: u64,
    /// The box the first source holds: the source dimensions, with extent 1 along each
    /// axis operand 1 is broadcast along (word 0x158 bits 0x1, 0x2, 0x8; 0x100: one value
    /// per channel, packed).
    pub source_box: Dims,
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
    /// The NE writes its `C x H x W` result with C and W swapped (Common.Cfg bit 28):
    /// element `(c, h, w)` at ResultBase + h x row + w x channel + c x element size (a
    /// `Cout x 1 x 1` result is one packed row).
    pub transposed: bool,
    /// The first source is streamed to the engine: its L2 channel stride (0x100 on the NE,
    /// 0x80 for a planar-engine reduction) is shorter than its row, so the values go from
    /// the tile DMA to the engine through a staging area of one piece (a channel stride)
    /// per row, channel and depth slice, whose bytes are not modelled.
    pub streamed: bool,
    /// The result streams out the same way (`td_pair::result_streamed`): its L2 region is
    /// a staging area of one piece (its channel stride) per row and channel, whose bytes
    /// are not modelled; the values go from the engine to the destination tile DMA.
    pub result_streamed: bool,
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
    /// The box the L2 result holds (and the destination stores, per repeat): `W x H x C`
    /// when the NE transposes it, for a reduction one value per channel of the view
    /// (`C x 1 x 1`, or `1 x 1 x C` packed along one row).
    pub fn result_dims(&self) -> Dims {
        let o = self.out_dims;
        match (self.transposed, &self.unit) {
            (true, _) => Dims { c: o.w, d: 1, h: o.h, w: o.c },
            (false, Unit::Reduce(p)) if p.packed => Dims { c: 1, d: 1, h: 1, w: o.c },
            (false, Unit::Reduce(_)) => Dims { c: o.c, d: 1, h: 1, w: 1 },
            (false, _) => o,
        }
    }

    /// The box the L2 result region spans: the result's, or one piece (its channel stride)
    /// per row and channel when it streams out.
    pub fn result_region_dims(&self) -> Dims {
        let dims = self.result_dims();
        let piece = usize::try_from(self.l2_result.channel).unwrap_or(usize::MAX);
        match self.result_streamed {
            true => Dims { w: dims.w.min(piece / self.dest.fmt.size().max(1)), ..dims },
            false => dims,
        }
    }

    /// The box the first source occupies in L2: one piece (its channel stride) per row,
    /// channel and depth slice when it is streamed; its broadcast box when operand 1 is
    /// broadcast.
    pub fn source_dims(&self) -> Dims {
        let size = self.sources.first().map_or(1, |t| t.fmt.size());
        let piece = self.l2_sources.first().map_or(1, |r| usize::try_from(r.channel).unwrap_or(usize::MAX));
        match self.streamed {
            true => Dims { w: self.in_dims.w.min(piece / size), ..self.in_dims },
            false => self.source_box,
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
    let l2 = td_dma::l2(&mut r, &c)?;
    let kernel = td_engine::kernel_dma(&mut r, h.kbar.is_some())?;
    let unit = td_engine::unit(&mut r, &h, &c, &kernel, l2.padding)?;
    check_l2_mode(&r, &l2)?;
    if l2.result_interleave != tiles.dest.interleave as u64 {
        let reason = format!("differs from L2.ResultCfg.DMAInterleave = {}", l2.result_interleave);
        return Err(r.err("TileDMADst.Fmt.Interleave", tiles.dest.interleave as u64, reason));
    }
    let source_interleave = tiles.sources.first().filter(|_| tiles.loaded).map_or(1, |s| s.interleave as u64);
    if l2.source_interleave != source_interleave {
        let reason = format!("differs from L2.SourceCfg.DMAInterleave = {}", l2.source_interleave);
        return Err(r.err("TileDMASrc.Fmt.Interleave", source_interleave, reason));
    }
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
/// only for a task with one source that runs once, or a reduction looping over groups
/// (each group's view one step further, `td_reduce::resident_region`).
fn check_resident(r: &Reader, tiles: &Tiles, l2: &L2Layout, repeats: usize, reduce: bool) -> Result<(), SimError> {
    let field = "L2.SourceCfg.SourceType";
    if l2.resident == tiles.loaded {
        let reason = match tiles.loaded {
            true => "0 (read from L2, not loaded) with TileDMASrc.DMAConfig.En 1",
            false => "a source that is not loaded (TileDMASrc.DMAConfig.En 0) is read from L2 with SourceType 0 only",
        };
        return Err(r.err(field, if l2.resident { 0 } else { 1 }, reason));
    }
    if l2.resident && (tiles.sources.len() > 1 || (repeats > 1 && !reduce)) {
        let reason = "a source read from L2 is modelled for a task with one source that runs once (NumGroups 1), or \
                      a reduction over groups";
        return Err(r.err(field, 0, reason));
    }
    Ok(())
}

/// The dense L2 result of a convolution under L2BfrMode 1 (Apple's current compiler
/// writes no result strides): channel stride = Wout x element size rounded up to 16
/// bytes, row stride = every output channel of every group x channel stride.
fn dense_result(r: &Reader, dims: Dims, base: u64, size: usize, groups: usize) -> Result<Region, SimError> {
    let channel = (dims.w as u64).saturating_mul(size as u64).div_ceil(16).saturating_mul(16);
    let row = channel.saturating_mul(dims.c as u64).saturating_mul(groups as u64);
    let region = Region { base, channel, row, depth: 0 };
    let end = base.saturating_add(row.saturating_mul(dims.h as u64));
    if end > L2_SIZE as u64 {
        let reason = format!(
            "the dense result (rows of {row:#x} bytes, {} rows) ends at {end:#x}, past the {L2_SIZE:#x}-byte L2",
            dims.h
        );
        return Err(r.err("L2.ResultBase.Addr", base / 16, reason));
    }
    Ok(region)
}

fn assemble(r: &Reader, c: &Common, tiles: Tiles, l2: &L2Layout, unit: Unit) -> Result<Task, SimError> {
    let first = l2.sources.first().copied().ok_or_else(|| r.err("L2.SourceCfg", 0, "no source region"))?;
    let conv = matches!(&unit, Unit::Ne(NeTask { mac: Mac::Kernel { .. }, .. }));
    let repeats = match unit {
        Unit::Pe(_) | Unit::Reduce(_) => c.groups,
        Unit::Ne(_) if conv => c.groups,
        Unit::Ne(_) => 1,
    };
    check_resident(r, &tiles, l2, repeats, matches!(unit, Unit::Reduce(_)))?;
    td_pair::check_result(r, c, &tiles, l2)?;
    let (source_box, first) = td_pair::source_box(r, c, l2, first)?;
    let operand = td_pair::operand(r, c, l2)?;
    let (l2_result, result_step) = match &unit {
        Unit::Reduce(p) => td_reduce::result(r, c, &tiles, l2, p, first)?,
        _ => {
            // L2BfrMode 1: a convolution's result is dense (see `dense_result`); any other
            // task's is laid out like its full-shaped source: the first, or operand 2 when
            // operand 1 is broadcast (Apple's relu, sigmoid, sum and softmax's normalize
            // step write no result strides). L2BfrMode 0: by the convolution-result strides.
            let full = match operand {
                Some(op) if source_box != c.in_dims => op.region,
                _ => first,
            };
            let size = tiles.dest.fmt.size();
            let streamed = td_pair::streamed(c, &tiles, l2, matches!(unit, Unit::Ne(_)));
            let transposed_stream = c.transposed && streamed && !l2.kept;
            let region = match (l2.result_mode, conv) {
                // Written transposed to DRAM from a source streamed in pieces: streamed
                // out in pieces of the same size, one per channel it writes (Apple's
                // regime-B matmul preparation writes a 2 MiB x^T this way); the staging
                // area's bytes are not modelled.
                (1, false) if transposed_stream => {
                    // Each written channel (a column of the source) holds `out_dims.c`
                    // values: one piece of them at most, in whole granules.
                    let o = c.out_dims;
                    let row_bytes = (o.c as u64).saturating_mul(size as u64).div_ceil(16).saturating_mul(16);
                    let channel = row_bytes.min(first.channel);
                    Region { base: l2.result.base, channel, row: channel.saturating_mul(o.w as u64), depth: 0 }
                }
                // Written transposed to DRAM: the streamed result's L2 layout is not
                // observable; modelled as the dense box of the transposed result.
                (1, _) if c.transposed => {
                    let o = c.out_dims;
                    dense_result(r, Dims { c: o.w, d: 1, h: o.h, w: o.c }, l2.result.base, size, 1)?
                }
                (1, true) => dense_result(r, c.out_dims, l2.result.base, size, repeats)?,
                // The source streamed in pieces (rows wider than 0x100 bytes): the aliased
                // result is not laid out like those pieces; modelled as the dense box. So is
                // the result of a task widening its elements (an 8-bit source converted to
                // fp16: Apple's `cast_b_to_f16_1x1x64x1`), which the source's byte layout
                // cannot hold when a row is wider than 8 elements; no record shows where the
                // engine puts it, and the encoder reserves the dense box after the source.
                (1, false) if streamed || size > c.in_fmt[0].size() => {
                    dense_result(r, c.out_dims, l2.result.base, size, 1)?
                }
                (1, false) => Region { base: l2.result.base, ..full },
                _ => l2.result,
            };
            // A convolution's groups write their channels side by side.
            let step = if conv { (c.out_dims.c as u64).saturating_mul(region.channel) } else { 0 };
            (region, step)
        }
    };
    let streamed = td_pair::streamed(c, &tiles, l2, matches!(unit, Unit::Ne(_)));
    // A convolution's and a reduction's results have their own layouts.
    let own_layout = conv || matches!(unit, Unit::Reduce(_));
    let transposed_stream = c.transposed && streamed && !l2.kept && !conv && l2.result_mode == 1;
    let result_streamed = transposed_stream || (!own_layout && td_pair::result_streamed(r, c, l2, streamed)?);
    let mut l2_sources = l2.sources.clone();
    if let Some(s) = l2_sources.first_mut() {
        *s = first;
    }
    Ok(Task {
        index: r.td(),
        in_dims: c.in_dims,
        out_dims: c.out_dims,
        sources: tiles.sources,
        resident: l2.resident,
        source_step: l2.source_step,
        source_box,
        dest: tiles.dest,
        l2_sources,
        l2_result,
        result_step,
        repeats,
        unit,
        store: tiles.stored,
        transposed: c.transposed,
        streamed,
        result_streamed,
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
            table: false,
        };
        assert_eq!(ne.mac, Mac::Kernel { layout: Box::new(layout), depthwise: false });
        assert_eq!(t.l2_result, Region { base: 0x30, channel: 0x10, row: 0x30, depth: 0 });
        let (t, _) = apple("sum");
        assert_eq!(
            t.unit,
            Unit::Pe(PeTask { op: PeOp::Add, negate: false, abs: false, relu: false, scale: 1.0, bias: 0.0 })
        );
        assert_eq!((t.sources[0].bar, t.sources[1].bar), (6, 5));
        assert_eq!((t.sources[1].row, t.sources[1].plane, t.sources[1].depth), (0x40, 0x40, 0x1000));
        assert_eq!(t.l2_sources[1], Region { base: 0x440, channel: 0x10, row: 0x420, depth: 0 });
    }
}
