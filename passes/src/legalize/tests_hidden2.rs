//! Tests of the validators of the rearrangement, texture-sampler and remaining hidden-layer
//! ops, each on two chips where they differ.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::tests::*;
use super::*;
use anec_ir::{DType, TensorType};

const F16: DType = DType::F16;

fn factors(op: OpCode, x: TensorType, fx: i64, fy: i64, fz: i64) -> Module {
    hidden(op, &[x], &[("factor_x", i(fx)), ("factor_y", i(fy)), ("factor_z", i(fz))], F16)
}

#[test]
fn pixel_shuffle_factor_set() {
    for chip in ["h13g", "h16g"] {
        engine(on(&factors(OpCode::PixelShuffle, t(1, 16, 4, 4), 2, 2, 1), chip));
        engine(on(&factors(OpCode::PixelUnshuffle, t(1, 1, 24, 24), 8, 3, 1), chip));
        let r = rule(
            on(&factors(OpCode::PixelShuffle, t(1, 25, 4, 4), 5, 5, 1), chip),
            "PixelShuffle returned invalid: factor x = 5 is not in {1, 2, 3, 4, 8}",
        );
        assert!(r.suggestion.is_some());
        rule(
            on(&factors(OpCode::PixelUnshuffle, t5(1, 1, 2, 4, 4), 2, 2, 2), chip),
            "PixelUnshuffle returned invalid: depth factor = 2, it must be 1",
        );
    }
}

#[test]
fn space_batch_factors_and_divisible_batch() {
    for chip in ["h13g", "h17"] {
        engine(on(&factors(OpCode::SpaceToBatch, t(1, 2, 12, 12), 6, 4, 1), chip));
        engine(on(&factors(OpCode::BatchToSpace, t(6, 2, 3, 3), 3, 2, 1), chip));
        rule(
            on(&factors(OpCode::SpaceToBatch, t(1, 2, 10, 10), 5, 2, 1), chip),
            "SpaceToBatch factor x = 5 does not factor into 2, 3, 4 and 8",
        );
        let mut m = factors(OpCode::BatchToSpace, t(6, 2, 3, 3), 3, 2, 1);
        m.values[0].ty.n = 4;
        rule(unverified(&m, chip), "Input batch n = 4 is not divisible by factor x = 3 * factor y = 2");
    }
}

#[test]
fn channel_to_space_keeps_z() {
    for chip in ["h13g", "h16g"] {
        engine(on(&factors(OpCode::ChannelToSpace, t(1, 8, 4, 4), 2, 2, 1), chip));
        rule(
            on(&factors(OpCode::ChannelToSpace, t(1, 8, 4, 4), 2, 2, 2), chip),
            "ChannelToSpace in z dimension is not supported, current factor.z = 2.",
        );
        rule(
            on(&factors(OpCode::SpaceToChannel, t5(1, 1, 2, 4, 4), 2, 2, 2), chip),
            "SpaceToChannel in z dimension is not supported, current factor.z = 2.",
        );
    }
}

fn resize(mode: &str, h: i64, w: i64) -> Module {
    hidden(OpCode::Resize, &[t(1, 4, 8, 8)], &[("mode", s(mode)), ("height", i(h)), ("width", i(w))], F16)
}

#[test]
fn resize_needs_the_texture_engine_except_integer_nearest_upsampling() {
    engine(on(&resize("nearest", 16, 24), "h13g"));
    let r = rule(on(&resize("bilinear", 16, 16), "h13g"), "failed to map resize layer on this arch");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x81d (texture-engine) = 0 on h13g"));
    rule(on(&resize("nearest", 12, 12), "h13g"), "failed to map resize layer on this arch");
    engine(on(&resize("bilinear", 16, 16), "h14g"));
    engine(on(&resize("nearest", 12, 12), "h14g"));
    let mut both = resize("nearest", 16, 16);
    both.ops[0].attrs.insert("ratio_y".into(), f(2.0));
    rule(unverified(&both, "h14g"), "Resize takes a dimension or a ratio, not both");
}

#[test]
fn crop_resize_fails_m1_code_generation() {
    let attrs = [("height", i(4)), ("width", i(4))];
    let m = hidden(OpCode::CropResize, &[t(1, 4, 16, 16), t5(1, 2, 4, 1, 1)], &attrs, F16);
    let r = rule(on(&m, "h13g"), "Codegen Error: Invalid Texture CropCfg");
    assert_eq!(r.stage, Stage::CodeGeneration);
    engine(on(&m, "h14g"));
    let mut int8 = m.clone();
    int8.values[1].ty.dtype = DType::I8;
    rule(on(&int8, "h14g"), "CropResize box coordinates must be fp16");
}

