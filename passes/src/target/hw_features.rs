//! The hardware (setter) features per generation: what each `ZinAneTd<N>::Set<Feature>`
//! setter of Apple's `ANECompiler` does on each ISA version, as classified by freedomtan's
//! `hwx_dump/feature_support.csv` (`chip-features.md` §3/§4). One row per setter, one status
//! per generation H11..H19; H18 and H19 are kept from the source though no target names them
//! yet. `chip-feature-setters.csv` next to this file is the source the table is checked
//! against.

use super::Generation;

/// What a setter does on one ISA version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetterStatus {
    /// Writes a real bit or field: the feature works.
    Real,
    /// Unconditionally asserts: the feature is rejected.
    Stub,
    /// Empty: the argument is silently discarded.
    Noop,
    /// Tail-calls another setter.
    Delegates,
    /// No symbol for that ISA version (`n/a`).
    Absent,
}

impl SetterStatus {
    /// Every status, in listing order.
    pub const ALL: [SetterStatus; 5] =
        [SetterStatus::Real, SetterStatus::Noop, SetterStatus::Delegates, SetterStatus::Stub, SetterStatus::Absent];

    /// `REAL`, `STUB`, `NOOP`, `DELEGATES` or `n/a`, as in the source.
    pub const fn label(self) -> &'static str {
        match self {
            SetterStatus::Real => "REAL",
            SetterStatus::Stub => "STUB",
            SetterStatus::Noop => "NOOP",
            SetterStatus::Delegates => "DELEGATES",
            SetterStatus::Absent => "n/a",
        }
    }
}

/// The generations the status columns describe, in order.
pub const COLUMNS: [&str; 9] = ["H11", "H12", "H13", "H14", "H15", "H16", "H17", "H18", "H19"];

/// One setter feature and its status per generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwFeature {
    /// The feature; the setter is `Set` followed by it.
    pub name: &'static str,
    /// Its status on each generation of [`COLUMNS`].
    pub statuses: [SetterStatus; 9],
}

impl HwFeature {
    /// Its status on `generation`.
    pub const fn status(&self, generation: Generation) -> SetterStatus {
        self.statuses[generation.index()]
    }

    /// The first generation of [`COLUMNS`] on which it is REAL, if any.
    pub fn first_real(&self) -> Option<&'static str> {
        self.statuses.iter().position(|s| *s == SetterStatus::Real).and_then(|i| COLUMNS.get(i).copied())
    }
}

/// The feature named `name` (without the `Set` prefix).
pub fn find(name: &str) -> Option<&'static HwFeature> {
    HW_FEATURES.iter().find(|f| f.name == name)
}

/// The features with status `status` on `generation`, in table order.
pub fn with_status(generation: Generation, status: SetterStatus) -> impl Iterator<Item = &'static HwFeature> {
    HW_FEATURES.iter().filter(move |f| f.status(generation) == status)
}

const fn f(name: &'static str, statuses: [SetterStatus; 9]) -> HwFeature {
    HwFeature { name, statuses }
}

const R: SetterStatus = SetterStatus::Real;
const S: SetterStatus = SetterStatus::Stub;
const N: SetterStatus = SetterStatus::Noop;
const D: SetterStatus = SetterStatus::Delegates;
const X: SetterStatus = SetterStatus::Absent;

