//! `scaled_dot_product_attention`.

use crate::common::*;

#[test]
fn sdpa_rank4_with_a_boolean_mask_and_rank3() {
    let body = "        tensor<bool, [1, 1, 3, 3]> m = const()[val = tensor<bool, [1, 1, 3, 3]>([[[[true, false, false], [true, true, false], [true, true, true]]]])];
        tensor<fp16, [1, 2, 3, 4]> a = scaled_dot_product_attention(query = q, key = q, value = q, attn_mask = m)[name = string(\"attn\")];
        tensor<fp16, [1, 3, 4]> b = scaled_dot_product_attention(query = r, key = r, value = r)[name = string(\"attn3\")];
";
    let text = program("tensor<fp16, [1, 2, 3, 4]> q, tensor<fp16, [1, 3, 4]> r", body, "a, b");
    let out = lower(&text);
    // The scale 1/sqrt(4) = 0.5 (f16 0x3800); the mask additive: 0 or -65504 (0xFBFF).
    assert!(out.contains("\"attn_tmp_0.value\": \"0x020000000038\""), "{out}");
    assert!(out.contains("0000FFFBFFFB"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn sdpa_errors() {
    let body = "        tensor<fp16, [1, 2, 3, 4]> a = scaled_dot_product_attention(query = q, key = q, value = v)[name = string(\"attn\")];
        tensor<fp16, [2, 3, 4, 5, 6]> b = scaled_dot_product_attention(query = w, key = w, value = w)[name = string(\"attn5\")];
";
    let text = program(
        "tensor<fp16, [1, 2, 3, 4]> q, tensor<fp16, [1, 2, 3, 8]> v, tensor<fp16, [2, 3, 4, 5, 6]> w",
        body,
        "a, b",
    );
    let errs = errors(&text);
    assert_error(&errs, "cannot lower `scaled_dot_product_attention` (result `a`): key [1, 2, 3, 4] and value [1, 2, 3, 8] must have one shape");
    assert_error(&errs, "cannot lower `scaled_dot_product_attention` (result `b`): rank-5 operands are not supported");
}
