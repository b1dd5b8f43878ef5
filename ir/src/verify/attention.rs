//! Contraction and normalization ops: `anec.matmul`, `anec.sdpa`, `anec.layer_norm`.
//!
//! Matrix convention (the engine's, matching "output channel equals the left channel"):
//! an operand `N x C x D x H x W` holds, for each batch `n` and row `h`, a matrix with
//! **rows on C and columns on W**; N and H are batch axes that must agree, and depth is 1.
//! `matmul` computes `op(lhs) x op(rhs)` where `op` transposes (swaps C and W) when
//! `transpose_lhs` / `transpose_rhs` is set: `lhs` is `M x K`, `rhs` is `K x Ncol`, the
//! result `N x M x 1 x H x Ncol`.
//!
//! `sdpa` takes query `N x Sq x D x H x dk`, key and value `N x Sk x D x H x dk` (same
//! shape), a scale and an optional additive mask, both broadcastable to the scores
//! `N x Sq x D x H x Sk`; the result is `N x Sq x D x H x dk` (the sequence lives on C).
//!
//! `layer_norm` normalizes over `axes` with `epsilon` (>= 0) in `groups` channel groups
//! (C divisible by groups; groups > 1 needs depth 1); optional `gamma` and `beta` blobs
//! hold one value per element of the normalized axes. The result keeps the operand shape.

use super::check::{dims5, same_shape, OpCx, AXIS_NAMES};
use crate::types::TensorType;

/// Verifies an `anec.matmul`.
pub(super) fn verify_matmul(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["transpose_lhs", "transpose_rhs"]);
    let inputs = cx.operands(2, 2);
    let result = cx.result();
    let tl = cx.bool("transpose_lhs");
    let tr = cx.bool("transpose_rhs");
    let (Some(inputs), Some(out), Some(tl), Some(tr)) = (inputs, result, tl, tr) else {
        return;
    };
    let [a, b] = inputs.as_slice() else { return };
    for (side, t) in [("lhs", a), ("rhs", b), ("result", &out)] {
        if t.d != 1 {
            cx.err(format!("depth > 1 is not supported for matmul ({side} is {t})"));
        }
    }
    let (m, k1) = if tl { (a.w, a.c) } else { (a.c, a.w) };
    let (k2, ncol) = if tr { (b.w, b.c) } else { (b.c, b.w) };
    if k1 != k2 {
        cx.err(format!("contraction dims differ: lhs {a} gives {k1}, rhs {b} gives {k2}"));
    }
    if a.n != b.n || a.h != b.h {
        cx.err(format!("batch axes (N, H) differ between lhs {a} and rhs {b}"));
    }
    let want = TensorType { n: a.n, c: m, d: 1, h: a.h, w: ncol, dtype: out.dtype };
    if !same_shape(&want, &out) {
        cx.err(format!("result is {out}, expected {want}"));
    }
}

/// Verifies an `anec.sdpa`.
pub(super) fn verify_sdpa(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["subtract_max"]);
    let inputs = cx.operands(4, 5);
    let result = cx.result();
    cx.bool("subtract_max");
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let [q, k, v, scale, rest @ ..] = inputs.as_slice() else {
        return;
    };
    if !same_shape(k, v) {
        cx.err(format!("key {k} and value {v} must have the same shape"));
    }
    if q.w != k.w || q.n != k.n || q.d != k.d || q.h != k.h {
        cx.err(format!("query {q} does not contract against key {k} (N, D, H, W must agree)"));
    }
    let scores = [q.n, q.c, q.d, q.h, k.c];
    broadcastable(cx, "scale", scale, scores);
    if let Some(mask) = rest.first() {
        broadcastable(cx, "mask", mask, scores);
    }
    let want = TensorType { w: v.w, dtype: out.dtype, ..*q };
    if !same_shape(&want, &out) {
        cx.err(format!("result is {out}, expected {want}"));
    }
}

/// Reports `t` unless each of its dims is 1 or equals `target`'s.
fn broadcastable(cx: &mut OpCx<'_, '_>, what: &str, t: &TensorType, target: [u32; 5]) {
    let ok = dims5(t).iter().zip(target).all(|(&d, e)| d == 1 || d == e);
    if !ok {
        let [n, c, d, h, w] = target;
        cx.err(format!("{what} {t} does not broadcast to the scores {n}x{c}x{d}x{h}x{w}"));
    }
}

/// Verifies an `anec.layer_norm`.
pub(super) fn verify_layer_norm(cx: &mut OpCx<'_, '_>) {
    cx.known_attrs(&["axes", "epsilon", "groups", "gamma", "beta"]);
    let inputs = cx.operands(1, 1);
    let result = cx.result();
    let axes = cx.axes("axes");
    if let Some(eps) = cx.float("epsilon", true) {
        if !(eps >= 0.0 && eps.is_finite()) {
            cx.err(format!("`epsilon` must be finite and >= 0, got {eps}"));
        }
    }
    let groups = cx.int("groups");
    let gamma = cx.resource("gamma", false);
    let beta = cx.resource("beta", false);
    let (Some(inputs), Some(out)) = (inputs, result) else {
        return;
    };
    let Some(x) = inputs.first() else { return };
    if !same_shape(x, &out) {
        cx.err(format!("result {out} must have the operand's shape {x}"));
    }
    if let Some(g) = groups {
        check_groups(cx, x, g);
    }
    let Some(axes) = axes else { return };
    let count: u64 = axes.iter().map(|&a| u64::from(dims5(x)[a])).product();
    for (name, t) in [("gamma", gamma), ("beta", beta)] {
        if let Some(t) = t.filter(|t| t.elements() != count) {
            let list: Vec<&str> = axes.iter().map(|&a| AXIS_NAMES[a]).collect();
            let n = t.elements();
            cx.err(format!("`{name}` holds {n} values, the axes {list:?} span {count}"));
        }
    }
}

