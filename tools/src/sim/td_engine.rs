//! Decoding of the compute blocks of a TD: the kernel DMA (16 coefficient channels and
//! the four header streams), the NE (MAC, bias, post-scale, nonlinear stage) and the
//! planar engine, with the checks that tie them to the header's ENE and the Common block.
//! The planar engine's reduction block is read by `td_reduce.rs`; the NE's maximum over
//! the channels (MACCfg.OpMode 3 with UnicastCin = Cin) here.
//!
//! The header streams (configs 0xf4.., bases 0x104.., sizes 0x114.., in the coefficient
//! channels' encoding) are bias, post-scale, palette LUT and activation LUT, as
//! `docs/conformance.md` infers; the PE words are 0x22c (OpMode bits 4:2, second-operand
//! select bits 19:18, abs bit 6), 0x230 (fp16 bias low, fp16 scale high), 0x234 (PreScale, fp16 in
//! the high half) and 0x238 (FinalScale, fp32), as formats-hwx.md and Apple's sum.hwx
//! show them.

use super::error::SimError;
use super::kernel::{Layout, NES};
use super::memory::Fmt;
use super::table::TABLE_BYTES;
use super::td::{Common, Header, Mac, NeTask, Nonlinear, Operands, PadMode, PeOp, PeTask, Stream, Unit};
use super::td_reduce;
use half::f16;

use super::reader::Reader;

/// Number of coefficient channels.
const CHANNELS: usize = NES;
/// Kernel-DMA word 0x2c with KBE0: dense and sparse (SparseFmt 1) coefficients.
const KERNEL_WORD: u32 = 0x40;
const KERNEL_WORD_SPARSE: u32 = 0x60;
/// Bits of a kernel-memory address or size word (26 bits at bit 6, 64-byte units).
const UNITS_MASK: u32 = 0xFFFF_FFC0;
/// The four header streams' config words, and their enable and cache-hint bits.
const STREAM_CONFIGS: [u16; 4] = [0xF4, 0xF8, 0xFC, 0x100];
const STREAM_NAMES: [&str; 4] = ["bias", "post-scale", "palette LUT", "activation LUT"];
const STREAM_ENABLE: u32 = 1;
const STREAM_CACHE_HINT: u32 = 0x3C0;
/// PE config (word 0x22c) bits: the op (4:2), a second operand is read (19), it is
/// negated (18), the absolute value of the result (6: Apple's `unary_abs`, 0x40), a ReLU
/// of the result (5: Apple's `chain_add_relu_c512`, 0x80020).
const PE_OP: u32 = 0x7 << 2;
const PE_RELU: u32 = 1 << 5;
const PE_SECOND: u32 = 1 << 19;
const PE_NEGATE: u32 = 1 << 18;
const PE_ABS: u32 = 1 << 6;
/// NE.KernelCfg unnamed bits 12 and 14 of a planar-engine task (links to other
/// planar-engine tasks, no data meaning).
const PE_LINK_BITS: u32 = 1 << 12 | 1 << 14;
/// MACCfg unnamed bits: 19 MaxPoolMode, 20..22 ArgOutputSelect.
const MAX_POOL_BIT: u32 = 1 << 19;
const ARG_OUTPUT_SELECT: u32 = 0x7 << 20;
/// NE.KernelCfg unnamed bit 16: the coefficients are streamed from a runtime buffer (a
/// matmul's x side), not `__const` (`matmul-runtime.md` §3c).
const RUNTIME_KERNEL_BIT: u32 = 1 << 16;
/// The BAR of `__const`.
const CONST_BAR: u8 = 1;
/// Every NE field, for the planar-engine path, where the block must be zero.
/// The name of the planar-engine path in messages.
const PE_PATH: &str = "planar-engine";

/// MACCfg.OpMode of the pass path, of the multiply-accumulate path and of the maximum
/// over the channels (Apple's reduce_max over C: MACCfg 0x101c0b).
const OPMODE_PASS: u64 = 4;
const OPMODE_MAC: u64 = 0;
const OPMODE_CHANNEL_MAX: u64 = 3;

