//! `run_mil` on hand-computed cases, including what the lowering does not support
//! (dilations, negative strides, ceil-mode pooling, interleaved concat, argmax), and its
//! errors.

use crate::common::*;
use anec_tools::reference::{run_mil, RefError};
use anec_tools::Tensor;
use std::collections::BTreeMap;

#[test]
fn constexpr_values() {
    // affine: (q - 4) * scale[row]: row 0 [0..3] * 0.5, row 1 [0..3] * 0.25.
    // lut iOS16: bytes 228 = 0b11_10_01_00 -> indices 0 1 2 3; 27 = 0b00_01_10_11 -> 3 2 1 0.
    // sparse iOS16: mask bytes 5 = 0b101 -> elements 0 and 2 set; 2 -> element 9 set.
    let body = "        tensor<fp16, [2, 4]> a = constexpr_affine_dequantize(quantized_data = tensor<uint8, [2, 4]>([[4, 5, 6, 7], [4, 5, 6, 7]]), zero_point = uint8(4), scale = tensor<fp16, [2]>([0.5, 0.25]), axis = int32(0))[name = string(\"a\")];
        tensor<fp16, [2, 4]> l = constexpr_lut_to_dense(indices = tensor<uint8, [2]>([228, 27]), lut = tensor<fp16, [4]>([10, 20, 30, 40]), shape = tensor<uint32, [2]>([2, 4]))[name = string(\"l\")];
        tensor<fp16, [2, 5]> s = constexpr_sparse_to_dense(nonzero_data = tensor<fp16, [3]>([1, 2, 3]), mask = tensor<uint8, [2]>([5, 2]), shape = tensor<uint32, [2]>([2, 5]))[name = string(\"s\")];
        tensor<fp16, [2, 4]> b = constexpr_blockwise_shift_scale(data = tensor<int4, [2, 4]>([[1, 2, -1, -2], [3, 4, 5, 6]]), scale = tensor<fp16, [1, 2]>([[2, 0.5]]), offset = tensor<int4, [1, 2]>([[1, 0]]))[name = string(\"b\")];
        tensor<fp16, [2, 4]> ya = add(x = x, y = a)[name = string(\"ya\")];
        tensor<fp16, [2, 4]> yl = add(x = x, y = l)[name = string(\"yl\")];
        tensor<fp16, [2, 5]> ys = add(x = z, y = s)[name = string(\"ys\")];
        tensor<fp16, [2, 4]> yb = add(x = x, y = b)[name = string(\"yb\")];
";
    let text = program("tensor<fp16, [2, 4]> x, tensor<fp16, [2, 5]> z", body, "ya, yl, ys, yb");
    let zeros8 = [0.0f32; 8];
    let zeros10 = [0.0f32; 10];
    let ins: [(&str, &[usize], &[f32]); 2] = [("x", &[2, 4], &zeros8), ("z", &[2, 5], &zeros10)];
    assert_eq!(mil(&text, &ins, "ya").data, vec![0., 0.5, 1., 1.5, 0., 0.25, 0.5, 0.75]);
    assert_eq!(mil(&text, &ins, "yl").data, vec![10., 20., 30., 40., 40., 30., 20., 10.]);
    assert_eq!(mil(&text, &ins, "ys").data, vec![1., 0., 2., 0., 0., 0., 0., 0., 0., 3.]);
    // Blocks of 2 columns: (d - 1) * 2 for columns 0-1, (d - 0) * 0.5 for columns 2-3.
    assert_eq!(mil(&text, &ins, "yb").data, vec![0., 2., -0.5, -1., 4., 6., 2.5, 3.]);
}

#[test]
fn fp16_literals_are_rounded_and_arithmetic_is_not() {
    // 0.1 as fp16 is 0.0999755859375 = 1638 / 2^14; x * 3 = 4914 / 2^14 needs 12
    // significant bits, more than fp16 has: the product is not rounded to fp16.
    let body = "        tensor<fp16, [1]> y = mul(x = x, y = fp16(0.1))[name = string(\"y\")];\n";
    let y = mil(&program("tensor<fp16, [1]> x", body, "y"), &[("x", &[1], &[3.0])], "y");
    assert_eq!(y.data, vec![3.0 * (1638.0 / 16384.0)]);
}

#[test]
fn dilated_conv_and_negative_slices() {
    let body = "        tensor<fp32, [1, 1, 2]> w = const()[val = tensor<fp32, [1, 1, 2]>([[[1, 10]]])];
        tensor<int32, [1]> d = const()[val = tensor<int32, [1]>([2])];
        tensor<fp32, [1, 1, 3]> c = conv(x = x, weight = w, dilations = d, pad_type = string(\"valid\"))[name = string(\"c\")];
        tensor<int32, [3]> b = const()[val = tensor<int32, [3]>([0, 0, -1])];
        tensor<int32, [3]> e = const()[val = tensor<int32, [3]>([1, 1, 0])];
        tensor<int32, [3]> s = const()[val = tensor<int32, [3]>([1, 1, -2])];
        tensor<fp32, [1, 1, 2]> r = slice_by_index(x = x, begin = b, end = e, stride = s)[name = string(\"r\")];
";
    let text = program("tensor<fp32, [1, 1, 5]> x", body, "c, r");
    let ins: [(&str, &[usize], &[f32]); 1] = [("x", &[1, 1, 5], &[1., 2., 3., 4., 5.])];
    // c[i] = x[i] + 10 x[i + 2].
    assert_eq!(mil(&text, &ins, "c").data, vec![31., 42., 53.]);
    // x[..., -1:0:-2] = [5, 3].
    assert_eq!(mil(&text, &ins, "r").data, vec![5., 3.]);
}

#[test]
fn ceil_mode_pooling_interleave_argmax_and_vector_matmul() {
    let body = "        tensor<int32, [1]> k = const()[val = tensor<int32, [1]>([2])];
        tensor<fp32, [1, 1, 3]> p = max_pool(x = x, kernel_sizes = k, strides = k, pad_type = string(\"valid\"), ceil_mode = bool(true))[name = string(\"p\")];
        tensor<fp32, [1, 2, 5]> i = concat(values = (x, y), axis = int32(1), interleave = bool(true))[name = string(\"i\")];
        tensor<int32, [1, 1]> a = reduce_argmax(x = x, axis = int32(-1), keep_dims = bool(false))[name = string(\"a\")];
        tensor<fp32, [5]> v = const()[val = tensor<fp32, [5]>([1, 0, 0, 0, 1])];
        tensor<fp32, [1, 1]> m = matmul(x = x, y = v)[name = string(\"m\")];
";
    let text = program("tensor<fp32, [1, 1, 5]> x, tensor<fp32, [1, 1, 5]> y", body, "p, i, a, m");
    let x = [3., 1., 4., 1., 5.];
    let y = [9., 2., 6., 5., 3.];
    let ins: [(&str, &[usize], &[f32]); 2] = [("x", &[1, 1, 5], &x), ("y", &[1, 1, 5], &y)];
    assert_eq!(mil(&text, &ins, "p").data, vec![3., 4., 5.]);
    assert_eq!(mil(&text, &ins, "i").data, [x, y].concat());
    assert_eq!(mil(&text, &ins, "a").data, vec![4.]);
    assert_eq!(mil(&text, &ins, "m").data, vec![8.]);
}

#[test]
fn sdpa_and_layer_norm_values() {
    // q = [1, 1] against k0 = [0, 1] and k1 = [1, 1]: scores [1, 2] / sqrt 2; the output
    // is w1 * v1 = w1 * [1, 2] (v0 = 0) with w1 = e^(2/sqrt2) / (e^(1/sqrt2) + e^(2/sqrt2)).
    let body = "        tensor<fp32, [1, 1, 2]> o = scaled_dot_product_attention(query = q, key = k, value = v)[name = string(\"o\")];
        tensor<int32, [1]> ax = const()[val = tensor<int32, [1]>([-1])];
        tensor<fp32, [1, 2, 2]> n = layer_norm(x = k, axes = ax, epsilon = fp32(0))[name = string(\"n\")];
";
    let text = program("tensor<fp32, [1, 1, 2]> q, tensor<fp32, [1, 2, 2]> k, tensor<fp32, [1, 2, 2]> v", body, "o, n");
    let ins: [(&str, &[usize], &[f32]); 3] =
        [("q", &[1, 1, 2], &[1., 1.]), ("k", &[1, 2, 2], &[0., 1., 1., 1.]), ("v", &[1, 2, 2], &[0., 0., 1., 2.])];
    let (a, b) = ((1.0f64 / 2f64.sqrt()).exp(), (2.0f64 / 2f64.sqrt()).exp());
    let w1 = (b / (a + b)) as f32;
    assert_close(&mil(&text, &ins, "o").data, &[w1, 2.0 * w1], 1e-6);
    // Rows [0, 1] -> [-1, 1]; [1, 1] -> 0 / sqrt(0 + 0) is NaN with epsilon 0.
    let n = mil(&text, &ins, "n");
    assert_eq!(n.data[..2], [-1., 1.]);
    assert!(n.data[2].is_nan());
}

fn run(text: &str, ins: &[(&str, &[usize])]) -> Result<BTreeMap<String, Tensor>, RefError> {
    let m = model(text);
    let map = ins.iter().map(|(n, s)| ((*n).to_string(), Tensor::zeros(s))).collect();
    run_mil(&m, "main", &map)
}

#[test]
fn errors_name_the_op_and_result() {
    let body = "        tensor<int32, [2]> idx = const()[val = tensor<int32, [2]>([0, 1])];
        tensor<fp32, [2, 4]> g = gather(x = x, indices = idx, axis = int32(0))[name = string(\"g\")];
";
    let text = program("tensor<fp32, [3, 4]> x", body, "g");
    let e = run(&text, &[("x", &[3, 4])]).unwrap_err();
    assert!(
        matches!(&e, RefError::MilOp { op, var, reason } if op == "gather" && var == "g" && reason.contains("does not implement")),
        "{e}"
    );

    let body = "        tensor<fp32, [3, 5]> r = relu(x = x)[name = string(\"r\")];\n";
    let e = run(&program("tensor<fp32, [3, 4]> x", body, "r"), &[("x", &[3, 4])]).unwrap_err().to_string();
    assert!(e.contains("MIL `relu` (result `r`)") && e.contains("declared [3, 5] but computes [3, 4]"), "{e}");

    let body = "        tensor<fp32, [3, 4]> r = relu(x = x)[name = string(\"r\")];\n";
    let text = program("tensor<fp32, [3, 4]> x", body, "r");
    let e = run(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("missing input `x`") && e.contains("x [3, 4] (fp32)"), "{e}");
    let e = run(&text, &[("x", &[4, 3])]).unwrap_err().to_string();
    assert!(e.contains("input `x` has shape [4, 3]"), "{e}");
    let e = run_mil(&model(&text), "other", &BTreeMap::new()).unwrap_err().to_string();
    assert!(e.contains("no function `other`") && e.contains("main"), "{e}");
}

#[test]
fn transposed_convolution_scatters_each_value_times_the_kernel() {
    // x = [[1, 2]] (1 x 2), kernel [[1, 10], [100, 1000]], stride 2: each value's 2 x 2
    // block side by side; pad 1 before and after along W drops the outer columns.
    let body = "        tensor<fp32, [1, 1, 2, 2]> w = const()[val = tensor<fp32, [1, 1, 2, 2]>([[[[1, 10], [100, 1000]]]])];
        tensor<fp32, [1, 1, 2, 4]> v = conv_transpose(x = x, weight = w, strides = tensor<int32, [2]>([2, 2]))[name = string(\"v\")];
        tensor<fp32, [1, 1, 2, 2]> c = conv_transpose(x = x, weight = w, strides = tensor<int32, [2]>([2, 2]), pad_type = string(\"custom\"), pad = tensor<int32, [4]>([0, 0, 1, 1]))[name = string(\"c\")];
        tensor<fp32, [1, 1, 1, 3]> o = conv_transpose(x = x, weight = w, strides = tensor<int32, [2]>([1, 1]), pad_type = string(\"custom\"), pad = tensor<int32, [4]>([1, 0, 0, 0]))[name = string(\"o\")];
";
    let text = program("tensor<fp32, [1, 1, 1, 2]> x", body, "v, c, o");
    let ins: [(&str, &[usize], &[f32]); 1] = [("x", &[1, 1, 1, 2], &[1., 2.])];
    assert_eq!(mil(&text, &ins, "v").data, vec![1., 10., 2., 20., 100., 1000., 200., 2000.]);
    assert_eq!(mil(&text, &ins, "c").data, vec![10., 2., 1000., 200.]);
    // Stride 1: overlapping blocks add; the first row dropped: [100, 1000 + 200, 2000].
    assert_eq!(mil(&text, &ins, "o").data, vec![100., 1200., 2000.]);
}
