//! The texture-engine samplers of seed 002 Table B.2, gated by feature byte 0x81d (0 on
//! the M1, set from the A14 family):
//!
//! - Resize: a dimension or a ratio, not both; without the texture engine only the
//!   software route remains, read here as nearest-neighbour upsampling by integer factors
//!   ("failed to map resize layer on this arch" otherwise);
//! - CropResize: two bottoms, fp16 box coordinates; without the texture engine it passes
//!   the validator and fails at hardware-executable lowering (seed 002: "the M1 CropResize
//!   rows pass the validator and fail"), with the compiler's "Codegen Error: Invalid Texture
//!   CropCfg";
//! - AffineTransform: two bottoms, an fp16 matrix; the byte ("affine transform is not
//!   supported on this architecture");
//! - Resample: two bottoms; the coordinates' depth 1 and channel 1 or 2 ("Channel size in
//!   coordinates should be 1 or 2"); the byte, reported with the sentence the seed says the
//!   M1 gives for the samplers ("affine transform is not supported on this architecture").

use super::cx::{Check, Cx};
use crate::target::FeatureByte;

const AFFINE: &str = "affine transform is not supported on this architecture";

/// `anec.resize`.
pub(super) fn resize(cx: &Cx<'_>) -> Check {
    let sized = cx.int("height").is_some() || cx.int("width").is_some();
    let ratio = cx.float("ratio_y").is_some() || cx.float("ratio_x").is_some();
    if sized && ratio {
        return Err(cx.reject("Resize takes a dimension or a ratio, not both"));
    }
    if cx.byte(FeatureByte::TextureEngine) != 0 || software_route(cx) {
        return Ok(());
    }
    let s = "use nearest-neighbour resizing by integer factors (the software route), or target a chip with the \
             texture engine";
    let r = cx.reject("failed to map resize layer on this arch").byte(cx.target, FeatureByte::TextureEngine);
    Err(r.suggest(s))
}

/// Whether a resize is nearest-neighbour upsampling by integer factors on H and W.
fn software_route(cx: &Cx<'_>) -> bool {
    let (Some(x), Some(y)) = (cx.operand(0), cx.result()) else { return false };
    let integer = |from: u32, to: u32| from > 0 && to >= from && to.is_multiple_of(from);
    cx.str("mode") == Some("nearest") && integer(x.h, y.h) && integer(x.w, y.w)
}

/// `anec.crop_resize`.
pub(super) fn crop_resize(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 2 {
        return Err(cx.reject(format!("CropResize layer must have 2 inputs, got {}", cx.op.operands.len())));
    }
    if !cx.operand_is_fp16(1) {
        return Err(cx.reject("CropResize box coordinates must be fp16"));
    }
    if cx.byte(FeatureByte::TextureEngine) != 0 {
        return Ok(());
    }
    let r = cx.reject("Codegen Error: Invalid Texture CropCfg").byte(cx.target, FeatureByte::TextureEngine);
    Err(r.at_codegen())
}

/// `anec.affine_transform`.
pub(super) fn affine_transform(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 2 {
        return Err(cx.reject(format!("AffineTransform layer must have 2 inputs, got {}", cx.op.operands.len())));
    }
    if !cx.operand_is_fp16(1) {
        return Err(cx.reject("AffineTransform matrix must be fp16"));
    }
    cx.need_byte(FeatureByte::TextureEngine, AFFINE)
}

/// `anec.resample`.
pub(super) fn resample(cx: &Cx<'_>) -> Check {
    if cx.op.operands.len() != 2 {
        return Err(cx.reject(format!("Resample layer must have 2 inputs, got {}", cx.op.operands.len())));
    }
    if let Some(coords) = cx.operand(1) {
        if coords.d != 1 {
            return Err(cx.reject(format!("Depth size in coordinates should be 1, got {}", coords.d)));
        }
        if !(coords.c == 1 || coords.c == 2) {
            return Err(cx.reject("Channel size in coordinates should be 1 or 2"));
        }
    }
    cx.need_byte(FeatureByte::TextureEngine, AFFINE)
}
