//! The extents every tensor of a layer respects, after its own validator: H and W (and a
//! matmul's contraction) within the chip's `max-spatial-extent`, C within `max-channels`
//! (ANEForge measurements, `crate::target::limits`). Constants are weights, not tensors
//! the engine moves, and are not checked.

use super::cx::{dims5, Check, Cx, AXIS_LETTERS};
use anec_ir::OpCode;

/// Checks every operand and the result of a layer.
pub(super) fn check(cx: &Cx<'_>) -> Check {
    if cx.op.opcode == OpCode::Constant {
        return Ok(());
    }
    let named = cx.operands().into_iter().enumerate().map(|(i, t)| (format!("input {i}"), t));
    let all: Vec<_> = named.chain(cx.result().map(|t| ("result".to_string(), t))).collect();
    let limits = cx.limits();
    let spatial = limits.max_spatial_extent.value;
    let channels = limits.max_channels.value;
    for (which, t) in &all {
        let d = dims5(t);
        for (axis, max, key) in
            [(3, spatial, "max-spatial-extent"), (4, spatial, "max-spatial-extent"), (1, channels, "max-channels")]
        {
            let e = d[axis];
            if e > max {
                let name = AXIS_LETTERS[axis];
                let rule = format!("{which} extent {name} = {e} exceeds the maximum {max} on this ANE architecture");
                let s = if axis == 1 {
                    format!("extent {e} > {max}: split the channels (slice, then concat)")
                } else {
                    format!("extent {e} > {max}: tile along {name}")
                };
                return Err(cx.reject(rule).limit(cx.target, key, max).suggest(s));
            }
        }
    }
    Ok(())
}
