//! The fp16 tolerance a simulated output must meet against the f32 reference interpreter.
//!
//! An element passes when `|sim - ref| <= atol + rtol * |ref|`, with (u = 2^-11, the unit
//! roundoff of fp16, and 2^-10 = 2u one fp16 ulp relative):
//!
//! - `rtol = 2^-10 * k`, `k` the sum over the module's compute ops of their rounding steps:
//!   1 for an op whose result is rounded once to fp16 (elementwise, gain/offset, neuron,
//!   pooling), 2 for convolution and matrix products (weights stored in fp16 by the backend
//!   while the reference keeps the source's f32, plus the rounded result), 4 for the
//!   multi-step ops (softmax, layer norm, reduction), 10 for attention (the sum of the
//!   steps it runs as: two matrix products, the scale, the mask and the softmax). Data movement (reshape,
//!   transpose, concat, input view, broadcast, constants) copies fp16 values exactly: 0.
//! - `atol = sum(abs_op) + 2^-10 * sum(s_op) * S`, `S = max(1, max |ref|)` over the output:
//!   a normwise term for cancellation (an element near 0 that is the difference of terms of
//!   size S carries their rounding errors, not its own): `s_op` = 1 per compute op, 2 for
//!   convolution and matrix products (rounded weights, accumulation order), 4 for the
//!   multi-step ops; `abs_op` = 2^-14 for every compute op (results below the smallest
//!   normal fp16 may be flushed to zero) plus, for table-driven activations, the error of
//!   the backend's 33-knot table as `anec_backend_h13::activation::max_error` measures it
//!   over every finite fp16 input (sigmoid 3.4e-3, tanh 1.7e-3, gelu 6.2e-3, silu 1.5e-2,
//!   ...; `docs/rationale/activation-tables.md`); for the tables of the exponent/mantissa
//!   modes (2^x, sqrt, rsqrt, reciprocal), whose outputs span the fp16 range, a relative
//!   error instead: 2^-9 on top of rtol (largest measured 1.44e-3, rsqrt).
//!
//! Inputs are rounded to fp16 before either side sees them, so input rounding is not part
//! of the tolerance. `docs/simulator.md` ("Tolerances") states the same rules.

use anec_ir::{Attr, Module, OpCode};
use std::fmt;

/// One fp16 ulp, relative (2^-10).
pub const ULP: f32 = 1.0 / 1024.0;
/// Largest fp16 subnormal region (2^-14): what a flush to zero can lose.
pub const SUBNORMAL: f32 = 1.0 / 16384.0;
/// Table error allowance of a mode the backend has no table for yet (2^-8).
pub const SIGMOID_TABLE: f32 = 1.0 / 256.0;

/// The rounding budget of a module: the terms of the tolerance before an output's scale
/// is known.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Budget {
    /// Rounding steps (rtol = 2^-10 * k).
    pub k: f32,
    /// Normwise steps (times 2^-10 * S in atol).
    pub s: f32,
    /// Absolute allowance (flush to zero, table interpolation).
    pub abs: f32,
}

/// The tolerance of one output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute term.
    pub atol: f32,
    /// Relative term.
    pub rtol: f32,
}

impl Tolerance {
    /// Whether `sim` is within tolerance of `reference` (an infinite or NaN difference
    /// never is).
    pub fn accepts(&self, sim: f32, reference: f32) -> bool {
        let d = (sim - reference).abs();
        d.is_finite() && d <= self.atol + self.rtol * reference.abs()
    }

    /// The allowed error at `reference`.
    pub fn allowed(&self, reference: f32) -> f32 {
        self.atol + self.rtol * reference.abs()
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "atol {:.3e} + rtol {:.3e} * |ref|", self.atol, self.rtol)
    }
}

impl Budget {
    /// The budget of every op of `m`.
    pub fn of_module(m: &Module) -> Budget {
        let mut b = Budget::default();
        for op in &m.ops {
            let (k, s, abs) = op_budget(op.opcode, op.attr("mode").and_then(Attr::as_str));
            b.k += k;
            b.s += s;
            b.abs += abs;
        }
        b.k = b.k.max(1.0);
        b
    }

    /// The tolerance for an output whose reference values are `reference` (its scale S
    /// counts the finite values only).
    pub fn tolerance(&self, reference: &[f32]) -> Tolerance {
        let scale = reference.iter().filter(|v| v.is_finite()).fold(1.0f32, |m, v| m.max(v.abs()));
        Tolerance { atol: self.abs + ULP * self.s * scale, rtol: ULP * self.k }
    }
}

