//! Per-chip limits: tensor extents, kernel sizes, group and channel widths, the kernel
//! section budget and the per-layer caps the seeds give, each with its source.
//!
//! The values per chip are in `chips.rs`; the shared citations are the constants below.

use super::Sourced;

/// An inclusive range of integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InclusiveRange {
    /// Smallest value in the range.
    pub min: u32,
    /// Largest value in the range.
    pub max: u32,
}

impl InclusiveRange {
    /// Whether `v` is in the range.
    pub const fn contains(self, v: u32) -> bool {
        self.min <= v && v <= self.max
    }
}

/// One chip's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest extent of a spatial or contraction axis (H, W, matmul K, conv spatial).
    /// ANEForge measured 16384 on the M1 and M2 (16385 rejects) and 65536 on the M5; the
    /// H13 register fields are 15 bits (seed 001, listing 23.3), the compiler cap is lower.
    pub max_spatial_extent: Sourced<u32>,
    /// Largest channel extent (elementwise, conv input). ANEForge measured 65536 (65537
    /// rejects) on the M1, M2 and M5; the H13 `Cin`/`Cout` fields are 17 bits (131071, seed
    /// 000 Table C.18), which is the register width, not the accepted extent.
    pub max_channels: Sourced<u32>,
    /// Largest extent a `Transpose` moves (seed 002 Table B.2: "capped 16384 through the M3,
    /// 65536 on the M5"; last four dimensions only).
    pub max_transpose_extent: Sourced<u32>,
    /// Accepted convolution kernel widths (the validator's "Invalid conv kernel %s = %zd, It
    /// should be in [%zd, %zd]"). ANEForge: the height has no fixed cap.
    pub conv_kernel_width: Sourced<InclusiveRange>,
    /// Seed 002 Table B.2 Conv: "large kernel W and H multiple of 8". The seed does not say
    /// where "large" starts; this is the multiple only.
    pub conv_large_kernel_multiple: Sourced<u32>,
    /// Largest convolution group count (the `numGroups` register field).
    pub max_groups: Sourced<u32>,
    /// Largest weight (kernel) section in bytes (`--max-kernel-section-size`). The seeds do
    /// not give the MatrixMult "kernel-memory budget" itself.
    pub max_kernel_section_bytes: Sourced<u64>,
    /// Largest channel count a channel `ArgMinMax` reduces (fp16 indices are exact below
    /// 2048).
    pub argminmax_max_channels: Sourced<u32>,
    /// The `k` of `TopK` that fails the compiler at every width, if any.
    pub topk_forbidden_k: Sourced<Option<InclusiveRange>>,
    /// Whether the code generator accepts `TopK` (its validator passes on every chip).
    pub topk_codegen: Sourced<bool>,
    /// Whether the code generator accepts `Sort` (its validator passes on every chip).
    pub sort_codegen: Sourced<bool>,
    /// Whether the code generator accepts `DynamicSlice` (its validator passes on every chip).
    pub dynamic_slice_codegen: Sourced<bool>,
    /// Largest `LRN` channel count that code-generates.
    pub lrn_max_channels: Sourced<u32>,
    /// Whether `MinMaxNorm` may reduce over the Channel axis (Width and Height always may).
    pub minmax_norm_channel_axis: Sourced<bool>,
    /// Reduction extent above which a reduction is routed through a transpose (HAL 0x3f0).
    pub reduction_transpose_threshold: Sourced<u32>,
    /// Largest `FurthestPointSampling` centroid count.
    pub fps_max_centroids: Sourced<u32>,
    /// Largest `FurthestPointSampling` point count.
    pub fps_max_points: Sourced<u32>,
}

/// One limit as text, for listings and the docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRow {
    /// A stable key (`max-spatial-extent`).
    pub key: &'static str,
    /// What it limits.
    pub what: &'static str,
    /// The value as text (`16384`, `1..=13`, `none`, `yes`).
    pub value: String,
    /// Where it comes from.
    pub source: super::Source,
}

fn row<T>(key: &'static str, what: &'static str, v: &Sourced<T>, show: impl Fn(&T) -> String) -> LimitRow {
    LimitRow { key, what, value: show(&v.value), source: v.source }
}

fn num<T: ToString>(v: &T) -> String {
    v.to_string()
}

fn range(r: &InclusiveRange) -> String {
    format!("{}..={}", r.min, r.max)
}

fn yes_no(b: &bool) -> String {
    if *b { "yes" } else { "no" }.to_owned()
}

fn band(r: &Option<InclusiveRange>) -> String {
    r.as_ref().map_or_else(|| "none".to_owned(), range)
}

