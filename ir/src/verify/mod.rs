//! Verifiers: the structural rules every [`Module`] obeys and each op's contract.
//!
//! [`verify_module`] runs every check and collects all failures instead of stopping at the
//! first, so one run reports everything wrong with a module. The checks are, in order:
//!
//! - SSA form (`ssa.rs`): ids in range, each value defined exactly once (a module input or
//!   one op result), operands defined before use, outputs defined, op and port names unique.
//! - Resources (`resource.rs`): every `dense_resource` attribute names a blob the module
//!   holds, with the attribute's element type and `elements * dtype size` bytes.
//! - Per-op contracts of `docs/ops.md`, one function per op, grouped by family: `conv.rs`,
//!   `neuron.rs`, `pooling.rs`, `elementwise.rs`, `shape.rs`, `attention.rs`, `reduction.rs`
//!   (softmax, reduction), `layout.rs` (transpose), `constant.rs`; the hidden-layer ops of
//!   seed 002 (sort, top_k, pixel_shuffle, pad, resize, ...) share one table-driven
//!   verifier, `hidden.rs` (table in `hidden_table.rs`, shape rules in `hidden_shape.rs`).
//!   They check operand and result counts, shapes, element types, and attribute
//!   presence, kind and range; unknown attributes are rejected so a misspelt name cannot
//!   pass silently.
//!
//! A failure after a pass is a compiler bug; the caller decides how to say so. Nothing here
//! panics on a malformed module: out-of-range ids are reported, never indexed.

mod attention;
mod check;
mod constant;
mod conv;
mod elementwise;
mod hidden;
mod hidden_shape;
mod hidden_table;
mod layout;
mod neuron;
mod pooling;
mod reduction;
mod resource;
mod shape;
mod ssa;

use crate::module::{Location, Module, Op};
use crate::opcode::OpCode;
use check::OpCx;
pub use elementwise::ELEMENTWISE_KINDS;
pub use hidden::{describe_kind, infer_extents, spec, AttrSpec, Kind, OpSpec};
pub use hidden_table::{ARG_MODES, BOX_MODES, COORDINATE_MODES, PAD_MODES, RESIZE_SAMPLING, SAMPLER_PADDING};
pub use neuron::{ANEC_ONLY_NEURON_MODES, NEURON_MODES};
pub use pooling::POOLING_KINDS;
pub use reduction::REDUCTION_KINDS;
use std::fmt;

/// One verifier failure: what it concerns, where it came from, and the problem.
///
/// Displays on one line, e.g.
///
/// ```text
/// anec.conv 'my_layer' at conv.plist:60:7: missing attribute `stride` (an array of 2 integers)
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{subject} at {}: {message}", LocDisplay(.loc))]
pub struct VerifyError {
    /// What the error is about: `anec.conv 'my_layer'`, `input 'image'`, `module 'net'`.
    pub subject: String,
    /// Source location of the subject (default when unknown).
    pub loc: Location,
    /// The problem, one line.
    pub message: String,
    /// Index in [`Module::ops`] of the op concerned, if the subject is an op.
    pub op: Option<usize>,
}

impl VerifyError {
    /// An error about op number `index`.
    pub fn for_op(index: usize, op: &Op, message: impl Into<String>) -> Self {
        VerifyError { subject: op_subject(op), loc: op.loc.clone(), message: message.into(), op: Some(index) }
    }

    /// An error about the module as a whole.
    pub fn for_module(m: &Module, message: impl Into<String>) -> Self {
        VerifyError {
            subject: format!("module '{}'", m.name),
            loc: Location::default(),
            message: message.into(),
            op: None,
        }
    }
}

/// `anec.conv 'my_layer'`.
fn op_subject(op: &Op) -> String {
    format!("{} '{}'", op.opcode, op.name)
}

/// Renders a location as `file:line:col`, or `<unknown location>` for the default.
struct LocDisplay<'a>(&'a Location);

impl fmt::Display for LocDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.0;
        if *l == Location::default() {
            f.write_str("<unknown location>")
        } else {
            write!(f, "{}:{}:{}", l.file, l.line, l.col)
        }
    }
}

/// Verifies a module, returning every problem found.
pub fn verify_module(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut errs = Vec::new();
    ssa::check(m, &mut errs);
    resource::check(m, &mut errs);
    for (index, op) in m.ops.iter().enumerate() {
        let mut cx = OpCx::new(m, index, op, &mut errs);
        verify_op(&mut cx);
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// Dispatches one op to its verifier.
fn verify_op(cx: &mut OpCx<'_, '_>) {
    match cx.op.opcode {
        OpCode::Conv => conv::verify_conv(cx),
        OpCode::Neuron => neuron::verify_neuron(cx),
        OpCode::GainOffsetControl => elementwise::verify_gain_offset_control(cx),
        OpCode::ScaledElementwise => elementwise::verify_scaled_elementwise(cx),
        OpCode::Concat => shape::verify_concat(cx),
        OpCode::Reshape => shape::verify_reshape(cx),
        OpCode::InputView => shape::verify_input_view(cx),
        OpCode::Broadcast => shape::verify_broadcast(cx),
        OpCode::Matmul => attention::verify_matmul(cx),
        OpCode::Sdpa => attention::verify_sdpa(cx),
        OpCode::LayerNorm => attention::verify_layer_norm(cx),
        OpCode::Pooling => pooling::verify_pooling(cx),
        OpCode::Softmax => reduction::verify_softmax(cx),
        OpCode::Transpose => layout::verify_transpose(cx),
        OpCode::Reduction => reduction::verify_reduction(cx),
        OpCode::Constant => constant::verify_constant(cx),
        OpCode::Sort
        | OpCode::TopK
        | OpCode::ArgMinMax
        | OpCode::GlobalArgMinMax
        | OpCode::PixelShuffle
        | OpCode::PixelUnshuffle
        | OpCode::ChannelToSpace
        | OpCode::SpaceToChannel
        | OpCode::SpaceToBatch
        | OpCode::BatchToSpace
        | OpCode::MinMaxNorm
        | OpCode::Lrn
        | OpCode::InstanceNorm
        | OpCode::CrossCorrelation
        | OpCode::CrossProduct
        | OpCode::FurthestPointSampling
        | OpCode::RadiusSearch
        | OpCode::CostVolume
        | OpCode::DynamicSlice
        | OpCode::Flatten
        | OpCode::Dropout
        | OpCode::Pad
        | OpCode::Gather
        | OpCode::Resize
        | OpCode::CropResize
        | OpCode::AffineTransform
        | OpCode::Resample
        | OpCode::Random
        | OpCode::RingBufferWriter
        | OpCode::Nms => {
            if !hidden::verify(cx) {
                cx.err("has no contract in the hidden-layer table");
            }
        }
    }
}
