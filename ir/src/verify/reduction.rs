//! Ops that combine elements along axes: `anec.softmax` and `anec.reduction`.
//!
//! `softmax` normalizes along one `axis` (an axis name); the result has the operand's
//! shape (the element type may differ, as for a neuron). `reduction` applies `kind` (one of
//! [`REDUCTION_KINDS`]) over `axes` (a non-empty array of distinct axis names); the result
//! keeps every axis, with extent 1 on the reduced ones, and the operand's element type.

use super::check::{dims5, same_shape, OpCx, AXIS_NAMES};

/// The kinds of `anec.reduction`.
pub const REDUCTION_KINDS: [&str; 4] = ["sum", "mean", "max", "min"];

/// Verifies an `anec.softmax`.
pub(super) fn verify_softmax(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["axis"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    cx.axis("axis");
    let (Some(inputs), Some(out)) = (inputs, result) else { return };
    if let Some(x) = inputs.first() {
        if !same_shape(x, &out) {
            cx.err(format!("result {out} must have the operand's shape {x}"));
        }
    }
}

/// Verifies an `anec.reduction`.
pub(super) fn verify_reduction(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["kind", "axes"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    if let Some(kind) = cx.string("kind") {
        if !REDUCTION_KINDS.contains(&kind) {
            cx.err(format!("`kind` must be one of {REDUCTION_KINDS:?}, got {kind:?}"));
        }
    }
    let axes = cx.axes("axes");
    let (Some(inputs), Some(out), Some(axes)) = (inputs, result, axes) else { return };
    let Some(x) = inputs.first() else { return };
    if out.dtype != x.dtype {
        cx.err(format!("result element type {} differs from the operand's {}", out.dtype, x.dtype));
    }
    let (dx, dout) = (dims5(x), dims5(&out));
    for axis in 0..5 {
        let want = if axes.contains(&axis) { 1 } else { dx[axis] };
        if dout[axis] != want {
            let name = AXIS_NAMES[axis];
            cx.err(format!("result {name} is {}, expected {want}", dout[axis]));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;
    use crate::types::{DType, TensorType};

    #[test]
    fn accepts_softmax_and_reduction() {
        assert_valid(&sample(OpCode::Softmax));
        assert_valid(&sample(OpCode::Reduction));
    }

    #[test]
    fn rejects_softmax_shape_change_and_bad_axis() {
        let mut m = sample(OpCode::Softmax);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 8, 1));
        op0(&mut m).attrs.insert("axis".into(), s("time"));
        assert_rejects(&m, "must have the operand's shape");
        assert_rejects(&m, "`axis` must be an axis name");
    }

    #[test]
    fn rejects_softmax_missing_axis() {
        let mut m = sample(OpCode::Softmax);
        op0(&mut m).attrs.clear();
        assert_rejects(&m, "missing attribute `axis`");
    }

    #[test]
    fn rejects_reduction_unreduced_result() {
        let mut m = sample(OpCode::Reduction);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 8, 8));
        assert_rejects(&m, "result channel is 4, expected 1");
    }

    #[test]
    fn rejects_reduction_kind_axes_and_dtype() {
        let mut m = sample(OpCode::Reduction);
        op0(&mut m).attrs.insert("kind".into(), s("prod"));
        op0(&mut m).attrs.insert("axes".into(), Attr::Array(vec![]));
        let r = m.ops[0].results[0];
        retype(&mut m, r, TensorType::nchw(1, 1, 8, 8, DType::F32));
        assert_rejects(&m, "`kind` must be one of [\"sum\", \"mean\", \"max\", \"min\"], got \"prod\"");
        assert_rejects(&m, "`axes` must be a non-empty array of distinct axis names");
        op0(&mut m).attrs.insert("axes".into(), Attr::Array(vec![s("channel")]));
        assert_rejects(&m, "result element type f32 differs");
    }
}
