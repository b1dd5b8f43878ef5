//! Convolution: the weights as a bank of kernel-DMA chunks, the window as ConvCfg.

use super::{attr, base_task};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{ConvGeom, Engine, Surface, Task};
use crate::weights;
use crate::window::window;
use anec_ir::{Module, Op};

/// The convolution geometry of a window, `groups` and `ocg_size`.
pub(super) fn geometry(op: &Op, groups: u32, ocg_size: u32) -> Result<ConvGeom, BackendError> {
    let w = window(op)?;
    Ok(ConvGeom { kh: w.kh, kw: w.kw, sy: w.sy, sx: w.sx, pad_top: w.pad_top, pad_left: w.pad_left, groups, ocg_size })
}

pub(super) fn lower_conv(
    m: &Module,
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NeConv)?;
    let groups = attr(op, "groups")?.as_int().unwrap_or(1);
    let (name, _) = attr(op, "weights")?
        .as_resource()
        .ok_or_else(|| BackendError::Internal(format!("weights of '{}' is not a resource", op.name)))?;
    let blob = m.resources.get(name).ok_or_else(|| BackendError::Internal(format!("no blob {name}")))?;
    let bank = weights::bank(blob, t.dest.ty.c)?;
    t.conv = geometry(op, u32::try_from(groups).unwrap_or(u32::MAX), bank.ocg_size)?;
    t.kernel = consts.add_weights(&bank.chunks);
    t.kernel_fmt = Some(bank.fmt);
    Ok(t)
}