const NE_FIELDS: [&str; 17] = [
    "NE.KernelCfg.KernelFmt",
    "NE.KernelCfg.PalettizedEn",
    "NE.KernelCfg.PalettizedBits",
    "NE.KernelCfg.SparseFmt",
    "NE.KernelCfg.GroupKernelReuse",
    "NE.MACCfg.OpMode",
    "NE.MACCfg.KernelMode",
    "NE.MACCfg.BiasMode",
    "NE.MACCfg.MatrixBiasEn",
    "NE.MACCfg.BinaryPoint",
    "NE.MACCfg.PostScaleMode",
    "NE.MACCfg.NonlinearMode",
    "NE.MatrixVectorBias.MatrixVectorBias",
    "NE.AccBias.AccBias",
    "NE.AccBias.AccBiasShift",
    "NE.PostScale.PostScale",
    "NE.PostScale.PostRightShift",
];

/// The enabled kernel-DMA channels and header streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelDma {
    /// Coefficient channel i, when `CoeffDMAConfig[i].En`.
    pub chunks: [Option<Stream>; CHANNELS],
    /// Header stream i (bias, post-scale, palette LUT, activation LUT), when enabled.
    pub streams: [Option<Stream>; 4],
    /// Word 0x2c holds the sparse-kernel value (0x60).
    pub sparse: bool,
}

impl KernelDma {
    fn any(&self) -> bool {
        self.chunks.iter().chain(&self.streams).any(Option::is_some)
    }
}

/// Decodes the kernel-DMA block; `kbe` is the header's KBE0.
pub fn kernel_dma(r: &mut Reader, kbe: bool) -> Result<KernelDma, SimError> {
    let allowed: &[u32] = if kbe { &[KERNEL_WORD, KERNEL_WORD_SPARSE] } else { &[0] };
    let word = r.fixed_word(0x2C, u32::MAX, allowed, "kernel-stream word (0x40 with KBE0, 0x60 sparse)")?;
    let mut k = KernelDma { sparse: word == KERNEL_WORD_SPARSE, ..KernelDma::default() };
    for (i, slot) in k.chunks.iter_mut().enumerate() {
        let cfg = format!("KernelDMASrc.CoeffDMAConfig[{i}]");
        let on = r.get(&format!("{cfg}.En"))? == 1;
        r.fixed(&format!("{cfg}.CrH"), &[0])?;
        r.ignore(&format!("{cfg}.CacheHint"))?;
        r.ignore(&format!("{cfg}.PrefetchParticipateEn"))?;
        let addr = r.get(&format!("KernelDMASrc.CoeffBaseAddr[{i}].Addr"))? * 64;
        let size = r.get(&format!("KernelDMASrc.CoeffBfrSize[{i}].MemBfrSize"))? * 64;
        *slot = on.then_some(Stream { addr, size });
    }
    for (i, slot) in k.streams.iter_mut().enumerate() {
        let cfg = STREAM_CONFIGS[i];
        let on = r.word(cfg, STREAM_ENABLE) != 0;
        r.word(cfg, STREAM_CACHE_HINT);
        let addr = u64::from(r.word(cfg + 0x10, UNITS_MASK));
        let size = u64::from(r.word(cfg + 0x20, UNITS_MASK));
        *slot = on.then_some(Stream { addr, size });
    }
    if !kbe && k.any() {
        return Err(r.err("aneTD.Header[9].KBE0", 0, "a kernel-DMA channel or stream is enabled without KBE0"));
    }
    if kbe && !k.any() {
        return Err(r.err("aneTD.Header[9].KBE0", 1, "no kernel-DMA channel or stream is enabled"));
    }
    Ok(k)
}

fn half_at(v: u64) -> f32 {
    f16::from_bits((v & 0xFFFF) as u16).to_f32()
}

/// Decodes the engine of the TD (NE or PE) and checks it against the other blocks.
pub fn unit(r: &mut Reader, h: &Header, c: &Common, k: &KernelDma, pad: PadMode) -> Result<Unit, SimError> {
    match h.ene {
        0 => pe(r, c, k),
        _ => ne(r, h, c, k, pad).map(Unit::Ne),
    }
}

