//! The hidden-layer unit table: each Type's bottoms and `Params` keys (`docs/netplist.md`,
//! "Hidden-layer units", is the prose form), and the few keys read by a function.

use super::hidden::{axis_name, Key, Missing, Param, Shape, UnitSpec};
use super::UnitCx;
use crate::netplist::reader::{Dict, Result};
use anec_ir::{Attr, Attrs, OpCode};
use plist::Value;

const fn req(key: &'static str, attr: &'static str, param: Param) -> Key {
    Key { key, attr, param, default: Missing::Required }
}

const fn opt(key: &'static str, attr: &'static str, param: Param, default: Missing) -> Key {
    Key { key, attr, param, default }
}

const MAX_MIN: Param = Param::Enum(&[("Max", "max"), ("Min", "min")]);

const FACTORS: [Key; 3] = [
    req("FactorX", "factor_x", Param::Positive),
    req("FactorY", "factor_y", Param::Positive),
    req("FactorZ", "factor_z", Param::Positive),
];

const SORTING: [Key; 4] = [
    req("SortDimension", "sort_dimension", Param::Axis),
    req("VectorDimension", "vector_dimension", Param::Axis),
    req("SortIndices", "sort_indices", Param::Flag),
    req("Indices", "indices", Param::Flag),
];

const SORT: [Key; 5] = [
    req("Direction", "direction", Param::Enum(&[("Ascending", "ascending"), ("Descending", "descending")])),
    SORTING[0],
    SORTING[1],
    SORTING[2],
    SORTING[3],
];

const TOP_K: [Key; 6] =
    [req("Type", "kind", MAX_MIN), req("K", "k", Param::Positive), SORTING[0], SORTING[1], SORTING[2], SORTING[3]];

/// Temporary attributes `arg_window` packs into `kernel` and `pad`.
const KERNEL_KEYS: [&str; 2] = ["_kernel_height", "_kernel_width"];
const PAD_KEYS: [&str; 6] = ["_pad_front", "_pad_back", "_pad_top", "_pad_bottom", "_pad_left", "_pad_right"];

const ARG_MIN_MAX: [Key; 9] = [
    req(
        "Mode",
        "mode",
        Param::Enum(&[
            ("SpatialArgMax", "spatial_arg_max"),
            ("ChannelArgMax", "channel_arg_max"),
            ("SpatialArgMin", "spatial_arg_min"),
            ("ChannelArgMin", "channel_arg_min"),
        ]),
    ),
    req("KernelHeight", KERNEL_KEYS[0], Param::Positive),
    req("KernelWidth", KERNEL_KEYS[1], Param::Positive),
    opt("PadFront", PAD_KEYS[0], Param::NonNegative, Missing::Int(0)),
    opt("PadBack", PAD_KEYS[1], Param::NonNegative, Missing::Int(0)),
    opt("PadTop", PAD_KEYS[2], Param::NonNegative, Missing::Int(0)),
    opt("PadBot", PAD_KEYS[3], Param::NonNegative, Missing::Int(0)),
    opt("PadLeft", PAD_KEYS[4], Param::NonNegative, Missing::Int(0)),
    opt("PadRight", PAD_KEYS[5], Param::NonNegative, Missing::Int(0)),
];

const RESIZE: [Key; 6] = [
    req("Mode", "mode", Param::Enum(&[("Bilinear", "bilinear"), ("NearestNeighbor", "nearest")])),
    opt("OutputHeight", "height", Param::Positive, Missing::Absent),
    opt("OutputWidth", "width", Param::Positive, Missing::Absent),
    opt("ScaleFactorY", "ratio_y", Param::Half, Missing::Absent),
    opt("ScaleFactorX", "ratio_x", Param::Half, Missing::Absent),
    opt(
        "SamplingMode",
        "sampling_mode",
        Param::Enum(&[
            ("Default", "default"),
            ("AlignCorners", "align_corners"),
            ("StrictAlignCorners", "strict_align_corners"),
            ("OffsetCorners", "offset_corners"),
            ("UnalignCorners", "unalign_corners"),
        ]),
        Missing::Absent,
    ),
];

const DYNAMIC_SLICE: [Key; 3] = [
    req("CoordinateInfo", "coordinate_info", Param::Enum(&[("Constant", "constant"), ("Runtime", "runtime")])),
    req("PaddingInfo", "padding_info", Param::Enum(&[("None", "none"), ("Background", "background")])),
    opt("BackgroundValue", "background_value", Param::Half, Missing::Absent),
];

const fn unit(unit_type: &'static str, opcode: OpCode, bottoms: (usize, usize), keys: &'static [Key]) -> UnitSpec {
    UnitSpec { unit_type, opcode, bottoms, keys, finish: None, result: Shape::Infer }
}

