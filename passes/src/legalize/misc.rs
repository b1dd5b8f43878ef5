//! The remaining rows of seed 002 Table B.2 (`Dropout`, `Random`, `RingBufferWriter`,
//! `NMS`) and the FurthestPointSampling caps of Table B.1.
//!
//! - Dropout: feature byte 0x4a9 (1 only from the A15 family) and a rate in [0, 1); a rate
//!   of 0 is the inference-time identity Table B.1 runs on every family from the M1 on, so
//!   it needs no byte.
//! - Random: no bottoms; byte 0x4a9; low below high; output Int8, UInt8 or Float16.
//! - RingBufferWriter: two bottoms; the buffer (operand 0) a live-state buffer, i.e. a
//!   module input the runtime binds; the circular mode arch-gated (seed 003: hard-gated on
//!   the M1, streaming state runs above it: family A14 on).
//! - NMS: two or more bottoms, boxes with 4 coordinates on the channel axis; it passes
//!   validation but runs only on a CPU or GPU backend, never on the engine.
//! - FurthestPointSampling: at most `fps-max-centroids` centroids from `fps-max-points`
//!   points (the W axis), L2 only.

use super::cx::{Check, Cx};
use crate::target::{Family, FeatureByte};
use anec_ir::DType;

/// The first family with the circular ring-buffer mode.
const CIRCULAR_FLOOR: Family = Family::A14;

/// `anec.dropout`.
pub(super) fn dropout(cx: &Cx<'_>) -> Check {
    let rate = cx.float("rate").unwrap_or(0.0);
    if !(0.0..1.0).contains(&rate) {
        return Err(cx.reject(format!("Dropout rate {rate} is outside [0, 1)")));
    }
    if rate == 0.0 {
        return Ok(());
    }
    let s = "at inference a dropout is the identity: remove the layer or set its rate to 0";
    cx.need_byte(FeatureByte::DropoutRandom, "Dropout layer is not supported on this architecture.")
        .map_err(|r| r.suggest(s))
}

/// `anec.random`.
pub(super) fn random(cx: &Cx<'_>) -> Check {
    if !cx.op.operands.is_empty() {
        return Err(cx.reject(format!("Random layer takes no inputs, got {}", cx.op.operands.len())));
    }
    let s = "generate the random tensor on the host and pass it as an input";
    cx.need_byte(FeatureByte::DropoutRandom, "Random layer is not supported on this architecture.")
        .map_err(|r| r.suggest(s))?;
    let (low, high) = (cx.float("low").unwrap_or(0.0), cx.float("high").unwrap_or(0.0));
    if low.partial_cmp(&high) != Some(std::cmp::Ordering::Less) {
        return Err(cx.reject(format!("Random low = {low} must be below high = {high}")));
    }
    match cx.result().map(|t| t.dtype) {
        Some(DType::I8 | DType::U8 | DType::F16) | None => Ok(()),
        Some(other) => Err(cx.reject(format!("Random output must be Int8, UInt8 or Float16, got {other}"))),
    }
}

/// `anec.ring_buffer_writer`.
pub(super) fn ring_buffer_writer(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 2 {
        return Err(cx.reject(format!("RingBufferWriter layer must have 2 inputs, got {}", cx.op.operands.len())));
    }
    let live = cx.op.operands.first().is_some_and(|&b| cx.m.inputs.iter().any(|p| p.value == b));
    if !live {
        let rule = "RingBufferWriter must write into a live-state buffer (a module input), not a computed tensor";
        return Err(cx.reject(rule));
    }
    if !cx.flag("circular") {
        return Ok(());
    }
    let why = "circular ring buffers are arch-gated: seed 003, hard-gated on the M1, streaming state above it";
    cx.need_family(CIRCULAR_FLOOR, why, "Circular buffer is not supported on this architecture")
        .map_err(|r| r.suggest("write linearly (circular = false) and manage the wrap-around on the host"))
}

/// `anec.nms`.
pub(super) fn nms(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() < 2 {
        return Err(cx.reject(format!("NMS layer must have at least 2 inputs, got {}", cx.op.operands.len())));
    }
    if let Some(boxes) = cx.operand(0).filter(|b| b.c != 4) {
        return Err(cx.reject(format!("NMS boxes must hold 4 coordinates on the channel axis, got {}", boxes.c)));
    }
    let rule = "NMS passes validation but is not engine-native: it runs only on a CPU or GPU backend";
    let s = "run the network up to the boxes and scores on the engine and NMS on the CPU";
    Err(cx.reject(rule).suggest(s).at_codegen())
}

/// `anec.furthest_point_sampling`.
pub(super) fn furthest_point_sampling(cx: &Cx<'_>) -> Check {
    let t = cx.target;
    let limits = cx.limits();
    if cx.str("distance_metric").is_some_and(|m| m != "l2") {
        return Err(cx.reject("FurthestPointSampling supports only the L2 distance on this architecture"));
    }
    let k = cx.int("centroid_count").unwrap_or(1);
    let max_k = limits.fps_max_centroids.value;
    if k > i64::from(max_k) {
        let rule = format!("FurthestPointSampling of {k} centroids exceeds {max_k}");
        return Err(cx.reject(rule).limit(t, "fps-max-centroids", max_k));
    }
    let points = cx.operand(0).map_or(0, |x| x.w);
    let max_p = limits.fps_max_points.value;
    if points > max_p {
        let rule = format!("FurthestPointSampling from {points} points exceeds {max_p}");
        return Err(cx.reject(rule).limit(t, "fps-max-points", max_p));
    }
    Ok(())
}
