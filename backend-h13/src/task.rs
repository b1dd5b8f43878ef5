//! A task: everything one TD needs, in engine terms, before register encoding.
//!
//! The planner (`plan`) turns each layer into a [`Task`]; the encoders (`encode`) turn a
//! task into a [`crate::td::TdImage`]. Keeping the two apart means every register value is
//! derived from these few engine-level facts (shapes, strides, BARs, kernel chunks).

use crate::layout::Strides;
use anec_ir::{DType, TensorType};

/// Which engine path a task runs on; the TD header's ENE field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Planar engine only (two-input elementwise): ENE 0.
    Pe,
    /// Neural engine in pass-through mode (neuron, scalar gain/offset): ENE 1.
    NePass,
    /// Neural engine convolution: ENE 3.
    NeConv,
    /// Neural engine pooling (a unity-kernel window reduction): ENE 3, inferred.
    NePool,
}

impl Engine {
    /// True for convolution tasks.
    pub fn is_conv(self) -> bool {
        self == Engine::NeConv
    }

    /// True when the task reduces a spatial window (convolution, pooling): the result is
    /// laid out through the L2 convolution-result strides, not aliased to the source.
    pub fn windowed(self) -> bool {
        matches!(self, Engine::NeConv | Engine::NePool)
    }

    /// True when each output channel reads only its own input channel (unity kernel:
    /// neuron, gain/offset, pooling).
    pub fn channelwise(self) -> bool {
        matches!(self, Engine::NePass | Engine::NePool)
    }

    /// True when the neural engine runs (kernel DMA and NE blocks are live).
    pub fn uses_ne(self) -> bool {
        self != Engine::Pe
    }
}

/// A tensor as a TD sees it: which BAR holds it and how it is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surface {
    /// BAR index of the buffer.
    pub bar: u8,
    /// Shape and element type.
    pub ty: TensorType,
    /// DRAM strides.
    pub strides: Strides,
    /// Byte offset of the task's first element in the buffer (a slice of the output
    /// channels when a layer runs as several tasks; 0 otherwise).
    pub offset: u64,
}

/// Convolution geometry (identity for non-convolution tasks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeom {
    /// Kernel height.
    pub kh: u32,
    /// Kernel width.
    pub kw: u32,
    /// Vertical stride.
    pub sy: u32,
    /// Horizontal stride.
    pub sx: u32,
    /// Top padding.
    pub pad_top: u32,
    /// Left padding.
    pub pad_left: u32,
    /// Groups.
    pub groups: u32,
    /// log2 of the output channels per kernel-DMA chunk.
    pub ocg_size: u32,
    /// Each output channel reads only its own input channel (depthwise: UnicastEn with
    /// one group).
    pub unicast: bool,
    /// The kernel is in the sparse form (KernelCfg.SparseFmt).
    pub sparse: bool,
}

impl Default for ConvGeom {
    fn default() -> Self {
        ConvGeom {
            kh: 1,
            kw: 1,
            sy: 1,
            sx: 1,
            pad_top: 0,
            pad_left: 0,
            groups: 1,
            ocg_size: 0,
            unicast: false,
            sparse: false,
        }
    }
}

/// Where a task's source comes from and whether it stays in L2 for the next task (Apple
/// splits a convolution whose L2 footprint is too large into tasks over slices of the
/// output channels that share one L2 copy of the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceResidency {
    /// Read from DRAM by the tile DMA (L2 SourceType 2).
    #[default]
    Load,
    /// Read from DRAM and kept in L2 for the tasks that follow (SourceType 1).
    LoadAndKeep,
    /// Already in L2, left there by the previous task: no tile-DMA read (SourceType 0).
    Resident,
}

/// One chunk of the kernel stream, relative to the start of `__const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelChunk {
    /// Byte offset in `__const`.
    pub offset: u64,
    /// Size in bytes (a multiple of 64).
    pub size: u64,
}

/// What the NE's nonlinear stage does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nonlinear {
    /// No activation.
    None,
    /// Native ReLU (NonlinearMode 1).
    Relu,
    /// Table-driven activation (NonlinearMode 2), loaded through kernel chunk 0.
    Table,
}

impl Nonlinear {
    /// The NonlinearMode value.
    pub fn mode(self) -> u64 {
        match self {
            Nonlinear::None => 0,
            Nonlinear::Relu => 1,
            Nonlinear::Table => 2,
        }
    }
}

