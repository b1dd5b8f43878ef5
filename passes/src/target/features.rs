//! Feature bytes: the per-chip bytes of the compiler's hardware-abstraction (HAL) table that
//! the layer validators read, at the offsets of seed 002, Appendix B, Table B.2, and each
//! chip's value with its source.
//!
//! Values the seeds state for a chip are used as stated. The rest are marked
//! [`Source::Reference`](super::Source::Reference) (ANEForge, `chip-features.md`) or
//! [`Source::Inferred`](super::Source::Inferred) with the reasoning; the family names in the
//! citations are explained in the module docs of [`crate::target`].

use super::{inferred, reference, seed, Sourced};

/// A byte of the HAL table that a layer validator reads (seed 002, Table B.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeatureByte {
    /// `0x494`: a square fused after a reduction (`Reduction` validator, "reduce-then-square";
    /// 0 through the M1).
    ReduceThenSquare,
    /// `0x4a9`: the `Dropout` and `Random` layers (1 only from the A15 family).
    DropoutRandom,
    /// `0x4f2`: whole-tensor `GlobalArgMinMax` on the direct-authoring (bridge) route; the
    /// MIL conversion route floors the op at family A15 regardless of this byte.
    GlobalArgMinMax,
    /// `0x812`: `Broadcast` along the depth axis.
    DepthBroadcast,
    /// `0x815`: the `Softmax` layer.
    Softmax,
    /// `0x816`: the `InstanceNorm` layer (spatial axes only).
    InstanceNorm,
    /// `0x818`: the `MinMaxNorm` layer (Width and Height; the Channel axis is a separate
    /// limit, [`crate::target::Limits::minmax_norm_channel_axis`]).
    MinMaxNorm,
    /// `0x81a`: the `LRN` layer.
    Lrn,
    /// `0x81d`: the texture engine: `Resize` as a sampler, `CropResize`, `AffineTransform`,
    /// `Resample`, the texture path of `Gather`, symmetric and reflect `Pad`.
    TextureEngine,
}

impl FeatureByte {
    /// Every feature byte, by offset.
    pub const ALL: [FeatureByte; 9] = [
        FeatureByte::ReduceThenSquare,
        FeatureByte::DropoutRandom,
        FeatureByte::GlobalArgMinMax,
        FeatureByte::DepthBroadcast,
        FeatureByte::Softmax,
        FeatureByte::InstanceNorm,
        FeatureByte::MinMaxNorm,
        FeatureByte::Lrn,
        FeatureByte::TextureEngine,
    ];

    /// Its offset in the HAL table.
    pub const fn offset(self) -> u16 {
        match self {
            FeatureByte::ReduceThenSquare => 0x494,
            FeatureByte::DropoutRandom => 0x4a9,
            FeatureByte::GlobalArgMinMax => 0x4f2,
            FeatureByte::DepthBroadcast => 0x812,
            FeatureByte::Softmax => 0x815,
            FeatureByte::InstanceNorm => 0x816,
            FeatureByte::MinMaxNorm => 0x818,
            FeatureByte::Lrn => 0x81a,
            FeatureByte::TextureEngine => 0x81d,
        }
    }

    /// A short name (`reduce-then-square`).
    pub const fn name(self) -> &'static str {
        match self {
            FeatureByte::ReduceThenSquare => "reduce-then-square",
            FeatureByte::DropoutRandom => "dropout-random",
            FeatureByte::GlobalArgMinMax => "global-argminmax",
            FeatureByte::DepthBroadcast => "depth-broadcast",
            FeatureByte::Softmax => "softmax",
            FeatureByte::InstanceNorm => "instance-norm",
            FeatureByte::MinMaxNorm => "minmax-norm",
            FeatureByte::Lrn => "lrn",
            FeatureByte::TextureEngine => "texture-engine",
        }
    }

    /// The validators that read it and what they gate.
    pub const fn gates(self) -> &'static str {
        match self {
            FeatureByte::ReduceThenSquare => "Reduction: a square after the reduction",
            FeatureByte::DropoutRandom => "Dropout and Random layers",
            FeatureByte::GlobalArgMinMax => "GlobalArgMinMax (whole-tensor argmin/argmax), bridge route",
            FeatureByte::DepthBroadcast => "Broadcast along the depth axis",
            FeatureByte::Softmax => "Softmax layer",
            FeatureByte::InstanceNorm => "InstanceNorm layer",
            FeatureByte::MinMaxNorm => "MinMaxNorm layer",
            FeatureByte::Lrn => "LRN layer",
            FeatureByte::TextureEngine => {
                "texture engine: Resize sampler, CropResize, AffineTransform, Resample, Gather, Pad symmetric/reflect"
            }
        }
    }

    /// The validators' reject strings (seed 002, Table B.2); empty where the seed records an
    /// encoded assert instead of a string.
    pub const fn rejects(self) -> &'static [&'static str] {
        match self {
            FeatureByte::ReduceThenSquare => &["square operation after reduction is not supported"],
            FeatureByte::DropoutRandom => &[
                "Dropout layer is not supported on this architecture.",
                "Random layer is not supported on this architecture.",
            ],
            FeatureByte::GlobalArgMinMax | FeatureByte::MinMaxNorm => &[],
            FeatureByte::DepthBroadcast => &["Broadcast along depth axis is not supported on this architecture"],
            FeatureByte::Softmax => &["Softmax is not supported by this ANE architecture"],
            FeatureByte::InstanceNorm => &["InstanceNorm layer not supported for this ANE architecture"],
            FeatureByte::Lrn => &["LRN is not supported on this architecture."],
            FeatureByte::TextureEngine => {
                &["failed to map resize layer on this arch", "affine transform is not supported on this architecture"]
            }
        }
    }
}