impl Limits {
    /// Whether a convolution kernel of width `kw` is in the chip's range.
    pub const fn conv_kernel_width_ok(&self, kw: u32) -> bool {
        self.conv_kernel_width.value.contains(kw)
    }

    /// Whether `TopK` with this `k` avoids the forbidden band (code generation aside).
    pub const fn topk_k_ok(&self, k: u32) -> bool {
        match self.topk_forbidden_k.value {
            Some(band) => !band.contains(k),
            None => true,
        }
    }

    /// Every limit as a row, in a fixed order.
    pub fn rows(&self) -> Vec<LimitRow> {
        vec![
            row("max-spatial-extent", "spatial/contraction axis extent", &self.max_spatial_extent, num),
            row("max-channels", "channel extent", &self.max_channels, num),
            row("max-transpose-extent", "Transpose extent", &self.max_transpose_extent, num),
            row("conv-kernel-width", "Conv kernel width", &self.conv_kernel_width, range),
            row(
                "conv-large-kernel-multiple",
                "large Conv kernel W, H multiple of",
                &self.conv_large_kernel_multiple,
                num,
            ),
            row("max-groups", "Conv group count", &self.max_groups, num),
            row("max-kernel-section-bytes", "weight section bytes", &self.max_kernel_section_bytes, num),
            row("argminmax-max-channels", "ArgMinMax channel-reduce C", &self.argminmax_max_channels, num),
            row("topk-forbidden-k", "TopK k band that fails", &self.topk_forbidden_k, band),
            row("topk-codegen", "TopK code-generates", &self.topk_codegen, yes_no),
            row("sort-codegen", "Sort code-generates", &self.sort_codegen, yes_no),
            row("dynamic-slice-codegen", "DynamicSlice code-generates", &self.dynamic_slice_codegen, yes_no),
            row("lrn-max-channels", "LRN channel count", &self.lrn_max_channels, num),
            row("minmax-norm-channel-axis", "MinMaxNorm over Channel", &self.minmax_norm_channel_axis, yes_no),
            row(
                "reduction-transpose-threshold",
                "reduction routed via transpose above",
                &self.reduction_transpose_threshold,
                num,
            ),
            row("fps-max-centroids", "FurthestPointSampling centroids", &self.fps_max_centroids, num),
            row("fps-max-points", "FurthestPointSampling points", &self.fps_max_points, num),
        ]
    }
}

// ---- shared citations (used by chips.rs) ---------------------------------------------

/// Family older has no measured limits.
pub(super) const OLDER_AS_A13: &str = "no source: h11/h12 are below the MIL floor (ANEForge family older); \
                                       the A13 (M1) value is used";
/// h13 is the M1's generation.
pub(super) const AS_H13G: &str = "as h13g: same H13 generation (cpusubtype 4, ISA 7) and ANEForge family A13";

pub(super) const DIM_M1: &str = "ANEForge _targets.py: 16384 measured on the M1 (16385 rejects)";
pub(super) const DIM_M2: &str = "ANEForge _targets.py: 16384 measured on the M2 (family A14)";
pub(super) const DIM_A15: &str = "ANEForge _targets.py, capabilities.md: 16384 through family A15 (M3 unmeasured)";
pub(super) const DIM_A16: &str = "ANEForge _targets.py: 65536 from family A16 (measured on the M5; H16 is in A16)";
pub(super) const DIM_M5: &str = "ANEForge _targets.py: 65536 measured on the M5";

pub(super) const CH_M1: &str = "ANEForge _targets.py: 65536 measured on the M1 (65537 rejects)";
pub(super) const CH_M2: &str = "ANEForge _targets.py: 65536 measured on the M2";
pub(super) const CH_A15_A16: &str = "ANEForge _targets.py: 65536 on families A14 and A16, monotone, so A15 and H16 too";
pub(super) const CH_M5: &str = "ANEForge _targets.py: 65536 measured on the M5";

pub(super) const TR_M3: &str = "seed 002 Table B.2 Transpose: extent capped 16384 through the M3";
pub(super) const TR_M5: &str = "seed 002 Table B.2 Transpose: 65536 on the M5";
pub(super) const TR_H16: &str = "seed 002 gives 16384 through the M3 and 65536 on the M5; H16 (M4) is in \
                                 ANEForge family A16 with the M5, whose extent cap is 65536";

pub(super) const KW_M1: &str = "ANEForge _targets.py: kW <= 13 measured on the M1 (14 rejects)";
pub(super) const KW_A14_A15: &str = "ANEForge _targets.py: families A14/A15 inherit 13 (unmeasured, conservative)";
pub(super) const KW_A16: &str = "ANEForge _targets.py: kW <= 15 measured on the M5 (16 rejects), family A16";
pub(super) const KW_M5: &str = "ANEForge _targets.py, op-quirks.md: kW <= 15 measured on the M5 (16 rejects)";

