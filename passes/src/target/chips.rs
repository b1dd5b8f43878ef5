//! The table of chips: one [`ChipSpec`] per target, data only.
//!
//! Names, marketing names, cpusubtypes and ISA versions: `chip-features.md` §1
//! (freedomtan `hwx_dump/README.md`). The base die (`h13`) and the `g` die (`h13g`) of a
//! generation share cpusubtype, ISA version and capability family. H17 is listed as "A18 /
//! A18 Pro / M5" in one README version and "A18 Pro / M5" in another (§9.2); ANEForge
//! measured the M5 as `h17s` and MidasMulli used `h17g` on an M5 Pro. `h17` here is the H17
//! generation, to which the seeds' "M5" values are applied.
//!
//! Limits are shared by the two dies of a generation; feature bytes by the members of a
//! family (see `features.rs`). Where a seed states a value for the M1 only, the `h13g` row
//! cites it and the other rows say how their value was chosen.

use super::features;
use super::limits::*;
use super::{inferred, reference, seed, ChipSpec, Family, Generation};

const KSECT: u64 = 134_217_728;
const K34: Option<InclusiveRange> = Some(InclusiveRange { min: 3, max: 4 });

const fn kw(max: u32) -> InclusiveRange {
    InclusiveRange { min: 1, max }
}

/// H11 and H12: below the MIL floor; nothing measured.
const OLDER: Limits = Limits {
    max_spatial_extent: inferred(16384, OLDER_AS_A13),
    max_channels: inferred(65536, OLDER_AS_A13),
    max_transpose_extent: seed(16384, TR_M3),
    conv_kernel_width: inferred(kw(13), OLDER_AS_A13),
    conv_large_kernel_multiple: seed(8, LARGE_KERNEL),
    max_groups: inferred(8191, GROUPS_OTHER),
    max_kernel_section_bytes: inferred(KSECT, KSECT_OTHER),
    argminmax_max_channels: seed(2048, ARGMINMAX),
    topk_forbidden_k: inferred(K34, TOPK_BAND_OTHER),
    topk_codegen: inferred(false, OLDER_NO_CODEGEN),
    sort_codegen: inferred(false, OLDER_NO_CODEGEN),
    dynamic_slice_codegen: inferred(false, OLDER_NO_CODEGEN),
    lrn_max_channels: inferred(15, LRN_OTHER),
    minmax_norm_channel_axis: inferred(false, MMN_OTHER),
    reduction_transpose_threshold: inferred(192, OLDER_AS_A13),
    fps_max_centroids: inferred(1024, OLDER_AS_A13),
    fps_max_points: inferred(8192, OLDER_AS_A13),
};

/// H13g (M1).
const H13G: Limits = Limits {
    max_spatial_extent: reference(16384, DIM_M1),
    max_channels: reference(65536, CH_M1),
    max_transpose_extent: seed(16384, TR_M3),
    conv_kernel_width: reference(kw(13), KW_M1),
    conv_large_kernel_multiple: seed(8, LARGE_KERNEL),
    max_groups: seed(8191, GROUPS_M1),
    max_kernel_section_bytes: seed(KSECT, KSECT_M1),
    argminmax_max_channels: seed(2048, ARGMINMAX),
    topk_forbidden_k: inferred(K34, TOPK_BAND_OTHER),
    topk_codegen: seed(false, TOPK_M1),
    sort_codegen: seed(false, SORT_M1),
    dynamic_slice_codegen: seed(false, DSLICE_M1),
    lrn_max_channels: seed(15, LRN_M1),
    minmax_norm_channel_axis: seed(false, MMN_M1),
    reduction_transpose_threshold: reference(192, RT_A13),
    fps_max_centroids: seed(1024, FPS_M1),
    fps_max_points: seed(8192, FPS_M1),
};

/// H13 (A14): the M1's generation.
const H13: Limits = Limits {
    max_spatial_extent: reference(16384, DIM_M1),
    max_channels: reference(65536, CH_M1),
    max_transpose_extent: seed(16384, TR_M3),
    conv_kernel_width: reference(kw(13), KW_M1),
    conv_large_kernel_multiple: seed(8, LARGE_KERNEL),
    max_groups: inferred(8191, GROUPS_H13),
    max_kernel_section_bytes: inferred(KSECT, KSECT_OTHER),
    argminmax_max_channels: seed(2048, ARGMINMAX),
    topk_forbidden_k: inferred(K34, TOPK_BAND_OTHER),
    topk_codegen: inferred(false, AS_H13G),
    sort_codegen: inferred(false, AS_H13G),
    dynamic_slice_codegen: inferred(false, AS_H13G),
    lrn_max_channels: inferred(15, AS_H13G),
    minmax_norm_channel_axis: inferred(false, AS_H13G),
    reduction_transpose_threshold: reference(192, RT_A13),
    fps_max_centroids: inferred(1024, AS_H13G),
    fps_max_points: inferred(8192, AS_H13G),
};

/// H14, H14g (family A14).
const H14: Limits = Limits {
    max_spatial_extent: reference(16384, DIM_M2),
    max_channels: reference(65536, CH_M2),
    max_transpose_extent: seed(16384, TR_M3),
    conv_kernel_width: reference(kw(13), KW_A14_A15),
    conv_large_kernel_multiple: seed(8, LARGE_KERNEL),
    max_groups: inferred(8191, GROUPS_OTHER),
    max_kernel_section_bytes: inferred(KSECT, KSECT_OTHER),
    argminmax_max_channels: seed(2048, ARGMINMAX),
    topk_forbidden_k: inferred(K34, TOPK_BAND_OTHER),
    topk_codegen: reference(true, TOPK_LATER),
    sort_codegen: seed(true, SORT_LATER),
    dynamic_slice_codegen: seed(true, DSLICE_LATER),
    lrn_max_channels: inferred(15, LRN_OTHER),
    minmax_norm_channel_axis: inferred(false, MMN_OTHER),
    reduction_transpose_threshold: reference(192, RT_A13),
    fps_max_centroids: inferred(1024, FPS_OTHER),
    fps_max_points: inferred(8192, FPS_OTHER),
};

