//! `anec.transpose`: a permutation of the five axes.
//!
//! `perm` is an array of the five distinct axis names; result axis `i` is operand axis
//! `perm[i]`, so the result's extents are the operand's permuted and its elements are the
//! operand's moved accordingly. The element type is kept.

use super::check::{dims5, OpCx, AXIS_NAMES};

/// Verifies an `anec.transpose`.
pub(super) fn verify_transpose(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["perm"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let perm = cx.axes("perm");
    let perm = perm.filter(|p| {
        let full = p.len() == 5;
        if !full {
            cx.err(format!("`perm` must name all five axes, got {}", p.len()));
        }
        full
    });
    let (Some(inputs), Some(out), Some(perm)) = (inputs, result, perm) else { return };
    let Some(x) = inputs.first() else { return };
    if out.dtype != x.dtype {
        cx.err(format!("result element type {} differs from the operand's {}", out.dtype, x.dtype));
    }
    let (dx, dout) = (dims5(x), dims5(&out));
    for (i, &from) in perm.iter().enumerate() {
        if dout[i] != dx[from] {
            let (to_name, from_name) = (AXIS_NAMES[i], AXIS_NAMES[from]);
            cx.err(format!("result {to_name} is {}, expected the operand's {from_name} ({})", dout[i], dx[from]));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;

    #[test]
    fn accepts_channel_width_swap() {
        assert_valid(&sample(OpCode::Transpose));
    }

    #[test]
    fn rejects_wrong_result_extent() {
        let mut m = sample(OpCode::Transpose);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 2, 3));
        assert_rejects(&m, "result channel is 4, expected the operand's width (3)");
    }

    #[test]
    fn rejects_partial_or_repeated_perm() {
        let mut m = sample(OpCode::Transpose);
        op0(&mut m).attrs.insert("perm".into(), Attr::Array(vec![s("batch"), s("width")]));
        assert_rejects(&m, "`perm` must name all five axes, got 2");
        let twice = ["batch", "batch", "depth", "height", "width"].map(s).to_vec();
        op0(&mut m).attrs.insert("perm".into(), Attr::Array(twice));
        assert_rejects(&m, "`perm` must be a non-empty array of distinct axis names");
    }
}