/// Checks the group count against the operand.
fn check_groups(cx: &mut OpCx<'_, '_>, x: &TensorType, g: i64) {
    if g < 1 {
        cx.err(format!("`groups` must be >= 1, got {g}"));
    } else if i64::from(x.c) % g != 0 {
        cx.err(format!("channels {} are not divisible by groups {g}", x.c));
    } else if g > 1 && x.d != 1 {
        cx.err(format!("grouped layer_norm does not support depth > 1 (operand {x})"));
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::opcode::OpCode;
    use crate::testutil::*;
    use crate::types::DType;

    #[test]
    fn accepts_matmul_plain_and_transposed() {
        let mut m = sample(OpCode::Matmul);
        assert_valid(&m);
        let b = m.inputs[1].value;
        retype(&mut m, b, t5([1, 6, 1, 2, 8], DType::F16));
        op0(&mut m).attrs.insert("transpose_rhs".into(), Attr::Bool(true));
        assert_valid(&m);
    }

    #[test]
    fn rejects_matmul_contraction_mismatch() {
        let mut m = sample(OpCode::Matmul);
        op0(&mut m).attrs.insert("transpose_lhs".into(), Attr::Bool(true));
        assert_rejects(&m, "contraction dims differ");
    }

    #[test]
    fn rejects_matmul_depth_and_missing_flag() {
        let mut m = sample(OpCode::Matmul);
        let a = m.inputs[0].value;
        retype(&mut m, a, t5([1, 4, 3, 2, 8], DType::F16));
        assert_rejects(&m, "depth > 1 is not supported for matmul (lhs");
        op0(&mut m).attrs.remove("transpose_rhs");
        assert_rejects(&m, "missing attribute `transpose_rhs` (a bool)");
    }

    #[test]
    fn accepts_sdpa_with_and_without_mask() {
        let mut m = sample(OpCode::Sdpa);
        assert_valid(&m);
        op0(&mut m).operands.pop();
        assert_valid(&m);
    }

    #[test]
    fn rejects_sdpa_three_operands() {
        let mut m = sample(OpCode::Sdpa);
        op0(&mut m).operands.truncate(3);
        assert_rejects(&m, "expects 4 to 5 operands, got 3");
    }

    #[test]
    fn rejects_sdpa_key_value_mismatch_and_bad_mask() {
        let mut m = sample(OpCode::Sdpa);
        let v = m.inputs[2].value;
        retype(&mut m, v, t5([1, 6, 1, 2, 16], DType::F16));
        let mask = m.inputs[4].value;
        retype(&mut m, mask, t5([1, 5, 1, 1, 3], DType::F16));
        assert_rejects(&m, "must have the same shape");
        assert_rejects(&m, "mask tensor<1x5x1x3xf16> does not broadcast");
    }

    #[test]
    fn rejects_sdpa_missing_subtract_max() {
        let mut m = sample(OpCode::Sdpa);
        op0(&mut m).attrs.clear();
        assert_rejects(&m, "anec.sdpa 'attn' at net.plist:10:7: missing attribute `subtract_max`");
    }

    #[test]
    fn accepts_grouped_layer_norm() {
        assert_valid(&sample(OpCode::LayerNorm));
    }

    #[test]
    fn rejects_layer_norm_groups() {
        let mut m = sample(OpCode::LayerNorm);
        op0(&mut m).attrs.insert("groups".into(), Attr::Int(3));
        assert_rejects(&m, "channels 8 are not divisible by groups 3");
    }

    #[test]
    fn rejects_layer_norm_depth_with_groups_and_gamma_size() {
        let mut m = sample(OpCode::LayerNorm);
        let x = m.inputs[0].value;
        let r = m.ops[0].results[0];
        retype(&mut m, x, t5([1, 8, 2, 2, 4], DType::F16));
        retype(&mut m, r, t5([1, 8, 2, 2, 4], DType::F16));
        assert_rejects(&m, "does not support depth > 1");
        op0(&mut m).attrs.insert("axes".into(), Attr::Array(vec![s("channel"), s("width")]));
        assert_rejects(&m, "`gamma` holds 8 values, the axes [\"channel\", \"width\"] span 32");
    }

    #[test]
    fn rejects_layer_norm_missing_epsilon_and_result_shape() {
        let mut m = sample(OpCode::LayerNorm);
        op0(&mut m).attrs.remove("epsilon");
        let r = m.ops[0].results[0];
        retype(&mut m, r, f16(1, 8, 2, 2));
        assert_rejects(&m, "missing attribute `epsilon` (a float)");
        assert_rejects(&m, "must have the operand's shape");
    }
}
