//! `add`, `sub`, `mul`, `real_div`, `maximum`, `minimum`, `pow`.

use crate::common::*;

#[test]
fn runtime_operands_same_shape_and_broadcast() {
    let body = "        tensor<fp16, [1, 4, 2, 3]> s = add(x = a, y = a)[name = string(\"same\")];
        tensor<fp16, [1, 4, 2, 3]> b = sub(x = s, y = c)[name = string(\"bcast\")];
        tensor<fp16, [1, 4, 2, 3]> d = real_div(x = b, y = a)[name = string(\"div\")];
        tensor<fp16, [1, 4, 2, 3]> m = maximum(x = d, y = c)[name = string(\"max\")];
";
    let text = program("tensor<fp16, [1, 4, 2, 3]> a, tensor<fp16, [4, 1, 1]> c", body, "m");
    let out = lower(&text);
    assert!(out.contains("axes = [\"height\", \"width\"]") && out.contains("sizes = [2, 3]"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn scalar_and_per_channel_constants() {
    let body = "        tensor<fp16, [1, 3, 2, 2]> a = add(x = x, y = fp16(0.5))[name = string(\"add_s\")];
        tensor<fp16, [1, 3, 2, 2]> b = sub(x = fp16(1), y = a)[name = string(\"rsub_s\")];
        tensor<fp16, [1, 3, 2, 2]> c = real_div(x = b, y = fp16(4))[name = string(\"div_s\")];
        tensor<fp16, [3, 1, 1]> k = const()[val = tensor<fp16, [3, 1, 1]>([[[1]], [[2]], [[4]]])];
        tensor<fp16, [1, 3, 2, 2]> d = mul(x = c, y = k)[name = string(\"mul_c\")];
        tensor<fp16, [1, 3, 2, 2]> e = real_div(x = d, y = k)[name = string(\"div_c\")];
        tensor<fp16, [1, 3, 2, 2]> f = real_div(x = fp16(2), y = e)[name = string(\"rdiv_s\")];
        tensor<fp16, [1, 3, 2, 2]> g = maximum(x = f, y = fp16(0))[name = string(\"relu\")];
        tensor<fp16, [1, 3, 2, 2]> h = minimum(x = g, y = fp16(6))[name = string(\"min6\")];
";
    let text = program("tensor<fp32, [1, 3, 2, 2]> x", body, "h");
    insta::assert_snapshot!(lower(&text));
}

#[test]
fn powers() {
    let body = "        tensor<fp16, [2, 3]> a = pow(x = x, y = fp16(2))[name = string(\"sq\")];
        tensor<fp16, [2, 3]> b = pow(x = a, y = fp16(-0.5))[name = string(\"rs\")];
        tensor<fp16, [2, 3]> c = pow(x = fp16(2), y = b)[name = string(\"e2\")];
        tensor<fp16, [2, 3]> d = pow(x = fp16(10), y = c)[name = string(\"e10\")];
";
    let text = program("tensor<fp16, [2, 3]> x", body, "d");
    let out = lower(&text);
    // x^2 is x * x (exact), x^-0.5 the rsqrt table.
    assert!(out.contains("kind = \"mul\"") && out.contains("mode = \"rsqrt\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn general_constant_becomes_an_anec_constant() {
    let body =
        "        tensor<fp16, [1, 1, 2, 2]> k = const()[val = tensor<fp16, [1, 1, 2, 2]>([[[[0, -1], [-2, -3]]]])];
        tensor<fp16, [1, 2, 2, 2]> y = add(x = x, y = k)[name = string(\"mask\")];
";
    let text = program("tensor<fp16, [1, 2, 2, 2]> x", body, "y");
    let out = lower(&text);
    assert!(out.contains("\"anec.constant\"()") && out.contains("\"anec.broadcast\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn elementwise_errors() {
    let body = "        tensor<fp16, [2, 3]> a = pow(x = x, y = fp16(3))[name = string(\"cube\")];
        tensor<fp16, [2, 3]> b = pow(x = x, y = x)[name = string(\"dyn\")];
        tensor<fp16, [2, 3]> c = add(x = x, y = z)[name = string(\"mismatch\")];
";
    let text = program("tensor<fp16, [2, 3]> x, tensor<fp16, [2, 2]> z", body, "a, b, c");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `pow` (result `a`): `pow` with exponent 3 is not supported");
    assert_error(
        &errs,
        "test.mil:5:9: cannot lower `pow` (result `b`): `pow` with a runtime exponent is not supported",
    );
    assert_error(&errs, "test.mil:6:9: cannot lower `add` (result `c`): shapes [2, 3] and [2, 2] do not broadcast");
}