#[test]
fn affine_transform_needs_byte_0x81d() {
    let m = hidden(OpCode::AffineTransform, &[t(1, 4, 8, 8), t(1, 6, 1, 1)], &[("height", i(8)), ("width", i(8))], F16);
    let r = rule(on(&m, "h13g"), "affine transform is not supported on this architecture");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x81d (texture-engine) = 0 on h13g"));
    engine(on(&m, "h14g"));
}

#[test]
fn resample_coordinates_and_texture() {
    let ok = hidden(OpCode::Resample, &[t(1, 4, 8, 8), t(1, 2, 6, 6)], &[], F16);
    engine(on(&ok, "h14g"));
    rule(on(&ok, "h13g"), "affine transform is not supported on this architecture");
    let three = hidden(OpCode::Resample, &[t(1, 4, 8, 8), t(1, 3, 6, 6)], &[], F16);
    for chip in ["h13g", "h14g"] {
        rule(on(&three, chip), "Channel size in coordinates should be 1 or 2");
    }
}

fn dropout(rate: f64) -> Module {
    hidden(OpCode::Dropout, &[t(1, 4, 8, 8)], &[("rate", f(rate))], F16)
}

#[test]
fn dropout_needs_byte_0x4a9_unless_it_is_the_identity() {
    let r = rule(on(&dropout(0.5), "h14g"), "Dropout layer is not supported on this architecture.");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x4a9 (dropout-random) = 0 on h14g"));
    engine(on(&dropout(0.5), "h15g"));
    engine(on(&dropout(0.0), "h13g"));
    rule(on(&dropout(1.0), "h15g"), "Dropout rate 1 is outside [0, 1)");
}

fn random(low: f64, high: f64) -> Module {
    module(OpCode::Random, &[], t(1, 4, 8, 8), &[("low", f(low)), ("high", f(high))])
}

#[test]
fn random_needs_byte_0x4a9_and_an_ordered_range() {
    rule(on(&random(0.0, 1.0), "h14g"), "Random layer is not supported on this architecture.");
    engine(on(&random(0.0, 1.0), "h15g"));
    rule(on(&random(1.0, 1.0), "h16g"), "Random low = 1 must be below high = 1");
}

fn ring(circular: bool, live: bool) -> Module {
    let attrs = [("axis", s("width")), ("circular", b(circular))];
    let mut m = module(OpCode::RingBufferWriter, &[t(1, 4, 1, 16), t(1, 4, 1, 4)], t(1, 4, 1, 16), &attrs);
    if !live {
        let ring = m.ops.remove(0);
        m.outputs.clear();
        let x = m.inputs[0].value;
        push(&mut m, OpCode::Neuron, vec![x], t(1, 4, 1, 16), &[("mode", s("relu"))]);
        let computed = m.ops[0].results[0];
        m.outputs.clear();
        let mut ring = ring;
        ring.operands[0] = computed;
        ring.name = "ring".into();
        m.ops.push(ring);
    }
    m
}

#[test]
fn ring_buffer_writer_live_state_and_circular_gate() {
    engine(on(&ring(false, true), "h13g"));
    let r = rule(on(&ring(true, true), "h13g"), "Circular buffer is not supported on this architecture");
    let feature = r.feature.unwrap();
    assert!(feature.starts_with("family floor A14 (") && feature.ends_with("; h13g is family A13"), "{feature}");
    engine(on(&ring(true, true), "h14g"));
    rule(
        unverified(&ring(false, false), "h14g"),
        "RingBufferWriter must write into a live-state buffer (a module input), not a computed tensor",
    );
}

#[test]
fn nms_is_never_engine_native() {
    let attrs = [("output", s("boxes")), ("iou_threshold", f(0.5)), ("max_boxes", i(10))];
    let m = module(OpCode::Nms, &[t(1, 4, 1, 100), t(1, 1, 1, 100)], t(1, 4, 1, 10), &attrs);
    for chip in ["h13g", "h17"] {
        let r =
            rule(on(&m, chip), "NMS passes validation but is not engine-native: it runs only on a CPU or GPU backend");
        assert_eq!(r.stage, Stage::CodeGeneration);
    }
    let five = module(OpCode::Nms, &[t(1, 5, 1, 100), t(1, 1, 1, 100)], t(1, 4, 1, 10), &attrs);
    rule(on(&five, "h13g"), "NMS boxes must hold 4 coordinates on the channel axis, got 5");
}

#[test]
fn furthest_point_sampling_caps() {
    let fps = |k: i64, points: u32| {
        hidden(
            OpCode::FurthestPointSampling,
            &[t(1, 3, 1, points)],
            &[("centroid_count", i(k)), ("distance_metric", s("l2"))],
            F16,
        )
    };
    for chip in ["h13g", "h16g"] {
        engine(on(&fps(1024, 8192), chip));
        rule(on(&fps(1025, 8192), chip), "FurthestPointSampling of 1025 centroids exceeds 1024");
        rule(on(&fps(16, 8193), chip), "FurthestPointSampling from 8193 points exceeds 8192");
    }
}