/// Every hidden-layer unit Type.
pub(super) const UNITS: [UnitSpec; 22] = [
    UnitSpec {
        unit_type: "SDPA",
        opcode: OpCode::Sdpa,
        bottoms: (4, 5),
        keys: &[opt("SubtractMax", "subtract_max", Param::Flag, Missing::Bool(false))],
        finish: None,
        result: Shape::Custom(sdpa_result),
    },
    unit("Sort", OpCode::Sort, (1, 1), &SORT),
    unit("TopK", OpCode::TopK, (1, 1), &TOP_K),
    UnitSpec { finish: Some(arg_window), ..unit("ArgMinMax", OpCode::ArgMinMax, (1, 1), &ARG_MIN_MAX) },
    unit(
        "GlobalArgMinMax",
        OpCode::GlobalArgMinMax,
        (1, 1),
        &[req("Type", "kind", MAX_MIN), req("Dimension", "dimension", Param::Axis)],
    ),
    unit("PixelShuffle", OpCode::PixelShuffle, (1, 1), &FACTORS),
    unit("PixelUnshuffle", OpCode::PixelUnshuffle, (1, 1), &FACTORS),
    unit("ChannelToSpace", OpCode::ChannelToSpace, (1, 1), &FACTORS),
    unit("SpaceToChannel", OpCode::SpaceToChannel, (1, 1), &FACTORS),
    unit("SpaceToBatch", OpCode::SpaceToBatch, (1, 1), &FACTORS),
    unit("BatchToSpace", OpCode::BatchToSpace, (1, 1), &FACTORS),
    unit(
        "MinMaxNormalization",
        OpCode::MinMaxNorm,
        (1, 1),
        &[req("Dimension", "dimension", Param::Axis), req("Epsilon", "epsilon", Param::Half)],
    ),
    unit(
        "LocalResponseNormalization",
        OpCode::Lrn,
        (1, 1),
        &[
            req("KernelChannel", "kernel_channel", Param::Positive),
            req("Alpha", "alpha", Param::Half),
            req("Beta", "beta", Param::Half),
            opt("Bias", "bias", Param::Half, Missing::Float(1.0)),
        ],
    ),
    unit("CrossCorrelation", OpCode::CrossCorrelation, (2, 2), &[]),
    unit("CrossProduct", OpCode::CrossProduct, (2, 2), &[]),
    unit(
        "FurthestPointSampling",
        OpCode::FurthestPointSampling,
        (1, 1),
        &[
            req("CentroidCount", "centroid_count", Param::Positive),
            req("DistanceMetric", "distance_metric", Param::Enum(&[("L2", "l2"), ("L1", "l1")])),
        ],
    ),
    unit("RadiusSearch", OpCode::RadiusSearch, (2, 2), &[req("Radius", "radius", Param::Half)]),
    unit(
        "CostVolume",
        OpCode::CostVolume,
        (2, 2),
        &[
            req("DisparityDirection", "disparity_direction", Param::Enum(&[("Left", "left"), ("Right", "right")])),
            req("DisparityRange", "disparity_range", Param::Positive),
        ],
    ),
    UnitSpec { finish: Some(dynamic_slice), ..unit("DynamicSlice", OpCode::DynamicSlice, (1, 2), &DYNAMIC_SLICE) },
    unit("Flatten", OpCode::Flatten, (1, 1), &[]),
    unit("Dropout", OpCode::Dropout, (1, 1), &[opt("Rate", "rate", Param::Half, Missing::Float(0.0))]),
    unit("Resize", OpCode::Resize, (1, 1), &RESIZE),
];

/// SDPA: the query's shape with the value's width.
fn sdpa_result(cx: &UnitCx<'_>) -> Result<[u32; 5]> {
    let (q, v) = match cx.operands.as_slice() {
        [(_, q), _, (_, v), ..] => (q, v),
        _ => return Err(cx.unit.bad("Bottom", "expects 4 or 5 bottoms")),
    };
    Ok([q.n, q.c, q.d, q.h, v.w])
}

/// Moves the attributes named in `names` into one integer array `to`.
fn pack(attrs: &mut Attrs, names: &[&str], to: &str) {
    let values = names.iter().filter_map(|n| attrs.remove(*n)).collect();
    attrs.insert(to.into(), Attr::Array(values));
}

/// ArgMinMax: `kernel = [KernelHeight, KernelWidth]`,
/// `pad = [PadFront, PadBack, PadTop, PadBot, PadLeft, PadRight]`.
fn arg_window(_: &Dict<'_>, attrs: &mut Attrs) -> Result<()> {
    pack(attrs, &KERNEL_KEYS, "kernel");
    pack(attrs, &PAD_KEYS, "pad");
    Ok(())
}

/// DynamicSlice: `DynamicSliceAxisOrder` (array of dimension names) -> `axis_order`;
/// `DynamicSliceInfo` (one `{Size, Offset}` per listed axis; Offset default 0) ->
/// `sizes`, `offsets`.
fn dynamic_slice(p: &Dict<'_>, attrs: &mut Attrs) -> Result<()> {
    let key = "DynamicSliceAxisOrder";
    let names = p.strings(key)?;
    let axes = names.iter().map(|n| axis_name(p, key, n).map(|a| Attr::Str(a.into()))).collect::<Result<Vec<_>>>()?;
    let infos = p.array("DynamicSliceInfo")?;
    if infos.len() != axes.len() {
        let message = format!("has {} entries, DynamicSliceAxisOrder lists {} axes", infos.len(), axes.len());
        return Err(p.bad("DynamicSliceInfo", message));
    }
    let (mut sizes, mut offsets) = (Vec::new(), Vec::new());
    for (i, v) in infos.iter().enumerate() {
        let name = format!("DynamicSliceInfo[{i}]");
        let Value::Dictionary(map) = v else { return Err(p.wrong(&name, "a dictionary", v)) };
        let info = p.child(map, &name);
        sizes.push(Attr::Int(i64::from(info.dim("Size")?)));
        offsets.push(Attr::Int(i64::from(info.u32_or("Offset", 0)?)));
    }
    attrs.insert("axis_order".into(), Attr::Array(axes));
    attrs.insert("sizes".into(), Attr::Array(sizes));
    attrs.insert("offsets".into(), Attr::Array(offsets));
    Ok(())
}
