//! Tests of the validators of the hidden-layer ops (seed 002 Tables B.1 and B.2), each on
//! two chips where they differ.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::tests::*;
use super::*;
use anec_ir::{DType, TensorType};

const F16: DType = DType::F16;

// ---- normalizations ---------------------------------------------------------------------

#[test]
fn instance_norm_needs_byte_0x816_and_spatial_axes() {
    let spatial = hidden(
        OpCode::InstanceNorm,
        &[t(1, 4, 8, 8)],
        &[("axes", strs(&["height", "width"])), ("epsilon", f(1e-5))],
        F16,
    );
    engine(on(&spatial, "h13g"));
    let r = rule(on(&spatial, "h12"), "InstanceNorm layer not supported for this ANE architecture");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x816 (instance-norm) = 0 on h12"));
    let channel =
        hidden(OpCode::InstanceNorm, &[t(1, 4, 8, 8)], &[("axes", strs(&["channel"])), ("epsilon", f(1e-5))], F16);
    rule(on(&channel, "h16g"), "InstanceNorm over axis C is not supported: spatial axes (D, H, W) only");
}

fn minmax(dimension: &str) -> Module {
    hidden(OpCode::MinMaxNorm, &[t(1, 4, 8, 8)], &[("dimension", s(dimension)), ("epsilon", f(0.0))], F16)
}

#[test]
fn minmax_norm_runs_over_width_and_height_and_gates_channel() {
    for chip in ["h13g", "h17"] {
        engine(on(&minmax("width"), chip));
        engine(on(&minmax("height"), chip));
        let r = rule(
            on(&minmax("channel"), chip),
            "MinMaxNormalization over Channel is not supported on this architecture (encoded assert, arch-gated)",
        );
        assert_eq!(r.feature, Some(format!("limit minmax-norm-channel-axis = no on {chip}")));
        assert!(r.suggestion.unwrap().contains("transpose channel to width"));
    }
    let r = rejected(on(&minmax("width"), "h11"));
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x818 (minmax-norm) = 0 on h11"));
}

fn lrn(channels: u32) -> Module {
    let attrs = [("kernel_channel", i(3)), ("alpha", f(1e-4)), ("beta", f(0.75)), ("bias", f(1.0))];
    hidden(OpCode::Lrn, &[t(1, channels, 8, 8)], &attrs, F16)
}

#[test]
fn lrn_channel_count_fails_code_generation() {
    engine(on(&lrn(15), "h13g"));
    let r = rule(
        on(&lrn(16), "h13g"),
        "LRN over 16 channels fails code generation on this architecture (passes validation)",
    );
    assert_eq!(r.stage, Stage::CodeGeneration);
    assert_eq!(r.feature.as_deref(), Some("limit lrn-max-channels = 15 on h13g"));
    rule(on(&lrn(8), "h12"), "LRN is not supported on this architecture.");
}

// ---- ranking ------------------------------------------------------------------------------

fn argmm(mode: &str, channels: u32, pad: [i64; 6]) -> Module {
    let attrs = [("mode", s(mode)), ("kernel", ints(&[3, 3])), ("pad", ints(&pad))];
    hidden(OpCode::ArgMinMax, &[t(1, channels, 8, 8)], &attrs, F16)
}

#[test]
fn arg_min_max_channels_and_pads() {
    for chip in ["h13g", "h16g"] {
        engine(on(&argmm("spatial_arg_max", 4096, [0, 0, 1, 1, 1, 1]), chip));
        engine(on(&argmm("channel_arg_min", 2048, [0; 6]), chip));
        let r = rule(
            on(&argmm("channel_arg_max", 4096, [0; 6]), chip),
            "ArgMinMax channel reduction over C = 4096 exceeds 2048 (fp16 indices)",
        );
        assert_eq!(r.feature, Some(format!("limit argminmax-max-channels = 2048 on {chip}")));
        rule(
            on(&argmm("spatial_arg_max", 4, [0, 0, 0, 0, 1, 0]), chip),
            "ArgMinMax pads left = 1 and right = 0 must be equal",
        );
        rule(
            on(&argmm("spatial_arg_max", 4, [1, 1, 0, 0, 0, 0]), chip),
            "ArgMinMax pads front = 1 and back = 1 must be zero",
        );
        rule(
            on(&argmm("spatial_arg_max", 4, [0, 0, 3, 0, 0, 0]), chip),
            "ArgMinMax pad top = 3 must be below the kernel size 3",
        );
    }
}

