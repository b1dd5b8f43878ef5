//! `anec.conv`: convolution with constant weights.
//!
//! One operand `N x Cin x D x H x W`, one result `N x Cout x D x Ho x Wo`. Attributes:
//! `kernel = [kh, kw]`, `stride = [sy, sx]` (each >= 1), `pad = [top, bottom, left, right]`
//! (each >= 0), `groups` (>= 1, divides Cin), `weights` (`dense_resource` of type
//! `Cout x Cin/groups x kh x kw`, any element type), `kernel_group_reuse` (bool).
//! `Ho = (H + top + bottom - kh) / sy + 1`, likewise `Wo`.

use super::check::OpCx;
use crate::types::TensorType;

/// Verifies an `anec.conv`.
pub(super) fn verify_conv(cx: &mut OpCx<'_, '_>) {
    let names = ["kernel", "stride", "pad", "groups", "weights", "kernel_group_reuse"];
    cx.known_attrs(&names);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let kernel = cx.int_array("kernel", 2);
    let kernel = at_least(cx, "kernel", kernel, 1);
    let stride = cx.int_array("stride", 2);
    let stride = at_least(cx, "stride", stride, 1);
    let pad = cx.int_array("pad", 4);
    let pad = at_least(cx, "pad", pad, 0);
    let groups = cx.int("groups").and_then(|g| positive_groups(cx, g));
    let weights = cx.resource("weights", true);
    cx.bool("kernel_group_reuse");
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    if let (Some(g), Some(w)) = (groups, weights) {
        check_weights(cx, x, &out, g, &w, kernel.as_deref());
    }
    if let (Some(k), Some(s), Some(p)) = (kernel, stride, pad) {
        check_output_size(cx, x, &out, &k, &s, &p);
    }
}

/// Passes `v` through if every element is at least `min`, reporting otherwise.
pub(super) fn at_least(cx: &mut OpCx<'_, '_>, name: &str, v: Option<Vec<i64>>, min: i64) -> Option<Vec<i64>> {
    let v = v?;
    if v.iter().any(|&x| x < min) {
        cx.err(format!("`{name}` values must be >= {min}, got {v:?}"));
        return None;
    }
    Some(v)
}

/// Passes the group count through if positive.
fn positive_groups(cx: &mut OpCx<'_, '_>, g: i64) -> Option<u64> {
    if g < 1 {
        cx.err(format!("`groups` must be >= 1, got {g}"));
        return None;
    }
    u64::try_from(g).ok()
}

/// Checks channel counts and the weight tensor's shape.
fn check_weights(
    cx: &mut OpCx<'_, '_>,
    x: &TensorType,
    out: &TensorType,
    groups: u64,
    w: &TensorType,
    kernel: Option<&[i64]>,
) {
    let cin = u64::from(x.c);
    if cin % groups != 0 {
        cx.err(format!("input channels {cin} are not divisible by groups {groups}"));
    } else if u64::from(w.c) != cin / groups {
        cx.err(format!("weights dim 1 is {}, expected Cin/groups = {}", w.c, cin / groups));
    }
    if w.n != out.c {
        cx.err(format!("weights dim 0 is {}, but the result has {} channels", w.n, out.c));
    }
    if w.d != 1 {
        cx.err(format!("weights must be rank 4 (Cout x Cin/groups x Kh x Kw), got {w}"));
    }
    if let Some(&[kh, kw]) = kernel {
        if i64::from(w.h) != kh || i64::from(w.w) != kw {
            cx.err(format!("weights kernel is {}x{}, but `kernel` is [{kh}, {kw}]", w.h, w.w));
        }
    }
}

/// Checks batch, depth and the spatial output size.
pub(super) fn check_output_size(
    cx: &mut OpCx<'_, '_>,
    x: &TensorType,
    out: &TensorType,
    k: &[i64],
    s: &[i64],
    p: &[i64],
) {
    if out.n != x.n || out.d != x.d {
        cx.err(format!("result batch/depth {}/{} differ from operand {}/{}", out.n, out.d, x.n, x.d));
    }
    let (&[kh, kw], &[sy, sx], &[top, bottom, left, right]) = (k, s, p) else {
        return;
    };
    let expect_h = conv_out(i64::from(x.h), top + bottom, kh, sy);
    let expect_w = conv_out(i64::from(x.w), left + right, kw, sx);
    match (expect_h, expect_w) {
        (Some(h), Some(w)) if h == i64::from(out.h) && w == i64::from(out.w) => {}
        (Some(h), Some(w)) => {
            cx.err(format!("result height x width is {}x{}, expected {h}x{w} from input {}x{}", out.h, out.w, x.h, x.w))
        }
        _ => cx.err(format!("kernel {kh}x{kw} is larger than the padded input {}x{}", x.h, x.w)),
    }
}

/// `(input + pads - k) / stride + 1`, or `None` if the kernel does not fit.
fn conv_out(input: i64, pads: i64, k: i64, stride: i64) -> Option<i64> {
    let span = input.checked_add(pads)?.checked_sub(k)?;
    (span >= 0 && stride >= 1).then(|| span / stride + 1)
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;

    #[test]
    fn accepts_3x3_same_padding() {
        assert_valid(&sample(OpCode::Conv));
    }

    #[test]
    fn rejects_missing_stride() {
        let mut m = sample(OpCode::Conv);
        op0(&mut m).attrs.remove("stride");
        assert_rejects(&m, "anec.conv 'my_layer' at net.plist:10:7: missing attribute `stride`");
    }

    #[test]
    fn rejects_two_operands() {
        let mut m = sample(OpCode::Conv);
        let x = m.inputs[0].value;
        op0(&mut m).operands.push(x);
        assert_rejects(&m, "expects 1 operands, got 2");
    }

    #[test]
    fn rejects_wrong_output_size() {
        let mut m = sample(OpCode::Conv);
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 4, 7, 8));
        assert_rejects(&m, "expected 8x8");
    }

    #[test]
    fn rejects_wrong_kinds_and_ranges() {
        let mut m = sample(OpCode::Conv);
        op0(&mut m).attrs.insert("groups".into(), Attr::Int(2));
        op0(&mut m).attrs.insert("stride".into(), ints(&[0, 1]));
        op0(&mut m).attrs.insert("kernel_group_reuse".into(), Attr::Int(0));
        assert_rejects(&m, "not divisible by groups 2");
        assert_rejects(&m, "`stride` values must be >= 1");
        assert_rejects(&m, "`kernel_group_reuse` must be a bool, got integer 0");
    }

    #[test]
    fn rejects_bad_weights() {
        let mut m = sample(OpCode::Conv);
        let w = blob(&mut m, "my_layer.weights", f16(5, 3, 3, 3));
        op0(&mut m).attrs.insert("weights".into(), w);
        if let Some(b) = m.resources.get_mut("my_layer.weights") {
            b.bytes = b.bytes[..b.bytes.len() - 1].to_vec().into();
        }
        assert_rejects(&m, "weights dim 0 is 5, but the result has 4 channels");
        assert_rejects(&m, "holds 269 bytes, tensor<5x3x3x3xf16> needs 270");
    }
}
