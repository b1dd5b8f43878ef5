//! `anec.neuron`: a pointwise activation.
//!
//! One operand, one result of the same shape (the element type may differ: the engine
//! converts on output). `mode` is one of [`NEURON_MODES`]; `alpha` and `beta` are optional
//! float parameters.

use super::check::{same_shape, OpCx};

/// The activation modes, lower-case netplist `Type` names, and `gelu_sigmoid`
/// (`x * sigmoid(1.702 x)`, MIL's gelu `SIGMOID_APPROXIMATION`, which Apple's current
/// compiler runs as one table like the other gelu modes).
pub const NEURON_MODES: [&str; 32] = [
    "relu",
    "sigmoid",
    "sigmoid_high_precision",
    "tanh",
    "clamped_relu",
    "leaky_relu",
    "relu_n",
    "swish",
    "swish_hard",
    "sigmoid_hard",
    "sqr",
    "sqrt",
    "rsqrt",
    "inv",
    "log2",
    "exp2",
    "exp",
    "elu",
    "sign",
    "sin",
    "cos",
    "gelu",
    "gelu_sigmoid",
    "degamma",
    "trunc",
    "round_nearest",
    "floor",
    "ceil",
    "erf",
    "threshold_relu",
    "gamma",
    "abs",
];

/// The modes of [`NEURON_MODES`] that are anec's own, with no netplist `Type`.
pub const ANEC_ONLY_NEURON_MODES: [&str; 1] = ["gelu_sigmoid"];

/// Verifies an `anec.neuron`.
pub(super) fn verify_neuron(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["mode", "alpha", "beta"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    if let Some(mode) = cx.string("mode") {
        if !NEURON_MODES.contains(&mode) {
            cx.err(format!("unknown neuron mode {mode:?}"));
        }
    }
    cx.float("alpha", false);
    cx.float("beta", false);
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    if let Some(x) = inputs.first() {
        if !same_shape(x, &out) {
            cx.err(format!("result {out} must have the operand's shape {x}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;
    use crate::types::DType;

    #[test]
    fn accepts_leaky_relu_and_dtype_change() {
        let mut m = sample(OpCode::Neuron);
        assert_valid(&m);
        let r = m.ops[0].results[0];
        retype(&mut m, r, crate::types::TensorType::nchw(1, 4, 8, 8, DType::U8));
        assert_valid(&m);
    }

    #[test]
    fn rejects_missing_or_unknown_mode() {
        let mut m = sample(OpCode::Neuron);
        op0(&mut m).attrs.remove("mode");
        assert_rejects(&m, "missing attribute `mode` (a string)");
        op0(&mut m).attrs.insert("mode".into(), s("relu6"));
        assert_rejects(&m, "unknown neuron mode \"relu6\"");
    }

    #[test]
    fn rejects_shape_change_and_operand_count() {
        let mut m = sample(OpCode::Neuron);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 8, 4));
        assert_rejects(&m, "must have the operand's shape");
        op0(&mut m).operands.clear();
        assert_rejects(&m, "expects 1 operands, got 0");
    }

    #[test]
    fn rejects_non_float_alpha_and_unknown_attr() {
        let mut m = sample(OpCode::Neuron);
        op0(&mut m).attrs.insert("alpha".into(), Attr::Int(1));
        op0(&mut m).attrs.insert("slope".into(), Attr::Float(1.0));
        assert_rejects(&m, "`alpha` must be a float, got integer 1");
        assert_rejects(&m, "unknown attribute `slope`");
    }
}