pub(super) const LARGE_KERNEL: &str =
    "seed 002 Table B.2 Conv: large kernel W and H multiple of 8 (stated without a chip)";

pub(super) const GROUPS_M1: &str = "seed 001 listing 23.3: numGroups is a 13-bit field of the H13 task descriptor";
pub(super) const GROUPS_H13: &str = "as h13g: h13 uses the same ISA-7 task descriptor (13-bit numGroups)";
pub(super) const GROUPS_OTHER: &str = "no source: the H13 13-bit numGroups width (seed 001); this chip's \
                                       task-descriptor layout is not decoded";

pub(super) const KSECT_M1: &str = "seed 001 listing 23.4: the -t h13g build banner has \
                                   --max-kernel-section-size=134217728 (128 MB)";
pub(super) const KSECT_OTHER: &str = "no source: the compiler default seen in the h13g banner (seed 001)";

pub(super) const ARGMINMAX: &str =
    "seed 002 Table B.2 ArgMinMax: channel-reduce C at most 2048 fp16 (stated without a chip)";

pub(super) const TOPK_BAND_M5: &str = "seed 002 Table B.2 TopK: k in 3 or 4 is forbidden on the M5";
pub(super) const TOPK_BAND_OTHER: &str = "seed 002 Table B.1 gives the M1 a forbidden band but its text elides the \
                                          bounds; 3..=4 from Table B.2 (M5) and ANEForge topk_k3_k4";
pub(super) const TOPK_M1: &str = "seed 002 Table B.2 TopK and seed 003 Table 26.1: the M1 rejects TopK at code \
                                  generation (Table B.1 says it runs outside the band; the reject is used)";
pub(super) const TOPK_LATER: &str = "ANEForge _targets.py: TopK's floor is family A14 (H14)";
pub(super) const TOPK_M5: &str = "seed 002 Table B.2 TopK: on the M5 only k in 3 or 4 is forbidden";

pub(super) const SORT_M1: &str = "seed 002 Tables B.1/B.2 Sort: the code generator rejects Sort on the M1";
pub(super) const SORT_LATER: &str = "seed 002 Table B.1 Sort: runs on later families (ANEForge floor A14)";
pub(super) const DSLICE_M1: &str = "seed 002 Table B.1 DynamicSlice: the code generator rejects it on the M1";
pub(super) const DSLICE_LATER: &str = "seed 002 Table B.1 DynamicSlice: runs on later families (ANEForge floor A14)";
pub(super) const OLDER_NO_CODEGEN: &str = "no source: older than the M1, which rejects it at code generation";

pub(super) const LRN_M1: &str =
    "seed 002 Table B.2 LRN: a channel count of 16 or above fails code generation on the M1";
pub(super) const LRN_M5: &str = "ANEForge capabilities (lrn_channels_ge16): C >= 16 fails ANECCompile on the M5";
pub(super) const LRN_OTHER: &str = "16 and above fails on the M1 (seed 002) and on the M5 (ANEForge); assumed here";

pub(super) const MMN_M1: &str = "seed 002 Table B.1 MinMaxNormalization: Dimension Channel is rejected on the M1";
pub(super) const MMN_M5: &str = "ANEForge capabilities (minmax_norm_channel_axis): Channel fails on the M5";
pub(super) const MMN_OTHER: &str = "rejected on the M1 (seed 002) and on the M5 (ANEForge); assumed here";

pub(super) const RT_A13: &str =
    "ANEForge _targets.py: HAL 0x3f0 reduction->transpose threshold 192 on families A13/A14";
pub(super) const RT_A15: &str = "ANEForge _targets.py: HAL 0x3f0 reduction->transpose threshold 384 from family A15";

pub(super) const FPS_M1: &str = "seed 002 Table B.1 FurthestPointSampling: up to 1024 centroids from up to 8192 points";
pub(super) const FPS_OTHER: &str = "seed 002 Table B.1 gives the M1's caps and runs the layer on all families from \
                                    the M1 onward; assumed unchanged";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_range_contains_both_ends_only() {
        let r = InclusiveRange { min: 3, max: 4 };
        assert!(!r.contains(2));
        assert!(r.contains(3));
        assert!(r.contains(4));
        assert!(!r.contains(5));
    }

    #[test]
    fn value_text_forms() {
        assert_eq!(range(&InclusiveRange { min: 1, max: 13 }), "1..=13");
        assert_eq!(band(&None), "none");
        assert_eq!(yes_no(&true), "yes");
        assert_eq!(yes_no(&false), "no");
    }
}