/// Planar-engine elementwise operation: `(op(a, ±b) + bias) * scale`, optionally its
/// absolute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeOp {
    /// OpMode: 0 add, 1 mul, 2 max, 3 min, 4 square.
    pub mode: u32,
    /// The second operand is negated (sub is add with a negated second operand).
    pub negate: bool,
    /// Bias (fp16 bits).
    pub bias: u16,
    /// Scale (fp16 bits).
    pub scale: u16,
    /// The result's absolute value is taken (PE word bit 6; Apple's `abs`).
    pub abs: bool,
    /// The result's negative values are zeroed (PE word bit 5; Apple's
    /// `chain_add_relu_c512`: an add and the ReLU after it, one task, 0x80020).
    pub relu: bool,
}

/// The reduction a pooling task applies over its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// Maximum (MACCfg bit 19, MaxPoolMode).
    Max,
    /// Sum scaled by the post-scale 1 / (kh * kw).
    Avg,
}

/// What a planar-engine reduction combines (PE op field: sum 0, max 2, min 3; the
/// current corpus shows sum and max, min takes the elementwise minimum's code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum (mean: sum with the post-scale 1/N).
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

impl ReduceOp {
    /// The PE op field.
    pub fn code(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        }
    }
}

/// A planar-engine reduction (Common.Cfg mode 5, 0x51): per channel of the task's view,
/// `op` over its depth, height and width, times an fp32 post-scale (1/N for a mean).
/// The Common block states the view as both input and output dimensions; the result is
/// one value per channel, in a column (keep_dims) or packed into one row (word 0x158
/// 0x400).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeReduce {
    /// What it combines.
    pub op: ReduceOp,
    /// fp32 factor applied to the reduced value (PE word 0x880c).
    pub scale: f32,
    /// The result is written as one row of the view's channels.
    pub packed: bool,
    /// What is applied to the scaled result (PE word 0x22C bits 12, 13).
    pub post: ReducePost,
    /// Two operands: the first (a statistic, broadcast) is subtracted from the second and
    /// the difference squared before the reduction (PE word bits 16 and 4: layer_norm's
    /// variance, Cfg 0x61); with one operand, each element is squared.
    pub centered: bool,
    /// The view splits one row into several (reduce_mean over a 512-wide row as 4 x 128):
    /// its rows are read in strips of 64 values.
    pub split: bool,
}

impl PeReduce {
    /// A reduction applying `op` then `scale`, written one value per channel.
    pub fn new(op: ReduceOp, scale: f32) -> PeReduce {
        PeReduce { op, scale, packed: false, post: ReducePost::None, centered: false, split: false }
    }
}

/// The post-op of a planar-engine reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReducePost {
    /// The scaled result as it is.
    None,
    /// Its reciprocal (softmax's denominator, word bit 12).
    Reciprocal,
    /// `1 / sqrt(result + eps)`, eps the fp16 bits in word 0x234's low half (layer_norm's
    /// rstd, word bit 13).
    Rsqrt {
        /// fp16 bits of epsilon.
        eps: u16,
    },
}

/// How a task's L2 source follows the tasks before it: the L2.SourceCfg bits a task
/// reading what an earlier task left in L2 sets (Apple's softmax and reduction plans;
/// fitted per recipe step, see `docs/rationale/current-compiler/softmax.md` §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct L2Link {
    /// AliasConvSrc.
    pub conv_src: bool,
    /// AliasConvRslt: the source is the NE result of the task before.
    pub conv_result: bool,
    /// AliasPlanarRslt: the source is the planar engine's result of the task before.
    pub planar_result: bool,
    /// Dependent (2 bits).
    pub dependent: u8,
    /// DMAFmt (a source also declared to the tile DMA: a dependency token).
    pub dma_fmt: bool,
}

/// The four alias bits of an L2.SourceCfg or ResultCfg word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AliasBits {
    /// AliasConvSrc.
    pub conv_src: bool,
    /// AliasConvRslt.
    pub conv_result: bool,
    /// AliasPlanarSrc.
    pub planar_src: bool,
    /// AliasPlanarRslt.
    pub planar_result: bool,
}

/// The alias bits `lower::l2_chain::hazard_aliases` chose for what a task writes into L2:
/// the source the tile DMA loads (SourceCfg; a source read in place keeps its `L2Link`)
/// and the result (ResultCfg).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct L2Aliases {
    /// SourceCfg's bits when the source is loaded.
    pub source: AliasBits,
    /// ResultCfg's bits.
    pub result: AliasBits,
}

