//! Decoding of the compute blocks of a TD: the kernel DMA (16 coefficient channels and
//! the four header streams), the NE (MAC, bias, post-scale, nonlinear stage) and the
//! planar engine, with the checks that tie them to the header's ENE and the Common block.
//!
//! The header streams (configs 0xf4.., bases 0x104.., sizes 0x114.., in the coefficient
//! channels' encoding) are bias, post-scale, palette LUT and activation LUT, as
//! `docs/conformance.md` infers; the PE words are 0x22c (OpMode bits 4:2, second-source
//! select bits 19:18), 0x230 (fp16 bias low, fp16 scale high), 0x234 (PreScale, fp16 in
//! the high half) and 0x238 (FinalScale, fp32), as formats-hwx.md and Apple's sum.hwx
//! show them.

use super::error::SimError;
use super::memory::Fmt;
use super::td::{Common, Header, Mac, NeTask, Nonlinear, PadMode, PeOp, PeTask, Stream, Unit};
use half::f16;

use super::reader::Reader;

/// Number of coefficient channels.
const CHANNELS: usize = 16;
/// Bits of a kernel-memory address or size word (26 bits at bit 6, 64-byte units).
const UNITS_MASK: u32 = 0xFFFF_FFC0;
/// The four header streams' config words, and their enable and cache-hint bits.
const STREAM_CONFIGS: [u16; 4] = [0xF4, 0xF8, 0xFC, 0x100];
const STREAM_NAMES: [&str; 4] = ["bias", "post-scale", "palette LUT", "activation LUT"];
const STREAM_ENABLE: u32 = 1;
const STREAM_CACHE_HINT: u32 = 0x3C0;
/// MACCfg unnamed bits: 19 MaxPoolMode, 20..22 ArgOutputSelect.
const MAX_POOL_BIT: u32 = 1 << 19;
const ARG_OUTPUT_SELECT: u32 = 0x7 << 20;
/// Every NE field, for the planar-engine path, where the block must be zero.
/// The name of the planar-engine path in messages.
const PE_PATH: &str = "planar-engine";

/// MACCfg.OpMode of the pass path and of the multiply-accumulate path.
const OPMODE_PASS: u64 = 4;
const OPMODE_MAC: u64 = 0;

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
}

impl KernelDma {
    fn any(&self) -> bool {
        self.chunks.iter().chain(&self.streams).any(Option::is_some)
    }
}