/// One chip's feature bytes, each with its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureBytes {
    /// `0x494`, [`FeatureByte::ReduceThenSquare`].
    pub reduce_then_square: Sourced<u8>,
    /// `0x4a9`, [`FeatureByte::DropoutRandom`].
    pub dropout_random: Sourced<u8>,
    /// `0x4f2`, [`FeatureByte::GlobalArgMinMax`].
    pub global_argminmax: Sourced<u8>,
    /// `0x812`, [`FeatureByte::DepthBroadcast`].
    pub depth_broadcast: Sourced<u8>,
    /// `0x815`, [`FeatureByte::Softmax`].
    pub softmax: Sourced<u8>,
    /// `0x816`, [`FeatureByte::InstanceNorm`].
    pub instance_norm: Sourced<u8>,
    /// `0x818`, [`FeatureByte::MinMaxNorm`].
    pub minmax_norm: Sourced<u8>,
    /// `0x81a`, [`FeatureByte::Lrn`].
    pub lrn: Sourced<u8>,
    /// `0x81d`, [`FeatureByte::TextureEngine`].
    pub texture_engine: Sourced<u8>,
}

impl FeatureBytes {
    /// The value and source of one byte.
    pub const fn get(&self, byte: FeatureByte) -> &Sourced<u8> {
        match byte {
            FeatureByte::ReduceThenSquare => &self.reduce_then_square,
            FeatureByte::DropoutRandom => &self.dropout_random,
            FeatureByte::GlobalArgMinMax => &self.global_argminmax,
            FeatureByte::DepthBroadcast => &self.depth_broadcast,
            FeatureByte::Softmax => &self.softmax,
            FeatureByte::InstanceNorm => &self.instance_norm,
            FeatureByte::MinMaxNorm => &self.minmax_norm,
            FeatureByte::Lrn => &self.lrn,
            FeatureByte::TextureEngine => &self.texture_engine,
        }
    }

    /// Every byte with its value and source, by offset.
    pub fn iter(&self) -> impl Iterator<Item = (FeatureByte, &Sourced<u8>)> {
        FeatureByte::ALL.into_iter().map(move |b| (b, self.get(b)))
    }
}

// ---- sources -------------------------------------------------------------------------

const B2_494: &str = "seed 002 Table B.2 Reduction: byte 0x494 is 0 through the M1";
const AF_494: &str = "ANEForge docs/cross-chip.md: 0x494 is 0 on family A13 and 1 from family A14; \
                      _targets.py floors sq_after_reduce at A14";
const B2_4A9: &str = "seed 002 Table B.2 Dropout, Random: byte 0x4a9 is 1 only from the A15 family (H15)";
const B2_4F2_M1: &str = "seed 002 Table B.2 GlobalArgMinMax: byte 0x4f2 is 1 from the M1 on the bridge route";
const S003_4F2: &str = "seed 003 (two compile routes): the 0x4f2 byte is set from the A13 family (H13) onward";
const OLDER_4F2: &str = "no source; seed 003 sets it from the A13 family onward and h11/h12 are below it";
const UNKNOWN_812: &str = "no source gives a value for any chip; 0 is the conservative choice \
                           (depth-axis broadcast is rejected)";
const B2_815_OLDER: &str = "seed 002 Table B.2 Softmax: byte 0x815 is 0 on older chips (family older = H11, H12)";
const AF_815: &str = "ANEForge _targets.py: softmax is native from family A13 (M1); seed 002: 0 only on older chips";
const AF_816: &str = "ANEForge _targets.py: the norms are native from family A13 (M1)";
const OLDER_NORM: &str = "no source; family older is below the MIL floor and 0x815 (softmax) is 0 there";
const B1_818: &str = "seed 002 Table B.1 MinMaxNormalization: Width and Height run on the M1, so the byte its \
                      validator reads is set";
const LATER_818: &str = "set on the M1 (seed 002 Table B.1); ANEForge: each later family is a superset of \
                         the one before, and MinMaxNorm Width/Height runs on the M5";