/// The identity window, group and shape rules of the elementwise paths (PE, NE pass); the
/// planar engine's NumGroups is its batch loop, any count.
fn elementwise_shape(r: &Reader, c: &Common, path: &str) -> Result<(), SimError> {
    let w = c.window;
    let groups = if path == PE_PATH { 1 } else { c.groups };
    let checks: [(&str, usize, usize); 7] = [
        ("Common.ConvCfg.Kh", w.kh, 1),
        ("Common.ConvCfg.Kw", w.kw, 1),
        ("Common.ConvCfg.Sy", w.sy, 1),
        ("Common.ConvCfg.Sx", w.sx, 1),
        ("Common.ConvCfg.Py", w.py, 0),
        ("Common.ConvCfg.Px", w.px, 0),
        ("Common.GroupConvCfg.NumGroups", groups, 1),
    ];
    for (field, v, want) in checks {
        if v != want {
            return Err(r.err(field, v as u64, format!("the {path} path is modelled for {want} only")));
        }
    }
    if c.in_dims != c.out_dims {
        let (i, o) = (c.in_dims, c.out_dims);
        let reason = format!("the {path} path is modelled with equal source and result dimensions ({i:?} vs {o:?})");
        return Err(r.err("Common.OutDim", o.w as u64, reason));
    }
    Ok(())
}

/// UnicastCin is 1 on every path but the NE's maximum over the channels.
fn unicast_cin_one(r: &Reader, c: &Common, path: &str) -> Result<(), SimError> {
    if c.unicast_cin == 1 {
        return Ok(());
    }
    let reason = format!("the {path} path is modelled with 1 (Cin only with NE.MACCfg.OpMode 3, the channel maximum)");
    Err(r.err("Common.GroupConvCfg.UnicastCin", c.unicast_cin as u64, reason))
}

fn pe(r: &mut Reader, c: &Common, k: &KernelDma) -> Result<Unit, SimError> {
    // KernelCfg bits 12 and 14 of a planar-engine task link it to other planar-engine
    // tasks (its result is read by one; an operand came from one: Apple's softmax,
    // `softmax.md` §4); they change no value.
    r.word(0x240, PE_LINK_BITS);
    for name in NE_FIELDS {
        // The current compiler writes the idle PalettizedBits (8) in planar-engine tasks.
        let idle: &[u64] = if name == "NE.KernelCfg.PalettizedBits" { &[0, 8] } else { &[0] };
        r.fixed(name, idle)?;
    }
    // The current compiler writes the NE's idle ArgOutputSelect default in planar-engine tasks.
    r.fixed_word(
        0x244,
        MAX_POOL_BIT | ARG_OUTPUT_SELECT,
        &[0, 1 << 20],
        "MACCfg unnamed bits of a planar-engine task",
    )?;
    if k.any() {
        return Err(r.err("KernelDMASrc", 1, "kernel DMA with the planar engine (ENE 0) is not modelled"));
    }
    elementwise_shape(r, c, PE_PATH)?;
    if c.ocg_size != 0 || c.unicast {
        return Err(r.err("Common.ConvCfg.OCGSize / GroupConvCfg.UnicastEn", 1, "must be 0 for the planar engine"));
    }
    unicast_cin_one(r, c, PE_PATH)?;
    if c.reduce {
        return td_reduce::pe_block(r, c).map(Unit::Reduce);
    }
    let cfg = r.word(0x22C, u32::MAX);
    let op = match (cfg >> 2) & 0x7 {
        0 => PeOp::Add,
        1 => PeOp::Mul,
        2 => PeOp::Max,
        3 => PeOp::Min,
        4 => PeOp::Square,
        other => return Err(r.err("word 0x22c bits 4:2 (PE OpMode)", other.into(), "only 0..4 are modelled")),
    };
    // Bit 19: a second operand is read (through the tile DMA or from L2); bit 18: it is
    // negated (sub); bit 6: the absolute value of the result. One operand: add with no
    // second operand applies only BiasScale.
    let second = cfg & PE_SECOND != 0;
    let negate = cfg & PE_NEGATE != 0;
    let abs = cfg & PE_ABS != 0;
    let relu = cfg & PE_RELU != 0;
    let two = c.operands != Operands::One;
    let three = c.operands == Operands::ThreeL2;
    let valid = match op {
        PeOp::Square => !second && !negate && !two,
        PeOp::Add => second == two && (!negate || two),
        _ => second && two && !negate && !three,
    };
    if cfg & !(PE_OP | PE_SECOND | PE_NEGATE | PE_ABS | PE_RELU) != 0 || !valid {
        let reason = format!(
            "PE config: {op:?} is modelled with bit 19 set exactly when a second operand is read (Common.Cfg \
             0x31, 0x33, 0x41), bit 18 (negate) only for add with a second operand, three operands only with \
             add, bit 6 (abs), bit 5 (ReLU), no other bits"
        );
        return Err(r.err("word 0x22c", cfg.into(), reason));
    }
    let bias_scale = r.word(0x230, u32::MAX);
    r.fixed_word(0x234, u32::MAX, &[0x3C00_0000], "PE PreScale (fp16 in the high half): 1.0")?;
    r.fixed_word(0x238, u32::MAX, &[0x3F80_0000], "PE FinalScale (fp32): 1.0")?;
    let (scale, bias) = (half_at(u64::from(bias_scale >> 16)), half_at(u64::from(bias_scale)));
    Ok(Unit::Pe(PeTask { op, negate, abs, relu, scale, bias }))
}