/// H15, H15g (family A15).
const H15: Limits = Limits {
    max_spatial_extent: reference(16384, DIM_A15),
    max_channels: reference(65536, CH_A15_A16),
    conv_kernel_width: reference(kw(13), KW_A14_A15),
    reduction_transpose_threshold: reference(384, RT_A15),
    ..H14
};

/// H16, H16g (family A16).
const H16: Limits = Limits {
    max_spatial_extent: reference(65536, DIM_A16),
    max_channels: reference(65536, CH_A15_A16),
    max_transpose_extent: inferred(65536, TR_H16),
    conv_kernel_width: reference(kw(15), KW_A16),
    ..H15
};

/// H17 (A18, M5).
const H17: Limits = Limits {
    max_spatial_extent: reference(65536, DIM_M5),
    max_channels: reference(65536, CH_M5),
    max_transpose_extent: seed(65536, TR_M5),
    conv_kernel_width: reference(kw(15), KW_M5),
    topk_forbidden_k: seed(K34, TOPK_BAND_M5),
    topk_codegen: seed(true, TOPK_M5),
    lrn_max_channels: reference(15, LRN_M5),
    minmax_norm_channel_axis: reference(false, MMN_M5),
    ..H16
};

/// `h11`: A12.
pub(super) const CHIP_H11: ChipSpec = ChipSpec {
    name: "h11",
    marketing: "A12",
    generation: Generation::H11,
    family: Family::Older,
    cpusubtype: 1,
    isa_version: 5,
    features: features::OLDER,
    limits: OLDER,
};

/// `h12`: A13.
pub(super) const CHIP_H12: ChipSpec = ChipSpec {
    name: "h12",
    marketing: "A13",
    generation: Generation::H12,
    family: Family::Older,
    cpusubtype: 3,
    isa_version: 6,
    features: features::OLDER,
    limits: OLDER,
};

/// `h13`: A14, the M1's generation.
pub(super) const CHIP_H13: ChipSpec = ChipSpec {
    name: "h13",
    marketing: "A14",
    generation: Generation::H13,
    family: Family::A13,
    cpusubtype: 4,
    isa_version: 7,
    features: features::H13,
    limits: H13,
};

/// `h13g`: M1, the chip the seeds measure (the only one with a backend).
pub(super) const CHIP_H13G: ChipSpec = ChipSpec {
    name: "h13g",
    marketing: "M1",
    generation: Generation::H13,
    family: Family::A13,
    cpusubtype: 4,
    isa_version: 7,
    features: features::H13G,
    limits: H13G,
};

/// `h14`: A15.
pub(super) const CHIP_H14: ChipSpec = ChipSpec {
    name: "h14",
    marketing: "A15",
    generation: Generation::H14,
    family: Family::A14,
    cpusubtype: 5,
    isa_version: 11,
    features: features::A14,
    limits: H14,
};

/// `h14g`: M2.
pub(super) const CHIP_H14G: ChipSpec = ChipSpec {
    name: "h14g",
    marketing: "M2",
    generation: Generation::H14,
    family: Family::A14,
    cpusubtype: 5,
    isa_version: 11,
    features: features::A14,
    limits: H14,
};

/// `h15`: A16 (ISA 8, below H14's 11).
pub(super) const CHIP_H15: ChipSpec = ChipSpec {
    name: "h15",
    marketing: "A16",
    generation: Generation::H15,
    family: Family::A15,
    cpusubtype: 6,
    isa_version: 8,
    features: features::A15_ON,
    limits: H15,
};

/// `h15g`: M3.
pub(super) const CHIP_H15G: ChipSpec = ChipSpec {
    name: "h15g",
    marketing: "M3",
    generation: Generation::H15,
    family: Family::A15,
    cpusubtype: 6,
    isa_version: 8,
    features: features::A15_ON,
    limits: H15,
};

/// `h16`: A17 Pro.
pub(super) const CHIP_H16: ChipSpec = ChipSpec {
    name: "h16",
    marketing: "A17 Pro",
    generation: Generation::H16,
    family: Family::A16,
    cpusubtype: 7,
    isa_version: 17,
    features: features::A15_ON,
    limits: H16,
};

/// `h16g`: M4.
pub(super) const CHIP_H16G: ChipSpec = ChipSpec {
    name: "h16g",
    marketing: "M4",
    generation: Generation::H16,
    family: Family::A16,
    cpusubtype: 7,
    isa_version: 17,
    features: features::A15_ON,
    limits: H16,
};

/// `h17`: A18 / A18 Pro; the M5 is an H17 die (`h17s` / `h17g`).
pub(super) const CHIP_H17: ChipSpec = ChipSpec {
    name: "h17",
    marketing: "A18 / M5",
    generation: Generation::H17,
    family: Family::A16,
    cpusubtype: 9,
    isa_version: 19,
    features: features::A15_ON,
    limits: H17,
};

/// Every chip, oldest generation first, base die before its `g` die.
pub(super) const ALL: [&ChipSpec; 11] = [
    &CHIP_H11, &CHIP_H12, &CHIP_H13, &CHIP_H13G, &CHIP_H14, &CHIP_H14G, &CHIP_H15, &CHIP_H15G, &CHIP_H16, &CHIP_H16G,
    &CHIP_H17,
];
