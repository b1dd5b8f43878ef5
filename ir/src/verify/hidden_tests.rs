//! Tests of the table-driven hidden-layer verifier: every op of the table accepted in its
//! sample form and rejected for each broken attribute, plus the specific shape rules.

use super::super::hidden_table::SPECS;
use super::*;
use crate::opcode::OpCode;
use crate::testutil::*;
use crate::types::DType;

/// The opcodes of the table.
fn table_ops() -> Vec<OpCode> {
    SPECS.iter().map(|s| s.opcode).collect()
}

#[test]
fn table_covers_each_opcode_once() {
    let ops = table_ops();
    for (i, op) in ops.iter().enumerate() {
        assert!(!ops[..i].contains(op), "{op} is listed twice");
        assert!(OpCode::ALL.contains(op));
    }
    let legacy = OpCode::ALL.iter().filter(|op| spec(**op).is_none()).count();
    assert_eq!(legacy + ops.len(), OpCode::ALL.len());
    assert_eq!(legacy, 16, "the 16 original ops keep their own verifiers");
}

#[test]
fn accepts_every_sample() {
    for op in table_ops() {
        assert_valid(&sample(op));
    }
}

#[test]
fn rejects_each_missing_required_attribute() {
    for spec in &SPECS {
        for a in spec.attrs.iter().filter(|a| a.required) {
            let mut m = sample(spec.opcode);
            op0(&mut m).attrs.remove(a.name);
            let subject = format!("{} '{}' at net.plist:10:7", spec.opcode, m.ops[0].name);
            assert_rejects(&m, &format!("{subject}: missing attribute `{}`", a.name));
        }
    }
}

#[test]
fn rejects_unknown_attribute_and_wrong_kind() {
    for spec in &SPECS {
        let mut m = sample(spec.opcode);
        op0(&mut m).attrs.insert("colour".into(), s("red"));
        assert_rejects(&m, "unknown attribute `colour`");
        for a in spec.attrs {
            let mut m = sample(spec.opcode);
            let wrong = match a.kind {
                Kind::Bool => int(1),
                _ => b(true),
            };
            op0(&mut m).attrs.insert(a.name.into(), wrong);
            assert_rejects(&m, &format!("attribute `{}` must be", a.name));
        }
    }
}

#[test]
fn rejects_out_of_range_values() {
    for spec in &SPECS {
        for a in spec.attrs {
            let bad = match a.kind {
                Kind::Str(_) => s("bogus"),
                Kind::Axis => s("time"),
                Kind::Int { min, .. } if min > i64::MIN => int(min - 1),
                Kind::Float { min, .. } if min > -f64::MAX => fl(-1.0),
                Kind::Ints { min, .. } => ints(&[min - 1]),
                Kind::Axes => axes(&["width", "width"]),
                _ => continue,
            };
            let mut m = sample(spec.opcode);
            op0(&mut m).attrs.insert(a.name.into(), bad);
            assert_rejects(&m, &format!("attribute `{}` must be {}", a.name, describe_kind(a.kind)));
        }
    }
}

#[test]
fn rejects_wrong_operand_and_result_counts() {
    for spec in &SPECS {
        let mut m = sample(spec.opcode);
        let extra = m.inputs[0].value;
        for _ in 0..=spec.max_operands - m.ops[0].operands.len() {
            op0(&mut m).operands.push(extra);
        }
        assert_rejects(&m, "operands, got");
        let mut m = sample(spec.opcode);
        op0(&mut m).results.clear();
        assert_rejects(&m, "expects 1 result, got 0");
    }
}

#[test]
fn pixel_shuffle_shape_rule() {
    let mut m = sample(OpCode::PixelShuffle);
    let r = m.ops[0].results[0];
    retype(&mut m, r, f16(1, 2, 3, 10));
    assert_rejects(&m, "result height is 3, expected 6");
    let x = m.inputs[0].value;
    retype(&mut m, x, f16(1, 6, 3, 5));
    assert_rejects(&m, "channel 6 is not divisible by factor_x * factor_y * factor_z = 4");
}