/// A memory surface two tasks of a recipe declare although the data passes through L2:
/// the writer names it as its destination (header DPC, WBase; TSR/TSE), the reader as its
/// source (SPC, RBase0; the tile DMA idle with DependencyMode 1). Apple's scratch, BAR 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// This task stands for writing it.
    Writes(Surface),
    /// This task stands for reading it.
    Reads(Surface),
}

/// Channels interleaved in the memory surfaces a task's tile DMA reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interleave {
    /// Of the surface the tile DMA loads.
    pub source: u32,
    /// Of the surface the tile DMA writes.
    pub dest: u32,
}

impl Default for Interleave {
    fn default() -> Interleave {
        Interleave { source: 1, dest: 1 }
    }
}

/// Whether the tile DMA's source is read again from memory by a later task of the same
/// op (its cache hints: TileDMASrc.DMAConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DramReuse {
    /// Read once (hints 2 / 0xE / 0xC).
    #[default]
    Once,
    /// A later task reads it again: keep it cached (CacheHint and NoReuse 0xE; layer_norm
    /// over C, H and W, whose last step loads x again).
    ReadAgain,
    /// The last of several reads (CacheHint 0xC).
    LastRead,
    /// The last of a split convolution's slices, each of which loads the same interleaved
    /// surface (CacheHint and NoReuse 4: Apple's regime-B matmul, `matmul.md` §3).
    LastSlice,
}

/// How a planar-engine task is linked to other planar-engine tasks (NE.KernelCfg bits
/// Apple sets on PE tasks, `softmax.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeLinks {
    /// The result stays in L2 for a later planar-engine task (KernelCfg bit 12, header
    /// word 6 DisallowAbort).
    pub feeds_pe: bool,
    /// An operand was produced by a planar-engine task (KernelCfg bit 14).
    pub fed_by_pe: bool,
}

/// Per-output-channel vectors read through the kernel DMA's bias and post-scale streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChannelVectors {
    /// One fp16 bias per output channel.
    pub bias: Option<KernelChunk>,
    /// One fp16 post-scale per output channel.
    pub scale: Option<KernelChunk>,
}

impl ChannelVectors {
    /// The streams in kernel-DMA header-channel order (bias, post-scale).
    pub fn streams(&self) -> [Option<KernelChunk>; 2] {
        [self.bias, self.scale]
    }

    /// True when any vector is streamed.
    pub fn any(&self) -> bool {
        self.bias.is_some() || self.scale.is_some()
    }
}

/// Scalar affine stage of the NE pass path (gain/offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeAffine {
    /// Post-scale (fp16 bits); 0x3C00 is 1.0.
    pub scale: u16,
    /// Bias (fp16 bits), added through MatrixVectorBias.
    pub bias: u16,
}

impl Default for NeAffine {
    fn default() -> Self {
        NeAffine { scale: 0x3C00, bias: 0 }
    }
}

/// How a vector kept in L2 between an NE task and the planar-engine task after it is laid
/// out (`docs/rationale/current-compiler/elementwise.md` §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Form {
    /// The tensor in the standard L2 layout (a broadcast operand's copy).
    Standard,
    /// One row of C values (a `[1, C, 1, 1]` result written transposed: Common.Cfg bit 28).
    Packed,
    /// Two packed rows, `[bias; scale]` (a per-channel constant for a ternary PE task).
    Rows,
    /// The NE's `C x H x W` result written with C and W swapped (Common.Cfg bit 28): W
    /// channels of C values per row (Apple's transposer before a reduction over C).
    Transposed,
}

impl L2Form {
    /// True when the NE writes the result with C and W swapped (Common.Cfg bit 28).
    pub fn transposes(self) -> bool {
        matches!(self, L2Form::Packed | L2Form::Transposed)
    }
}

/// A vector an NE task leaves in L2 for the next (planar-engine) task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Vector {
    /// Its layout.
    pub form: L2Form,
    /// Its region (at L2 offset 0).
    pub region: crate::layout::L2Region,
}

/// The second operand of a planar-engine task read from L2 rather than through the tile
/// DMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Operand {
    /// The vector the previous task left.
    pub vector: L2Vector,
    /// How it is broadcast (Common word 0x158): 0x10 along W, 0x20 along H, 0x80 along C,
    /// 0x200 a packed vector of one value per channel.
    pub broadcast: u32,
}

