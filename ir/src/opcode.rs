//! The op vocabulary of the anec dialect.
//!
//! Each opcode names one engine-level operation; its verifier lives in `verify/` and its
//! attribute contract is documented in `docs/ops.md`. Names print with the `anec.` prefix.

use std::fmt;

/// An anec dialect operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpCode {
    /// Convolution with constant weights (`anec.conv`).
    Conv,
    /// Pointwise activation (`anec.neuron`).
    Neuron,
    /// Per-channel or scalar affine `x * scale + bias` (`anec.gain_offset_control`).
    GainOffsetControl,
    /// Binary elementwise op followed by a scalar scale (`anec.scaled_elementwise`).
    ScaledElementwise,
    /// Concatenation along one axis (`anec.concat`).
    Concat,
    /// Shape change with the same element count (`anec.reshape`).
    Reshape,
    /// Strided window along one axis, no data movement (`anec.input_view`).
    InputView,
    /// Broadcast of length-1 axes (`anec.broadcast`).
    Broadcast,
    /// Matrix multiply of two runtime tensors (`anec.matmul`).
    Matmul,
    /// Fused scaled dot-product attention (`anec.sdpa`).
    Sdpa,
    /// Layer normalization, optionally grouped (`anec.layer_norm`).
    LayerNorm,
    /// Max or average pooling over H and W (`anec.pooling`).
    Pooling,
    /// Softmax along one axis (`anec.softmax`).
    Softmax,
    /// Permutation of the five axes (`anec.transpose`).
    Transpose,
    /// Sum, mean, max or min over axes, keeping them with extent 1 (`anec.reduction`).
    Reduction,
    /// A constant tensor from a weight blob (`anec.constant`).
    Constant,
    /// Sort along one axis, values or indices (`anec.sort`).
    Sort,
    /// The k largest or smallest along one axis, values or indices (`anec.top_k`).
    TopK,
    /// Spatial or channel argmin/argmax over a kernel window (`anec.arg_min_max`).
    ArgMinMax,
    /// Argmin or argmax over a whole axis (`anec.global_arg_min_max`).
    GlobalArgMinMax,
    /// Depth-to-space, channel-major ordering (`anec.pixel_shuffle`).
    PixelShuffle,
    /// Space-to-depth, channel-major ordering (`anec.pixel_unshuffle`).
    PixelUnshuffle,
    /// Depth-to-space, offset-major ordering (`anec.channel_to_space`).
    ChannelToSpace,
    /// Space-to-depth, offset-major ordering (`anec.space_to_channel`).
    SpaceToChannel,
    /// Spatial blocks moved to the batch axis (`anec.space_to_batch`).
    SpaceToBatch,
    /// Batch blocks moved back to the spatial axes (`anec.batch_to_space`).
    BatchToSpace,
    /// Range normalization along one axis (`anec.min_max_norm`).
    MinMaxNorm,
    /// Cross-channel local response normalization (`anec.lrn`).
    Lrn,
    /// Per-channel normalization over spatial axes (`anec.instance_norm`).
    InstanceNorm,
    /// Valid cross-correlation with a runtime template (`anec.cross_correlation`).
    CrossCorrelation,
    /// Cross product of two 3-vectors on the channel axis (`anec.cross_product`).
    CrossProduct,
    /// Greedy furthest-point sampling of centroids (`anec.furthest_point_sampling`).
    FurthestPointSampling,
    /// Ball-query membership of points in centroid balls (`anec.radius_search`).
    RadiusSearch,
    /// Stereo L1 matching cost per disparity (`anec.cost_volume`).
    CostVolume,
    /// A window with a constant or runtime start (`anec.dynamic_slice`).
    DynamicSlice,
    /// Row-major flattening onto the channel axis (`anec.flatten`).
    Flatten,
    /// Inference-time dropout (identity) (`anec.dropout`).
    Dropout,
    /// Padding with a constant, reflected or replicated border (`anec.pad`).
    Pad,
    /// Gather along one axis by runtime indices (`anec.gather`).
    Gather,
    /// Spatial resampling to a size or by a ratio (`anec.resize`).
    Resize,
    /// Crop boxes and resize them (`anec.crop_resize`).
    CropResize,
    /// Spatial affine warp by a 2x3 matrix (`anec.affine_transform`).
    AffineTransform,
    /// Grid sampling at runtime coordinates (`anec.resample`).
    Resample,
    /// Random numbers in a range (`anec.random`).
    Random,
    /// Write into a live-state ring buffer (`anec.ring_buffer_writer`).
    RingBufferWriter,
    /// Non-maximum suppression of scored boxes (`anec.nms`).
    Nms,
}

