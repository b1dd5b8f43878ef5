//! Data-movement ops: `anec.concat`, `anec.reshape`, `anec.input_view`, `anec.broadcast`.
//!
//! None of them converts elements, so operands and result share one element type.
//! `concat` joins >= 2 operands along `axis` (other axes equal, result extent the sum);
//! `reshape` keeps the element count; `input_view` takes `size` elements along `axis`
//! starting at `offset` every `step` (the last one inside the operand); `broadcast`
//! stretches each of `axes` from extent 1 to the matching entry of `sizes`.

use super::check::{dims5, OpCx, AXIS_NAMES};
use crate::types::TensorType;

/// Reports operands or result whose element type differs from the first operand's.
fn same_dtype(cx: &mut OpCx<'_, '_>, inputs: &[TensorType], out: &TensorType) {
    let Some(first) = inputs.first() else { return };
    for (k, t) in inputs.iter().enumerate().skip(1) {
        if t.dtype != first.dtype {
            cx.err(format!("operand {k} is {}, operand 0 is {}", t.dtype, first.dtype));
        }
    }
    if out.dtype != first.dtype {
        cx.err(format!("result element type {} differs from the operand's {}", out.dtype, first.dtype));
    }
}

/// Reports axes other than `skip` whose extents differ between `a` and `b`.
fn other_axes_equal(cx: &mut OpCx<'_, '_>, a: &TensorType, b: &TensorType, skip: &[usize], what: &str) {
    let (da, db) = (dims5(a), dims5(b));
    for axis in (0..5).filter(|i| !skip.contains(i)) {
        if da[axis] != db[axis] {
            let name = AXIS_NAMES[axis];
            cx.err(format!("{what}: {name} is {} in {b}, expected {}", db[axis], da[axis]));
        }
    }
}

/// Verifies an `anec.concat`.
pub(super) fn verify_concat(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["axis"]);
    let inputs = cx.operands(2, usize::MAX);
    let result = cx.result();
    let axis = cx.axis("axis");
    let (Some(inputs), Some(out), Some(axis)) = (inputs, result, axis) else {
        return;
    };
    let Some(first) = inputs.first() else { return };
    same_dtype(cx, &inputs, &out);
    for (k, t) in inputs.iter().enumerate().skip(1) {
        other_axes_equal(cx, first, t, &[axis], &format!("operand {k}"));
    }
    other_axes_equal(cx, first, &out, &[axis], "result");
    let sum: u64 = inputs.iter().map(|t| u64::from(dims5(t)[axis])).sum();
    let got = dims5(&out)[axis];
    if u64::from(got) != sum {
        let name = AXIS_NAMES[axis];
        cx.err(format!("result {name} is {got}, expected the sum of the operands' ({sum})"));
    }
}

/// Verifies an `anec.reshape`.
pub(super) fn verify_reshape(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&[]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    same_dtype(cx, &inputs, &out);
    if x.elements() != out.elements() {
        let (a, b) = (x.elements(), out.elements());
        cx.err(format!("result {out} has {b} elements, operand {x} has {a}"));
    }
}

