//! The normalizations of seed 002 Table B.2: `Softmax` (feature byte 0x815, output Float),
//! `LayerNorm` (channels divisible by the groups; the grouped form needs depth 1),
//! `InstanceNorm` (byte 0x816, spatial axes only), `MinMaxNorm` (byte 0x818, Width and
//! Height; the Channel axis arch-gated) and `LRN` (byte 0x81a; a channel count above the
//! chip's `lrn-max-channels` fails code generation).
//!
//! The seed records MinMaxNorm's reject as an encoded assert, not a string: the rule names
//! the byte instead. The LayerNorm string is elided in the seed ("... does not yet support
//! depth > 1"); the layer kind is put in front of it.

use super::cx::{Check, Cx, AXIS_LETTERS};
use crate::target::FeatureByte;
use anec_ir::DType;

/// `anec.softmax`.
pub(super) fn softmax(cx: &Cx<'_>) -> Check {
    cx.need_byte(FeatureByte::Softmax, "Softmax is not supported by this ANE architecture")?;
    match cx.result().map(|t| t.dtype) {
        Some(DType::F16 | DType::F32) | None => Ok(()),
        Some(other) => Err(cx.reject(format!("Softmax output must be Float, got {other}"))),
    }
}

/// `anec.layer_norm`.
pub(super) fn layer_norm(cx: &Cx<'_>) -> Check {
    let Some(x) = cx.operand(0) else { return Ok(()) };
    let g = cx.int("groups").unwrap_or(1).max(1);
    if i64::from(x.c) % g != 0 {
        return Err(cx.reject(format!("LayerNorm channels {} are not divisible by num-groups {g}", x.c)));
    }
    if g > 1 && x.d > 1 {
        let s = "fold the depth axis into the height axis with a reshape before the grouped normalization";
        return Err(cx.reject("LayerNorm with num-groups > 1 does not yet support depth > 1").suggest(s));
    }
    Ok(())
}

/// `anec.instance_norm`.
pub(super) fn instance_norm(cx: &Cx<'_>) -> Check {
    cx.need_byte(FeatureByte::InstanceNorm, "InstanceNorm layer not supported for this ANE architecture")?;
    if let Some(&a) = cx.axes("axes").iter().find(|&&a| a < 2) {
        let name = AXIS_LETTERS.get(a).copied().unwrap_or("?");
        let rule = format!("InstanceNorm over axis {name} is not supported: spatial axes (D, H, W) only");
        return Err(cx.reject(rule).suggest("use layer_norm for a normalization over the channel or batch axis"));
    }
    Ok(())
}

/// `anec.min_max_norm`.
pub(super) fn min_max_norm(cx: &Cx<'_>) -> Check {
    let rule = "MinMaxNormalization is not supported on this architecture (encoded assert, byte 0x818)";
    cx.need_byte(FeatureByte::MinMaxNorm, rule)?;
    let t = cx.target;
    match cx.str("dimension").unwrap_or("") {
        "width" | "height" => Ok(()),
        "channel" if cx.limits().minmax_norm_channel_axis.value => Ok(()),
        "channel" => {
            let rule = "MinMaxNormalization over Channel is not supported on this architecture (encoded assert, \
                        arch-gated)";
            let s = "transpose channel to width, normalize over Width, and transpose back";
            Err(cx.reject(rule).limit(t, "minmax-norm-channel-axis", "no").suggest(s))
        }
        other => Err(cx.reject(format!("MinMaxNormalization over {other} is not supported: Width or Height only"))),
    }
}

/// `anec.lrn`.
pub(super) fn lrn(cx: &Cx<'_>) -> Check {
    cx.need_byte(FeatureByte::Lrn, "LRN is not supported on this architecture.")?;
    let Some(x) = cx.operand(0) else { return Ok(()) };
    let max = cx.limits().lrn_max_channels.value;
    if x.c <= max {
        return Ok(());
    }
    let rule = format!("LRN over {} channels fails code generation on this architecture (passes validation)", x.c);
    let s = format!(
        "channels {} > {max}: normalize overlapping channel slices of at most {max} (slice, lrn, keep the \
         interior, concat)",
        x.c
    );
    Err(cx.reject(rule).limit(cx.target, "lrn-max-channels", max).suggest(s).at_codegen())
}