/// Decodes the kernel-DMA block; `kbe` is the header's KBE0.
pub fn kernel_dma(r: &mut Reader, kbe: bool) -> Result<KernelDma, SimError> {
    r.fixed_word(0x2C, u32::MAX, &[if kbe { 0x40 } else { 0 }], "kernel-stream word (0x40 with KBE0)")?;
    let mut k = KernelDma::default();
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
        0 => pe(r, h, c, k).map(Unit::Pe),
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

fn pe(r: &mut Reader, h: &Header, c: &Common, k: &KernelDma) -> Result<PeTask, SimError> {
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
    let cfg = r.word(0x22C, u32::MAX);
    let op = match (cfg >> 2) & 0x7 {
        0 => PeOp::Add,
        1 => PeOp::Mul,
        2 => PeOp::Max,
        3 => PeOp::Min,
        4 => PeOp::Square,
        other => return Err(r.err("word 0x22c bits 4:2 (PE OpMode)", other.into(), "only 0..4 are modelled")),
    };
    // Bit 19: a second operand is read; bit 18: it is negated (sub). One operand: add
    // with no second operand applies only BiasScale.
    let second = cfg & (1 << 19) != 0;
    let negate = cfg & (1 << 18) != 0;
    let two = h.sources[1].is_some();
    let valid = match op {
        PeOp::Square => !second && !negate && !two,
        PeOp::Add => second == two && (!negate || two),
        _ => second && two && !negate,
    };
    if cfg & !(0x1C | (0x3 << 18)) != 0 || !valid {
        let reason = format!(
            "PE config: {op:?} is modelled with bit 19 set exactly when a second tile-DMA source is read, \
             bit 18 (negate) only for add with two sources, no other bits"
        );
        return Err(r.err("word 0x22c", cfg.into(), reason));
    }
    let bias_scale = r.word(0x230, u32::MAX);
    r.fixed_word(0x234, u32::MAX, &[0x3C00_0000], "PE PreScale (fp16 in the high half): 1.0")?;
    r.fixed_word(0x238, u32::MAX, &[0x3F80_0000], "PE FinalScale (fp32): 1.0")?;
    Ok(PeTask { op, negate, scale: half_at(u64::from(bias_scale >> 16)), bias: half_at(u64::from(bias_scale)) })
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
}

fn mac_cfg(r: &mut Reader) -> Result<MacCfg, SimError> {
    r.fixed("NE.KernelCfg.PalettizedEn", &[0])?;
    r.ignore("NE.KernelCfg.PalettizedBits")?;
    r.fixed("NE.KernelCfg.SparseFmt", &[0])?;
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
    if m.op_mode != OPMODE_PASS && m.op_mode != OPMODE_MAC {
        let reason = "OpMode 4 (pass) and 0 (multiply-accumulate) are modelled";
        return Err(r.err("NE.MACCfg.OpMode", m.op_mode, reason));
    }
    if m.op_mode == OPMODE_PASS {
        if !m.unity {
            return Err(r.err("NE.MACCfg.KernelMode", 0, "the pass path (OpMode 4) is modelled with the unity kernel"));
        }
        elementwise_shape(r, c, "NE pass")?;
    }
    let mac = if m.unity { unity_mac(r, c, &m)? } else { kernel_mac(r, c, k, &m)? };
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
    Ok(NeTask {
        window: c.window,
        groups: c.groups,
        pad,
        mac,
        kbar: h.kbar,
        matrix_bias,
        acc_bias,
        post_scale,
        scale_stream,
        nonlinear,
    })
}

/// KernelMode 1: a per-channel window sum (or maximum with MaxPoolMode).
fn unity_mac(r: &Reader, c: &Common, m: &MacCfg) -> Result<Mac, SimError> {
    let rules: [(&str, u64, u64); 4] = [
        ("Common.GroupConvCfg.UnicastEn", u64::from(c.unicast), 1),
        ("Common.GroupConvCfg.NumGroups", c.groups as u64, 1),
        ("Common.ConvCfg.OCGSize", c.ocg_size.into(), 0),
        ("Common.Cout.Cout", c.out_dims.c as u64, c.in_dims.c as u64),
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

/// KernelMode 0: convolution with coefficient chunks 0..n, n = ceil(Cout / 2^OCGSize).
fn kernel_mac(r: &Reader, c: &Common, k: &KernelDma, m: &MacCfg) -> Result<Mac, SimError> {
    if c.unicast {
        return Err(r.err("Common.GroupConvCfg.UnicastEn", 1, "with a kernel (KernelMode 0) only 0 is modelled"));
    }
    if m.max_pool {
        return Err(r.err("word 0x244 bit 19 (MaxPoolMode)", 1, "with a kernel (KernelMode 0) it is not modelled"));
    }
    if !c.in_dims.c.is_multiple_of(c.groups) || !c.out_dims.c.is_multiple_of(c.groups) {
        let reason = format!("does not divide Cin {} and Cout {}", c.in_dims.c, c.out_dims.c);
        return Err(r.err("Common.GroupConvCfg.NumGroups", c.groups as u64, reason));
    }
    let fmt = Fmt::from_code(m.kernel_fmt).ok_or_else(|| {
        r.err("NE.KernelCfg.KernelFmt", m.kernel_fmt, "only 0 (u8), 1 (i8) and 2 (fp16) are modelled")
    })?;
    let per_chunk = 1usize.checked_shl(c.ocg_size).unwrap_or(usize::MAX);
    let needed = c.out_dims.c.div_ceil(per_chunk);
    if needed > CHANNELS {
        let reason = format!("puts {needed} chunks of Cout {} on {CHANNELS} kernel-DMA channels", c.out_dims.c);
        return Err(r.err("Common.ConvCfg.OCGSize", c.ocg_size.into(), reason));
    }
    let mut chunks = Vec::new();
    for (i, slot) in k.chunks.iter().enumerate() {
        match (slot, i < needed) {
            (Some(s), true) => chunks.push(*s),
            (on, _) => {
                let reason = format!("channels 0..{needed} carry the kernel of Cout {}", c.out_dims.c);
                return Err(r.err(format!("KernelDMASrc.CoeffDMAConfig[{i}].En"), u64::from(on.is_some()), reason));
            }
        }
        if chunks.len() == needed {
            break;
        }
    }
    if let Some(i) = k.chunks.iter().skip(needed).position(Option::is_some) {
        let reason = format!("only channels 0..{needed} are used for Cout {}", c.out_dims.c);
        return Err(r.err(format!("KernelDMASrc.CoeffDMAConfig[{}].En", i + needed), 1, reason));
    }
    Ok(Mac::Kernel { fmt, ocg_size: c.ocg_size, chunks })
}

/// The nonlinear stage; a table (NonlinearMode 2) comes through coefficient channel 0.
fn nonlinear(r: &Reader, k: &KernelDma, m: &MacCfg) -> Result<Nonlinear, SimError> {
    match m.nonlinear {
        0 | 1 if m.unity && k.chunks.iter().any(Option::is_some) => {
            Err(r.err("KernelDMASrc.CoeffDMAConfig[0].En", 1, "coefficients with the unity kernel and no table"))
        }
        0 => Ok(Nonlinear::None),
        1 => Ok(Nonlinear::Relu),
        _ if !m.unity => Err(r.err("NE.MACCfg.NonlinearMode", 2, "a table with a convolution kernel is not modelled")),
        _ => table_channels(r, k).map(Nonlinear::Table),
    }
}

/// The table of NonlinearMode 2: each NE the task runs on loads it through its own
/// coefficient channel, so channels 0..n (n a power of two) hold the same table.
fn table_channels(r: &Reader, k: &KernelDma) -> Result<Stream, SimError> {
    let table = k.chunks[0]
        .ok_or_else(|| r.err("KernelDMASrc.CoeffDMAConfig[0].En", 0, "NonlinearMode 2 reads its table here"))?;
    let n = k.chunks.iter().take_while(|c| c.is_some()).count();
    for (i, c) in k.chunks.iter().enumerate() {
        let expected = i < n;
        if c.is_some() != expected || c.is_some_and(|s| s != table) || !n.is_power_of_two() {
            let reason = "channels 0..n (a power of two) hold the same table, the others none";
            return Err(r.err(format!("KernelDMASrc.CoeffDMAConfig[{i}].En"), u64::from(c.is_some()), reason));
        }
    }
    Ok(table)
}

type Streams = (Option<(f32, Stream)>, Option<Stream>);

/// The bias stream (with its AccBias multiplier) and the post-scale stream.
fn streams(r: &mut Reader, k: &KernelDma, m: &MacCfg) -> Result<Streams, SimError> {
    for (i, mode) in [(0, m.bias_mode), (1, m.post_scale_mode), (2, false), (3, false)] {
        if k.streams[i].is_some() != mode {
            let on = u64::from(k.streams[i].is_some());
            let field = format!("word {:#05x} (the {} stream's enable)", STREAM_CONFIGS[i], STREAM_NAMES[i]);
            let reason = match i {
                0 => "the bias stream is read exactly when MACCfg.BiasMode is set",
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
        None => r.fixed("NE.AccBias.AccBias", &[0]).map(|_| None)?,
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
