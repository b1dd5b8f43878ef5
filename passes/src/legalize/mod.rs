//! Legalization: the per-layer validators of seed 002, Table B.2, gated by the target
//! chip's feature bytes and limits (`crate::target`).
//!
//! The same validators run in two roles, as the seeds describe Apple's compiler doing:
//!
//! - [`check`] is the eligibility dry run behind `anec check`: it never fails and gives
//!   every op a [`LayerVerdict`] (runs on the engine, or rejected with the rule, the feature
//!   byte or limit and the chip's value, and a suggestion where one exists);
//! - [`legalize`] is the legalizer inside the compile pipeline (`pipeline::run`): it rejects
//!   a module with exactly the verdicts [`check`] reports, so the prediction cannot drift
//!   from the compile result.
//!
//! Both call [`verdict`] per op: the op's own validator (one file per family: `conv.rs`,
//! `matmul.rs`, `sdpa.rs`, `pool.rs`, `neuron.rs`, `reduction.rs`, `norm.rs`, `argminmax.rs`,
//! `layout.rs`, `rearrange.rs`, `texture.rs`, `sort.rs`, `misc.rs`), then the extents every
//! tensor must respect (`extent.rs`). A rule is the seed's reject string, formatted, where
//! the seed gives one; the seed's "(encoded assert)" and "(passes validation, ...)" rows get
//! a sentence that names the byte or limit instead.
//!
//! Some rejections are not validator failures but code-generation ones on a chip (Sort and
//! DynamicSlice on the M1, the TopK band, the LRN channel count, CropResize on the M1,
//! NMS everywhere): they carry [`Stage::CodeGeneration`]. The route matters where the
//! seeds say it does (seed 003: the conversion route is gated by per-op family floors, the
//! direct route by the feature bytes): see `floors.rs`.

mod argminmax;
mod conv;
mod cx;
mod extent;
mod floors;
mod layout;
mod matmul;
mod misc;
mod neuron;
mod norm;
mod pool;
mod rearrange;
mod reduction;
pub mod report;
mod sdpa;
mod sort;
mod texture;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hidden;
#[cfg(test)]
mod tests_hidden2;

use crate::target::Target;
use crate::validate::Validated;
use anec_ir::verify::verify_module;
use anec_ir::{Location, Module, Op, OpCode};
use cx::{Check, Cx};
use std::fmt;

pub use floors::{conversion_floor, CONVERSION_FLOOR, FLOORS};
pub use report::{render_json, render_text, Summary};

/// How a model reached the compiler (seed 003, "Two compile routes and their gates").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// Converted from a high-level model (MIL: `.mil`, `.mlmodelc`, `.mlpackage`): each op
    /// is also gated by its conversion-route family floor.
    Conversion,
    /// Authored directly (a netplist or an `.mlir` anec module): gated by the feature bytes.
    Direct,
}

impl Route {
    /// `conversion` or `direct`.
    pub const fn name(self) -> &'static str {
        match self {
            Route::Conversion => "conversion",
            Route::Direct => "direct",
        }
    }
}

/// Where a layer is rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The MIL op has no lowering to the anec dialect (conversion route only).
    Lowering,
    /// A validator rejects it.
    Validation,
    /// It passes validation and the code generator rejects it on this chip.
    CodeGeneration,
}

impl Stage {
    /// `lowering`, `validation` or `code generation`.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Lowering => "lowering",
            Stage::Validation => "validation",
            Stage::CodeGeneration => "code generation",
        }
    }
}

/// Why a layer does not run on the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The rule: the seed's reject string, formatted with the layer's values.
    pub rule: String,
    /// The feature byte or limit and the chip's value (`feature byte 0x815 (softmax) = 0
    /// on h11`, `limit conv-kernel-width = 1..=13 on h13g`).
    pub feature: Option<String>,
    /// A concrete way around it, where one exists.
    pub suggestion: Option<String>,
    /// Where it is rejected.
    pub stage: Stage,
}

