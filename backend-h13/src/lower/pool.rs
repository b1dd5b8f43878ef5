//! Pooling: a unity-kernel window over each channel.

use super::conv::geometry;
use super::{attr, base_task};
use crate::buffers::Buffers;
use crate::error::BackendError;
use crate::task::{Engine, PoolMode, Surface, Task};
use crate::window::{unsupported, window};
use anec_ir::{Attr, Op};
use half::f16;

/// Pooling: a unity-kernel window over each channel; max sets MaxPoolMode, average
/// scales the window sum by 1 / (kh * kw) through the post-scale.
pub(super) fn lower_pool(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NePool)?;
    t.conv = geometry(op, 1, 0)?;
    let padded = window(op)?.padded;
    t.pool = Some(match attr(op, "kind")?.as_str().unwrap_or_default() {
        "max" => PoolMode::Max,
        "avg" => {
            if padded && op.attr("exclude_padding").and_then(Attr::as_bool) == Some(true) {
                let reason = "average pooling that excludes padding from the count (the H13 post-scale is one \
                              constant 1 / (kh * kw) for every window)";
                return Err(unsupported(op, reason));
            }
            let area = f64::from(t.conv.kh * t.conv.kw);
            t.affine.scale = f16::from_f64(1.0 / area).to_bits();
            PoolMode::Avg
        }
        other => return Err(unsupported(op, &format!("pooling kind '{other}'"))),
    });
    Ok(t)
}
