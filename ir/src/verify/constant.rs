//! `anec.constant`: a constant tensor.
//!
//! No operands, one result; `value` is a `dense_resource` whose type (extents and element
//! type) is the result's. Lowering uses it for tensors a MIL program computes at compile
//! time but an engine op reads as an operand (the scale of `anec.sdpa`, an additive mask).

use super::check::{same_shape, OpCx};

/// Verifies an `anec.constant`.
pub(super) fn verify_constant(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["value"]);
    cx.operands(0, 0);
    let result = cx.result();
    let value = cx.resource("value", true);
    let (Some(out), Some(value)) = (result, value) else { return };
    if !same_shape(&out, &value) || out.dtype != value.dtype {
        cx.err(format!("result {out} must have the type of `value` ({value})"));
    }
}

#[cfg(test)]
mod tests {
    use crate::opcode::OpCode;
    use crate::testutil::*;

    #[test]
    fn accepts_scalar_constant() {
        assert_valid(&sample(OpCode::Constant));
    }

    #[test]
    fn rejects_type_mismatch() {
        let mut m = sample(OpCode::Constant);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 2, 1, 1));
        assert_rejects(&m, "result tensor<1x2x1x1xf16> must have the type of `value` (tensor<1x1x1x1xf16>)");
    }

    #[test]
    fn rejects_operands_and_missing_value() {
        let mut m = sample(OpCode::Constant);
        let x = m.inputs[0].value;
        op0(&mut m).operands.push(x);
        op0(&mut m).attrs.clear();
        assert_rejects(&m, "expects 0 operands, got 1");
        assert_rejects(&m, "missing attribute `value` (a dense_resource)");
    }
}
