//! The contract table of the hidden-layer ops: operands, attribute schema, element type and
//! shape rule of each (`docs/ops.md`, "Hidden-layer ops", is the prose form).

use super::hidden::{opt, req, AttrSpec, Kind, OpSpec};
use super::hidden_shape::Rule;
use crate::opcode::OpCode;

const POSITIVE: Kind = Kind::Int { min: 1, max: i64::MAX };
const ANY_INT: Kind = Kind::Int { min: i64::MIN, max: i64::MAX };
const NON_NEGATIVE: Kind = Kind::Float { min: 0.0, max: f64::MAX };
const POSITIVE_FLOAT: Kind = Kind::Float { min: f64::MIN_POSITIVE, max: f64::MAX };
const ANY_FLOAT: Kind = Kind::Float { min: -f64::MAX, max: f64::MAX };
const UNIT: Kind = Kind::Float { min: 0.0, max: 1.0 };
const MAX_MIN: Kind = Kind::Str(&["max", "min"]);

/// `mode` of `anec.arg_min_max`.
pub const ARG_MODES: [&str; 4] = ["spatial_arg_max", "channel_arg_max", "spatial_arg_min", "channel_arg_min"];
/// `mode` of `anec.pad`.
pub const PAD_MODES: [&str; 4] = ["constant", "reflect", "replicate", "symmetric"];
/// `sampling_mode` of `anec.resize` and `anec.crop_resize` (MIL's, lower case).
pub const RESIZE_SAMPLING: [&str; 5] =
    ["default", "align_corners", "strict_align_corners", "offset_corners", "unalign_corners"];
/// `box_coordinate_mode` of `anec.crop_resize` (MIL's, lower case).
pub const BOX_MODES: [&str; 4] =
    ["corners_height_first", "corners_width_first", "center_size_height_first", "center_size_width_first"];
/// `coordinates_mode` of `anec.affine_transform` and `anec.resample` (MIL's).
pub const COORDINATE_MODES: [&str; 3] = ["normalized_minus_one_to_one", "normalized_zero_to_one", "unnormalized"];
/// `padding_mode` of `anec.affine_transform` and `anec.resample` (MIL's).
pub const SAMPLER_PADDING: [&str; 4] = ["constant", "border", "reflection", "symmetric"];

const FACTORS: [AttrSpec; 3] = [req("factor_x", POSITIVE), req("factor_y", POSITIVE), req("factor_z", POSITIVE)];

const SORT: [AttrSpec; 5] = [
    req("direction", Kind::Str(&["ascending", "descending"])),
    req("sort_dimension", Kind::Axis),
    req("vector_dimension", Kind::Axis),
    req("sort_indices", Kind::Bool),
    req("indices", Kind::Bool),
];

const TOP_K: [AttrSpec; 6] = [
    req("kind", MAX_MIN),
    req("k", POSITIVE),
    req("sort_dimension", Kind::Axis),
    req("vector_dimension", Kind::Axis),
    req("sort_indices", Kind::Bool),
    req("indices", Kind::Bool),
];

const ARG_MIN_MAX: [AttrSpec; 3] = [
    req("mode", Kind::Str(&ARG_MODES)),
    req("kernel", Kind::Ints { len: 2, min: 1 }),
    req("pad", Kind::Ints { len: 6, min: 0 }),
];

const SAMPLER: [AttrSpec; 7] = [
    req("height", POSITIVE),
    req("width", POSITIVE),
    opt("sampling_mode", Kind::Str(&["bilinear", "nearest"])),
    opt("padding_mode", Kind::Str(&SAMPLER_PADDING)),
    opt("padding_value", ANY_FLOAT),
    opt("coordinates_mode", Kind::Str(&COORDINATE_MODES)),
    opt("align_corners", Kind::Bool),
];

/// One row of the table.
const fn row(
    opcode: OpCode,
    operands: (usize, usize),
    attrs: &'static [AttrSpec],
    keeps_dtype: bool,
    rule: Rule,
) -> OpSpec {
    OpSpec { opcode, min_operands: operands.0, max_operands: operands.1, attrs, keeps_dtype, rule }
}

