//! Reductions.

use crate::common::*;

#[test]
fn reductions_keep_or_drop_axes() {
    let body = "        tensor<fp16, [1, 4]> a = reduce_mean(x = x, axes = tensor<int32, [1]>([-1]), keep_dims = bool(false))[name = string(\"mean\")];
        tensor<fp16, [1, 1, 4, 1]> b = reduce_sum(x = y, axes = tensor<int32, [2]>([1, 3]), keep_dims = bool(true))[name = string(\"sum\")];
        tensor<fp16, [1, 4, 1]> c = reduce_l2_norm(x = x, axes = tensor<int32, [1]>([2]), keep_dims = bool(true))[name = string(\"l2\")];
        tensor<fp16, [4, 6]> d = reduce_max(x = x, axes = tensor<int32, [1]>([0]))[name = string(\"max\")];
";
    let text = program("tensor<fp16, [1, 4, 6]> x, tensor<fp16, [1, 3, 4, 5]> y", body, "a, b, c, d");
    let out = lower(&text);
    assert!(out.contains("kind = \"mean\"") && out.contains("axes = [\"channel\", \"width\"]"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn unsupported_reductions_are_errors() {
    // reduce_argmax / reduce_argmin lower to anec.global_arg_min_max (hidden.rs).
    let body =
        "        tensor<fp16, [1, 4]> a = reduce_prod(x = x, axes = tensor<int32, [1]>([-1]))[name = string(\"prod\")];
        tensor<fp16, [1, 4]> b = reduce_log_sum(x = x, axes = tensor<int32, [1]>([-1]))[name = string(\"ls\")];
";
    let text = program("tensor<fp16, [1, 4, 6]> x", body, "a, b");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `reduce_prod` (result `a`): `reduce_prod` has no engine form");
    assert_error(
        &errs,
        "test.mil:5:9: cannot lower `reduce_log_sum` (result `b`): `reduce_log_sum` has no engine form",
    );
}
