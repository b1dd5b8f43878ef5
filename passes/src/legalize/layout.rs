//! Data-movement validators of seed 002 Table B.2: `Transpose`, `Concat`, `Pad`,
//! `Broadcast`, `Gather`, and the code-generation gate of `DynamicSlice` (Table B.1).
//!
//! - Transpose: the last four dimensions only (the batch axis stays) and each moved extent
//!   within the chip's `max-transpose-extent` ("NE Input Transpose is not supported for
//!   this arch").
//! - Concat: at least two inputs ("Concat layer must have at least 2 inputs"), one element
//!   type (the seed's "same layout"); the other axes are the verifier's contract.
//! - Pad: H or W only ("Channel padding is not supported on ANE"; the batch and depth axes
//!   get the same sentence with their name); symmetric and reflect modes need the texture
//!   byte 0x81d.
//! - Broadcast: only from a length-1 axis (the verifier's contract); growing the depth axis
//!   (a depth entry of size 1, as Apple's converter writes, is no broadcast) needs byte
//!   0x812 ("Broadcast along depth axis is not supported on this architecture").
//! - Gather: with the texture byte 0x81d it takes the texture path; without it, the M1's
//!   software envelope: data batch 1 and depth 1, index channel 3 ("Cannot decompose layer
//!   on this architecture").
//! - DynamicSlice: its validator passes everywhere; the code generator rejects it where the
//!   chip's `dynamic-slice-codegen` limit says so (the M1).

use super::cx::{dims5, Check, Cx, AXIS_LETTERS};
use crate::target::FeatureByte;

/// `anec.transpose`.
pub(super) fn transpose(cx: &Cx<'_>) -> Check {
    let perm = cx.axes("perm");
    let rule = "NE Input Transpose is not supported for this arch";
    if perm.first().is_some_and(|&p| p != 0) {
        let s = "keep the batch axis in place: fold it into another axis with a reshape, then transpose";
        return Err(cx.reject(rule).suggest(s));
    }
    let Some(x) = cx.operand(0) else { return Ok(()) };
    let dx = dims5(&x);
    let max = cx.limits().max_transpose_extent.value;
    let moved = perm.iter().enumerate().filter(|&(i, &from)| i != from).map(|(_, &from)| from);
    for axis in moved {
        let e = dx.get(axis).copied().unwrap_or(0);
        if e > max {
            let name = AXIS_LETTERS.get(axis).copied().unwrap_or("?");
            let s = format!("extent {e} > {max}: tile along {name}");
            return Err(cx.reject(rule).limit(cx.target, "max-transpose-extent", max).suggest(s));
        }
    }
    Ok(())
}

/// `anec.concat`.
pub(super) fn concat(cx: &Cx<'_>) -> Check {
    let ops = cx.operands();
    if ops.len() < 2 {
        return Err(cx.reject("Concat layer must have at least 2 inputs"));
    }
    let first = ops[0].dtype;
    if let Some(t) = ops.iter().find(|t| t.dtype != first) {
        return Err(cx.reject(format!("Concat inputs must have the same layout: {first} and {}", t.dtype)));
    }
    Ok(())
}

/// `anec.pad`.
pub(super) fn pad(cx: &Cx<'_>) -> Check {
    let p = cx.ints("pad");
    for (axis, name) in [(1, "Channel"), (0, "Batch"), (2, "Depth")] {
        if p.get(2 * axis).is_some_and(|&v| v != 0) || p.get(2 * axis + 1).is_some_and(|&v| v != 0) {
            let s = "pad only H and W; for other axes concatenate a constant tensor";
            return Err(cx.reject(format!("{name} padding is not supported on ANE")).suggest(s));
        }
    }
    let mode = cx.str("mode").unwrap_or("constant");
    if matches!(mode, "symmetric" | "reflect") && cx.byte(FeatureByte::TextureEngine) == 0 {
        let rule = format!("Pad mode \"{mode}\" is not supported on this architecture");
        let s = "use constant or replicate padding";
        return Err(cx.reject(rule).byte(cx.target, FeatureByte::TextureEngine).suggest(s));
    }
    Ok(())
}

/// `anec.broadcast`.
pub(super) fn broadcast(cx: &Cx<'_>) -> Check {
    let grows_depth = cx.operand(0).zip(cx.result()).is_some_and(|(x, y)| y.d > x.d);
    if !cx.axes("axes").contains(&2) || !grows_depth {
        return Ok(());
    }
    let rule = "Broadcast along depth axis is not supported on this architecture";
    let s = "move the depth axis to another axis with a reshape, broadcast there, and reshape back";
    cx.need_byte(FeatureByte::DepthBroadcast, rule).map_err(|r| r.suggest(s))
}

/// The index channel count of the M1's software gather.
const SOFTWARE_GATHER_INDEX_CHANNELS: u32 = 3;

/// `anec.gather`.
pub(super) fn gather(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 2 {
        return Err(cx.reject(format!("Gather layer must have 2 inputs, got {}", cx.op.operands.len())));
    }
    if cx.byte(FeatureByte::TextureEngine) != 0 {
        return Ok(());
    }
    let (Some(data), Some(index)) = (cx.operand(0), cx.operand(1)) else { return Ok(()) };
    if data.n == 1 && data.d == 1 && index.c == SOFTWARE_GATHER_INDEX_CHANNELS {
        return Ok(());
    }
    let envelope = format!(
        "without the texture engine only data batch 1, depth 1 and index channel {SOFTWARE_GATHER_INDEX_CHANNELS} \
         decompose (data {data}, indices {index})"
    );
    let r = cx.reject("Cannot decompose layer on this architecture").byte(cx.target, FeatureByte::TextureEngine);
    Err(r.suggest(envelope))
}

/// `anec.dynamic_slice`.
pub(super) fn dynamic_slice(cx: &Cx<'_>) -> Check {
    if cx.limits().dynamic_slice_codegen.value {
        return Ok(());
    }
    let rule = "DynamicSlice is rejected at code generation on this architecture (passes validation)";
    let s = if cx.str("coordinate_info") == Some("constant") {
        "the offsets are constant: use a static slice (input_view) instead"
    } else {
        "compute the window on the CPU, or bind constant offsets and use a static slice (input_view)"
    };
    Err(cx.reject(rule).limit(cx.target, "dynamic-slice-codegen", "no").suggest(s).at_codegen())
}
