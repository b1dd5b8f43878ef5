//! The L2 block: where sources and the result sit in the on-chip buffer, strides in
//! 16-byte units (17 bits).

use super::set_unnamed_units;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2Region};
use crate::task::{PoolMode, Surface, Task};
use crate::td::TdImage;

/// Unnamed SourceCfg bit 24: set when a second source is read (sum, mul12).
const SOURCE_CFG_TWO_SOURCES: u32 = 1 << 24;
/// A second source region starts on this alignment after the first.
const SECOND_SOURCE_ALIGN: u64 = 0x40;
/// L2Cfg.PaddingMode of pooling: the values Apple's `SetPaddingMode` writes for the
/// padding modes its L2 configuration requires of average (1) and max (3) pooling on the
/// H13's successors (ZinAneTd<8u>/<11u> `HandleL2Config`); convolution keeps 0 (zero
/// padding). Inferred for H13, whose L2Cfg has the same field.
const PADDING_MODE_AVG_POOL: u64 = 1;
const PADDING_MODE_MAX_POOL: u64 = 3;

fn region(s: &Surface, base: u64) -> L2Region {
    L2Region::new(base, s.ty.c, s.ty.h, s.ty.w, s.ty.dtype)
}

/// Writes the block.
pub fn encode(td: &mut TdImage, t: &Task, _gen: &Generation) -> Result<(), BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    match t.pool {
        Some(PoolMode::Avg) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_AVG_POOL)?,
        Some(PoolMode::Max) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_MAX_POOL)?,
        None => {}
    }
    set_aliases(td, "SourceCfg")?;
    td.set("L2.SourceCfg.SourceType", 2)?;
    let r1 = region(src, 0);
    td.set("L2.SourceBase.Addr", r1.base >> 4)?;
    super::set_units(td, "L2.SourceChannelStride.Stride", r1.channel, 16)?;
    super::set_units(td, "L2.SourceRowStride.Stride", r1.row, 16)?;
    set_unnamed_units(td, 0x1F4, r1.plane, 4, 17)?;
    set_unnamed_units(td, 0x1F8, r1.plane, 4, 17)?;
    let mut end = r1.end();
    if let Some(src2) = t.sources.get(1) {
        td.set_unnamed_bits(0x1E4, SOURCE_CFG_TWO_SOURCES)?;
        let r2 = region(src2, round_up(end, SECOND_SOURCE_ALIGN));
        let words = [(0x1FC, r2.base), (0x200, r2.channel), (0x204, r2.row), (0x208, r2.plane), (0x20C, r2.plane)];
        for (offset, bytes) in words {
            set_unnamed_units(td, offset, bytes, 4, 17)?;
        }
        end = r2.end();
    }
    encode_result(td, t, end)
}

fn encode_result(td: &mut TdImage, t: &Task, base: u64) -> Result<(), BackendError> {
    set_aliases(td, "ResultCfg")?;
    td.set("L2.ResultCfg.ResultType", 2)?;
    td.set("L2.ResultCfg.L2BfrMode", u64::from(!t.engine.windowed()))?;
    super::set_units(td, "L2.ResultBase.Addr", base, 16)?;
    if t.engine.windowed() {
        let r = region(&t.dest, base);
        super::set_units(td, "L2.ConvResultChannelStride.Stride", r.channel, 16)?;
        super::set_units(td, "L2.ConvResultRowStride.Stride", r.row, 16)?;
        set_unnamed_units(td, 0x220, r.plane, 4, 17)?;
        set_unnamed_units(td, 0x224, r.plane, 4, 17)?;
    }
    Ok(())
}

/// The alias and DMA-format bits Apple sets in both SourceCfg and ResultCfg.
fn set_aliases(td: &mut TdImage, cfg: &str) -> Result<(), BackendError> {
    for f in ["AliasConvSrc", "AliasConvRslt", "AliasPlanarSrc", "AliasPlanarRslt", "DMAFmt", "DMAInterleave"] {
        td.set(&format!("L2.{cfg}.{f}"), 1)?;
    }
    Ok(())
}
