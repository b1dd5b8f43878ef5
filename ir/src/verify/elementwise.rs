//! Elementwise ops: `anec.gain_offset_control` and `anec.scaled_elementwise`.
//!
//! `gain_offset_control` computes `x * scale + bias` per channel or with scalars: optional
//! float `scale` and `bias`, optional `dense_resource` `scale_data` and `bias_data` holding
//! one value per channel; at least one of the four is present. `scaled_elementwise`
//! applies a binary `kind` (`add`, `mul`, `sub`, `min`, `max`) to two operands of equal
//! shape and multiplies by the float `scale`. Both keep the operand's shape.

use super::check::{same_shape, OpCx};

/// The binary kinds of `anec.scaled_elementwise`.
pub const ELEMENTWISE_KINDS: [&str; 5] = ["add", "mul", "sub", "min", "max"];

/// Verifies an `anec.gain_offset_control`.
pub(super) fn verify_gain_offset_control(cx: &mut OpCx<'_, '_>) {
    let names = ["scale", "bias", "scale_data", "bias_data"];
    cx.known_attrs(&names);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    cx.float("scale", false);
    cx.float("bias", false);
    let scale_data = cx.resource("scale_data", false);
    let bias_data = cx.resource("bias_data", false);
    if !names.iter().any(|n| cx.op.attrs.contains_key(*n)) {
        cx.err("needs at least one of `scale`, `bias`, `scale_data`, `bias_data`");
    }
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    for (name, data) in [("scale_data", scale_data), ("bias_data", bias_data)] {
        if let Some(t) = data.filter(|t| t.elements() != u64::from(x.c)) {
            let n = t.elements();
            cx.err(format!("`{name}` holds {n} values, expected one per channel ({})", x.c));
        }
    }
    if !same_shape(x, &out) {
        cx.err(format!("result {out} must have the operand's shape {x}"));
    }
}

/// Verifies an `anec.scaled_elementwise`.
pub(super) fn verify_scaled_elementwise(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["kind", "scale"]);
    let inputs = cx.operands(2, 2);
    let result = cx.result();
    if let Some(kind) = cx.string("kind") {
        if !ELEMENTWISE_KINDS.contains(&kind) {
            cx.err(format!("unknown elementwise kind {kind:?}"));
        }
    }
    cx.float("scale", true);
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let [a, b] = inputs.as_slice() else { return };
    if !same_shape(a, b) {
        cx.err(format!("operand shapes differ: {a} and {b}"));
    } else if !same_shape(a, &out) {
        cx.err(format!("result {out} must have the operands' shape {a}"));
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;
    use crate::types::{DType, TensorType};

    #[test]
    fn accepts_goc_scalar_and_per_channel() {
        let mut m = sample(OpCode::GainOffsetControl);
        assert_valid(&m);
        let ty = TensorType::nchw(1, 4, 1, 1, DType::F16);
        let sd = blob(&mut m, "goc.scale_data", ty);
        op0(&mut m).attrs.insert("scale_data".into(), sd);
        op0(&mut m).attrs.insert("bias".into(), Attr::Float(-2.5));
        assert_valid(&m);
    }

    #[test]
    fn rejects_goc_without_parameters() {
        let mut m = sample(OpCode::GainOffsetControl);
        op0(&mut m).attrs.clear();
        assert_rejects(&m, "needs at least one of");
    }

    #[test]
    fn rejects_goc_wrong_channel_count() {
        let mut m = sample(OpCode::GainOffsetControl);
        let bd = blob(&mut m, "goc.bias_data", TensorType::nchw(1, 3, 1, 1, DType::F32));
        op0(&mut m).attrs.insert("bias_data".into(), bd);
        assert_rejects(&m, "`bias_data` holds 3 values, expected one per channel (4)");
    }

    #[test]
    fn rejects_goc_scale_as_resource_of_wrong_kind() {
        let mut m = sample(OpCode::GainOffsetControl);
        op0(&mut m).attrs.insert("scale".into(), s("0.5"));
        assert_rejects(&m, "`scale` must be a float, got string \"0.5\"");
    }

    #[test]
    fn accepts_scaled_add() {
        assert_valid(&sample(OpCode::ScaledElementwise));
    }

    #[test]
    fn rejects_scaled_elementwise_one_operand() {
        let mut m = sample(OpCode::ScaledElementwise);
        op0(&mut m).operands.pop();
        assert_rejects(&m, "expects 2 operands, got 1");
    }

    #[test]
    fn rejects_scaled_elementwise_missing_scale_and_bad_kind() {
        let mut m = sample(OpCode::ScaledElementwise);
        op0(&mut m).attrs.remove("scale");
        op0(&mut m).attrs.insert("kind".into(), s("div"));
        assert_rejects(&m, "missing attribute `scale` (a float)");
        assert_rejects(&m, "unknown elementwise kind \"div\"");
    }

    #[test]
    fn rejects_scaled_elementwise_shape_mismatch() {
        let mut m = sample(OpCode::ScaledElementwise);
        let b = m.inputs[1].value;
        retype(&mut m, b, f16(1, 4, 2, 1));
        assert_rejects(&m, "operand shapes differ");
    }
}
