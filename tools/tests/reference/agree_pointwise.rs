//! Agreement of `run_mil` and the lowering for activations, binary elementwise ops (runtime
//! and constant operands, broadcasting) and reductions.

use crate::common::*;

const TIGHT: f32 = 1e-5;

/// One statement `tensor<fp32, [2, 3, 4]> NAME = OP(x = x ARGS)` per entry.
fn unary_body(ops: &[(&str, &str, &str)]) -> String {
    ops.iter()
        .map(|(name, op, args)| {
            format!("        tensor<fp32, [2, 3, 4]> {name} = {op}(x = x{args})[name = string(\"{name}\")];\n")
        })
        .collect()
}

fn outputs(ops: &[(&str, &str, &str)]) -> String {
    ops.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
}

#[test]
fn activations_on_the_real_line() {
    let ops = [
        ("a1", "relu", ""),
        ("a2", "relu6", ""),
        ("a3", "sigmoid", ""),
        ("a4", "tanh", ""),
        ("a5", "exp", ""),
        ("a6", "abs", ""),
        ("a7", "sign", ""),
        ("a8", "floor", ""),
        ("a9", "ceil", ""),
        ("a10", "erf", ""),
        ("a11", "sin", ""),
        ("a12", "cos", ""),
        ("a13", "silu", ""),
        ("a14", "square", ""),
        ("a15", "round", ""),
        ("a16", "clip", ", alpha = fp32(-0.5), beta = fp32(1.25)"),
        ("a17", "threshold", ", alpha = fp32(0.3)"),
        ("a18", "leaky_relu", ", alpha = fp32(0.2)"),
        ("a19", "elu", ", alpha = fp32(1.5)"),
        ("a20", "thresholded_relu", ", alpha = fp32(0.5)"),
        ("a21", "sigmoid_hard", ", alpha = fp32(0.25), beta = fp32(0.4)"),
        ("a22", "linear_activation", ", alpha = fp32(-2), beta = fp32(0.5)"),
        ("a23", "scaled_tanh", ", alpha = fp32(1.7), beta = fp32(0.6)"),
        ("a24", "softplus", ""),
        ("a25", "softsign", ""),
        ("a26", "gelu", ", mode = string(\"EXACT\")"),
        ("a27", "gelu", ", mode = string(\"SIGMOID_APPROXIMATION\")"),
        ("a28", "exp2", ""),
    ];
    let text = program("tensor<fp32, [2, 3, 4]> x", &unary_body(&ops), &outputs(&ops));
    assert_agree(&text, -3.0, 3.0, TIGHT);
}

#[test]
fn activations_on_positive_inputs() {
    let ops = [
        ("p1", "sqrt", ""),
        ("p2", "rsqrt", ", epsilon = fp32(0.01)"),
        ("p3", "inverse", ", epsilon = fp32(0.001)"),
        ("p4", "log", ", epsilon = fp32(0.001)"),
        ("p5", "rsqrt", ""),
        ("p6", "inverse", ""),
    ];
    let text = program("tensor<fp32, [2, 3, 4]> x", &unary_body(&ops), &outputs(&ops));
    assert_agree(&text, 0.1, 4.0, TIGHT);
}

/// The lowering maps gelu TANH_APPROXIMATION to the engine's one gelu (exact); the two
/// differ by at most ~5e-4 on the real line, which this pins.
#[test]
fn gelu_tanh_approximation_is_lowered_to_exact_gelu() {
    let ops = [("g", "gelu", ", mode = string(\"TANH_APPROXIMATION\")")];
    let text = program("tensor<fp32, [2, 3, 4]> x", &unary_body(&ops), "g");
    let m = model(&text);
    let e = agreement_on(&m, &inputs(&m, -4.0, 4.0, 5));
    assert!(e > 1e-6 && e < 1e-3, "gelu tanh vs exact differ by {e}");
}