/// Every setter of `chip-features.md` §4, alphabetical as in the source.
#[rustfmt::skip]
pub const HW_FEATURES: [HwFeature; 106] = [
    f("1DWinogradMode", [S, S, S, S, S, S, R, R, R]),
    f("2DWinogradMode", [S, S, S, S, S, S, S, S, S]),
    f("AlignedKernelPaletteLut", [X, X, R, R, R, R, R, R, R]),
    f("BroadcastCfg", [X, X, X, X, X, X, X, X, X]),
    f("CacheDmaPreEnable", [S, S, S, S, R, R, R, R, R]),
    f("CcdmaAtomicEn", [R, R, R, R, R, R, R, R, R]),
    f("CropOffsetForTexture", [X, X, X, X, X, R, R, R, R]),
    f("CustomCodegenTd", [X, X, X, X, X, X, R, R, R]),
    f("DP2AddMode", [S, S, S, S, S, S, S, S, S]),
    f("DoubleInt8Enable", [S, S, S, S, S, R, R, R, R]),
    f("FillLowerNEFirst", [X, X, X, R, R, R, R, R, R]),
    f("GroupKernelReuse", [R, R, R, R, R, R, R, R, R]),
    f("KernelAsymQuantEn", [S, S, S, S, S, R, R, R, R]),
    f("KernelDetectZeros", [S, S, S, S, S, S, R, R, R]),
    f("KernelDmaSrcKBufByp", [X, X, X, X, X, X, X, X, X]),
    f("KernelDmaSrcNoReuseHint", [X, X, N, R, R, X, X, X, X]),
    f("KernelDmaSrcPaletteLutDmaCacheHint", [X, X, D, D, R, R, R, R, R]),
    f("KernelDmaSrcPaletteLutUserTag", [N, N, N, R, R, R, R, R, R]),
    f("KernelPalettizedBits", [R, R, R, R, R, R, R, R, R]),
    f("KernelPalettizedEn", [R, R, R, R, R, R, R, R, R]),
    f("KernelSparseBinary", [S, S, R, R, R, R, R, R, R]),
    f("KernelSparseBlockSize", [X, X, X, R, R, R, R, R, R]),
    f("KernelSparseFmt", [R, R, R, R, R, R, R, R, R]),
    f("L2BfrMode", [R, R, R, R, R, R, R, R, R]),
    f("L2DstNumInterleavedChannels", [X, X, X, X, X, X, X, X, X]),
    f("L2ResultCfgForCompression", [X, X, N, N, R, R, R, R, R]),
    f("L2ResultInterleave", [R, R, R, R, R, R, R, R, R]),
    f("L2Src1CfgForCompression", [X, X, R, R, R, R, R, R, R]),
    f("L2Src1DmaDoubleRateMode", [S, S, S, S, S, S, S, S, R]),
    f("L2Src1FIFOMode", [S, S, S, S, S, S, R, R, R]),
    f("L2Src1Interleave", [R, R, R, R, R, R, R, R, R]),
    f("L2Src2CfgForCompression", [X, X, R, R, R, R, R, R, R]),
    f("L2Src2DmaDoubleRateMode", [X, X, S, S, S, S, S, S, R]),
    f("L2Src2FIFOMode", [X, X, S, S, S, S, R, R, R]),
    f("L2Src2Interleave", [X, X, S, R, R, R, R, R, R]),
    f("L2Src2NumInterleavedChannels", [X, X, X, X, X, X, X, X, X]),
    f("L2SrcNumInterleavedChannels", [X, X, X, X, X, X, X, X, X]),
    f("MultiPaletteEnable", [S, S, S, S, S, S, S, S, R]),
    f("MultiPaletteSizeOneLut", [S, S, S, S, S, S, S, S, R]),
    f("NEInputTranspose", [S, S, S, S, S, S, S, S, S]),
    f("NEKBufBypEn", [X, X, X, X, X, X, X, X, X]),
    f("NEKeepKernel", [X, X, R, N, N, X, X, X, X]),
    f("NEUsePrevKernel", [X, X, R, N, N, X, X, X, X]),
    f("OutputTranspose", [N, N, R, R, R, R, R, R, R]),
    f("PEBypass", [X, X, X, X, X, R, R, R, R]),
    f("PEIndexBroadcast", [X, X, N, N, R, R, R, R, R]),
    f("PEIndexTranspose", [X, X, N, N, R, R, R, R, R]),
    f("PEOutputCtoW", [X, X, R, R, R, R, R, R, R]),
    f("PEOutputQuantization", [X, X, S, S, S, R, R, R, R]),
    f("PESrc1Broadcast", [X, X, R, R, R, R, R, R, R]),
    f("PESrc1ReLu", [X, X, R, R, R, R, R, R, R]),
    f("PESrc1Transpose", [X, X, R, R, R, R, R, R, R]),
    f("PESrc2Broadcast", [X, X, R, R, R, R, R, R, R]),
    f("PESrc2ReLu", [X, X, R, R, R, R, R, R, R]),
    f("PESrc2Transpose", [X, X, R, R, R, R, R, R, R]),
    f("PaletteBlockSize", [S, S, S, S, S, S, R, R, R]),
    f("PaletteGroupSize", [S, S, S, S, S, S, S, S, R]),
    f("PassthroughEnable", [S, S, S, S, R, R, R, R, R]),
    f("PublishBit", [X, X, X, X, X, X, X, X, R]),
    f("QuantizationOutputZeroOffset", [S, S, S, S, S, R, R, R, R]),
    f("QuantizationSrc1InputOffset", [X, X, S, S, S, R, R, R, R]),
    f("QuantizationSrc2InputOffset", [X, X, S, S, S, R, R, R, R]),
    f("ReswizzleConfigEn", [S, S, S, S, S, S, S, S, S]),
    f("ReswizzleConfigInputInterleave", [R, R, R, R, R, R, R, R, R]),
    f("ReswizzleConfigKernelBitDepth", [R, R, R, R, R, R, R, R, R]),
    f("ReswizzleConfigKernelTranspose", [S, S, S, S, S, S, S, S, S]),
    f("SplitRowCompute", [X, X, X, X, X, X, X, X, X]),
    f("TdHeaderPerfTraceEn", [X, X, X, X, X, X, R, R, R]),
    f("TextureBackgroundEn", [X, X, X, R, R, R, R, R, R]),
    f("TextureBackgroundVal", [X, X, X, R, R, R, R, R, R]),
    f("TextureBypassFilter", [X, X, X, S, S, S, S, S, R]),
    f("TextureCropBatchSplit", [X, X, X, S, S, R, R, R, R]),
    f("TextureCropCfg", [X, X, X, R, R, R, R, R, R]),
    f("TextureCropCoeff", [X, X, X, R, R, R, R, R, R]),
    f("TextureDepthValue", [X, X, X, R, R, R, R, R, R]),
    f("TextureExtMax", [X, X, X, R, R, R, R, R, R]),
    f("TextureFilter", [X, X, X, R, R, R, R, R, R]),
    f("TextureGroupValue", [X, X, X, R, R, R, R, R, R]),
    f("TextureIdxPermute", [X, X, X, R, R, R, R, R, R]),
    f("TextureIndPermute", [X, X, X, R, R, R, R, R, R]),
    f("TextureIndexTensorInterleave", [X, X, X, R, R, R, R, R, R]),
    f("TextureMode", [X, X, X, R, R, R, R, R, R]),
    f("TextureNormalization", [X, X, X, R, R, R, R, R, R]),
    f("TexturePreserveFraction", [X, X, X, S, S, R, R, R, R]),
    f("TextureSrcPermute", [X, X, X, R, R, R, R, R, R]),
    f("TextureWrap", [X, X, X, R, R, R, R, R, R]),
    f("TileDmaDstAtomicEn", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaDstCompressedInfo", [X, X, S, S, R, R, R, R, R]),
    f("TileDmaDstCompressedSize", [X, X, N, N, R, R, R, R, R]),
    f("TileDmaDstandL2DstFifoMode", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaDstandL2DstInterleave", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaSrc1CompressedInfo", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaSrc1CompressedSize", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaSrc1DoubleRateMode", [X, X, S, S, S, S, S, S, R]),
    f("TileDmaSrc1FIFOMode", [X, X, S, S, S, S, R, R, R]),
    f("TileDmaSrc1Interleave", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaSrc2CompressedInfo", [X, X, S, S, R, R, R, R, R]),
    f("TileDmaSrc2CompressedSize", [X, X, R, R, R, R, R, R, R]),
    f("TileDmaSrc2DoubleRateMode", [X, X, X, X, X, X, X, X, R]),
    f("TileDmaSrc2FIFOMode", [X, X, X, X, X, X, R, R, R]),
    f("TileDmaSrc2Interleave", [X, X, X, X, R, X, X, X, X]),
    f("TileDmaSrcCompressed2MdUserTag", [N, N, N, N, R, R, R, R, R]),
    f("TileDmaSrcCompressedMdUserTag", [N, N, N, R, R, R, R, R, R]),
    f("TileOverlapPadReflect", [X, X, S, S, S, S, S, R, R]),
    f("TraceEn", [X, X, X, X, X, X, R, R, R]),
    f("UnicastEn", [R, R, R, R, R, R, R, R, R]),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses the source CSV (test only) into (feature, setter, statuses).
    fn csv_rows() -> Vec<(String, String, Vec<String>)> {
        let text = include_str!("chip-feature-setters.csv");
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name);
        let cols: Vec<usize> = COLUMNS.iter().map(|c| at(c).unwrap_or(usize::MAX)).collect();
        lines
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                let get = |i: usize| cells.get(i).copied().unwrap_or("?").to_owned();
                (get(0), get(1), cols.iter().map(|&i| get(i)).collect())
            })
            .collect()
    }

    #[test]
    fn table_matches_the_source_csv() {
        let rows = csv_rows();
        assert_eq!(rows.len(), HW_FEATURES.len());
        for ((name, setter, statuses), feature) in rows.iter().zip(HW_FEATURES.iter()) {
            assert_eq!(name, feature.name);
            assert_eq!(setter, &format!("Set{}", feature.name));
            let ours: Vec<&str> = feature.statuses.iter().map(|s| s.label()).collect();
            assert_eq!(statuses, &ours, "{name}");
        }
    }

    #[test]
    fn section_3_waves() {
        // chip-features.md §3: 11 REAL at H11, 0 new at H12, 21 new at H13, 21 at H14.
        let first = |g: &str| HW_FEATURES.iter().filter(|f| f.first_real() == Some(g)).count();
        assert_eq!([first("H11"), first("H12"), first("H13"), first("H14"), first("H15")], [11, 0, 21, 21, 11]);
        assert_eq!([first("H16"), first("H17"), first("H18"), first("H19")], [10, 10, 1, 9]);
        assert_eq!(HW_FEATURES.iter().filter(|f| f.first_real().is_none()).count(), 12);
    }

    #[test]
    fn lookups() {
        let texture = find("TextureMode").map(|f| (f.status(Generation::H13), f.status(Generation::H14)));
        assert_eq!(texture, Some((SetterStatus::Absent, SetterStatus::Real)));
        let keep = find("NEKeepKernel").map(|f| (f.status(Generation::H13), f.status(Generation::H14)));
        assert_eq!(keep, Some((SetterStatus::Real, SetterStatus::Noop)));
        assert_eq!(find("SetTextureMode"), None);
        assert_eq!(with_status(Generation::H13, SetterStatus::Delegates).count(), 1);
    }
}