/// The MAC configuration fields.
struct MacCfg {
    op_mode: u64,
    unity: bool,
    bias_mode: bool,
    matrix_bias: bool,
    post_scale_mode: bool,
    nonlinear: u64,
    max_pool: bool,
    kernel_fmt: u64,
    sparse: bool,
    runtime_kernel: bool,
}

impl MacCfg {
    /// BiasMode without the bias stream: the bias is inline in the coefficient blocks.
    fn inline_bias(&self, k: &KernelDma) -> bool {
        self.bias_mode && k.streams[0].is_none()
    }
}

fn mac_cfg(r: &mut Reader) -> Result<MacCfg, SimError> {
    r.fixed("NE.KernelCfg.PalettizedEn", &[0])?;
    r.ignore("NE.KernelCfg.PalettizedBits")?;
    r.fixed("NE.KernelCfg.GroupKernelReuse", &[0])?;
    // The fixed-point binary point: Apple writes 0x1c for fp16 convolution and 0 for the
    // pass path; no effect is modelled for either.
    r.fixed("NE.MACCfg.BinaryPoint", &[0, 0x1C])?;
    r.fixed("NE.AccBias.AccBiasShift", &[0])?;
    r.fixed("NE.PostScale.PostRightShift", &[0])?;
    let max_pool = r.word(0x244, MAX_POOL_BIT) != 0;
    r.fixed_word(0x244, ARG_OUTPUT_SELECT, &[1 << 20], "MACCfg bits 22:20 (ArgOutputSelect)")?;
    Ok(MacCfg {
        op_mode: r.get("NE.MACCfg.OpMode")?,
        unity: r.get("NE.MACCfg.KernelMode")? == 1,
        bias_mode: r.get("NE.MACCfg.BiasMode")? == 1,
        matrix_bias: r.get("NE.MACCfg.MatrixBiasEn")? == 1,
        post_scale_mode: r.get("NE.MACCfg.PostScaleMode")? == 1,
        nonlinear: r.fixed("NE.MACCfg.NonlinearMode", &[0, 1, 2])?,
        max_pool,
        kernel_fmt: r.get("NE.KernelCfg.KernelFmt")?,
        sparse: r.get("NE.KernelCfg.SparseFmt")? == 1,
        runtime_kernel: r.word(0x240, RUNTIME_KERNEL_BIT) != 0,
    })
}