fn global(dimension: &str) -> Module {
    hidden(OpCode::GlobalArgMinMax, &[t(1, 4, 8, 8)], &[("kind", s("max")), ("dimension", s(dimension))], F16)
}

#[test]
fn global_arg_min_max_differs_by_route_on_the_m1() {
    engine(on_route(&global("channel"), "h13g", Route::Direct));
    let r = rule(
        on_route(&global("channel"), "h13g", Route::Conversion),
        "GlobalArgMinMax is not available on this architecture through the conversion route",
    );
    let feature = r.feature.unwrap();
    assert!(
        feature.starts_with("family floor A15 (conversion route: ANEForge")
            && feature.ends_with("; h13g is family A13")
    );
    assert!(r.suggestion.unwrap().contains("author the layer directly as a GlobalArgMinMax netplist unit"));
    engine(on_route(&global("channel"), "h15g", Route::Conversion));
    let r = rule(
        on(&global("channel"), "h12"),
        "GlobalArgMinMax is not supported on this architecture (encoded assert, byte 0x4f2)",
    );
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x4f2 (global-argminmax) = 0 on h12"));
    rule(on(&global("batch"), "h16g"), "GlobalArgMinMax over the batch dimension is not supported (encoded assert)");
}

fn sort_k(op: OpCode, k: Option<i64>) -> Module {
    let mut attrs = vec![
        ("sort_dimension", s("width")),
        ("vector_dimension", s("channel")),
        ("sort_indices", b(false)),
        ("indices", b(false)),
    ];
    match k {
        Some(k) => attrs.extend([("kind", s("max")), ("k", i(k))]),
        None => attrs.push(("direction", s("ascending"))),
    }
    hidden(op, &[t(1, 4, 1, 16)], &attrs, F16)
}

#[test]
fn sort_passes_validation_and_fails_m1_code_generation() {
    let r = rule(
        on(&sort_k(OpCode::Sort, None), "h13g"),
        "Sort is rejected at code generation on this architecture (passes validation)",
    );
    assert_eq!(r.stage, Stage::CodeGeneration);
    assert_eq!(r.feature.as_deref(), Some("limit sort-codegen = no on h13g"));
    engine(on(&sort_k(OpCode::Sort, None), "h14g"));
}

#[test]
fn top_k_m1_rejection_and_the_band() {
    let r = rule(
        on(&sort_k(OpCode::TopK, Some(5)), "h13g"),
        "TopK is rejected at code generation on this architecture (passes validation)",
    );
    assert_eq!(r.stage, Stage::CodeGeneration);
    engine(on(&sort_k(OpCode::TopK, Some(5)), "h17"));
    engine(on(&sort_k(OpCode::TopK, Some(2)), "h17"));
    for k in [3, 4] {
        let r = rule(
            on(&sort_k(OpCode::TopK, Some(k)), "h17"),
            &format!("TopK with k = {k} fails code generation on this architecture (passes validation)"),
        );
        assert_eq!(r.stage, Stage::CodeGeneration);
        assert_eq!(r.feature.as_deref(), Some("limit topk-forbidden-k = 3..=4 on h17"));
        assert_eq!(
            r.suggestion,
            Some(format!("k {k} is in the forbidden band 3..=4: take top_k with k = 5 and slice the first {k}"))
        );
    }
    let mut big = sort_k(OpCode::TopK, Some(5));
    big.ops[0].attrs.insert("k".into(), i(17));
    rule(unverified(&big, "h17"), "TopK k = 17 is outside the sort dimension's range [1, 16]");
}

// ---- data movement ----------------------------------------------------------------------

fn transpose(perm: &[&str], x: TensorType) -> Module {
    let d = [x.n, x.c, x.d, x.h, x.w];
    let idx = |n: &str| ["batch", "channel", "depth", "height", "width"].iter().position(|a| *a == n).unwrap();
    let o: Vec<u32> = perm.iter().map(|p| d[idx(p)]).collect();
    let out = TensorType { n: o[0], c: o[1], d: o[2], h: o[3], w: o[4], dtype: F16 };
    module(OpCode::Transpose, &[x], out, &[("perm", strs(perm))])
}

