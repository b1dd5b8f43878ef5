//! `ArgMinMax` and `GlobalArgMinMax` (seed 002 Table B.2).
//!
//! ArgMinMax: one bottom ("ArgMinMax layer must have one input"); a channel mode reduces at
//! most the chip's `argminmax-max-channels` channels (fp16 indices are exact below 2048);
//! each pad below the kernel; equal left and right pads; zero front and back pads.
//!
//! GlobalArgMinMax: feature byte 0x4f2 on the direct route (the conversion route's family
//! floor is in `floors.rs`); mode Max or Min; the reduce dimension "not 5", read as not the
//! batch axis (the fifth axis in the engine's W, H, D, C, N numbering: seed 002's Transpose
//! row also keeps the batch out, "last four dimensions only"). The seed records its reject
//! as an encoded assert: the rule names the byte.

use super::cx::{Check, Cx};
use crate::target::FeatureByte;

/// `anec.arg_min_max`.
pub(super) fn arg_min_max(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 1 {
        return Err(cx.reject("ArgMinMax layer must have one input"));
    }
    channels(cx)?;
    let (kernel, pad) = (cx.ints("kernel"), cx.ints("pad"));
    let ([kh, kw], [front, back, top, bottom, left, right]) = (kernel.as_slice(), pad.as_slice()) else {
        return Ok(());
    };
    for (side, p, k) in [("top", top, kh), ("bottom", bottom, kh), ("left", left, kw), ("right", right, kw)] {
        if p >= k {
            return Err(cx.reject(format!("ArgMinMax pad {side} = {p} must be below the kernel size {k}")));
        }
    }
    if left != right {
        return Err(cx.reject(format!("ArgMinMax pads left = {left} and right = {right} must be equal")));
    }
    if *front != 0 || *back != 0 {
        return Err(cx.reject(format!("ArgMinMax pads front = {front} and back = {back} must be zero")));
    }
    Ok(())
}

/// The channel count a channel mode reduces.
fn channels(cx: &Cx<'_>) -> Check {
    let channel_mode = cx.str("mode").is_some_and(|m| m.starts_with("channel"));
    let Some(x) = cx.operand(0) else { return Ok(()) };
    let max = cx.limits().argminmax_max_channels.value;
    if !channel_mode || x.c <= max {
        return Ok(());
    }
    let rule = format!("ArgMinMax channel reduction over C = {} exceeds {max} (fp16 indices)", x.c);
    let s = format!("channels {} > {max}: reduce slices of at most {max} channels and combine their results", x.c);
    Err(cx.reject(rule).limit(cx.target, "argminmax-max-channels", max).suggest(s))
}

/// `anec.global_arg_min_max`.
pub(super) fn global_arg_min_max(cx: &Cx<'_>) -> Check {
    let rule = "GlobalArgMinMax is not supported on this architecture (encoded assert, byte 0x4f2)";
    cx.need_byte(FeatureByte::GlobalArgMinMax, rule)?;
    if cx.str("dimension") == Some("batch") {
        let rule = "GlobalArgMinMax over the batch dimension is not supported (encoded assert)";
        return Err(cx.reject(rule).suggest("fold the batch axis into another axis with a reshape first"));
    }
    Ok(())
}
