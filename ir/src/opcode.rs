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
}

impl OpCode {
    /// Every opcode, in a fixed order.
    pub const ALL: [OpCode; 16] = [
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
