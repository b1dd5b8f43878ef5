//! The neural-engine block: kernel format, MAC configuration, activation, bias, post-scale.

use crate::error::BackendError;
use crate::task::{Engine, Task};
use crate::td::TdImage;
use anec_ir::DType;

/// MACCfg bit 20 has no name but is always set (programs without it fail on hardware).
const MACCFG_BIT20: u32 = 1 << 20;
/// PalettizedBits Apple writes in every NE task, palettization off.
const PALETTIZED_BITS: u64 = 8;
/// BinaryPoint Apple writes for fp16 convolution.
const CONV_BINARY_POINT: u64 = 0x1C;
/// MACCfg.OpMode values.
const OPMODE_CONV: u64 = 0;
const OPMODE_PASS: u64 = 4;

/// Writes the block for NE tasks; PE tasks leave it zero as Apple does.
pub fn encode(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    if !t.engine.uses_ne() {
        return Ok(());
    }
    if let Some(fmt) = t.kernel_fmt {
        td.set("NE.KernelCfg.KernelFmt", kernel_fmt(fmt)?)?;
    }
    td.set("NE.KernelCfg.PalettizedBits", PALETTIZED_BITS)?;
    match t.engine {
        Engine::NeConv => {
            td.set("NE.MACCfg.OpMode", OPMODE_CONV)?;
            td.set("NE.MACCfg.BinaryPoint", CONV_BINARY_POINT)?;
        }
        _ => {
            td.set("NE.MACCfg.OpMode", OPMODE_PASS)?;
            td.set("NE.MACCfg.KernelMode", 1)?;
        }
    }
    td.set("NE.MACCfg.NonlinearMode", t.nonlinear.mode())?;
    td.set_unnamed_bits(0x244, MACCFG_BIT20)?;
    if t.affine.bias != 0 {
        td.set("NE.MACCfg.MatrixBiasEn", 1)?;
        td.set("NE.MatrixVectorBias.MatrixVectorBias", u64::from(t.affine.bias))?;
    }
    td.set("NE.PostScale.PostScale", u64::from(t.affine.scale))
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