/// Verifies an `anec.input_view`.
pub(super) fn verify_input_view(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["axis", "offset", "size", "step"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let axis = cx.axis("axis");
    let window = view_window(cx);
    let (Some(inputs), Some(out), Some(axis)) = (inputs, result, axis) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    same_dtype(cx, &inputs, &out);
    other_axes_equal(cx, x, &out, &[axis], "result");
    let Some((offset, size, step)) = window else {
        return;
    };
    let extent = i128::from(dims5(x)[axis]);
    let last = i128::from(offset) + (i128::from(size) - 1) * i128::from(step);
    let name = AXIS_NAMES[axis];
    if last >= extent {
        cx.err(format!("view ends at {name} index {last}, operand extent is {extent}"));
    }
    if i64::from(dims5(&out)[axis]) != size {
        cx.err(format!("result {name} is {}, expected `size` = {size}", dims5(&out)[axis]));
    }
}

/// Reads `offset` (>= 0), `size` and `step` (>= 1).
fn view_window(cx: &mut OpCx<'_, '_>) -> Option<(i64, i64, i64)> {
    let offset = cx.int("offset");
    let size = cx.int("size");
    let step = cx.int("step");
    let (offset, size, step) = (offset?, size?, step?);
    if offset < 0 || size < 1 || step < 1 {
        cx.err(format!("need offset >= 0, size >= 1, step >= 1; got {offset}, {size}, {step}"));
        return None;
    }
    Some((offset, size, step))
}

/// Verifies an `anec.broadcast`.
pub(super) fn verify_broadcast(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["axes", "sizes"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let axes = cx.axes("axes");
    let sizes = cx.ints("sizes");
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    same_dtype(cx, &inputs, &out);
    let (Some(axes), Some(sizes)) = (axes, sizes) else {
        return;
    };
    if axes.len() != sizes.len() {
        cx.err(format!("{} axes but {} sizes", axes.len(), sizes.len()));
        return;
    }
    other_axes_equal(cx, x, &out, &axes, "result");
    let (dx, dout) = (dims5(x), dims5(&out));
    for (&axis, &size) in axes.iter().zip(&sizes) {
        let name = AXIS_NAMES[axis];
        if dx[axis] != 1 {
            cx.err(format!("broadcast axis {name} has extent {} in the operand, not 1", dx[axis]));
        }
        if i64::from(dout[axis]) != size {
            cx.err(format!("result {name} is {}, expected size {size}", dout[axis]));
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
    fn accepts_concat_reshape_view_broadcast() {
        for op in [OpCode::Concat, OpCode::Reshape, OpCode::InputView, OpCode::Broadcast] {
            assert_valid(&sample(op));
        }
    }

    #[test]
    fn rejects_concat_one_operand_and_missing_axis() {
        let mut m = sample(OpCode::Concat);
        op0(&mut m).operands.pop();
        op0(&mut m).attrs.remove("axis");
        assert_rejects(&m, "expects at least 2 operands, got 1");
        assert_rejects(&m, "missing attribute `axis`");
    }

    #[test]
    fn rejects_concat_wrong_sum_and_mismatched_axes() {
        let mut m = sample(OpCode::Concat);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 6, 4, 4));
        assert_rejects(&m, "result channel is 6, expected the sum of the operands' (5)");
        let b = m.inputs[1].value;
        retype(&mut m, b, f16(1, 3, 4, 2));
        assert_rejects(&m, "operand 1: width is 2");
    }

    #[test]
    fn rejects_concat_bad_axis_name() {
        let mut m = sample(OpCode::Concat);
        op0(&mut m).attrs.insert("axis".into(), s("C"));
        assert_rejects(&m, "`axis` must be an axis name");
    }

    #[test]
    fn rejects_reshape_element_count_and_dtype() {
        let mut m = sample(OpCode::Reshape);
        let r = m.ops[0].results[0];
        retype(&mut m, r, TensorType::nchw(1, 8, 2, 2, DType::F32));
        assert_rejects(&m, "has 32 elements, operand tensor<1x4x2x8xf16> has 64");
        assert_rejects(&m, "result element type f32 differs");
        op0(&mut m).attrs.insert("shape".into(), ints(&[1]));
        assert_rejects(&m, "unknown attribute `shape`");
    }

    #[test]
    fn rejects_view_out_of_bounds() {
        let mut m = sample(OpCode::InputView);
        op0(&mut m).attrs.insert("offset".into(), Attr::Int(4));
        assert_rejects(&m, "view ends at channel index 8, operand extent is 8");
        op0(&mut m).attrs.remove("step");
        assert_rejects(&m, "missing attribute `step` (an integer)");
    }

    #[test]
    fn rejects_view_wrong_result_size() {
        let mut m = sample(OpCode::InputView);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 2, 4, 4));
        assert_rejects(&m, "result channel is 2, expected `size` = 3");
    }

    #[test]
    fn rejects_broadcast_from_non_unit_axis() {
        let mut m = sample(OpCode::Broadcast);
        let x = m.inputs[0].value;
        retype(&mut m, x, f16(1, 1, 4, 2));
        assert_rejects(&m, "broadcast axis width has extent 2 in the operand, not 1");
    }

    #[test]
    fn rejects_broadcast_length_mismatch_and_operands() {
        let mut m = sample(OpCode::Broadcast);
        op0(&mut m).attrs.insert("sizes".into(), ints(&[3]));
        assert_rejects(&m, "2 axes but 1 sizes");
        let x = m.inputs[0].value;
        op0(&mut m).operands.push(x);
        assert_rejects(&m, "expects 1 operands, got 2");
    }
}
