//! `anec.pad` in constant mode: two copies. First the whole result is filled with the pad
//! value (a tensor of it laid out in `__const`, copied by the NE), then x is copied into
//! the interior: a view of the result starting at the leading pads (its base must fall on
//! the tile DMA's 64-byte unit, so a left pad along W must fill whole 64-byte units).
//! The other modes (reflect, replicate, symmetric) are refused by name.

use super::movement::{self, DMA_UNIT};
use super::{attr, constant};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{Surface, Task};
use crate::window::unsupported;
use anec_ir::{Attr, Op};

/// Lowers a constant pad: the fill, then the interior copy.
pub(super) fn lower_pad(
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let mode = attr(op, "mode")?.as_str().unwrap_or_default();
    if mode != "constant" {
        return Err(unsupported(op, &format!("a pad in {mode} mode (constant padding only: two copies)")));
    }
    let value = op.attr("value").and_then(Attr::as_float).unwrap_or(0.0) as f32;
    let pads = attr(op, "pad")?.as_int_array().unwrap_or_default();
    let before = |axis: usize| pads.get(2 * axis).copied().unwrap_or(0).max(0) as u64;
    let s = dest.strides;
    let elem = dest.ty.dtype.size() as u64;
    let offset = dest.offset
        + before(0) * s.batch
        + before(1) * s.plane
        + before(2) * s.depth
        + before(3) * s.row
        + before(4) * elem;
    if !offset.is_multiple_of(DMA_UNIT) {
        let reason = format!(
            "a pad whose data starts {offset} bytes into the result: the tile DMA writes from {DMA_UNIT}-byte units \
             (a left pad along the width must fill whole 64-byte units)"
        );
        return Err(unsupported(op, &reason));
    }
    let fill = constant::filled(value, &dest.ty, consts);
    let interior = Surface { ty: anec_ir::TensorType { dtype: dest.ty.dtype, ..x.ty }, offset, ..dest };
    Ok(vec![movement::copy(&op.name, fill, dest)?, movement::copy(&op.name, x, interior)?])
}
