//! The neural-engine block: kernel format, MAC configuration, activation, bias, post-scale.
//!
//! Bit names without a register-map entry come from Apple's `ZinAneTd<7u>` setters (the
//! H13 instance of the compiler's TD writer, in public decompilations of ANECompiler):
//! MACCfg bit 19 is `SetMaxPoolMode`, bits 20..22 are `SetArgOutputSelect` (1 unless an
//! arg-pooling mode is selected), bit 4 (BiasMode) and NE.AccBias are written by
//! `SetNEBias`, bit 14 (PostScaleMode) and NE.PostScale by `SetNEPostScale`.

use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{Engine, PoolMode, Task};
use crate::td::TdImage;
use anec_ir::DType;

/// MACCfg bits 20..22 (ArgOutputSelect) hold 1 unless an arg-pooling mode is selected
/// (`ZinAneTd<7u>::SetArgOutputSelect` writes 0x100000 by default); programs without it
/// fail on hardware.
const MACCFG_ARG_OUTPUT_DEFAULT: u32 = 1 << 20;
/// MACCfg bit 19: the window reduction takes the maximum (`SetMaxPoolMode`).
const MACCFG_MAX_POOL: u32 = 1 << 19;
/// Unnamed KernelCfg bits of a planar-engine task: its result stays in L2 for a later
/// planar-engine task (bit 12), an operand was produced by one (bit 14) (`softmax.md` §4).
const KERNELCFG_FEEDS_PE: u32 = 1 << 12;
const KERNELCFG_FED_BY_PE: u32 = 1 << 14;
/// Unnamed KernelCfg bit 16: the kernel is streamed from a runtime buffer (every matmul
/// task of two runtime operands, `matmul-runtime.md` §3c: 0x10082; inferred from context).
const KERNELCFG_RUNTIME_KERNEL: u32 = 1 << 16;
/// PalettizedBits Apple writes in every NE task, palettization off.
const PALETTIZED_BITS: u64 = 8;
/// BinaryPoint Apple writes for fp16 convolution (also used for pooling, inferred).
const CONV_BINARY_POINT: u64 = 0x1C;
/// MACCfg.OpMode values.
const OPMODE_CONV: u64 = 0;
const OPMODE_PASS: u64 = 4;
/// The maximum over the input channels a unicast output channel reads (Apple's channel
/// reduce_max: MACCfg 0x101c0b).
const OPMODE_CHANNEL_MAX: u64 = 3;
/// MACCfg.KernelMode: 0 reads a kernel, 1 is the unity kernel of pass and pooling tasks.
const KERNEL_MODE_UNITY: u64 = 1;
/// fp16 1.0: the multiplier of a streamed per-channel bias or post-scale.
const ONE_F16: u64 = 0x3C00;

/// Writes the block for NE tasks; PE tasks leave it zero as Apple does.
pub fn encode(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    if !t.engine.uses_ne() {
        if gen.pe_idle_words {
            td.set("NE.KernelCfg.PalettizedBits", PALETTIZED_BITS)?;
            td.set_unnamed_bits(0x244, MACCFG_ARG_OUTPUT_DEFAULT)?;
        }
        let links = t.pe_links;
        let bits =
            if links.feeds_pe { KERNELCFG_FEEDS_PE } else { 0 } | if links.fed_by_pe { KERNELCFG_FED_BY_PE } else { 0 };
        if bits != 0 {
            td.set_unnamed_bits(0x240, bits)?;
        }
        return Ok(());
    }
    if let Some(fmt) = t.kernel_fmt {
        td.set("NE.KernelCfg.KernelFmt", kernel_fmt(fmt)?)?;
    }
    td.set("NE.KernelCfg.PalettizedBits", PALETTIZED_BITS)?;
    if t.runtime_kernel.is_some() {
        td.set_unnamed_bits(0x240, KERNELCFG_RUNTIME_KERNEL)?;
    }
    encode_mac(td, t, gen)?;
    td.set("NE.MACCfg.NonlinearMode", t.nonlinear.mode())?;
    td.set_unnamed_bits(0x244, MACCFG_ARG_OUTPUT_DEFAULT)?;
    encode_bias(td, t)?;
    if t.vectors.scale.is_some() {
        td.set("NE.MACCfg.PostScaleMode", 1)?;
    }
    td.set("NE.PostScale.PostScale", u64::from(t.affine.scale))
}

/// OpMode, KernelMode, BinaryPoint and the max-pool bit of each engine path.
fn encode_mac(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    match t.engine {
        Engine::NeConv => {
            td.set("NE.KernelCfg.SparseFmt", u64::from(t.conv.sparse))?;
            td.set("NE.MACCfg.OpMode", OPMODE_CONV)?;
            td.set("NE.MACCfg.BinaryPoint", CONV_BINARY_POINT)
        }
        Engine::NePool => {
            td.set("NE.MACCfg.OpMode", OPMODE_CONV)?;
            td.set("NE.MACCfg.KernelMode", KERNEL_MODE_UNITY)?;
            td.set("NE.MACCfg.BinaryPoint", CONV_BINARY_POINT)?;
            if t.pool == Some(PoolMode::Max) {
                td.set_unnamed_bits(0x244, MACCFG_MAX_POOL)?;
            }
            Ok(())
        }
        Engine::NePass | Engine::Pe => {
            if gen.pass_binary_point {
                td.set("NE.KernelCfg.KernelFmt", kernel_fmt(DType::F16)?)?;
                td.set("NE.MACCfg.BinaryPoint", CONV_BINARY_POINT)?;
            }
            // A constant added to the input takes the multiply-accumulate path (OpMode 0)
            // through the unity kernel, with the constant as AccBias (rsqrt's epsilon).
            match t.acc_bias {
                None if t.channel_sum => td.set("NE.MACCfg.OpMode", OPMODE_CONV)?,
                Some(bias) => {
                    td.set("NE.MACCfg.OpMode", OPMODE_CONV)?;
                    td.set("NE.AccBias.AccBias", u64::from(bias))?;
                }
                None if t.channel_max => td.set("NE.MACCfg.OpMode", OPMODE_CHANNEL_MAX)?,
                None => td.set("NE.MACCfg.OpMode", OPMODE_PASS)?,
            }
            td.set("NE.MACCfg.KernelMode", KERNEL_MODE_UNITY)
        }
    }
}

/// The scalar bias (MatrixVectorBias), the streamed per-channel bias (BiasMode, with
/// AccBias 1.0 as its multiplier) or the bias inline in the kernel (BiasMode alone).
fn encode_bias(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    if t.affine.bias != 0 {
        td.set("NE.MACCfg.MatrixBiasEn", 1)?;
        td.set("NE.MatrixVectorBias.MatrixVectorBias", u64::from(t.affine.bias))?;
    }
    if t.vectors.bias.is_some() {
        td.set("NE.MACCfg.BiasMode", 1)?;
        td.set("NE.AccBias.AccBias", ONE_F16)?;
    } else if t.inline_bias {
        // The bias leads each block of the kernel stream; AccBias stays 0 (every
        // convolution with a bias of the current corpus).
        td.set("NE.MACCfg.BiasMode", 1)?;
    }
    Ok(())
}

/// NE.KernelCfg.KernelFmt of a weight element type.
fn kernel_fmt(dtype: DType) -> Result<u64, BackendError> {
    match dtype {
        DType::U8 => Ok(0),
        DType::I8 => Ok(1),
        DType::F16 => Ok(2),
        DType::F32 => Err(BackendError::Internal("fp32 kernels are converted to fp16 first".into())),
    }
}