fn ne(r: &mut Reader, h: &Header, c: &Common, k: &KernelDma, pad: PadMode) -> Result<NeTask, SimError> {
    for offset in [0x22C, 0x230, 0x234, 0x238] {
        r.fixed_word(offset, u32::MAX, &[0], "planar-engine word of an NE task")?;
    }
    if h.sources[1].is_some() {
        return Err(r.err("aneTD.Header[8].RBE1", 1, "a second source with the NE (ENE 1 or 3) is not modelled"));
    }
    let m = mac_cfg(r)?;
    if ![OPMODE_PASS, OPMODE_MAC, OPMODE_CHANNEL_MAX].contains(&m.op_mode) {
        let reason = "OpMode 4 (pass), 0 (multiply-accumulate) and 3 (maximum over the channels) are modelled";
        return Err(r.err("NE.MACCfg.OpMode", m.op_mode, reason));
    }
    if m.op_mode != OPMODE_CHANNEL_MAX {
        unicast_cin_one(r, c, "NE")?;
    }
    if m.op_mode == OPMODE_PASS {
        if !m.unity {
            return Err(r.err("NE.MACCfg.KernelMode", 0, "the pass path (OpMode 4) is modelled with the unity kernel"));
        }
        elementwise_shape(r, c, "NE pass")?;
    }
    if m.sparse != k.sparse {
        let reason = format!(
            "the kernel-stream word is 0x60 exactly when NE.KernelCfg.SparseFmt = 1 (it is {})",
            u8::from(m.sparse)
        );
        return Err(r.err("word 0x02c", if k.sparse { 0x60 } else { 0x40 }, reason));
    }
    runtime_kernel(r, h, k, &m)?;
    let mac = match (m.op_mode, m.unity) {
        (OPMODE_CHANNEL_MAX, _) => channel_max(r, c, &m)?,
        (_, true) => unity_mac(r, c, &m)?,
        (_, false) => kernel_mac(r, c, k, &m)?,
    };
    let nonlinear = nonlinear(r, k, &m)?;
    let (acc_bias, scale_stream) = streams(r, k, &m)?;
    let matrix_bias = match m.matrix_bias {
        true => Some(half_at(r.get("NE.MatrixVectorBias.MatrixVectorBias")?)),
        false => r.fixed("NE.MatrixVectorBias.MatrixVectorBias", &[0]).map(|_| None)?,
    };
    // Both are scalars added to the accumulator before the post-scale.
    let acc_const = acc_constant(r, k, &m)?;
    let matrix_bias = match (matrix_bias, acc_const) {
        (b, 0.0) => b,
        (b, c) => Some(b.unwrap_or(0.0) + c),
    };
    let post_scale = half_at(r.get("NE.PostScale.PostScale")?);
    Ok(NeTask { window: c.window, pad, mac, kbar: h.kbar, matrix_bias, acc_bias, post_scale, scale_stream, nonlinear })
}

/// KernelMode 1: a per-channel window sum (or maximum with MaxPoolMode); on the
/// multiply-accumulate path without UnicastEn the sum over the channels.
fn unity_mac(r: &Reader, c: &Common, m: &MacCfg) -> Result<Mac, SimError> {
    if m.op_mode == OPMODE_MAC && !c.unicast {
        return channel_sum(r, c, m);
    }
    let rules: [(&str, u64, u64); 5] = [
        ("Common.GroupConvCfg.UnicastEn", u64::from(c.unicast), 1),
        ("Common.GroupConvCfg.NumGroups", c.groups as u64, 1),
        ("Common.ConvCfg.OCGSize", c.ocg_size.into(), 0),
        ("Common.Cout.Cout", c.out_dims.c as u64, c.in_dims.c as u64),
        ("NE.KernelCfg.SparseFmt", u64::from(m.sparse), 0),
    ];
    // No kernel is read: the declared format (0 in v4.2.1, fp16 in the current compiler)
    // changes nothing.
    if m.kernel_fmt != 0 && m.kernel_fmt != 2 {
        return Err(r.err("NE.KernelCfg.KernelFmt", m.kernel_fmt, "the unity kernel is modelled with 0 or 2"));
    }
    for (field, v, want) in rules {
        if v != want {
            return Err(r.err(field, v, format!("the unity kernel (KernelMode 1) is modelled with {want} only")));
        }
    }
    Ok(if m.max_pool { Mac::Max } else { Mac::Sum })
}

/// The unity kernel on the multiply-accumulate path without UnicastEn (MACCfg 0x121c08,
/// Apple's softmax over C: the channel sum through the reciprocal table): every output
/// channel reads every input channel with weight 1, so output channel 0 is the sum over
/// the channels of the pixel. Modelled with Cout 1, the identity window, NumGroups 1,
/// OCGSize 0 and OutDim = InDim.
fn channel_sum(r: &Reader, c: &Common, m: &MacCfg) -> Result<Mac, SimError> {
    let what = "the sum over the channels (the unity kernel without UnicastEn)";
    check_channel_op(r, c, m, what, &[])?;
    Ok(Mac::ChannelSum)
}