#[test]
fn unshuffle_and_batch_rules_need_divisible_extents() {
    let mut m = sample(OpCode::PixelUnshuffle);
    let x = m.inputs[0].value;
    retype(&mut m, x, f16(1, 2, 5, 10));
    assert_rejects(&m, "height 5 is not divisible by factor_y = 2");
    let mut m = sample(OpCode::BatchToSpace);
    let x = m.inputs[0].value;
    retype(&mut m, x, f16(6, 3, 2, 2));
    assert_rejects(&m, "batch 6 is not divisible by factor_x * factor_y * factor_z = 4");
    let mut m = sample(OpCode::SpaceToBatch);
    let r = m.ops[0].results[0];
    retype(&mut m, r, f16(2, 3, 2, 2));
    assert_rejects(&m, "result batch is 2, expected 4");
}

#[test]
fn rearrangements_keep_the_element_type() {
    let mut m = sample(OpCode::ChannelToSpace);
    let r = m.ops[0].results[0];
    retype(&mut m, r, TensorType::nchw(1, 4, 3, 10, DType::F32));
    assert_rejects(&m, "result element type f32 differs from the operand's f16");
}

#[test]
fn top_k_and_global_arg_rules() {
    let mut m = sample(OpCode::TopK);
    op0(&mut m).attrs.insert("k".into(), int(5));
    assert_rejects(&m, "result width is 3, expected 5");
    let mut m = sample(OpCode::GlobalArgMinMax);
    op0(&mut m).attrs.insert("dimension".into(), s("height"));
    assert_rejects(&m, "result height is 8, expected 1");
}

#[test]
fn arg_window_rules() {
    let mut m = sample(OpCode::ArgMinMax);
    op0(&mut m).attrs.insert("kernel".into(), ints(&[11, 2]));
    assert_rejects(&m, "kernel height 11 exceeds the padded input height 10");
    let mut m = sample(OpCode::ArgMinMax);
    op0(&mut m).attrs.insert("mode".into(), s("channel_arg_min"));
    assert_rejects(&m, "result channel is 4, expected 1");
}

#[test]
fn pad_rules() {
    let mut m = sample(OpCode::Pad);
    op0(&mut m).attrs.insert("pad".into(), ints(&[0, 0, 0, 0, 0, 0, 4, 1, 2, 2]));
    assert_rejects(&m, "reflect padding of 4, 1 on height needs at most 3 (extent 4)");
    op0(&mut m).attrs.insert("mode".into(), s("constant"));
    assert_rejects(&m, "result height is 6, expected 9");
    op0(&mut m).attrs.insert("pad".into(), ints(&[0, 0]));
    assert_rejects(&m, "attribute `pad` must be an array of 10 integers >= 0, got array [0, 0]");
}

#[test]
fn geometry_rules() {
    let mut m = sample(OpCode::CrossProduct);
    for id in [m.inputs[0].value, m.inputs[1].value, m.ops[0].results[0]] {
        retype(&mut m, id, f16(1, 4, 1, 5));
    }
    assert_rejects(&m, "the vectors live on the channel axis, which must be 3, got 4");
    let mut m = sample(OpCode::CrossCorrelation);
    let t = m.inputs[1].value;
    retype(&mut m, t, f16(1, 1, 9, 3));
    assert_rejects(&m, "template height 9 exceeds the map's 8");
    let mut m = sample(OpCode::FurthestPointSampling);
    op0(&mut m).attrs.insert("centroid_count".into(), int(17));
    assert_rejects(&m, "cannot sample 17 centroids from 16 points (width)");
    let mut m = sample(OpCode::RadiusSearch);
    let r = m.ops[0].results[0];
    retype(&mut m, r, f16(1, 4, 1, 16));
    assert_rejects(&m, "result channel is 4, expected 16");
    let mut m = sample(OpCode::CostVolume);
    let r = m.ops[0].results[0];
    retype(&mut m, r, f16(1, 8, 4, 16));
    assert_rejects(&m, "result channel is 8, expected 4");
}

#[test]
fn dynamic_slice_rules() {
    let mut m = sample(OpCode::DynamicSlice);
    op0(&mut m).attrs.insert("offsets".into(), ints(&[5, 3]));
    assert_rejects(&m, "window 5..9 leaves the height extent 8");
    op0(&mut m).attrs.insert("coordinate_info".into(), s("runtime"));
    assert_rejects(&m, "coordinate_info \"runtime\" needs 2 operands, got 1");
    let mut m = sample(OpCode::DynamicSlice);
    op0(&mut m).attrs.insert("sizes".into(), ints(&[4]));
    assert_rejects(&m, "`axis_order` lists 2 axes but `sizes` has 1 and `offsets` 2");
}

