//! `bool`, `uint8` and `int8` inputs: 8-bit runtime tensors that only a `cast` to fp16 or
//! fp32 reads, lowered to an `anec.gain_offset_control` (scale 1, bias 0) from the 8-bit
//! operand to an f16 result; every other reader, a cast to a non-float type and an 8-bit
//! input returned as it is are errors naming the statement.

use crate::common::*;

#[test]
fn casts_of_eight_bit_inputs_are_a_converting_gain_offset() {
    let body = "        tensor<fp16, [1, 1, 64, 1]> y = cast(dtype = string(\"fp16\"), x = m)[name = string(\"y\")];
        tensor<fp32, [2, 3]> u = cast(dtype = string(\"fp32\"), x = q)[name = string(\"u\")];
        tensor<fp16, [5]> s = cast(dtype = string(\"fp16\"), x = k)[name = string(\"s\")];
        tensor<fp16, [5]> t = mul(x = s, y = fp16(0.5))[name = string(\"t\")];
";
    let inputs = "tensor<bool, [1, 1, 64, 1]> m, tensor<uint8, [2, 3]> q, tensor<int8, [5]> k";
    let out = lower(&program(inputs, body, "y, u, t"));
    // bool is held as u8; the rank mapping is the fp16 one.
    assert!(out.contains("tensor<1x1x64x1xui8>") && out.contains("tensor<1x1x2x3xui8>"), "{out}");
    assert!(out.contains("tensor<1x1x1x5xsi8>"), "{out}");
    let converts = |from: &str, to: &str| {
        out.lines().any(|l| {
            l.contains("\"anec.gain_offset_control\"")
                && l.contains("bias = 0.0")
                && l.contains("scale = 1.0")
                && l.contains(&format!("({from}) -> {to}"))
        })
    };
    assert!(converts("tensor<1x1x64x1xui8>", "tensor<1x1x64x1xf16>"), "{out}");
    assert!(converts("tensor<1x1x2x3xui8>", "tensor<1x1x2x3xf16>"), "{out}");
    assert!(converts("tensor<1x1x1x5xsi8>", "tensor<1x1x1x5xf16>"), "{out}");
    // The converted tensor is an ordinary fp16 value: the scale after it is a second op.
    assert_eq!(out.matches("\"anec.gain_offset_control\"").count(), 4, "{out}");
}

#[test]
fn only_a_cast_to_a_float_type_reads_an_eight_bit_input() {
    let body = "        tensor<fp16, [1, 4]> a = add(x = m, y = z)[name = string(\"sum\")];
        tensor<fp16, [4]> r = reshape(x = q, shape = tensor<int32, [1]>([4]))[name = string(\"flat\")];
        tensor<int32, [1, 4]> i = cast(dtype = string(\"int32\"), x = m)[name = string(\"toint\")];
        tensor<bool, [1, 4]> b = cast(dtype = string(\"bool\"), x = z)[name = string(\"tobool\")];
";
    let text = program("tensor<bool, [1, 4]> m, tensor<int8, [1, 4]> q, tensor<fp16, [1, 4]> z", body, "a, r, i, b, q");
    let errs = errors(&text);
    assert_error(
        &errs,
        "test.mil:4:9: cannot lower `add` (result `a`): argument `x` is `m`, an 8-bit input (bool): the engine \
         computes in fp16, so only `cast` to fp16 or fp32 may read it; cast it first",
    );
    assert_error(
        &errs,
        "test.mil:5:9: cannot lower `reshape` (result `r`): argument `x` is `q`, an 8-bit input (int8)",
    );
    assert_error(
        &errs,
        "test.mil:6:9: cannot lower `cast` (result `i`): a cast of an 8-bit input to int32 is not supported: the \
         engine computes and returns fp16",
    );
    assert_error(&errs, "test.mil:7:9: cannot lower `cast` (result `b`): a cast to bool is not supported");
    assert_error(&errs, "test.mil:8:23: output `q` is an 8-bit input returned as it is");
    assert_eq!(errs.len(), 5, "{errs:?}");
}

#[test]
fn wider_integer_inputs_stay_refused() {
    let body = "        tensor<fp16, [4]> y = cast(dtype = string(\"fp16\"), x = n)[name = string(\"y\")];\n";
    let errs = errors(&program("tensor<int16, [4]> n", body, "y"));
    assert_error(&errs, "cannot lower input `n`: int16 inputs are not supported (the engine computes in fp16)");
}
