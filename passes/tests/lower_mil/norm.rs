//! `layer_norm`, `batch_norm`, `instance_norm`, `softmax`.

use crate::common::*;

#[test]
fn layer_norms_over_features_and_over_two_axes() {
    let body = "        tensor<fp16, [1, 2, 3]> a = layer_norm(x = x, axes = tensor<int32, [1]>([-1]), gamma = tensor<fp16, [3]>([1, 2, 3]), beta = tensor<fp16, [3]>([0, 0, 1]), epsilon = fp16(0.00001))[name = string(\"ln\")];
        tensor<fp32, [2, 3]> g = const()[val = tensor<fp32, [2, 3]>([[1, 2, 3], [4, 5, 6]])];
        tensor<fp16, [1, 2, 3]> b = layer_norm(x = a, axes = tensor<int32, [2]>([1, 2]), gamma = g)[name = string(\"ln2\")];
";
    let text = program("tensor<fp16, [1, 2, 3]> x", body, "b");
    let out = lower(&text);
    // gamma of [S = 2, D = 3] in MIL order (height = S, width = D): 1 2 3 4 5 6.
    assert!(out.contains("\"ln2.gamma\": \"0x040000000000803F0000004000004040"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn batch_norm_folds_into_a_per_channel_goc() {
    let body = "        tensor<fp16, [1, 2, 2, 2]> y = batch_norm(x = x, mean = tensor<fp16, [2]>([1, 2]), variance = tensor<fp16, [2]>([4, 0.25]), gamma = tensor<fp16, [2]>([2, 1]), beta = tensor<fp16, [2]>([0, 1]), epsilon = fp16(0))[name = string(\"bn\")];
        tensor<fp16, [1, 2, 3]> z = batch_norm(x = s, mean = tensor<fp16, [2]>([0, 0]), variance = tensor<fp16, [2]>([1, 1]), epsilon = fp16(0))[name = string(\"bn1d\")];
";
    let text = program("tensor<fp16, [1, 2, 2, 2]> x, tensor<fp16, [1, 2, 3]> s", body, "y, z");
    let out = lower(&text);
    // scale = gamma / sqrt(var): 1, 2; bias = beta - mean * scale: -1, -3.
    assert!(
        out.contains("\"bn.scale_data\": \"0x02000000003C0040\"")
            && out.contains("\"bn.bias_data\": \"0x0200000000BC00C2\""),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn instance_norm_and_softmax() {
    let body = "        tensor<fp16, [1, 2, 3, 3]> y = instance_norm(x = x, gamma = tensor<fp16, [2]>([1, 2]), beta = tensor<fp16, [2]>([0, 1]), epsilon = fp16(0.001))[name = string(\"in\")];
        tensor<fp16, [1, 2, 3, 3]> s = softmax(x = y, axis = int32(1))[name = string(\"sm\")];
        tensor<fp16, [4, 5]> t = softmax(x = r, axis = int32(-1))[name = string(\"sm2\")];
";
    let text = program("tensor<fp16, [1, 2, 3, 3]> x, tensor<fp16, [4, 5]> r", body, "s, t");
    let out = lower(&text);
    assert!(out.contains("axes = [\"height\", \"width\"]"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn norm_errors() {
    let body = "        tensor<fp16, [1, 3, 2, 2]> y = batch_norm(x = x, mean = tensor<fp16, [2]>([1, 2]), variance = tensor<fp16, [3]>([1, 1, 1]))[name = string(\"bn\")];
        tensor<fp16, [1, 3, 2, 2]> z = layer_norm(x = x, axes = tensor<int32, [1]>([1]), gamma = tensor<fp16, [2]>([1, 1]))[name = string(\"ln\")];
        tensor<fp16, [1, 3, 2, 2]> s = softmax(x = x, axis = int32(4))[name = string(\"sm\")];
";
    let text = program("tensor<fp16, [1, 3, 2, 2]> x", body, "y, z, s");
    let errs = errors(&text);
    assert_error(&errs, "cannot lower `batch_norm` (result `y`): `mean` must hold 3 numbers (one per channel)");
    assert_error(&errs, "cannot lower `layer_norm` (result `z`): `gamma` has shape [2], the normalized axes span [3]");
    assert_error(&errs, "cannot lower `softmax` (result `s`): axis 4 is out of range for rank 4");
}