/// A kernel the kernel DMA streams at run time from a buffer (a matmul's x side,
/// `docs/rationale/current-compiler/matmul-runtime.md` §1) instead of `__const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeKernel {
    /// BAR of the buffer the kernel DMA reads (header KBase0).
    pub bar: u8,
    /// How many tasks before this one runs the task that wrote the kernel, when an earlier
    /// task of the program wrote it (header TDE and the eleventh header word, that task's
    /// TID); `None` for a buffer read as it is (an input).
    pub producer_back: Option<u32>,
}

/// Everything one TD encodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Layer name (for errors).
    pub layer: String,
    /// Engine path.
    pub engine: Engine,
    /// One or two sources.
    pub sources: Vec<Surface>,
    /// Destination.
    pub dest: Surface,
    /// Convolution geometry.
    pub conv: ConvGeom,
    /// Kernel stream chunks (weights or an activation table), at most 16.
    pub kernel: Vec<KernelChunk>,
    /// Element type of convolution weights, if the task convolves.
    pub kernel_fmt: Option<DType>,
    /// Activation.
    pub nonlinear: Nonlinear,
    /// Planar-engine operation, for PE tasks.
    pub pe: Option<PeOp>,
    /// NE post-scale and bias.
    pub affine: NeAffine,
    /// Per-channel bias and post-scale streams.
    pub vectors: ChannelVectors,
    /// Pooling reduction, for pooling tasks.
    pub pool: Option<PoolMode>,
    /// The function of the activation table, for table tasks.
    pub table: Option<crate::activation::TableFn>,
    /// A constant added to the accumulator on the multiply-accumulate path (NE.AccBias,
    /// fp16 bits): `rsqrt(x + eps)` reads `x + eps` through the unity kernel.
    pub acc_bias: Option<u16>,
    /// The per-channel bias is inline in the kernel blocks (BiasMode with AccBias 0).
    pub inline_bias: bool,
    /// Where the (first) source comes from.
    pub residency: SourceResidency,
    /// The result stays in L2 for the next task (no write to memory).
    pub l2_result: Option<L2Vector>,
    /// The second operand comes from L2 (a planar-engine task after an NE producer).
    pub l2_operand: Option<L2Operand>,
    /// The first source is a result the previous task left in L2 (read in place: no tile
    /// DMA, L2 SourceType 0 aliasing that result).
    pub l2_source: Option<L2Vector>,
    /// The L2.SourceCfg link bits of a source an earlier task left in L2.
    pub l2_link: Option<L2Link>,
    /// Links to other planar-engine tasks.
    pub pe_links: PeLinks,
    /// Whether a later task reads the first source from memory again.
    pub dram_reuse: DramReuse,
    /// The planar engine reduces its view (the first source's type) to one value per
    /// channel.
    pub reduce: Option<PeReduce>,
    /// The NE's unity kernel takes the maximum over all input channels into one output
    /// channel (MACCfg OpMode 3, UnicastCin = Cin: Apple's reduce_max over C of a
    /// `[1, C, 1, 1]` tensor).
    pub channel_max: bool,
    /// The NE's unity kernel sums all input channels into one output channel (MACCfg
    /// OpMode 0 with the unity kernel, no unicast: softmax's denominator over C).
    pub channel_sum: bool,
    /// The scratch surface this task declares.
    pub token: Option<Token>,
    /// The NE writes its result with C and W swapped into `dest`, whose type is the
    /// swapped one (Common.Cfg bit 28 with the result going to memory: Apple's matmul
    /// writes its product rows this way, `matmul.md` §1).
    pub transposed_write: bool,
    /// The kernel is streamed from a runtime buffer (NE.KernelCfg bit 16, KBase0 that
    /// buffer's BAR, no `__const` relocation).
    pub runtime_kernel: Option<RuntimeKernel>,
    /// The destination is written as a runtime kernel for a later task: `B` channels
    /// interleaved element by element in each plane (TileDMADst.Fmt.Interleave and
    /// L2.ResultCfg.DMAInterleave = B, CacheHint 0xF); such a task ends an L2 section
    /// (header TSR, TSE).
    pub kernel_write: Option<u32>,
    /// The task opens an L2 section (header SPL) because the task before it ended one.
    pub opens_section: bool,
    /// The task ends an L2 section (header TSR, TSE) although it is not the last.
    pub closes_section: bool,
    /// Channels interleaved element by element, `B` at a time, in the memory surface the
    /// tile DMA reads (`source`) or writes (`dest`): a regime-B matmul's x^T in the BAR-3
    /// scratch (`lower::matmul_dram`; Fmt.Interleave and L2 DMAInterleave = B). 1 otherwise.
    pub interleave: Interleave,
    /// The tile DMA's source waits for the task before, which wrote those bytes of memory
    /// (TileDMASrc.DMAConfig.DependencyMode 1; `hazard`).
    pub waits_for_writer: bool,
    /// The alias bits of the loaded source and the result, when the recipe derived them
    /// from the L2 regions of the tasks before (a runtime matmul's tasks after its first,
    /// `matmul-runtime.md` §6); otherwise the encoder's defaults.
    pub l2_aliases: Option<L2Aliases>,
    /// The result kept in L2 is read by a planar-engine task (an NE task's Common.Cfg
    /// sharing, `encode::common`).
    pub kept_for_pe: bool,
    /// The destination DMA overwrites DRAM that an earlier task of the program read
    /// (`hazard`; TileDMADst.DMAConfig bits 19 and 24).
    pub overwrites_read: bool,
}

