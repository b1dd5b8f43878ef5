//! Activations.

use crate::common::*;

#[test]
fn neuron_modes_and_compositions() {
    let body = "        tensor<fp16, [1, 4]> a = relu(x = x);
        tensor<fp16, [1, 4]> b = silu(x = a);
        tensor<fp16, [1, 4]> c = gelu(x = b, mode = string(\"TANH_APPROXIMATION\"));
        tensor<fp16, [1, 4]> d = clip(x = c, alpha = fp16(-1), beta = fp16(1));
        tensor<fp16, [1, 4]> e = leaky_relu(x = d, alpha = fp16(0.125));
        tensor<fp16, [1, 4]> f = rsqrt(x = e, epsilon = fp16(0.001));
        tensor<fp16, [1, 4]> g = relu6(x = f);
        tensor<fp16, [1, 4]> h = round(x = g);
        tensor<fp16, [1, 4]> i = square(x = h);
        tensor<fp16, [1, 4]> j = log(x = i);
        tensor<fp16, [1, 4]> k = gelu(x = j, mode = string(\"SIGMOID_APPROXIMATION\"));
        tensor<fp16, [1, 4]> l = sigmoid_hard(x = k, alpha = fp16(0.25), beta = fp16(0.5));
        tensor<fp16, [1, 4]> m = softplus(x = l);
        tensor<fp16, [1, 4]> n = erf(x = m);
        tensor<fp16, [1, 4]> o = threshold(x = n, alpha = fp16(0.5));
";
    let text = program("tensor<fp16, [1, 4]> x", body, "o");
    insta::assert_snapshot!(lower(&text));
}

#[test]
fn uncovered_activations_and_unknown_ops_are_errors() {
    let body = "        tensor<fp16, [1, 4]> a = prelu(x = x, alpha = tensor<fp16, [4]>([1, 1, 1, 1]));
        tensor<fp16, [1, 4]> b = gelu(x = x, mode = string(\"CUBIC\"));
        tensor<fp16, [1, 4]> c = tan(x = x);
        tensor<fp16, [1, 4]> d = relu(x = a);
";
    let text = program("tensor<fp16, [1, 4]> x", body, "b, c, d");
    let errs = errors(&text);
    assert_error(
        &errs,
        "test.mil:4:9: cannot lower `prelu` (result `a`): the anec dialect has no lowering for MIL op `prelu`",
    );
    assert_error(&errs, "test.mil:5:9: cannot lower `gelu` (result `b`): gelu mode \"CUBIC\" is not supported");
    assert_error(&errs, "test.mil:6:9: cannot lower `tan` (result `c`)");
    assert_eq!(errs.len(), 3, "{errs:?}");
}