impl OpCode {
    /// Every opcode, in a fixed order.
    pub const ALL: [OpCode; 46] = [
        OpCode::Conv,
        OpCode::Neuron,
        OpCode::GainOffsetControl,
        OpCode::ScaledElementwise,
        OpCode::Concat,
        OpCode::Reshape,
        OpCode::InputView,
        OpCode::Broadcast,
        OpCode::Matmul,
        OpCode::Sdpa,
        OpCode::LayerNorm,
        OpCode::Pooling,
        OpCode::Softmax,
        OpCode::Transpose,
        OpCode::Reduction,
        OpCode::Constant,
        OpCode::Sort,
        OpCode::TopK,
        OpCode::ArgMinMax,
        OpCode::GlobalArgMinMax,
        OpCode::PixelShuffle,
        OpCode::PixelUnshuffle,
        OpCode::ChannelToSpace,
        OpCode::SpaceToChannel,
        OpCode::SpaceToBatch,
        OpCode::BatchToSpace,
        OpCode::MinMaxNorm,
        OpCode::Lrn,
        OpCode::InstanceNorm,
        OpCode::CrossCorrelation,
        OpCode::CrossProduct,
        OpCode::FurthestPointSampling,
        OpCode::RadiusSearch,
        OpCode::CostVolume,
        OpCode::DynamicSlice,
        OpCode::Flatten,
        OpCode::Dropout,
        OpCode::Pad,
        OpCode::Gather,
        OpCode::Resize,
        OpCode::CropResize,
        OpCode::AffineTransform,
        OpCode::Resample,
        OpCode::Random,
        OpCode::RingBufferWriter,
        OpCode::Nms,
    ];

    /// The printed name, with the dialect prefix.
    pub fn name(self) -> &'static str {
        match self {
            OpCode::Conv => "anec.conv",
            OpCode::Neuron => "anec.neuron",
            OpCode::GainOffsetControl => "anec.gain_offset_control",
            OpCode::ScaledElementwise => "anec.scaled_elementwise",
            OpCode::Concat => "anec.concat",
            OpCode::Reshape => "anec.reshape",
            OpCode::InputView => "anec.input_view",
            OpCode::Broadcast => "anec.broadcast",
            OpCode::Matmul => "anec.matmul",
            OpCode::Sdpa => "anec.sdpa",
            OpCode::LayerNorm => "anec.layer_norm",
            OpCode::Pooling => "anec.pooling",
            OpCode::Softmax => "anec.softmax",
            OpCode::Transpose => "anec.transpose",
            OpCode::Reduction => "anec.reduction",
            OpCode::Constant => "anec.constant",
            OpCode::Sort => "anec.sort",
            OpCode::TopK => "anec.top_k",
            OpCode::ArgMinMax => "anec.arg_min_max",
            OpCode::GlobalArgMinMax => "anec.global_arg_min_max",
            OpCode::PixelShuffle => "anec.pixel_shuffle",
            OpCode::PixelUnshuffle => "anec.pixel_unshuffle",
            OpCode::ChannelToSpace => "anec.channel_to_space",
            OpCode::SpaceToChannel => "anec.space_to_channel",
            OpCode::SpaceToBatch => "anec.space_to_batch",
            OpCode::BatchToSpace => "anec.batch_to_space",
            OpCode::MinMaxNorm => "anec.min_max_norm",
            OpCode::Lrn => "anec.lrn",
            OpCode::InstanceNorm => "anec.instance_norm",
            OpCode::CrossCorrelation => "anec.cross_correlation",
            OpCode::CrossProduct => "anec.cross_product",
            OpCode::FurthestPointSampling => "anec.furthest_point_sampling",
            OpCode::RadiusSearch => "anec.radius_search",
            OpCode::CostVolume => "anec.cost_volume",
            OpCode::DynamicSlice => "anec.dynamic_slice",
            OpCode::Flatten => "anec.flatten",
            OpCode::Dropout => "anec.dropout",
            OpCode::Pad => "anec.pad",
            OpCode::Gather => "anec.gather",
            OpCode::Resize => "anec.resize",
            OpCode::CropResize => "anec.crop_resize",
            OpCode::AffineTransform => "anec.affine_transform",
            OpCode::Resample => "anec.resample",
            OpCode::Random => "anec.random",
            OpCode::RingBufferWriter => "anec.ring_buffer_writer",
            OpCode::Nms => "anec.nms",
        }
    }

    /// Looks an opcode up by its printed name.
    pub fn from_name(name: &str) -> Option<OpCode> {
        OpCode::ALL.iter().copied().find(|op| op.name() == name)
    }
}

impl fmt::Display for OpCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