/// `(k, s, abs)` of one op.
fn op_budget(opcode: OpCode, mode: Option<&str>) -> (f32, f32, f32) {
    match opcode {
        OpCode::Reshape
        | OpCode::Transpose
        | OpCode::Concat
        | OpCode::InputView
        | OpCode::Broadcast
        | OpCode::Constant
        | OpCode::PixelShuffle
        | OpCode::PixelUnshuffle
        | OpCode::ChannelToSpace
        | OpCode::SpaceToChannel
        | OpCode::SpaceToBatch
        | OpCode::BatchToSpace
        | OpCode::Flatten
        | OpCode::Dropout
        | OpCode::Pad
        | OpCode::Gather
        | OpCode::DynamicSlice
        | OpCode::Sort
        | OpCode::TopK
        | OpCode::ArgMinMax
        | OpCode::GlobalArgMinMax => (0.0, 0.0, 0.0),
        // Hidden-layer ops (issue 5) have no H13 lowering yet: provisional budgets.
        OpCode::MinMaxNorm | OpCode::Lrn | OpCode::InstanceNorm => (4.0, 4.0, SUBNORMAL),
        OpCode::CrossCorrelation
        | OpCode::CrossProduct
        | OpCode::FurthestPointSampling
        | OpCode::RadiusSearch
        | OpCode::CostVolume
        | OpCode::Resize
        | OpCode::CropResize
        | OpCode::AffineTransform
        | OpCode::Resample
        | OpCode::Random
        | OpCode::RingBufferWriter
        | OpCode::Nms => (2.0, 2.0, SUBNORMAL),
        OpCode::Conv | OpCode::Matmul => (2.0, 2.0, SUBNORMAL),
        OpCode::Neuron => {
            let (abs, rel) = table_error(mode);
            (1.0 + rel / ULP, 1.0, SUBNORMAL + abs)
        }
        OpCode::GainOffsetControl | OpCode::ScaledElementwise | OpCode::Pooling => (1.0, 1.0, SUBNORMAL),
        // Attention runs as its steps (backend-h13 `lower::attention`): two matrix products
        // (2 each), the scale and the mask (1 each) and the softmax (4).
        OpCode::Sdpa => (ATTENTION_STEPS, ATTENTION_STEPS, SUBNORMAL),
        // Softmax, layer norm, reduction and any op added later: several
        // rounded steps until its own budget is written down.
        _ => (4.0, 4.0, SUBNORMAL),
    }
}

/// Rounding steps of attention: matmul 2 + scale 1 + mask 1 + softmax 4 + matmul 2.
pub const ATTENTION_STEPS: f32 = 10.0;

/// The interpolation allowance of a table-driven neuron mode (0 for exact modes).
/// Relative table error allowed for the exponent/mantissa-mode tables (2^-9).
pub const RELATIVE_TABLE: f32 = 1.0 / 512.0;

/// `(absolute, relative)` error of a neuron mode's table: the backend's measured bound
/// for the tables of bounded output, a relative 2^-9 for 2^x, sqrt, rsqrt and 1/x.
fn table_error(mode: Option<&str>) -> (f32, f32) {
    use anec_backend_h13::activation::{max_error, TableFn};
    let Some(mode) = mode else { return (0.0, 0.0) };
    match anec_backend_h13::lower::neuron_table(mode, None, None) {
        Some(TableFn::Exp2 | TableFn::Sqrt | TableFn::Rsqrt | TableFn::Reciprocal) => (0.0, RELATIVE_TABLE),
        Some(f) => (max_error(f) as f32, 0.0),
        // Native (relu) or not placed on the engine: the reference's own rounding only;
        // a mode placed later gets its table's bound here.
        None if matches!(mode, "relu" | "relu_n" | "threshold_relu" | "abs") => (0.0, 0.0),
        None => (SIGMOID_TABLE, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_within_and_rejects_outside() {
        let t = Tolerance { atol: 0.01, rtol: 0.1 };
        assert!(t.accepts(1.1, 1.0));
        assert!(!t.accepts(1.12, 1.0));
        assert!(t.accepts(-0.005, 0.0));
        assert!(!t.accepts(0.02, 0.0));
    }

    #[test]
    fn data_movement_is_exact_and_conv_costs_two_steps() {
        assert_eq!(op_budget(OpCode::Reshape, None), (0.0, 0.0, 0.0));
        assert_eq!(op_budget(OpCode::Conv, None), (2.0, 2.0, SUBNORMAL));
        let tanh = anec_backend_h13::activation::max_error(anec_backend_h13::activation::TableFn::Tanh) as f32;
        assert_eq!(op_budget(OpCode::Neuron, Some("tanh")).2, SUBNORMAL + tanh);
        assert!(tanh > 1e-3 && tanh < 2e-3, "tanh table error {tanh}");
        // 2^x: relative, on top of one rounding step.
        assert_eq!(op_budget(OpCode::Neuron, Some("exp")).0, 1.0 + RELATIVE_TABLE / ULP);
    }

    #[test]
    fn scale_enters_the_absolute_term() {
        let b = Budget { k: 2.0, s: 3.0, abs: 0.0 };
        let t = b.tolerance(&[0.5, -8.0, 2.0]);
        assert_eq!(t.rtol, 2.0 * ULP);
        assert_eq!(t.atol, 3.0 * ULP * 8.0);
        assert_eq!(b.tolerance(&[0.25]).atol, 3.0 * ULP);
    }
}
