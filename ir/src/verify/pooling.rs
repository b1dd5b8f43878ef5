//! `anec.pooling`: max or average pooling over height and width.
//!
//! One operand `N x C x D x H x W`, one result `N x C x D x Ho x Wo`. Attributes:
//! `kind` (`"max"` or `"avg"`), `kernel = [kh, kw]`, `stride = [sy, sx]` (each >= 1),
//! `pad = [top, bottom, left, right]` (each >= 0), optional `exclude_padding` (bool, for
//! `avg`: divide by the number of real input elements in the window, not by kh * kw).
//! `Ho = (H + top + bottom - kh) / sy + 1`, likewise `Wo`; channels and element type are
//! kept.

use super::check::OpCx;
use super::conv::{at_least, check_output_size};

/// The pooling kinds.
pub const POOLING_KINDS: [&str; 2] = ["max", "avg"];

/// Verifies an `anec.pooling`.
pub(super) fn verify_pooling(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["kind", "kernel", "stride", "pad", "exclude_padding"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    if let Some(kind) = cx.string("kind") {
        if !POOLING_KINDS.contains(&kind) {
            cx.err(format!("`kind` must be one of {POOLING_KINDS:?}, got {kind:?}"));
        }
    }
    if cx.op.attr("exclude_padding").is_some() {
        cx.bool("exclude_padding");
    }
    let kernel = cx.int_array("kernel", 2);
    let kernel = at_least(cx, "kernel", kernel, 1);
    let stride = cx.int_array("stride", 2);
    let stride = at_least(cx, "stride", stride, 1);
    let pad = cx.int_array("pad", 4);
    let pad = at_least(cx, "pad", pad, 0);
    let (Some(inputs), Some(out)) = (inputs, result) else { return };
    let Some(x) = inputs.first() else { return };
    if out.c != x.c || out.dtype != x.dtype {
        cx.err(format!("result {out} must keep the operand's channels and element type ({x})"));
    }
    if let (Some(k), Some(s), Some(p)) = (kernel, stride, pad) {
        check_output_size(cx, x, &out, &k, &s, &p);
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;

    #[test]
    fn accepts_2x2_stride_2() {
        assert_valid(&sample(OpCode::Pooling));
    }

    #[test]
    fn rejects_unknown_kind_and_wrong_size() {
        let mut m = sample(OpCode::Pooling);
        op0(&mut m).attrs.insert("kind".into(), s("median"));
        op0(&mut m).attrs.insert("stride".into(), ints(&[1, 1]));
        op0(&mut m).attrs.insert("exclude_padding".into(), Attr::Int(1));
        assert_rejects(&m, "`kind` must be one of [\"max\", \"avg\"], got \"median\"");
        assert_rejects(&m, "expected 27x27");
        assert_rejects(&m, "`exclude_padding` must be a bool");
    }

    #[test]
    fn rejects_channel_change() {
        let mut m = sample(OpCode::Pooling);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 14, 14));
        assert_rejects(&m, "must keep the operand's channels");
    }
}