/// OpMode 3: output channel 0 is the maximum over every input channel of the same pixel
/// (the unity kernel, UnicastEn with UnicastCin = Cin, Cout 1, a 1x1 window). Apple's
/// `reduce_probe_max_ax1_1x512x1x1` has one pixel; any H, W, equal in source and result,
/// are modelled per pixel.
fn channel_max(r: &Reader, c: &Common, m: &MacCfg) -> Result<Mac, SimError> {
    let own = [
        ("NE.MACCfg.KernelMode", u64::from(m.unity), 1),
        ("Common.GroupConvCfg.UnicastEn", u64::from(c.unicast), 1),
        ("Common.GroupConvCfg.UnicastCin", c.unicast_cin as u64, c.in_dims.c as u64),
    ];
    check_channel_op(r, c, m, "the maximum over the channels (OpMode 3)", &own)?;
    Ok(Mac::ChannelMax)
}

/// The fields an op combining all input channels into one output channel is modelled
/// with (Cout 1, the result's pixels the source's, a 1x1 unpadded window, one group, no
/// max pooling or sparse kernel, the unity kernel's format 0 or 2), then `own`'s.
fn check_channel_op(r: &Reader, c: &Common, m: &MacCfg, what: &str, own: &[(&str, u64, u64)]) -> Result<(), SimError> {
    let (i, o, w) = (c.in_dims, c.out_dims, c.window);
    let rules: [(&str, u64, u64); 13] = [
        ("word 0x244 bit 19 (MaxPoolMode)", u64::from(m.max_pool), 0),
        ("NE.KernelCfg.SparseFmt", u64::from(m.sparse), 0),
        ("Common.GroupConvCfg.NumGroups", c.groups as u64, 1),
        ("Common.ConvCfg.OCGSize", c.ocg_size.into(), 0),
        ("Common.Cout.Cout", o.c as u64, 1),
        ("Common.OutDim.Hout", o.h as u64, i.h as u64),
        ("Common.OutDim.Wout", o.w as u64, i.w as u64),
        ("Common.ConvCfg.Kh", w.kh as u64, 1),
        ("Common.ConvCfg.Kw", w.kw as u64, 1),
        ("Common.ConvCfg.Sy", w.sy as u64, 1),
        ("Common.ConvCfg.Sx", w.sx as u64, 1),
        ("Common.ConvCfg.Py", w.py as u64, 0),
        ("Common.ConvCfg.Px", w.px as u64, 0),
    ];
    for &(field, v, want) in rules.iter().chain(own) {
        if v != want {
            return Err(r.err(field, v, format!("{what} is modelled with {want} only")));
        }
    }
    if m.kernel_fmt != 0 && m.kernel_fmt != 2 {
        return Err(r.err("NE.KernelCfg.KernelFmt", m.kernel_fmt, "the unity kernel is modelled with 0 or 2"));
    }
    Ok(())
}

/// KernelMode 0: convolution with the coefficients of Apple's current layout (see
/// `kernel.rs`). UnicastEn with NumGroups 1 is depthwise (output channel c reads input
/// channel c); NumGroups > 1 runs the groups one after the other, Cin and Cout per group.
/// A runtime kernel (KernelCfg bit 16) is read from a buffer other than `__const` and
/// holds dense fp16 coefficients only (no inline bias, no header stream); a kernel an
/// earlier task wrote (TDE) is a runtime one. Any kernel in `__const` has bit 16 clear.
fn runtime_kernel(r: &Reader, h: &Header, k: &KernelDma, m: &MacCfg) -> Result<(), SimError> {
    let field = "NE.KernelCfg bit 16 (runtime kernel)";
    let bit = u64::from(m.runtime_kernel);
    if !m.runtime_kernel {
        if h.kernel_producer.is_some() || h.kbar.is_some_and(|b| b != CONST_BAR) {
            let reason = "a kernel read from a buffer other than __const (KBase0 != 1) or written by an earlier task                           (TDE) is a runtime kernel";
            return Err(r.err(field, bit, reason));
        }
        return Ok(());
    }
    let plain = !m.unity && m.kernel_fmt == 2 && !m.sparse && !m.bias_mode && k.streams.iter().all(Option::is_none);
    if h.kbar.is_none_or(|b| b == CONST_BAR) || !plain {
        let reason = "a runtime kernel is modelled as dense fp16 coefficients (no inline bias, no header stream) read                       from a buffer other than __const";
        return Err(r.err(field, bit, reason));
    }
    Ok(())
}