#[test]
fn binary_runtime_operands_with_broadcasting() {
    let body = "        tensor<fp32, [1, 3, 4, 5]> a = add(x = x, y = c)[name = string(\"a\")];
        tensor<fp32, [1, 3, 4, 5]> b = sub(x = c, y = x)[name = string(\"b\")];
        tensor<fp32, [1, 3, 4, 5]> m = mul(x = x, y = r)[name = string(\"m\")];
        tensor<fp32, [1, 3, 4, 5]> mx = maximum(x = x, y = r)[name = string(\"mx\")];
        tensor<fp32, [1, 3, 4, 5]> mn = minimum(x = r, y = x)[name = string(\"mn\")];
        tensor<fp32, [2, 3, 4]> s = add(x = u, y = v)[name = string(\"s\")];
        tensor<fp32, [2, 3, 4]> t = mul(x = u, y = w)[name = string(\"t\")];
";
    let inputs = "tensor<fp32, [1, 3, 4, 5]> x, tensor<fp32, [1, 3, 1, 1]> c, tensor<fp32, [1, 1, 4, 5]> r, tensor<fp32, [2, 3, 4]> u, tensor<fp32, [3, 4]> v, tensor<fp32, [2, 1, 4]> w";
    assert_agree(&program(inputs, body, "a, b, m, mx, mn, s, t"), -3.0, 3.0, TIGHT);
}

#[test]
fn binary_with_constants() {
    let body = "        tensor<fp32, [3, 1, 1]> pc = const()[val = tensor<fp32, [3, 1, 1]>([[[0.5]], [[-2]], [[4]]])];
        tensor<fp32, [4, 5]> gen = const()[val = tensor<fp32, [4, 5]>([[1, 2, 3, 4, 5], [0, -1, 0.5, 2, 1], [3, 3, 3, 3, 3], [-2, 0, 2, 0, -2]])];
        tensor<fp32, [1, 3, 4, 5]> a = add(x = x, y = fp32(1.5))[name = string(\"a\")];
        tensor<fp32, [1, 3, 4, 5]> b = sub(x = fp32(2), y = x)[name = string(\"b\")];
        tensor<fp32, [1, 3, 4, 5]> c = mul(x = x, y = pc)[name = string(\"c\")];
        tensor<fp32, [1, 3, 4, 5]> d = real_div(x = x, y = pc)[name = string(\"d\")];
        tensor<fp32, [1, 3, 4, 5]> e = sub(x = pc, y = x)[name = string(\"e\")];
        tensor<fp32, [1, 3, 4, 5]> f = add(x = x, y = gen)[name = string(\"f\")];
        tensor<fp32, [1, 3, 4, 5]> g = maximum(x = x, y = fp32(0))[name = string(\"g\")];
        tensor<fp32, [1, 3, 4, 5]> h = minimum(x = x, y = fp32(0.75))[name = string(\"h\")];
        tensor<fp32, [1, 3, 4, 5]> i = maximum(x = x, y = fp32(-0.25))[name = string(\"i\")];
        tensor<fp32, [1, 3, 4, 5]> j = real_div(x = x, y = fp32(4))[name = string(\"j\")];
        tensor<fp32, [1, 3, 4, 5]> k = pow(x = x, y = fp32(2))[name = string(\"k\")];
        tensor<fp32, [1, 3, 4, 5]> l = mul(x = x, y = gen)[name = string(\"l\")];
";
    assert_agree(
        &program("tensor<fp32, [1, 3, 4, 5]> x", body, "a, b, c, d, e, f, g, h, i, j, k, l"),
        -3.0,
        3.0,
        TIGHT,
    );
}

#[test]
fn binary_on_positive_operands() {
    let body = "        tensor<fp32, [3, 1, 1]> pc = const()[val = tensor<fp32, [3, 1, 1]>([[[0.5]], [[2]], [[4]]])];
        tensor<fp32, [1, 3, 4, 5]> a = real_div(x = x, y = y)[name = string(\"a\")];
        tensor<fp32, [1, 3, 4, 5]> b = real_div(x = fp32(3), y = x)[name = string(\"b\")];
        tensor<fp32, [1, 3, 4, 5]> c = real_div(x = pc, y = x)[name = string(\"c\")];
        tensor<fp32, [1, 3, 4, 5]> d = pow(x = x, y = fp32(0.5))[name = string(\"d\")];
        tensor<fp32, [1, 3, 4, 5]> e = pow(x = x, y = fp32(-0.5))[name = string(\"e\")];
        tensor<fp32, [1, 3, 4, 5]> f = pow(x = x, y = fp32(-1))[name = string(\"f\")];
        tensor<fp32, [1, 3, 4, 5]> g = pow(x = fp32(3), y = x)[name = string(\"g\")];
        tensor<fp32, [1, 3, 4, 5]> h = pow(x = fp32(2), y = x)[name = string(\"h\")];
";
    assert_agree(
        &program("tensor<fp32, [1, 3, 4, 5]> x, tensor<fp32, [1, 3, 4, 5]> y", body, "a, b, c, d, e, f, g, h"),
        0.25,
        3.0,
        TIGHT,
    );
}

#[test]
fn reductions_keeping_and_dropping_axes() {
    let body = "        tensor<int32, [1]> last = const()[val = tensor<int32, [1]>([-1])];
        tensor<int32, [2]> hw = const()[val = tensor<int32, [2]>([2, 3])];
        tensor<int32, [1]> one = const()[val = tensor<int32, [1]>([1])];
        tensor<fp32, [2, 3]> a = reduce_sum(x = u, axes = last, keep_dims = bool(false))[name = string(\"a\")];
        tensor<fp32, [2, 3, 1]> b = reduce_mean(x = u, axes = last, keep_dims = bool(true))[name = string(\"b\")];
        tensor<fp32, [2, 1, 4]> c = reduce_max(x = u, axes = one, keep_dims = bool(true))[name = string(\"c\")];
        tensor<fp32, [1, 3, 1, 1]> d = reduce_min(x = x, axes = hw, keep_dims = bool(true))[name = string(\"d\")];
        tensor<fp32, [1, 3]> e = reduce_sum_square(x = x, axes = hw, keep_dims = bool(false))[name = string(\"e\")];
        tensor<fp32, [1, 3, 1, 1]> f = reduce_l1_norm(x = x, axes = hw, keep_dims = bool(true))[name = string(\"f\")];
        tensor<fp32, [1, 1, 4, 5]> g = reduce_l2_norm(x = x, axes = one, keep_dims = bool(true))[name = string(\"g\")];
        tensor<fp32, [1, 4, 5]> h = reduce_mean(x = x, axes = one, keep_dims = bool(false))[name = string(\"h\")];
";
    let inputs = "tensor<fp32, [2, 3, 4]> u, tensor<fp32, [1, 3, 4, 5]> x";
    assert_agree(&program(inputs, body, "a, b, c, d, e, f, g, h"), -3.0, 3.0, TIGHT);
}