/// A layer's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Runs on the engine.
    Engine,
    /// Does not.
    Rejected(Rejection),
}

impl Verdict {
    /// The rejection, if any.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Verdict::Engine => None,
            Verdict::Rejected(r) => Some(r),
        }
    }
}

/// One layer of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerVerdict {
    /// Index of the op in the module (`None` for a MIL statement that did not lower).
    pub index: Option<usize>,
    /// The layer name.
    pub name: String,
    /// The op (`anec.conv`, or the MIL op name for a statement that did not lower).
    pub op: String,
    /// Where it comes from.
    pub location: Location,
    /// The verdict.
    pub verdict: Verdict,
}

impl LayerVerdict {
    /// The verdict of op `index` of `m`.
    fn of(index: usize, op: &Op, verdict: Verdict) -> Self {
        LayerVerdict {
            index: Some(index),
            name: op.name.clone(),
            op: op.opcode.name().to_string(),
            location: op.loc.clone(),
            verdict,
        }
    }
}

/// Every layer's verdict on one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The chip.
    pub target: Target,
    /// The route.
    pub route: Route,
    /// One entry per layer, in execution (or source) order.
    pub layers: Vec<LayerVerdict>,
    /// Problems that belong to no layer (a module-level verifier error, a code-generation
    /// failure of the whole program); any entry makes the model fail.
    pub module_errors: Vec<String>,
    /// Remarks for the summary (which code generator answered, numerical warnings).
    pub notes: Vec<String>,
}

impl Report {
    /// Whether every layer runs on the engine and nothing else failed.
    pub fn all_engine(&self) -> bool {
        self.module_errors.is_empty() && self.layers.iter().all(|l| l.verdict == Verdict::Engine)
    }

    /// The rejected layers.
    pub fn rejected(&self) -> impl Iterator<Item = &LayerVerdict> {
        self.layers.iter().filter(|l| l.verdict != Verdict::Engine)
    }
}

/// The validators' verdict on op `index` of `m` (assumed verified).
pub fn verdict(m: &Module, index: usize, target: Target, route: Route) -> Verdict {
    let Some(op) = m.ops.get(index) else { return Verdict::Engine };
    let cx = Cx { m, op, target, route };
    let result = floors::check(&cx).and_then(|()| validate_op(&cx)).and_then(|()| extent::check(&cx));
    match result {
        Ok(()) => Verdict::Engine,
        Err(r) => Verdict::Rejected(r),
    }
}

/// Dispatches an op to its validator (seed 002 Table B.2 row), by family.
fn validate_op(cx: &Cx<'_>) -> Check {
    use OpCode as O;
    match cx.op.opcode {
        O::Conv => conv::conv(cx),
        O::Matmul => matmul::matmul(cx),
        O::Sdpa => sdpa::sdpa(cx),
        O::Pooling => pool::pooling(cx),
        O::Neuron => neuron::neuron(cx),
        O::Reduction => reduction::reduction(cx),
        O::Softmax => norm::softmax(cx),
        O::LayerNorm => norm::layer_norm(cx),
        O::InstanceNorm => norm::instance_norm(cx),
        O::MinMaxNorm => norm::min_max_norm(cx),
        O::Lrn => norm::lrn(cx),
        O::ArgMinMax => argminmax::arg_min_max(cx),
        O::GlobalArgMinMax => argminmax::global_arg_min_max(cx),
        O::Transpose => layout::transpose(cx),
        O::Concat => layout::concat(cx),
        O::Pad => layout::pad(cx),
        O::Broadcast => layout::broadcast(cx),
        O::Gather => layout::gather(cx),
        O::DynamicSlice => layout::dynamic_slice(cx),
        O::PixelShuffle | O::PixelUnshuffle => rearrange::pixel_shuffle(cx),
        O::SpaceToBatch | O::BatchToSpace => rearrange::space_batch(cx),
        O::ChannelToSpace | O::SpaceToChannel => rearrange::channel_space(cx),
        O::Resize => texture::resize(cx),
        O::CropResize => texture::crop_resize(cx),
        O::AffineTransform => texture::affine_transform(cx),
        O::Resample => texture::resample(cx),
        O::Sort => sort::sort(cx),
        O::TopK => sort::top_k(cx),
        O::Dropout => misc::dropout(cx),
        O::Random => misc::random(cx),
        O::RingBufferWriter => misc::ring_buffer_writer(cx),
        O::Nms => misc::nms(cx),
        O::FurthestPointSampling => misc::furthest_point_sampling(cx),
        // No Table B.2 row: the verifier's contract and the common extents only.
        O::GainOffsetControl
        | O::ScaledElementwise
        | O::Reshape
        | O::InputView
        | O::Constant
        | O::Flatten
        | O::CrossCorrelation
        | O::CrossProduct
        | O::RadiusSearch
        | O::CostVolume => Ok(()),
    }
}

