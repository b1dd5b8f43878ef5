//! Agreement of `run_mil` and the lowering for the contraction, window and normalization
//! families: linear, matmul, conv, pooling, layer / batch / instance norm, softmax, sdpa.

use crate::common::*;

const TIGHT: f32 = 1e-5;

#[test]
fn linear_ranks_2_and_3() {
    let body = "        tensor<fp32, [3, 4]> w = const()[val = tensor<fp32, [3, 4]>([[1, -2, 0.5, 0], [0.25, 1, 1, -1], [2, 0, -1, 3]])];
        tensor<fp32, [3]> b = const()[val = tensor<fp32, [3]>([0.5, -1, 2])];
        tensor<fp32, [5, 3]> y = linear(x = x, weight = w, bias = b)[name = string(\"fc\")];
        tensor<fp32, [2, 5, 3]> z = linear(x = x3, weight = w)[name = string(\"fc3\")];
";
    assert_agree(&program("tensor<fp32, [5, 4]> x, tensor<fp32, [2, 5, 4]> x3", body, "y, z"), -2.0, 2.0, TIGHT);
}

#[test]
fn matmul_constant_and_runtime_operands() {
    let body = "        tensor<fp32, [4, 3]> w = const()[val = tensor<fp32, [4, 3]>([[1, 2, 3], [0, -1, 0.5], [2, 2, -2], [1, 0, 1]])];
        bool f = const()[val = bool(false)];
        bool t = const()[val = bool(true)];
        tensor<fp32, [2, 3]> c = matmul(x = a, y = w, transpose_x = f, transpose_y = f)[name = string(\"c\")];
        tensor<fp32, [4, 4]> d = matmul(x = a, y = a, transpose_x = t, transpose_y = f)[name = string(\"d\")];
        tensor<fp32, [2, 2]> e = matmul(x = a, y = a, transpose_x = f, transpose_y = t)[name = string(\"e\")];
        tensor<fp32, [2, 4, 4]> g = matmul(x = p, y = q, transpose_x = f, transpose_y = f)[name = string(\"g\")];
        tensor<fp32, [1, 2, 3, 3]> h = matmul(x = r, y = r, transpose_x = f, transpose_y = t)[name = string(\"h\")];
        tensor<fp32, [3, 2]> k = matmul(x = w, y = a, transpose_x = t, transpose_y = t)[name = string(\"k\")];
";
    let inputs =
        "tensor<fp32, [2, 4]> a, tensor<fp32, [2, 4, 5]> p, tensor<fp32, [2, 5, 4]> q, tensor<fp32, [1, 2, 3, 4]> r";
    assert_agree(&program(inputs, body, "c, d, e, g, h, k"), -2.0, 2.0, TIGHT);
}

#[test]
fn conv_padding_strides_groups_bias() {
    let body = "        tensor<fp32, [4, 1, 3, 3]> w = const()[val = tensor<fp32, [4, 1, 3, 3]>([[[[1, 0, -1], [2, 0, -2], [1, 0, -1]]], [[[0.5, 0.5, 0.5], [0, 1, 0], [-1, -1, -1]]], [[[0, 0, 0], [0, 1, 0], [0, 0, 0]]], [[[1, 1, 1], [1, -8, 1], [1, 1, 1]]]])];
        tensor<fp32, [4]> b = const()[val = tensor<fp32, [4]>([0.5, -0.5, 1, 0])];
        tensor<int32, [2]> s1 = const()[val = tensor<int32, [2]>([1, 1])];
        tensor<int32, [2]> s2 = const()[val = tensor<int32, [2]>([2, 2])];
        tensor<int32, [4]> p = const()[val = tensor<int32, [4]>([1, 0, 2, 1])];
        tensor<fp32, [1, 4, 7, 8]> a = conv(x = x, weight = w, bias = b, strides = s1, pad_type = string(\"same\"), groups = int32(2))[name = string(\"a\")];
        tensor<fp32, [1, 4, 4, 4]> c = conv(x = x, weight = w, strides = s2, pad_type = string(\"same_lower\"), groups = int32(2))[name = string(\"c\")];
        tensor<fp32, [1, 4, 6, 9]> d = conv(x = x, weight = w, strides = s1, pad_type = string(\"custom\"), pad = p, groups = int32(2))[name = string(\"d\")];
        tensor<fp32, [1, 4, 3, 3]> e = conv(x = x, weight = w, strides = s2, pad_type = string(\"valid\"), groups = int32(2))[name = string(\"e\")];
";
    assert_agree(&program("tensor<fp32, [1, 2, 7, 8]> x", body, "a, c, d, e"), -2.0, 2.0, TIGHT);
}

#[test]
fn conv_1d_and_fp16_weights() {
    let body = "        tensor<fp16, [3, 2, 3]> w = const()[val = tensor<fp16, [3, 2, 3]>([[[0.1, 0.2, 0.3], [1, -1, 0]], [[0.5, 0, -0.5], [2, 2, 2]], [[-1, 0, 1], [0.25, 0.25, 0.25]]])];
        tensor<int32, [1]> s = const()[val = tensor<int32, [1]>([2])];
        tensor<fp16, [1, 3, 5]> y = conv(x = x, weight = w, strides = s, pad_type = string(\"same\"))[name = string(\"c1\")];
";
    assert_agree(&program("tensor<fp16, [1, 2, 10]> x", body, "y"), -2.0, 2.0, TIGHT);
}

#[test]
fn pooling_kinds_and_padding() {
    let body = "        tensor<int32, [2]> k2 = const()[val = tensor<int32, [2]>([2, 2])];
        tensor<int32, [2]> k3 = const()[val = tensor<int32, [2]>([3, 3])];
        tensor<int32, [2]> s1 = const()[val = tensor<int32, [2]>([1, 1])];
        tensor<int32, [2]> s2 = const()[val = tensor<int32, [2]>([2, 2])];
        tensor<int32, [4]> p = const()[val = tensor<int32, [4]>([1, 1, 1, 1])];
        tensor<fp32, [1, 3, 3, 4]> a = max_pool(x = x, kernel_sizes = k2, strides = s2, pad_type = string(\"valid\"), ceil_mode = bool(false))[name = string(\"a\")];
        tensor<fp32, [1, 3, 4, 4]> b = avg_pool(x = x, kernel_sizes = k3, strides = s2, pad_type = string(\"custom\"), pad = p, exclude_padding_from_average = bool(true), ceil_mode = bool(false))[name = string(\"b\")];
        tensor<fp32, [1, 3, 4, 4]> c = avg_pool(x = x, kernel_sizes = k3, strides = s2, pad_type = string(\"custom\"), pad = p, exclude_padding_from_average = bool(false), ceil_mode = bool(false))[name = string(\"c\")];
        tensor<fp32, [1, 3, 7, 8]> d = max_pool(x = x, kernel_sizes = k3, strides = s1, pad_type = string(\"same\"), ceil_mode = bool(false))[name = string(\"d\")];
";
    assert_agree(&program("tensor<fp32, [1, 3, 7, 8]> x", body, "a, b, c, d"), -2.0, 2.0, TIGHT);
}

#[test]
fn norms() {
    let body = "        tensor<int32, [1]> last = const()[val = tensor<int32, [1]>([-1])];
        tensor<fp32, [6]> g = const()[val = tensor<fp32, [6]>([1, 2, 0.5, -1, 1, 3])];
        tensor<fp32, [6]> be = const()[val = tensor<fp32, [6]>([0, 1, -1, 0.5, 0, 2])];
        tensor<fp32, [2, 4, 6]> a = layer_norm(x = x, axes = last, gamma = g, beta = be, epsilon = fp32(1e-5))[name = string(\"a\")];
        tensor<int32, [3]> chw = const()[val = tensor<int32, [3]>([1, 2, 3])];
        tensor<fp32, [1, 3, 4, 5]> b = layer_norm(x = y, axes = chw, epsilon = fp32(1e-3))[name = string(\"b\")];
        tensor<fp32, [3]> m = const()[val = tensor<fp32, [3]>([0.5, -1, 0])];
        tensor<fp32, [3]> v = const()[val = tensor<fp32, [3]>([1, 4, 0.25])];
        tensor<fp32, [3]> g3 = const()[val = tensor<fp32, [3]>([2, 1, -1])];
        tensor<fp32, [3]> b3 = const()[val = tensor<fp32, [3]>([0, 0.5, 1])];
        tensor<fp32, [1, 3, 4, 5]> c = batch_norm(x = y, mean = m, variance = v, gamma = g3, beta = b3, epsilon = fp32(1e-5))[name = string(\"c\")];
        tensor<fp32, [1, 3, 4, 5]> d = instance_norm(x = y, gamma = g3, beta = b3, epsilon = fp32(1e-5))[name = string(\"d\")];
        tensor<fp32, [2, 3, 4]> e = batch_norm(x = z, mean = m, variance = v, epsilon = fp32(1e-5))[name = string(\"e\")];
        tensor<fp32, [2, 3, 4]> f = instance_norm(x = z, epsilon = fp32(1e-5))[name = string(\"f\")];
";
    let inputs = "tensor<fp32, [2, 4, 6]> x, tensor<fp32, [1, 3, 4, 5]> y, tensor<fp32, [2, 3, 4]> z";
    assert_agree(&program(inputs, body, "a, b, c, d, e, f"), -3.0, 3.0, 1e-4);
}

#[test]
fn softmax_on_each_axis() {
    let body = "        tensor<fp32, [2, 3, 4]> a = softmax(x = x, axis = int32(-1))[name = string(\"a\")];
        tensor<fp32, [2, 3, 4]> b = softmax(x = x, axis = int32(1))[name = string(\"b\")];
        tensor<fp32, [2, 3, 4]> c = softmax(x = x, axis = int32(0))[name = string(\"c\")];
        tensor<fp32, [1, 3, 2, 5]> d = softmax(x = y, axis = int32(1))[name = string(\"d\")];
";
    assert_agree(
        &program("tensor<fp32, [2, 3, 4]> x, tensor<fp32, [1, 3, 2, 5]> y", body, "a, b, c, d"),
        -4.0,
        4.0,
        TIGHT,
    );
}

#[test]
fn attention_ranks_3_and_4_with_masks() {
    let body = "        tensor<bool, [1, 1, 3, 3]> m = const()[val = tensor<bool, [1, 1, 3, 3]>([[[[true, false, false], [true, true, false], [true, true, true]]]])];
        tensor<fp32, [3, 3]> fm = const()[val = tensor<fp32, [3, 3]>([[0, -1, -2], [0.5, 0, -1], [1, 0.5, 0]])];
        tensor<fp32, [1, 2, 3, 4]> a = scaled_dot_product_attention(query = q, key = k, value = v, attn_mask = m)[name = string(\"a\")];
        tensor<fp32, [2, 3, 4]> b = scaled_dot_product_attention(query = r, key = r, value = r, attn_mask = fm)[name = string(\"b\")];
        tensor<fp32, [2, 3, 4]> c = scaled_dot_product_attention(query = r, key = s, value = s)[name = string(\"c\")];
";
    let inputs = "tensor<fp32, [1, 2, 3, 4]> q, tensor<fp32, [1, 2, 3, 4]> k, tensor<fp32, [1, 2, 3, 4]> v, tensor<fp32, [2, 3, 4]> r, tensor<fp32, [2, 3, 4]> s";
    // The lowering's boolean mask is additive -65504 (the fp16 limit), not -inf: after
    // the softmax the masked weights are e^-65504 = 0 in f32, so the results agree.
    assert_agree(&program(inputs, body, "a, b, c"), -2.0, 2.0, TIGHT);
}
