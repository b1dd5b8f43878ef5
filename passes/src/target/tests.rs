//! Tests of the target table: lookup, identity, the values the seeds state, ordering.

#![allow(clippy::panic)]

use super::*;

const NAMES: [&str; 11] = ["h11", "h12", "h13", "h13g", "h14", "h14g", "h15", "h15g", "h16", "h16g", "h17"];

fn t(name: &str) -> Target {
    match lookup(name) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

fn byte(name: &str, b: FeatureByte) -> u8 {
    t(name).feature(b)
}

fn source(name: &str, b: FeatureByte) -> Source {
    t(name).features().get(b).source
}

#[test]
fn every_name_looks_up_to_itself() {
    assert_eq!(Target::names(), NAMES);
    for name in NAMES {
        assert_eq!(t(name).name(), name);
    }
    assert_eq!(t("H13G"), t("h13g"));
}

#[test]
fn unknown_name_lists_every_valid_name() {
    let err = lookup("h99").err().map(|e| e.to_string());
    let want = "unknown target `h99`; valid targets: h11, h12, h13, h13g, h14, h14g, h15, h15g, h16, h16g, h17";
    assert_eq!(err.as_deref(), Some(want));
    assert!(lookup("").is_err());
    assert!(lookup("h13 ").is_err());
    assert!(lookup("m1").is_err(), "marketing names are not target names");
}

#[test]
fn identity_matches_chip_features_section_1() {
    let got: Vec<(&str, &str, u32, u32)> =
        Target::all().map(|t| (t.name(), t.marketing_name(), t.cpusubtype(), t.isa_version())).collect();
    let want = [
        ("h11", "A12", 1, 5),
        ("h12", "A13", 3, 6),
        ("h13", "A14", 4, 7),
        ("h13g", "M1", 4, 7),
        ("h14", "A15", 5, 11),
        ("h14g", "M2", 5, 11),
        ("h15", "A16", 6, 8),
        ("h15g", "M3", 6, 8),
        ("h16", "A17 Pro", 7, 17),
        ("h16g", "M4", 7, 17),
        ("h17", "A18 / M5", 9, 19),
    ];
    assert_eq!(got, want);
}

#[test]
fn generation_orders_chips_and_isa_does_not() {
    let all: Vec<Target> = Target::all().collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]), "Target::all() is in generation order");
    assert!(all.windows(2).all(|w| w[0].generation() <= w[1].generation()));
    assert!(t("h13g") < t("h14"));
    assert!(t("h13") < t("h13g"), "base die before the g die");
    assert_eq!(t("h13").generation(), t("h13g").generation());
    // H15 is ISA 8, H14 is ISA 11: the ISA number must not be used to order chips.
    assert!(t("h15").generation() > t("h14").generation());
    assert!(t("h15").isa_version() < t("h14").isa_version());
}

#[test]
fn families_follow_aneforge() {
    let fam: Vec<&str> = Target::all().map(|t| t.family().name()).collect();
    assert_eq!(fam, ["older", "older", "A13", "A13", "A14", "A14", "A15", "A15", "A16", "A16", "A16"]);
}

#[test]
fn reduce_then_square_is_0_through_the_m1() {
    for name in ["h11", "h12", "h13", "h13g"] {
        assert_eq!(byte(name, FeatureByte::ReduceThenSquare), 0, "{name}");
    }
    assert!(matches!(source("h13g", FeatureByte::ReduceThenSquare), Source::Seed(_)));
    for name in ["h14", "h14g", "h15", "h16g", "h17"] {
        assert_eq!(byte(name, FeatureByte::ReduceThenSquare), 1, "{name}");
    }
}

#[test]
fn dropout_random_is_1_only_from_the_a15_family() {
    for name in NAMES {
        let want = u8::from(t(name).family() >= Family::A15);
        assert_eq!(byte(name, FeatureByte::DropoutRandom), want, "{name}");
    }
    assert_eq!(byte("h14g", FeatureByte::DropoutRandom), 0, "M2 (family A14) has no Dropout");
    assert_eq!(byte("h15g", FeatureByte::DropoutRandom), 1, "M3 (family A15) has Dropout");
}

#[test]
fn global_argminmax_is_set_from_the_m1_on_the_bridge_route() {
    assert_eq!(byte("h13g", FeatureByte::GlobalArgMinMax), 1);
    assert!(matches!(source("h13g", FeatureByte::GlobalArgMinMax), Source::Seed(_)));
    assert_eq!(byte("h13", FeatureByte::GlobalArgMinMax), 1);
    assert_eq!(byte("h12", FeatureByte::GlobalArgMinMax), 0);
    assert_eq!(byte("h17", FeatureByte::GlobalArgMinMax), 1);
}

#[test]
fn softmax_is_0_only_on_older_chips() {
    assert_eq!(byte("h11", FeatureByte::Softmax), 0);
    assert_eq!(byte("h12", FeatureByte::Softmax), 0);
    assert!(matches!(source("h12", FeatureByte::Softmax), Source::Seed(_)));
    for name in &NAMES[2..] {
        assert_eq!(byte(name, FeatureByte::Softmax), 1, "{name}");
    }
}