fn kernel_mac(r: &Reader, c: &Common, k: &KernelDma, m: &MacCfg) -> Result<Mac, SimError> {
    if m.max_pool {
        return Err(r.err("word 0x244 bit 19 (MaxPoolMode)", 1, "with a kernel (KernelMode 0) it is not modelled"));
    }
    let depthwise = c.unicast;
    if depthwise && c.groups != 1 {
        let reason = "UnicastEn with a kernel (depthwise) is modelled with NumGroups 1";
        return Err(r.err("Common.GroupConvCfg.NumGroups", c.groups as u64, reason));
    }
    if depthwise && c.in_dims.c != c.out_dims.c {
        let reason = format!("a depthwise convolution (UnicastEn) has Cout = Cin = {}", c.in_dims.c);
        return Err(r.err("Common.Cout.Cout", c.out_dims.c as u64, reason));
    }
    if depthwise && c.ocg_size != 0 {
        return Err(r.err("Common.ConvCfg.OCGSize", c.ocg_size.into(), "a depthwise convolution is modelled with 0"));
    }
    let fmt = Fmt::from_code(m.kernel_fmt).ok_or_else(|| {
        r.err("NE.KernelCfg.KernelFmt", m.kernel_fmt, "only 0 (u8), 1 (i8) and 2 (fp16) are modelled")
    })?;
    let w = c.window;
    if m.sparse && (w.kh != 1 || w.kw != 1 || c.ocg_size > 2 || fmt != Fmt::F16) {
        let reason = format!(
            "the sparse kernel is modelled for 1x1 fp16 kernels with OCGSize <= 2 (here {}x{}, OCGSize {}, KernelFmt {})",
            w.kh, w.kw, c.ocg_size, m.kernel_fmt
        );
        return Err(r.err("NE.KernelCfg.SparseFmt", 1, reason));
    }
    let layout = Layout {
        fmt,
        ocg_size: c.ocg_size,
        chunks: k.chunks,
        sparse: m.sparse,
        bias: m.inline_bias(k),
        groups: c.groups,
        cin: if depthwise { 1 } else { c.in_dims.c },
        cout: c.out_dims.c,
        kh: w.kh,
        kw: w.kw,
        table: m.nonlinear == NONLINEAR_TABLE,
    };
    for (i, slot) in k.chunks.iter().enumerate() {
        let blocks = layout.blocks(i);
        if blocks.is_empty() != slot.is_none() {
            let reason = match blocks.first() {
                Some(b) => format!(
                    "NE {i} gets output channels from {} (blocks of {}) of Cout {}",
                    b.start, b.len, c.out_dims.c
                ),
                None => format!("NE {i} gets no output channel of Cout {} with OCGSize {}", c.out_dims.c, c.ocg_size),
            };
            return Err(r.err(format!("KernelDMASrc.CoeffDMAConfig[{i}].En"), u64::from(slot.is_some()), reason));
        }
        let need = layout.dense_chunk(i);
        match slot {
            Some(s) if !m.sparse && s.size < need => {
                let reason = format!("the coefficients of NE {i} take {need:#x} bytes; the chunk holds {:#x}", s.size);
                return Err(r.err(format!("KernelDMASrc.CoeffBfrSize[{i}].MemBfrSize"), s.size / 64, reason));
            }
            _ => {}
        }
    }
    Ok(Mac::Kernel { layout: Box::new(layout), depthwise })
}

/// NonlinearMode of the activation table.
const NONLINEAR_TABLE: u64 = 2;