/// The eligibility dry run: verifies `m`, then gives every op its verdict on `target`.
/// Never fails: an op the verifier rejects is reported as rejected with the verifier's
/// message; a module-level verifier error goes to [`Report::module_errors`].
pub fn check(m: &Module, target: Target, route: Route) -> Report {
    let errors = verify_module(m).err().unwrap_or_default();
    let mut module_errors = Vec::new();
    let mut invalid: Vec<Option<String>> = vec![None; m.ops.len()];
    for e in errors {
        match e.op.and_then(|i| invalid.get_mut(i)) {
            Some(slot @ None) => *slot = Some(e.message),
            Some(Some(_)) => {}
            None => module_errors.push(e.to_string()),
        }
    }
    let layers = m
        .ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let v = match invalid.get(i).cloned().flatten() {
                Some(message) => Verdict::Rejected(Rejection {
                    rule: format!("invalid layer: {message}"),
                    feature: None,
                    suggestion: None,
                    stage: Stage::Validation,
                }),
                None => verdict(m, i, target, route),
            };
            LayerVerdict::of(i, op, v)
        })
        .collect();
    Report { target, route, layers, module_errors, notes: notes(m) }
}

/// Numerical remarks that do not reject a layer.
fn notes(m: &Module) -> Vec<String> {
    m.ops
        .iter()
        .filter(|op| {
            op.opcode == OpCode::Sdpa && op.attr("subtract_max").and_then(anec_ir::Attr::as_bool) == Some(false)
        })
        .map(|op| {
            format!(
                "layer '{}' (anec.sdpa) has subtract_max = false: its softmax does not subtract the row maximum \
                 and overflows fp16 on large scores (seed 003: an authored SDPA must set it)",
                op.name
            )
        })
        .collect()
}

/// The layers a compile rejects on a chip.
#[derive(Debug, Clone, PartialEq)]
pub struct LegalizeError {
    /// The chip.
    pub target: Target,
    /// Every rejected layer, in op order.
    pub rejected: Vec<LayerVerdict>,
}

impl fmt::Display for LegalizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.rejected.iter().map(|l| report::rejection_line(l, self.target)).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for LegalizeError {}

/// The legalizer of the compile pipeline: the same verdicts as [`check`], as an error
/// listing every rejected layer.
pub fn legalize(v: &Validated, target: Target, route: Route) -> Result<(), LegalizeError> {
    let m = v.module();
    let rejected: Vec<LayerVerdict> = (0..m.ops.len())
        .filter_map(|i| {
            let op = m.ops.get(i)?;
            match verdict(m, i, target, route) {
                Verdict::Engine => None,
                v => Some(LayerVerdict::of(i, op, v)),
            }
        })
        .collect();
    if rejected.is_empty() {
        Ok(())
    } else {
        Err(LegalizeError { target, rejected })
    }
}
