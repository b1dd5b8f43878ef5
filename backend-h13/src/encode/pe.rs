//! The planar-engine block (unnamed words 0x22C..0x238): elementwise op mode, second
//! source select, bias/scale, pre-scale and final scale.

use crate::error::BackendError;
use crate::task::Task;
use crate::td::TdImage;

/// PE.Cfg bits [19:18] select the second source from tile DMA (2 in every two-input program).
const SECOND_SOURCE_TILE_DMA: u32 = 2 << 18;
/// fp16 1.0.
const ONE_F16: u32 = 0x3C00;
/// fp32 1.0.
const ONE_F32: u32 = 0x3F80_0000;

/// Writes the block for planar-engine tasks; NE tasks leave it zero as Apple does.
pub fn encode(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let Some(pe) = t.pe else { return Ok(()) };
    let second = if t.sources.len() > 1 { SECOND_SOURCE_TILE_DMA } else { 0 };
    td.set_unnamed(0x22C, second | (pe.mode << 2))?;
    td.set_unnamed(0x230, u32::from(pe.bias) | (u32::from(pe.scale) << 16))?;
    td.set_unnamed(0x234, ONE_F16 << 16)?;
    td.set_unnamed(0x238, ONE_F32)
}