#[test]
fn texture_engine_starts_at_h14_not_at_the_a14_soc() {
    assert_eq!(byte("h13g", FeatureByte::TextureEngine), 0);
    assert!(matches!(source("h13g", FeatureByte::TextureEngine), Source::Seed(_)));
    // h13 is the A14 SoC, but the seeds' "A14 generation" is family A14 = H14.
    assert_eq!(byte("h13", FeatureByte::TextureEngine), 0);
    assert!(matches!(source("h13", FeatureByte::TextureEngine), Source::Inferred(_)));
    assert_eq!(byte("h14", FeatureByte::TextureEngine), 1);
    assert_eq!(byte("h14g", FeatureByte::TextureEngine), 1);
    // The setter table agrees: Texture* setters are absent on H13 and REAL on H14.
    assert_eq!(t("h13").setter_status("TextureMode"), Some(SetterStatus::Absent));
    assert_eq!(t("h14").setter_status("TextureMode"), Some(SetterStatus::Real));
}

#[test]
fn m1_runs_lrn_and_spatial_minmax_norm_but_not_channel() {
    let m1 = t("h13g");
    assert_eq!(m1.feature(FeatureByte::Lrn), 1);
    assert_eq!(m1.feature(FeatureByte::MinMaxNorm), 1);
    assert_eq!(m1.feature(FeatureByte::InstanceNorm), 1);
    assert_eq!(m1.limits().lrn_max_channels.value, 15);
    assert!(!m1.limits().minmax_norm_channel_axis.value);
}

#[test]
fn depth_broadcast_is_unknown_so_off_everywhere() {
    for name in NAMES {
        assert_eq!(byte(name, FeatureByte::DepthBroadcast), 0, "{name}");
        assert!(matches!(source(name, FeatureByte::DepthBroadcast), Source::Inferred(_)));
    }
}

#[test]
fn transpose_extent_is_16384_through_the_m3_and_65536_on_the_m5() {
    for name in &NAMES[..8] {
        assert_eq!(t(name).limits().max_transpose_extent.value, 16384, "{name}");
    }
    assert_eq!(t("h17").limits().max_transpose_extent.value, 65536);
    assert!(matches!(t("h17").limits().max_transpose_extent.source, Source::Seed(_)));
    assert_eq!(t("h16g").limits().max_transpose_extent.value, 65536);
    assert!(matches!(t("h16g").limits().max_transpose_extent.source, Source::Inferred(_)));
}

#[test]
fn spatial_extent_and_kernel_width_step_up_at_family_a16() {
    for tgt in Target::all() {
        let l = tgt.limits();
        let a16 = tgt.family() == Family::A16;
        assert_eq!(l.max_spatial_extent.value, if a16 { 65536 } else { 16384 }, "{tgt}");
        assert_eq!(l.conv_kernel_width.value.max, if a16 { 15 } else { 13 }, "{tgt}");
        assert_eq!(l.max_channels.value, 65536, "{tgt}");
    }
    assert!(t("h13g").limits().conv_kernel_width_ok(13));
    assert!(!t("h13g").limits().conv_kernel_width_ok(14));
    assert!(t("h16").limits().conv_kernel_width_ok(15));
    assert!(!t("h16").limits().conv_kernel_width_ok(0));
}

#[test]
fn m1_layer_caps_from_the_seeds() {
    let l = t("h13g").limits();
    assert_eq!(l.argminmax_max_channels.value, 2048);
    assert_eq!(l.max_groups.value, 8191);
    assert_eq!(l.max_kernel_section_bytes.value, 128 << 20);
    assert_eq!(l.conv_large_kernel_multiple.value, 8);
    assert_eq!((l.fps_max_centroids.value, l.fps_max_points.value), (1024, 8192));
    assert!(!l.topk_codegen.value && !l.sort_codegen.value && !l.dynamic_slice_codegen.value);
    for v in [&l.max_groups.source, &l.max_kernel_section_bytes.source, &l.topk_codegen.source] {
        assert!(matches!(v, Source::Seed(_)), "{v}");
    }
}

#[test]
fn topk_band_and_codegen() {
    let m5 = t("h17").limits();
    assert!(m5.topk_codegen.value);
    assert!(m5.topk_k_ok(2) && !m5.topk_k_ok(3) && !m5.topk_k_ok(4) && m5.topk_k_ok(5));
    assert!(matches!(m5.topk_forbidden_k.source, Source::Seed(_)));
    assert!(t("h14").limits().sort_codegen.value, "Sort runs on the families after the M1");
}

#[test]
fn reduction_transpose_threshold_raises_at_a15() {
    let got: Vec<u32> = Target::all().map(|t| t.limits().reduction_transpose_threshold.value).collect();
    assert_eq!(got, [192, 192, 192, 192, 192, 192, 384, 384, 384, 384, 384]);
}

#[test]
fn setter_status_reads_the_generation_column() {
    assert_eq!(t("h16g").setter_status("DoubleInt8Enable"), Some(SetterStatus::Real));
    assert_eq!(t("h15g").setter_status("DoubleInt8Enable"), Some(SetterStatus::Stub));
    assert_eq!(t("h17").setter_status("1DWinogradMode"), Some(SetterStatus::Real));
    assert_eq!(t("h16").setter_status("1DWinogradMode"), Some(SetterStatus::Stub));
    assert_eq!(t("h13g").setter_status("NoSuchSetter"), None);
}

#[test]
fn every_value_has_a_source_text() {
    for tgt in Target::all() {
        for (b, v) in tgt.features().iter() {
            assert!(!v.source.text().is_empty(), "{tgt} {}", b.name());
        }
        for r in tgt.limits().rows() {
            assert!(!r.source.text().is_empty(), "{tgt} {}", r.key);
        }
    }
}