impl Task {
    /// A task of `engine` from `sources` to `dest` with every stage idle: identity window,
    /// no kernel, no activation, no affine stage.
    pub fn new(layer: &str, engine: Engine, sources: Vec<Surface>, dest: Surface) -> Task {
        Task {
            layer: layer.to_string(),
            engine,
            sources,
            dest,
            conv: ConvGeom::default(),
            kernel: Vec::new(),
            kernel_fmt: None,
            nonlinear: Nonlinear::None,
            pe: None,
            affine: NeAffine::default(),
            vectors: ChannelVectors::default(),
            pool: None,
            table: None,
            acc_bias: None,
            inline_bias: false,
            residency: SourceResidency::Load,
            l2_result: None,
            l2_operand: None,
            l2_source: None,
            l2_link: None,
            pe_links: PeLinks::default(),
            dram_reuse: DramReuse::Once,
            reduce: None,
            channel_max: false,
            channel_sum: false,
            token: None,
            transposed_write: false,
            runtime_kernel: None,
            kernel_write: None,
            opens_section: false,
            closes_section: false,
            interleave: Interleave::default(),
            waits_for_writer: false,
            l2_aliases: None,
            kept_for_pe: false,
            overwrites_read: false,
        }
    }

    /// The dimensions the cost model counts (rows read and written): a reduction's
    /// source, otherwise the destination.
    pub fn traffic_view(&self) -> TensorType {
        match (self.reduce.is_some() || self.channel_max || self.channel_sum, self.sources.first()) {
            (true, Some(s)) => s.ty,
            _ => self.dest.ty,
        }
    }

    /// The dimensions the Common block states as the task's output: a reduction's view
    /// (the first source), otherwise the destination.
    pub fn out_view(&self) -> TensorType {
        match (self.reduce, self.sources.first()) {
            (Some(_), Some(s)) => s.ty,
            _ if self.transposed_write => TensorType { c: self.dest.ty.w, w: self.dest.ty.c, ..self.dest.ty },
            _ => self.dest.ty,
        }
    }

    /// Operands of a planar-engine task: its memory sources and the L2 operand (a
    /// `[bias; scale]` vector counts twice: the ternary form).
    pub fn operands(&self) -> u32 {
        let l2 = match self.l2_operand.map(|o| o.vector.form) {
            None => 0,
            Some(L2Form::Rows) => 2,
            Some(_) => 1,
        };
        self.sources.len() as u32 + l2
    }

    /// L2 offset of the first source: after the region this task's result or the previous
    /// task's vector occupies.
    pub fn l2_base(&self) -> u64 {
        self.l2_result.or(self.l2_operand.map(|o| o.vector)).map_or(0, |v| v.region.end())
    }

    /// True when the kernel DMA reads anything (weights, a table, channel vectors).
    pub fn reads_kernel_memory(&self) -> bool {
        !self.kernel.is_empty() || self.vectors.any()
    }

    /// The sources the tile DMA reads from memory: every source but a first one already in
    /// L2 or standing only for reading a scratch surface (its tile DMA idle).
    pub fn memory_sources(&self) -> impl Iterator<Item = &Surface> {
        let first_idle = self.residency == SourceResidency::Resident || matches!(self.token, Some(Token::Reads(_)));
        self.sources.iter().skip(usize::from(first_idle))
    }

    /// True when the tile DMA writes the result to memory (it is not kept in L2).
    pub fn writes_memory(&self) -> bool {
        self.l2_result.is_none()
    }
}
