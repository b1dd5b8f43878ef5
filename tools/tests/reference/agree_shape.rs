//! Agreement of `run_mil` and the lowering for shape ops (reshape across the rank mapping,
//! transpose, concat, split, slices, expand / squeeze, cast, identity) and for weights
//! given through the `constexpr_*` decompression ops.

use crate::common::*;

const TIGHT: f32 = 1e-6;

#[test]
fn reshapes_across_ranks() {
    let body = "        tensor<int32, [2]> s2 = const()[val = tensor<int32, [2]>([6, 4])];
        tensor<int32, [3]> s3 = const()[val = tensor<int32, [3]>([4, 2, 3])];
        tensor<int32, [4]> s4 = const()[val = tensor<int32, [4]>([1, 2, 3, 4])];
        tensor<int32, [1]> s1 = const()[val = tensor<int32, [1]>([-1])];
        tensor<fp32, [6, 4]> a = reshape(x = x, shape = s2)[name = string(\"a\")];
        tensor<fp32, [4, 2, 3]> b = reshape(x = x, shape = s3)[name = string(\"b\")];
        tensor<fp32, [1, 2, 3, 4]> c = reshape(x = x, shape = s4)[name = string(\"c\")];
        tensor<fp32, [24]> d = reshape(x = x, shape = s1)[name = string(\"d\")];
        tensor<int32, [2]> ax = const()[val = tensor<int32, [2]>([0, 3])];
        tensor<fp32, [1, 2, 3, 1, 4]> e = expand_dims(x = x, axes = ax)[name = string(\"e\")];
        tensor<fp32, [2, 3, 4]> f = squeeze(x = c)[name = string(\"f\")];
        tensor<fp32, [2, 3, 4]> g = identity(x = x)[name = string(\"g\")];
        tensor<fp32, [2, 3, 4]> h = cast(x = x, dtype = string(\"fp16\"))[name = string(\"h\")];
";
    assert_agree(&program("tensor<fp32, [2, 3, 4]> x", body, "a, b, c, d, e, f, g, h"), -3.0, 3.0, TIGHT);
}

#[test]
fn transposes() {
    let body = "        tensor<int32, [3]> p3 = const()[val = tensor<int32, [3]>([2, 0, 1])];
        tensor<int32, [2]> p2 = const()[val = tensor<int32, [2]>([1, 0])];
        tensor<int32, [4]> p4 = const()[val = tensor<int32, [4]>([0, 2, 3, 1])];
        tensor<fp32, [4, 2, 3]> a = transpose(x = x, perm = p3)[name = string(\"a\")];
        tensor<fp32, [5, 3]> b = transpose(x = y, perm = p2)[name = string(\"b\")];
        tensor<fp32, [1, 4, 5, 3]> c = transpose(x = z, perm = p4)[name = string(\"c\")];
";
    let inputs = "tensor<fp32, [2, 3, 4]> x, tensor<fp32, [3, 5]> y, tensor<fp32, [1, 3, 4, 5]> z";
    assert_agree(&program(inputs, body, "a, b, c"), -3.0, 3.0, TIGHT);
}

#[test]
fn concat_split_and_slices() {
    let body = "        tensor<fp32, [2, 3, 7]> a = concat(values = (x, y), axis = int32(-1), interleave = bool(false))[name = string(\"a\")];
        tensor<fp32, [4, 3, 4]> b = concat(values = (x, x), axis = int32(0), interleave = bool(false))[name = string(\"b\")];
        tensor<int32, [2]> sizes = const()[val = tensor<int32, [2]>([1, 3])];
        tensor<fp32, [2, 3, 1]> s0, tensor<fp32, [2, 3, 3]> s1 = split(x = x, split_sizes = sizes, axis = int32(2))[name = string(\"s\")];
        tensor<fp32, [2, 1, 4]> t0, tensor<fp32, [2, 1, 4]> t1, tensor<fp32, [2, 1, 4]> t2 = split(x = x, num_splits = int32(3), axis = int32(1))[name = string(\"t\")];
        tensor<int32, [3]> b0 = const()[val = tensor<int32, [3]>([0, 1, 1])];
        tensor<int32, [3]> e0 = const()[val = tensor<int32, [3]>([2, 3, 4])];
        tensor<int32, [3]> st = const()[val = tensor<int32, [3]>([1, 1, 2])];
        tensor<fp32, [2, 2, 2]> c = slice_by_index(x = x, begin = b0, end = e0, stride = st)[name = string(\"c\")];
        tensor<bool, [3]> sq = const()[val = tensor<bool, [3]>([false, true, false])];
        tensor<bool, [3]> em = const()[val = tensor<bool, [3]>([false, false, true])];
        tensor<fp32, [2, 3]> d = slice_by_index(x = x, begin = b0, end = e0, end_mask = em, squeeze_mask = sq)[name = string(\"d\")];
        tensor<int32, [3]> sb = const()[val = tensor<int32, [3]>([1, 0, 2])];
        tensor<int32, [3]> ss = const()[val = tensor<int32, [3]>([1, -1, 2])];
        tensor<fp32, [1, 3, 2]> e = slice_by_size(x = x, begin = sb, size = ss)[name = string(\"e\")];
";
    let inputs = "tensor<fp32, [2, 3, 4]> x, tensor<fp32, [2, 3, 3]> y";
    assert_agree(&program(inputs, body, "a, b, s0, s1, t0, t1, t2, c, d, e"), -3.0, 3.0, TIGHT);
}

#[test]
fn rank4_shape_ops() {
    let body = "        tensor<fp32, [1, 5, 4, 5]> a = concat(values = (x, y), axis = int32(1), interleave = bool(false))[name = string(\"a\")];
        tensor<int32, [4]> b0 = const()[val = tensor<int32, [4]>([0, 1, 1, 0])];
        tensor<int32, [4]> e0 = const()[val = tensor<int32, [4]>([1, 3, 4, 5])];
        tensor<int32, [4]> st = const()[val = tensor<int32, [4]>([1, 1, 2, 2])];
        tensor<fp32, [1, 2, 2, 3]> c = slice_by_index(x = x, begin = b0, end = e0, stride = st)[name = string(\"c\")];
        tensor<int32, [2]> s = const()[val = tensor<int32, [2]>([1, 60])];
        tensor<fp32, [1, 60]> f = reshape(x = x, shape = s)[name = string(\"f\")];
";
    let inputs = "tensor<fp32, [1, 3, 4, 5]> x, tensor<fp32, [1, 2, 4, 5]> y";
    assert_agree(&program(inputs, body, "a, c, f"), -3.0, 3.0, TIGHT);
}

#[test]
fn compressed_weights_feed_a_linear_layer() {
    // Each constexpr gives a 3 x 4 weight; the linear layers read them.
    let body = "        tensor<fp16, [3, 4]> w1 = constexpr_affine_dequantize(quantized_data = tensor<uint8, [3, 4]>([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]), zero_point = uint8(4), scale = tensor<fp16, [3]>([0.5, 0.25, -1]), axis = int32(0))[name = string(\"w1\")];
        tensor<fp16, [3, 4]> w2 = constexpr_lut_to_dense(indices = tensor<uint8, [3]>([228, 27, 177]), lut = tensor<fp16, [4]>([-1, 0.5, 2, 3]), shape = tensor<uint32, [2]>([3, 4]))[name = string(\"w2\")];
        tensor<fp16, [3, 4]> w3 = constexpr_sparse_to_dense(nonzero_data = tensor<fp16, [5]>([1, 2, 3, 4, 5]), mask = tensor<uint8, [2]>([37, 10]), shape = tensor<uint32, [2]>([3, 4]))[name = string(\"w3\")];
        tensor<fp16, [3, 4]> w4 = constexpr_blockwise_shift_scale(data = tensor<int8, [3, 4]>([[1, 2, 3, 4], [-1, -2, -3, -4], [0, 5, 0, 5]]), scale = tensor<fp16, [3, 2]>([[1, 0.5], [2, 0.25], [-1, 1]]), offset = tensor<int8, [3, 2]>([[0, 1], [1, 0], [0, 0]]))[name = string(\"w4\")];
        tensor<fp32, [3, 4]> w5 = constexpr_cast(source_val = tensor<fp16, [3, 4]>([[1, 2, 3, 4], [0.5, 0.25, 0.125, 1], [-1, -2, -3, -4]]), output_dtype = string(\"fp32\"))[name = string(\"w5\")];
        tensor<fp16, [3, 4]> w6 = constexpr_lut_to_dense(indices = tensor<uint2, [3, 4]>([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 2, 2]]), lut = tensor<fp16, [3, 1, 4, 1]>([[[[1], [2], [3], [4]]], [[[-1], [-2], [-3], [-4]]], [[[0.5], [1.5], [2.5], [3.5]]]]))[name = string(\"w6\")];
        tensor<fp32, [5, 3]> y1 = linear(x = x, weight = w1)[name = string(\"y1\")];
        tensor<fp32, [5, 3]> y2 = linear(x = x, weight = w2)[name = string(\"y2\")];
        tensor<fp32, [5, 3]> y3 = linear(x = x, weight = w3)[name = string(\"y3\")];
        tensor<fp32, [5, 3]> y4 = linear(x = x, weight = w4)[name = string(\"y4\")];
        tensor<fp32, [5, 3]> y5 = linear(x = x, weight = w5)[name = string(\"y5\")];
        tensor<fp32, [5, 3]> y6 = linear(x = x, weight = w6)[name = string(\"y6\")];
";
    assert_agree(&program("tensor<fp32, [5, 4]> x", body, "y1, y2, y3, y4, y5, y6"), -2.0, 2.0, 1e-5);
}