/// Every hidden-layer op.
pub(super) const SPECS: [OpSpec; 30] = [
    row(OpCode::Sort, (1, 1), &SORT, false, Rule::Same),
    row(OpCode::TopK, (1, 1), &TOP_K, false, Rule::AxisToAttr("sort_dimension", "k")),
    row(OpCode::ArgMinMax, (1, 1), &ARG_MIN_MAX, false, Rule::ArgWindow),
    row(
        OpCode::GlobalArgMinMax,
        (1, 1),
        &[req("kind", MAX_MIN), req("dimension", Kind::Axis)],
        false,
        Rule::AxisToOne("dimension"),
    ),
    row(OpCode::PixelShuffle, (1, 1), &FACTORS, true, Rule::ToSpace),
    row(OpCode::PixelUnshuffle, (1, 1), &FACTORS, true, Rule::ToChannel),
    row(OpCode::ChannelToSpace, (1, 1), &FACTORS, true, Rule::ToSpace),
    row(OpCode::SpaceToChannel, (1, 1), &FACTORS, true, Rule::ToChannel),
    row(OpCode::SpaceToBatch, (1, 1), &FACTORS, true, Rule::ToBatch),
    row(OpCode::BatchToSpace, (1, 1), &FACTORS, true, Rule::FromBatch),
    row(OpCode::MinMaxNorm, (1, 1), &[req("dimension", Kind::Axis), req("epsilon", NON_NEGATIVE)], false, Rule::Same),
    row(
        OpCode::Lrn,
        (1, 1),
        &[req("kernel_channel", POSITIVE), req("alpha", ANY_FLOAT), req("beta", ANY_FLOAT), req("bias", ANY_FLOAT)],
        false,
        Rule::Same,
    ),
    row(
        OpCode::InstanceNorm,
        (1, 1),
        &[
            req("axes", Kind::Axes),
            req("epsilon", NON_NEGATIVE),
            opt("gamma", Kind::Resource),
            opt("beta", Kind::Resource),
        ],
        false,
        Rule::PerChannelNorm,
    ),
    row(OpCode::CrossCorrelation, (2, 2), &[], false, Rule::CrossCorrelation),
    row(OpCode::CrossProduct, (2, 2), &[], false, Rule::CrossProduct),
    row(
        OpCode::FurthestPointSampling,
        (1, 1),
        &[req("centroid_count", POSITIVE), req("distance_metric", Kind::Str(&["l2", "l1"]))],
        true,
        Rule::Sampling,
    ),
    row(OpCode::RadiusSearch, (2, 2), &[req("radius", POSITIVE_FLOAT)], false, Rule::RadiusSearch),
    row(
        OpCode::CostVolume,
        (2, 2),
        &[req("disparity_direction", Kind::Str(&["left", "right"])), req("disparity_range", POSITIVE)],
        false,
        Rule::CostVolume,
    ),
    row(
        OpCode::DynamicSlice,
        (1, 2),
        &[
            req("axis_order", Kind::Axes),
            req("sizes", Kind::Ints { len: 0, min: 1 }),
            req("offsets", Kind::Ints { len: 0, min: 0 }),
            req("coordinate_info", Kind::Str(&["constant", "runtime"])),
            req("padding_info", Kind::Str(&["none", "background"])),
            opt("background_value", ANY_FLOAT),
        ],
        true,
        Rule::DynamicSlice,
    ),
    row(OpCode::Flatten, (1, 1), &[], true, Rule::Flatten),
    row(OpCode::Dropout, (1, 1), &[req("rate", UNIT)], true, Rule::Same),
    row(
        OpCode::Pad,
        (1, 1),
        &[req("mode", Kind::Str(&PAD_MODES)), req("pad", Kind::Ints { len: 10, min: 0 }), opt("value", ANY_FLOAT)],
        true,
        Rule::Pad,
    ),
    row(OpCode::Gather, (2, 2), &[req("axis", Kind::Axis)], true, Rule::Gather),
    row(
        OpCode::Resize,
        (1, 1),
        &[
            req("mode", Kind::Str(&["bilinear", "nearest"])),
            opt("height", POSITIVE),
            opt("width", POSITIVE),
            opt("ratio_y", POSITIVE_FLOAT),
            opt("ratio_x", POSITIVE_FLOAT),
            opt("sampling_mode", Kind::Str(&RESIZE_SAMPLING)),
        ],
        true,
        Rule::Resize,
    ),
    row(
        OpCode::CropResize,
        (2, 2),
        &[
            req("height", POSITIVE),
            req("width", POSITIVE),
            opt("sampling_mode", Kind::Str(&RESIZE_SAMPLING)),
            opt("box_coordinate_mode", Kind::Str(&BOX_MODES)),
            opt("normalized_coordinates", Kind::Bool),
            opt("spatial_scale", ANY_FLOAT),
        ],
        true,
        Rule::CropResize,
    ),
    row(OpCode::AffineTransform, (2, 2), &SAMPLER, true, Rule::Affine),
    row(OpCode::Resample, (2, 2), &SAMPLER_NO_SIZE, true, Rule::Resample),
    row(
        OpCode::Random,
        (0, 0),
        &[req("low", ANY_FLOAT), req("high", ANY_FLOAT), opt("seed", ANY_INT)],
        false,
        Rule::Free,
    ),
    row(
        OpCode::RingBufferWriter,
        (2, 2),
        &[req("axis", Kind::Axis), req("circular", Kind::Bool)],
        true,
        Rule::RingBuffer,
    ),
    row(
        OpCode::Nms,
        (2, 4),
        &[
            req("output", Kind::Str(&["boxes", "scores", "indices", "count"])),
            req("iou_threshold", UNIT),
            opt("score_threshold", ANY_FLOAT),
            req("max_boxes", POSITIVE),
            opt("per_class_suppression", Kind::Bool),
        ],
        false,
        Rule::Free,
    ),
];

/// The sampler attributes of `anec.resample` (its size comes from the coordinates).
const SAMPLER_NO_SIZE: [AttrSpec; 5] = [SAMPLER[2], SAMPLER[3], SAMPLER[4], SAMPLER[5], SAMPLER[6]];