#[test]
fn transpose_extent_cap_and_batch() {
    let cw = ["batch", "width", "depth", "height", "channel"];
    let m = transpose(&cw, t(1, 8, 1, 20000));
    let r = rule(on(&m, "h13g"), "NE Input Transpose is not supported for this arch");
    assert_eq!(r.feature.as_deref(), Some("limit max-transpose-extent = 16384 on h13g"));
    assert_eq!(r.suggestion.as_deref(), Some("extent 20000 > 16384: tile along W"));
    engine(on(&transpose(&cw, t(1, 8, 1, 16384)), "h13g"));
    let wide = transpose(&cw, t5(1, 8, 1, 1, 20000));
    let v = on(&wide, "h17");
    engine(v);
    let nb = transpose(&["channel", "batch", "depth", "height", "width"], t(2, 8, 4, 4));
    for chip in ["h13g", "h17"] {
        rule(on(&nb, chip), "NE Input Transpose is not supported for this arch");
    }
}

#[test]
fn concat_needs_two_inputs_of_one_type() {
    let two = module(OpCode::Concat, &[t(1, 2, 4, 4), t(1, 3, 4, 4)], t(1, 5, 4, 4), &[("axis", s("channel"))]);
    engine(on(&two, "h13g"));
    let one = module(OpCode::Concat, &[t(1, 2, 4, 4)], t(1, 2, 4, 4), &[("axis", s("channel"))]);
    rule(unverified(&one, "h16g"), "Concat layer must have at least 2 inputs");
}

fn pad(mode: &str, pads: [i64; 10]) -> Module {
    hidden(OpCode::Pad, &[t(1, 4, 8, 8)], &[("mode", s(mode)), ("pad", ints(&pads))], F16)
}

#[test]
fn pad_spatial_only_and_texture_modes() {
    let hw = [0, 0, 0, 0, 0, 0, 1, 1, 2, 2];
    engine(on(&pad("constant", hw), "h13g"));
    engine(on(&pad("replicate", hw), "h13g"));
    let r = rule(on(&pad("reflect", hw), "h13g"), "Pad mode \"reflect\" is not supported on this architecture");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x81d (texture-engine) = 0 on h13g"));
    engine(on(&pad("reflect", hw), "h14g"));
    engine(on(&pad("symmetric", hw), "h14g"));
    let channel = [0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
    for chip in ["h13g", "h14g"] {
        rule(on(&pad("constant", channel), chip), "Channel padding is not supported on ANE");
    }
}

#[test]
fn broadcast_along_depth_needs_byte_0x812() {
    let attrs = [("axes", strs(&["depth"])), ("sizes", ints(&[4]))];
    let deep = module(OpCode::Broadcast, &[t5(1, 2, 1, 4, 4)], t5(1, 2, 4, 4, 4), &attrs);
    for chip in ["h13g", "h17"] {
        let r = rule(on(&deep, chip), "Broadcast along depth axis is not supported on this architecture");
        assert_eq!(r.feature, Some(format!("feature byte 0x812 (depth-broadcast) = 0 on {chip}")));
    }
    let size_one = module(
        OpCode::Broadcast,
        &[t(1, 2, 1, 4)],
        t(1, 2, 1, 4),
        &[("axes", strs(&["depth"])), ("sizes", ints(&[1]))],
    );
    engine(on(&size_one, "h13g"));
    let h = module(
        OpCode::Broadcast,
        &[t(1, 2, 1, 4)],
        t(1, 2, 3, 4),
        &[("axes", strs(&["height"])), ("sizes", ints(&[3]))],
    );
    engine(on(&h, "h13g"));
}

fn gather(index: TensorType) -> Module {
    hidden(OpCode::Gather, &[t(1, 4, 8, 8), index], &[("axis", s("width"))], F16)
}

#[test]
fn gather_software_envelope_on_the_m1() {
    engine(on(&gather(t(1, 3, 1, 1)), "h13g"));
    let r = rule(on(&gather(t(1, 2, 1, 1)), "h13g"), "Cannot decompose layer on this architecture");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x81d (texture-engine) = 0 on h13g"));
    engine(on(&gather(t(1, 2, 1, 1)), "h14g"));
}

#[test]
fn dynamic_slice_fails_m1_code_generation() {
    let attrs = [
        ("axis_order", strs(&["width"])),
        ("sizes", ints(&[4])),
        ("offsets", ints(&[2])),
        ("coordinate_info", s("constant")),
        ("padding_info", s("none")),
    ];
    let m = hidden(OpCode::DynamicSlice, &[t(1, 4, 8, 8)], &attrs, F16);
    let r =
        rule(on(&m, "h13g"), "DynamicSlice is rejected at code generation on this architecture (passes validation)");
    assert_eq!(r.stage, Stage::CodeGeneration);
    assert_eq!(r.suggestion.as_deref(), Some("the offsets are constant: use a static slice (input_view) instead"));
    engine(on(&m, "h14g"));
}
