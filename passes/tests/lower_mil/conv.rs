//! `conv`, `max_pool`, `avg_pool`.

use crate::common::*;

const W2: &str =
    "tensor<fp16, [2, 1, 3, 3]>([[[[1, 0, 0], [0, 1, 0], [0, 0, 1]]], [[[0, 0, 0], [0, 2, 0], [0, 0, 0]]]])";

#[test]
fn depthwise_conv_same_padding_with_bias() {
    let body = format!(
        "        tensor<fp16, [2, 1, 3, 3]> w = const()[name = string(\"w\"), val = {W2}];
        tensor<fp16, [2]> b = const()[name = string(\"b\"), val = tensor<fp16, [2]>([0.5, -1])];
        tensor<fp16, [1, 2, 5, 5]> y = conv(x = x, weight = w, bias = b, strides = tensor<int32, [2]>([1, 1]), pad_type = string(\"same\"), pad = tensor<int32, [4]>([0, 0, 0, 0]), dilations = tensor<int32, [2]>([1, 1]), groups = int32(2))[name = string(\"dw\")];
"
    );
    let text = program("tensor<fp16, [1, 2, 5, 5]> x", &body, "y");
    insta::assert_snapshot!(lower(&text));
}

#[test]
fn conv1d_runs_on_width_between_transposes() {
    let body = "        tensor<fp32, [3, 2, 2]> w = const()[val = tensor<fp32, [3, 2, 2]>([[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]])];
        tensor<fp32, [1, 3, 3]> y = conv(x = x, weight = w, strides = tensor<int32, [1]>([2]), pad_type = string(\"custom\"), pad = tensor<int32, [2]>([0, 1]))[name = string(\"c1\")];
";
    let text = program("tensor<fp32, [1, 2, 6]> x", body, "y");
    let out = lower(&text);
    assert!(out.contains("tensor<3x2x1x2xf32>"), "1-D kernel as 1 x K, f32 kept:\n{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn conv_errors_name_the_op_and_reason() {
    let body = format!(
        "        tensor<fp16, [2, 1, 3, 3]> w = const()[val = {W2}];
        tensor<fp16, [1, 2, 1, 1]> y = conv(x = x, weight = w, dilations = tensor<int32, [2]>([2, 2]), groups = int32(2))[name = string(\"dil\")];
        tensor<fp16, [1, 2, 3, 3]> z = conv(x = x, weight = k, groups = int32(1));
"
    );
    let text = program("tensor<fp16, [1, 2, 5, 5]> x, tensor<fp16, [2, 2, 3, 3]> k", &body, "y, z");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:6:9: cannot lower `conv` (result `z`): `weight` must be a compile-time constant");
    assert_eq!(errs.len(), 1, "{errs:?}");
}

/// A 3 x 3 kernel at dilation 2 runs as a 5 x 5 kernel with zeros between the taps.
#[test]
fn a_dilated_conv_spreads_its_kernel() {
    let body = format!(
        "        tensor<fp16, [2, 1, 3, 3]> w = const()[val = {W2}];
        tensor<fp16, [1, 2, 1, 1]> y = conv(x = x, weight = w, dilations = tensor<int32, [2]>([2, 2]), groups = int32(2))[name = string(\"dil\")];
"
    );
    let out = lower(&program("tensor<fp16, [1, 2, 5, 5]> x", &body, "y"));
    assert!(out.contains("kernel = [5, 5]") && out.contains("tensor<2x1x5x5xf16>"), "{out}");
}

#[test]
fn pools() {
    let body = "        tensor<fp16, [1, 3, 4, 4]> p = max_pool(x = x, kernel_sizes = tensor<int32, [2]>([3, 3]), strides = tensor<int32, [2]>([1, 1]), pad_type = string(\"same\"), ceil_mode = bool(false))[name = string(\"mp\")];
        tensor<fp16, [1, 3, 2, 2]> q = avg_pool(x = p, kernel_sizes = tensor<int32, [2]>([2, 2]), strides = tensor<int32, [2]>([2, 2]), pad_type = string(\"valid\"), exclude_padding_from_average = bool(true))[name = string(\"ap\")];
";
    let text = program("tensor<fp16, [1, 3, 4, 4]> x", body, "q");
    insta::assert_snapshot!(lower(&text));
}

#[test]
fn pool_ceil_mode_that_changes_the_size_is_an_error() {
    let body = "        tensor<fp16, [1, 3, 3, 3]> p = max_pool(x = x, kernel_sizes = tensor<int32, [2]>([2, 2]), strides = tensor<int32, [2]>([2, 2]), pad_type = string(\"valid\"), ceil_mode = bool(true));
";
    let text = program("tensor<fp16, [1, 3, 5, 5]> x", body, "p");
    assert_error(&errors(&text), "cannot lower `max_pool` (result `p`): `ceil_mode = true` changes the output extent");
}