#[test]
fn sampler_rules() {
    let mut m = sample(OpCode::Resize);
    op0(&mut m).attrs.remove("ratio_x");
    assert_rejects(&m, "needs both `height` and `width`, or both `ratio_y` and `ratio_x`");
    let mut m = sample(OpCode::Resize);
    op0(&mut m).attrs.insert("height".into(), int(7));
    op0(&mut m).attrs.insert("width".into(), int(9));
    assert_rejects(&m, "result height is 8, expected 7");
    let mut m = sample(OpCode::AffineTransform);
    let mat = m.inputs[1].value;
    retype(&mut m, mat, f16(1, 4, 1, 1));
    assert_rejects(&m, "must hold 6 values per batch entry");
    let mut m = sample(OpCode::CropResize);
    let roi = m.inputs[1].value;
    retype(&mut m, roi, t5([1, 2, 3, 1, 1], DType::F16));
    assert_rejects(&m, "must be N x boxes x (4 or 5) x 1 x 1");
}

#[test]
fn gather_flatten_and_norm_rules() {
    let mut m = sample(OpCode::Gather);
    let ix = m.inputs[1].value;
    retype(&mut m, ix, f16(1, 2, 1, 2));
    assert_rejects(&m, "result width is 3, expected 4");
    let mut m = sample(OpCode::Flatten);
    let r = m.ops[0].results[0];
    retype(&mut m, r, f16(1, 1, 1, 24));
    assert_rejects(&m, "result channel is 1, expected 24");
    let mut m = sample(OpCode::InstanceNorm);
    let x = m.inputs[0].value;
    let r = m.ops[0].results[0];
    retype(&mut m, x, f16(1, 5, 8, 8));
    retype(&mut m, r, f16(1, 5, 8, 8));
    assert_rejects(&m, "must hold one value per channel (5)");
}

#[test]
fn ring_buffer_data_must_fit() {
    let mut m = sample(OpCode::RingBufferWriter);
    let d = m.inputs[1].value;
    retype(&mut m, d, f16(1, 4, 1, 17));
    assert_rejects(&m, "does not fit the buffer [1, 4, 1, 1, 16] along width");
}

#[test]
fn infer_extents_is_the_verifier_rule() {
    for op in table_ops() {
        let m = sample(op);
        let xs: Vec<TensorType> = m.ops[0].operands.iter().filter_map(|&id| m.ty(id).copied()).collect();
        let got = infer_extents(op, &m.ops[0].attrs, &xs);
        let result = m.ty(m.ops[0].results[0]).copied();
        match got {
            None => assert!(matches!(op, OpCode::Random | OpCode::Nms), "{op} has no rule"),
            Some(r) => assert_eq!(r.ok(), result.map(|t| dims5(&t)), "{op}"),
        }
    }
    assert!(infer_extents(OpCode::Conv, &crate::attr::Attrs::new(), &[]).is_none());
}

#[test]
fn extreme_values_are_errors_not_panics() {
    let big = i64::MAX;
    let mut m = sample(OpCode::Pad);
    op0(&mut m).attrs.insert("mode".into(), s("constant"));
    op0(&mut m).attrs.insert("pad".into(), ints(&[0, 0, 0, 0, 0, 0, big, big, 0, 0]));
    assert_rejects(&m, "is not a valid extent");
    let mut m = sample(OpCode::ArgMinMax);
    op0(&mut m).attrs.insert("pad".into(), ints(&[big, big, 0, 0, 0, 0]));
    assert_rejects(&m, "is not a valid extent");
    let mut m = sample(OpCode::DynamicSlice);
    op0(&mut m).attrs.insert("offsets".into(), ints(&[big, 0]));
    assert_rejects(&m, "leaves the height extent 8");
    let mut m = sample(OpCode::PixelShuffle);
    for f in ["factor_x", "factor_y", "factor_z"] {
        op0(&mut m).attrs.insert(f.into(), int(i64::from(u32::MAX)));
    }
    assert_rejects(&m, "overflows 32 bits");
    let mut m = sample(OpCode::Resize);
    op0(&mut m).attrs.insert("ratio_y".into(), fl(f64::MAX));
    assert_rejects(&m, "is not a valid extent");
}
