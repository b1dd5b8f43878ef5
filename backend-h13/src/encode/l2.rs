//! The L2 block: where sources and the result sit in the on-chip buffer, strides in
//! 16-byte units (17 bits).

use super::set_unnamed_units;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2Region};
use crate::task::{Engine, PoolMode, Surface, Task};
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

/// The channel stride of a row the NE streams is at most 0x100 bytes (every NE task of the
/// current corpus with W >= 128); the planar engine takes whole rows.
const NE_CHANNEL_CAP: u64 = 0x100;
/// A planar-engine row whose unpadded size is a multiple of 0x400 gets 0x20 of padding
/// (0x400 -> 0x420 in sum.hwx and every PE operand of the current corpus).
const PE_PAD_EVERY: u64 = 0x400;
const PE_PAD: u64 = 0x20;
/// NE rows read row after row with narrow channels (<= 0x40 bytes) get 0x20 (short rows or
/// a stride-2 window) or 0x30 of padding; wider channels or a single row none.
const NE_NARROW_CHANNEL: u64 = 0x40;
const NE_SHORT_ROW: u64 = 0x200;
const NE_PAD_SHORT: u64 = 0x20;
const NE_PAD: u64 = 0x30;
/// A second source starts at the end of the first rounded up to 0x40, one more 0x40 when
/// that lands on a 0x400 boundary (the current corpus: 0x8000 -> 0x8040; sum.hwx 0x440).
const SECOND_SOURCE_BANK: u64 = 0x400;

/// The L2 region of a source of `t` at `base`.
fn source_region(t: &Task, s: &Surface, base: u64, gen: &Generation) -> L2Region {
    let ty = s.ty;
    let cap = if t.engine.uses_ne() { NE_CHANNEL_CAP } else { u64::MAX };
    let plane = L2Region::unpadded_row(ty.c, ty.w, ty.dtype, cap);
    let channel = plane / u64::from(ty.c.max(1));
    let pad = match t.engine {
        Engine::Pe => {
            if plane.is_multiple_of(PE_PAD_EVERY) {
                PE_PAD
            } else {
                0
            }
        }
        Engine::NeConv if !gen.conv_source_pad => 0,
        _ => {
            let rows_read = ty.h > 1 || t.engine.is_conv();
            if channel > NE_NARROW_CHANNEL || !rows_read {
                0
            } else if t.conv.sy == 2 || plane <= NE_SHORT_ROW {
                NE_PAD_SHORT
            } else {
                NE_PAD
            }
        }
    };
    L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, cap, pad)
}

/// The result region at `base`: laid out as the destination, unpadded.
fn result_region(s: &Surface, base: u64) -> L2Region {
    L2Region::new(base, s.ty.c, s.ty.h, s.ty.w, s.ty.dtype, u64::MAX, 0)
}

/// Writes the block.
pub fn encode(td: &mut TdImage, t: &Task, gen: &Generation) -> Result<(), BackendError> {
    let src = t.sources.first().ok_or_else(|| BackendError::Internal("task without source".into()))?;
    match t.pool {
        Some(PoolMode::Avg) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_AVG_POOL)?,
        Some(PoolMode::Max) => td.set("L2.L2Cfg.PaddingMode", PADDING_MODE_MAX_POOL)?,
        None => {}
    }
    set_aliases(td, "SourceCfg")?;
    td.set("L2.SourceCfg.SourceType", 2)?;
    let r1 = source_region(t, src, 0, gen);
    td.set("L2.SourceBase.Addr", r1.base >> 4)?;
    super::set_units(td, "L2.SourceChannelStride.Stride", r1.channel, 16)?;
    super::set_units(td, "L2.SourceRowStride.Stride", r1.row, 16)?;
    set_unnamed_units(td, 0x1F4, r1.plane, 4, 17)?;
    set_unnamed_units(td, 0x1F8, r1.plane, 4, 17)?;
    let mut end = r1.end();
    if let Some(src2) = t.sources.get(1) {
        td.set_unnamed_bits(0x1E4, SOURCE_CFG_TWO_SOURCES)?;
        let mut base2 = round_up(end, SECOND_SOURCE_ALIGN);
        if base2.is_multiple_of(SECOND_SOURCE_BANK) {
            base2 += SECOND_SOURCE_ALIGN;
        }
        let r2 = source_region(t, src2, base2, gen);
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
        let r = result_region(&t.dest, base);
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