/// The nonlinear stage; a table (NonlinearMode 2) comes through coefficient channel 0:
/// the whole chunk with the unity kernel, the chunk's first 128 bytes before a
/// convolution's coefficients (every chunk holds it, `kernel::chunk_table`).
fn nonlinear(r: &Reader, k: &KernelDma, m: &MacCfg) -> Result<Nonlinear, SimError> {
    match m.nonlinear {
        0 | 1 if m.unity && k.chunks.iter().any(Option::is_some) => {
            Err(r.err("KernelDMASrc.CoeffDMAConfig[0].En", 1, "coefficients with the unity kernel and no table"))
        }
        0 => Ok(Nonlinear::None),
        1 => Ok(Nonlinear::Relu),
        _ if !m.unity => {
            let head = k.chunks[0].ok_or_else(|| {
                r.err("KernelDMASrc.CoeffDMAConfig[0].En", 0, "NonlinearMode 2 reads its table at this chunk's head")
            })?;
            Ok(Nonlinear::Table(Stream { addr: head.addr, size: TABLE_BYTES as u64 }))
        }
        _ => table_channels(r, k).map(Nonlinear::Table),
    }
}

/// The table of NonlinearMode 2: each NE the task runs on loads it through its own
/// coefficient channel, so channels 0..n hold the same table (n = 1, 8, 16, and 12 for
/// the 12 channels of Apple's softmax `norm_softmax_a3_1x12x64x64`).
fn table_channels(r: &Reader, k: &KernelDma) -> Result<Stream, SimError> {
    let table = k.chunks[0]
        .ok_or_else(|| r.err("KernelDMASrc.CoeffDMAConfig[0].En", 0, "NonlinearMode 2 reads its table here"))?;
    let n = k.chunks.iter().take_while(|c| c.is_some()).count();
    for (i, c) in k.chunks.iter().enumerate() {
        let expected = i < n;
        if c.is_some() != expected || c.is_some_and(|s| s != table) {
            let reason = "channels 0..n hold the same table, the others none";
            return Err(r.err(format!("KernelDMASrc.CoeffDMAConfig[{i}].En"), u64::from(c.is_some()), reason));
        }
    }
    Ok(table)
}

type Streams = (Option<(f32, Stream)>, Option<Stream>);

/// The bias stream (with its AccBias multiplier) and the post-scale stream. BiasMode
/// without the bias stream is the inline bias of the coefficient blocks (KernelMode 0),
/// with AccBias 0.
fn streams(r: &mut Reader, k: &KernelDma, m: &MacCfg) -> Result<Streams, SimError> {
    if m.inline_bias(k) && m.unity {
        let reason = "BiasMode without the bias stream (word 0x0f4 enable) is the inline kernel bias; \
                      the unity kernel (KernelMode 1) has no coefficients to carry it";
        return Err(r.err("NE.MACCfg.BiasMode", 1, reason));
    }
    for (i, mode) in [(0, m.bias_mode), (1, m.post_scale_mode), (2, false), (3, false)] {
        if k.streams[i].is_some() && !mode || i > 0 && mode && k.streams[i].is_none() {
            let on = u64::from(k.streams[i].is_some());
            let field = format!("word {:#05x} (the {} stream's enable)", STREAM_CONFIGS[i], STREAM_NAMES[i]);
            let reason = match i {
                0 => "the bias stream is read only with MACCfg.BiasMode",
                1 => "the post-scale stream is read exactly when MACCfg.PostScaleMode is set",
                _ => "this stream is not modelled",
            };
            return Err(r.err(field, on, reason));
        }
    }
    let bias = match k.streams[0] {
        Some(s) => Some((half_at(r.get("NE.AccBias.AccBias")?), s)),
        // On the unity kernel's multiply-accumulate path AccBias is a constant added to
        // the accumulator (Apple's rsqrt(x + eps)); read by `acc_constant`.
        None if m.op_mode == OPMODE_MAC && m.unity => None,
        None => {
            let v = r.get("NE.AccBias.AccBias")?;
            if v != 0 {
                let reason = match m.bias_mode {
                    true => "the inline bias (BiasMode without the bias stream) is modelled with AccBias 0 only",
                    false => "without a bias only 0 is modelled",
                };
                return Err(r.err("NE.AccBias.AccBias", v, reason));
            }
            None
        }
    };
    Ok((bias, k.streams[1]))
}

/// The constant AccBias of the unity kernel's multiply-accumulate path without a bias
/// stream (0 elsewhere).
fn acc_constant(r: &mut Reader, k: &KernelDma, m: &MacCfg) -> Result<f32, SimError> {
    if m.op_mode == OPMODE_MAC && m.unity && k.streams[0].is_none() {
        return Ok(half_at(r.get("NE.AccBias.AccBias")?));
    }
    Ok(0.0)
}