const B1_81A: &str = "seed 002 Table B.1 LocalResponseNormalization: all families from the M1 onward";
const B2_81D_M1: &str = "seed 002 Table B.2 Pad, Resize, AffineTransform: texture byte 0x81d is 0 on the M1";
const B2_81D_OLDER: &str = "seed 002: 0 on the M1 and the texture samplers start at the A14 family; h11/h12 are older";
const H13_81D: &str = "as h13g: same H13 generation (cpusubtype 4, ISA 7); the Texture* setters are n/a on H13 \
                       (chip-features.md §4) and seed 002's 'A14 generation' is family A14 = H14";
const B2_81D_A14: &str = "seed 002 Tables B.1/B.2: texture samplers accepted from the A14 family (H14); \
                          chip-features.md §3: the Texture* setters are first REAL on H14";
const AS_H13G: &str = "as h13g: same H13 generation (cpusubtype 4, ISA 7) and ANEForge family A13";

// ---- per-chip values ------------------------------------------------------------------

/// H11 and H12 (family older).
pub(super) const OLDER: FeatureBytes = FeatureBytes {
    reduce_then_square: seed(0, B2_494),
    dropout_random: seed(0, B2_4A9),
    global_argminmax: inferred(0, OLDER_4F2),
    depth_broadcast: inferred(0, UNKNOWN_812),
    softmax: seed(0, B2_815_OLDER),
    instance_norm: inferred(0, OLDER_NORM),
    minmax_norm: inferred(0, OLDER_NORM),
    lrn: inferred(0, OLDER_NORM),
    texture_engine: seed(0, B2_81D_OLDER),
};

/// H13g (M1): the chip the seeds measure.
pub(super) const H13G: FeatureBytes = FeatureBytes {
    reduce_then_square: seed(0, B2_494),
    dropout_random: seed(0, B2_4A9),
    global_argminmax: seed(1, B2_4F2_M1),
    depth_broadcast: inferred(0, UNKNOWN_812),
    softmax: reference(1, AF_815),
    instance_norm: reference(1, AF_816),
    minmax_norm: seed(1, B1_818),
    lrn: seed(1, B1_81A),
    texture_engine: seed(0, B2_81D_M1),
};

/// H13 (A14): the same generation as the M1.
pub(super) const H13: FeatureBytes = FeatureBytes {
    reduce_then_square: seed(0, B2_494),
    dropout_random: seed(0, B2_4A9),
    global_argminmax: seed(1, S003_4F2),
    depth_broadcast: inferred(0, UNKNOWN_812),
    softmax: reference(1, AF_815),
    instance_norm: reference(1, AF_816),
    minmax_norm: inferred(1, AS_H13G),
    lrn: inferred(1, AS_H13G),
    texture_engine: inferred(0, H13_81D),
};

/// H14, H14g (family A14).
pub(super) const A14: FeatureBytes = FeatureBytes {
    reduce_then_square: reference(1, AF_494),
    dropout_random: seed(0, B2_4A9),
    global_argminmax: seed(1, S003_4F2),
    depth_broadcast: inferred(0, UNKNOWN_812),
    softmax: reference(1, AF_815),
    instance_norm: reference(1, AF_816),
    minmax_norm: inferred(1, LATER_818),
    lrn: seed(1, B1_81A),
    texture_engine: seed(1, B2_81D_A14),
};

/// H15 and later (families A15 and A16): A14 plus Dropout/Random.
pub(super) const A15_ON: FeatureBytes = FeatureBytes { dropout_random: seed(1, B2_4A9), ..A14 };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_distinct_and_sorted() {
        let offsets: Vec<u16> = FeatureByte::ALL.iter().map(|b| b.offset()).collect();
        let mut sorted = offsets.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(offsets, sorted);
        assert_eq!(offsets, [0x494, 0x4a9, 0x4f2, 0x812, 0x815, 0x816, 0x818, 0x81a, 0x81d]);
    }

    #[test]
    fn get_returns_the_named_field() {
        assert_eq!(H13G.get(FeatureByte::GlobalArgMinMax).value, 1);
        assert_eq!(H13G.get(FeatureByte::TextureEngine).value, 0);
        assert_eq!(A15_ON.get(FeatureByte::DropoutRandom).value, 1);
        assert_eq!(A14.get(FeatureByte::DropoutRandom).value, 0);
        let names: Vec<&str> = H13G.iter().map(|(b, _)| b.name()).collect();
        assert_eq!(names.len(), 9);
        assert_eq!(names[0], "reduce-then-square");
    }

    #[test]
    fn every_byte_is_a_flag() {
        for table in [OLDER, H13G, H13, A14, A15_ON] {
            assert!(table.iter().all(|(_, v)| v.value <= 1), "{table:?}");
        }
    }
}
