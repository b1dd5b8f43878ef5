//! `linear`, `matmul`, and the flatten-into-conv rewrite.

use crate::common::*;

const W32: &str = "tensor<fp16, [3, 2]>([[1, 2], [3, 4], [5, 6]])";

#[test]
fn linear_rank2_and_rank4_with_bias() {
    let body = format!(
        "        tensor<fp16, [3, 2]> w = const()[val = {W32}];
        tensor<fp16, [3]> b = const()[val = tensor<fp16, [3]>([1, 0, -1])];
        tensor<fp16, [4, 3]> y = linear(x = x, weight = w, bias = b)[name = string(\"fc\")];
        tensor<fp16, [1, 5, 4, 3]> z = linear(x = r, weight = w)[name = string(\"fc4\")];
"
    );
    let text = program("tensor<fp16, [4, 2]> x, tensor<fp16, [1, 5, 4, 2]> r", &body, "y, z");
    insta::assert_snapshot!(lower(&text));
}

#[test]
fn matmul_with_constant_operands() {
    let body = "        tensor<fp16, [2, 3]> k = const()[val = tensor<fp16, [2, 3]>([[1, 2, 3], [4, 5, 6]])];
        tensor<fp16, [1, 4, 3]> y = matmul(x = x, y = k, transpose_x = bool(false), transpose_y = bool(false))[name = string(\"right\")];
        tensor<fp16, [2, 4]> z = matmul(x = k, y = t, transpose_x = bool(false), transpose_y = bool(true))[name = string(\"left\")];
";
    let text = program("tensor<fp16, [1, 4, 2]> x, tensor<fp16, [4, 3]> t", body, "y, z");
    let out = lower(&text);
    // right: one 1x1 conv with Cout = 3 (weight rows = k^T).
    assert!(out.contains("tensor<3x2x1x1xf16>"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn matmul_of_runtime_operands() {
    let body = "        tensor<fp16, [2, 4, 5]> y = matmul(x = a, y = b, transpose_x = bool(false), transpose_y = bool(false))[name = string(\"mm3\")];
        tensor<fp16, [1, 2, 4, 4]> z = matmul(x = c, y = c, transpose_x = bool(false), transpose_y = bool(true))[name = string(\"mm4\")];
";
    let text =
        program("tensor<fp16, [2, 4, 3]> a, tensor<fp16, [2, 3, 5]> b, tensor<fp16, [1, 2, 4, 3]> c", body, "y, z");
    let out = lower(&text);
    // Ranks 3 and 4: channel <-> height on both operands and the result (rows on C).
    assert!(
        out.contains("\"anec.matmul\"(%3, %4)") && out.contains("(tensor<1x4x2x3xf16>, tensor<1x3x2x5xf16>)"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn flatten_then_matmul_is_one_conv() {
    let body = "        tensor<int32, [2]> s = const()[val = tensor<int32, [2]>([1, 8])];
        tensor<fp16, [1, 8]> f = reshape(x = x, shape = s)[name = string(\"flat\")];
        tensor<fp16, [8, 3]> w = const()[val = tensor<fp16, [8, 3]>([[1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0], [0, 4, 1]])];
        tensor<fp16, [1, 3]> y = matmul(x = f, y = w, transpose_x = bool(false), transpose_y = bool(false))[name = string(\"fc\")];
";
    let text = program("tensor<fp16, [1, 2, 2, 2]> x", body, "y");
    let out = lower(&text);
    // The flatten folds into the convolution; its three results then move from C to W
    // (the rank mapping's last axis), the only reshape.
    assert_eq!(out.matches("anec.reshape").count(), 1, "{out}");
    assert!(out.contains("kernel = [2, 2]") && out.contains("(tensor<1x3x1x1xf16>) -> tensor<1x1x1x3xf16>"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn flatten_with_a_second_reader_stays_a_reshape() {
    let body = "        tensor<fp16, [1, 8]> f = reshape(x = x, shape = tensor<int32, [2]>([1, 8]));
        tensor<fp16, [8, 3]> w = const()[val = tensor<fp16, [8, 3]>([[1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0], [0, 4, 1]])];
        tensor<fp16, [1, 3]> y = matmul(x = f, y = w);
";
    let text = program("tensor<fp16, [1, 2, 2, 2]> x", body, "y, f");
    let out = lower(&text);
    assert!(out.contains("anec.reshape") && out.contains("kernel = [1, 1]"), "{out}");
}

#[test]
fn batched_constant_operand_is_a_runtime_matmul() {
    let body = "        tensor<fp16, [2, 3, 1]> k = const()[val = tensor<fp16, [2, 3, 1]>([[[1], [2], [3]], [[4], [5], [6]]])];
        tensor<fp16, [2, 4, 1]> y = matmul(x = a, y = k)[name = string(\"batched\")];
";
    let text = program("tensor<fp16, [2, 4, 3]> a", body, "y");
    let out = lower(&text);
    assert!(out.contains("\"anec.constant\"()") && out.contains("\"anec.matmul\"(%2, %3)"), "{out}");
}

#[test]
fn linear_errors() {
    let body = "        tensor<fp16, [2, 4, 4]> z = linear(x = a, weight = w)[name = string(\"dyn\")];
        tensor<fp16, [2, 4, 4]> u = relu(x = z);
        tensor<fp16, [2, 4, 3]> v = matmul(x = a, y = tensor<fp16, [2, 3]>([[1, 2, 3], [4, 5, 6]]))[name = string(\"inner\")];
";
    let text = program("tensor<fp16, [2, 4, 3]> a, tensor<fp16, [4, 3]> w", body, "u, v");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `linear` (result `z`): `weight` must be a compile-time constant");
    assert_error(
        &errs,
        "test.mil:6:9: cannot lower `matmul` (result `v`): the inner dimensions differ: [2, 4, 3] and [2, 3]",
    );
    assert_eq!(errs.len(), 2, "the relu reading the failed linear is not reported again: {errs:?}");
}

#[test]
fn linear_over_a_rank_5_input_is_rejected_in_the_validator_s_words() {
    let body = "        tensor<fp16, [1, 2, 2, 2, 3]> z = linear(x = a, weight = tensor<fp16, [3, 3]>([[1, 0, 0], [0, 1, 0], [0, 0, 1]]));
";
    let text = program("tensor<fp16, [1, 2, 2, 2, 3]> a", body, "z");
    let errs = errors(&text);
    assert_error(
        &errs,
        "cannot lower `linear` (result `z`): Linear layer must have only one single input. (input rank 5",
    );
    let ok = program("tensor<fp16, [2, 2, 2, 3]> a", &body.replace("[1, 2, 2, 2, 3]", "[2, 2, 2, 3]"), "z");
    assert!(lower(&ok).contains("\"anec.conv\""), "rank 4 is accepted");
}

/// A scalar `mul` feeding a `linear` runs after the transpose of its input (Apple's
/// `chain_pair_mul_mm`: the scale on x^T between the preparation task and the
/// convolution); with a second reader, `x * s` stays as well.
#[test]
fn a_scale_before_a_linear_runs_after_its_input_transpose() {
    let body = format!(
        "        tensor<fp16, [4, 2]> s = mul(x = x, y = tensor<fp16, []>(0.5));
        tensor<fp16, [3, 2]> w = const()[val = {W32}];
        tensor<fp16, [4, 3]> y = linear(x = s, weight = w)[name = string(\"fc\")];
"
    );
    let out = lower(&program("tensor<fp16, [4, 2]> x", &body, "y"));
    let at = |what: &str| out.find(what).unwrap_or_else(|| panic!("no {what} in {out}"));
    assert!(at("anec.transpose") < at("anec.gain_offset_control"), "{out}");
    assert_eq!(out.matches("anec.gain_offset_control").count(), 1, "{out}");
    let out = lower(&program("tensor<fp16, [4, 2]> x", &body, "y, s"));
    assert_eq!(out.matches("anec.gain_offset_control").count(), 2, "{out}");
}
