//! `reshape`, `transpose`, `expand_dims`, `squeeze`, `concat`, `split`, `slice_by_index`,
//! `slice_by_size`, `cast`, `identity`.

use crate::common::*;

#[test]
fn reshapes_keep_or_fix_the_element_order() {
    let body = "        tensor<fp16, [1, 3, 2, 4]> a = reshape(x = x, shape = tensor<int32, [4]>([1, 3, 2, 4]))[name = string(\"r4\")];
        tensor<fp16, [6, 4]> b = reshape(x = a, shape = tensor<int32, [2]>([6, -1]))[name = string(\"r2\")];
        tensor<fp16, [1, 6, 4]> c = expand_dims(x = b, axes = tensor<int32, [1]>([0]))[name = string(\"e\")];
        tensor<fp16, [6, 4]> d = squeeze(x = c, axes = tensor<int32, [1]>([0]))[name = string(\"s\")];
        tensor<fp16, [2, 12]> e = reshape(x = d, shape = tensor<int32, [2]>([2, 12]))[name = string(\"r22\")];
";
    let text = program("tensor<fp16, [1, 3, 8]> x", body, "e");
    let out = lower(&text);
    // [1, 3, 8] -> [1, 3, 2, 4]: the source holds 8 x 3 transposed: transpose, then reshape.
    // [6, 4] -> [1, 6, 4] -> [6, 4]: the same anec type, no op.
    assert!(!out.contains("name = \"e\"") && !out.contains("name = \"s\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn transposes() {
    let body = "        tensor<fp16, [1, 2, 4, 3]> a = transpose(x = x, perm = tensor<int32, [4]>([0, 1, 3, 2]))[name = string(\"hw\")];
        tensor<fp16, [2, 1, 4, 3]> b = transpose(x = a, perm = tensor<int32, [4]>([1, 0, 2, 3]))[name = string(\"unit\")];
        tensor<fp16, [3, 4]> c = transpose(x = m, perm = tensor<int32, [2]>([1, 0]))[name = string(\"t2\")];
";
    let text = program("tensor<fp16, [1, 2, 3, 4]> x, tensor<fp16, [4, 3]> m", body, "b, c");
    let out = lower(&text);
    assert!(out.contains("\"anec.reshape\"(%2) {name = \"unit\"}"), "a transpose of unit axes is a reshape:\n{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn concat_split_and_slices() {
    let body = "        tensor<fp16, [1, 5, 4]> c = concat(values = (x, y), axis = int32(1), interleave = bool(false))[name = string(\"cat\")];
        tensor<fp16, [1, 5, 1]> s0, tensor<fp16, [1, 5, 3]> s1 = split(x = c, split_sizes = tensor<int32, [2]>([1, 3]), axis = int32(-1))[name = string(\"sp\")];
        tensor<fp16, [1, 2, 3]> a = slice_by_index(x = s1, begin = tensor<int32, [3]>([0, 1, 0]), end = tensor<int32, [3]>([1, 5, 3]), stride = tensor<int32, [3]>([1, 2, 1]))[name = string(\"sbi\")];
        tensor<fp16, [5]> b = slice_by_index(x = s0, begin = tensor<int32, [3]>([0, 0, 0]), end = tensor<int32, [3]>([1, 5, 1]), squeeze_mask = tensor<bool, [3]>([true, false, true]))[name = string(\"sq\")];
        tensor<fp16, [1, 3, 2]> d = slice_by_size(x = s1, begin = tensor<int32, [3]>([0, 2, 1]), size = tensor<int32, [3]>([-1, -1, 2]))[name = string(\"sbs\")];
";
    let text = program("tensor<fp16, [1, 2, 4]> x, tensor<fp16, [1, 3, 4]> y", body, "a, b, d");
    let out = lower(&text);
    assert!(out.contains("name = \"s1\""), "the second split view is named after its result:\n{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn casts_between_float_types_are_free_and_constant_casts_fold() {
    let body = "        tensor<fp32, [1, 4]> a = cast(x = x, dtype = string(\"fp32\"))[name = string(\"up\")];
        tensor<int32, [4]> k = const()[val = tensor<int32, [4]>([1, 2, 3, 4])];
        tensor<fp16, [4]> kf = cast(x = k, dtype = string(\"fp16\"))[name = string(\"kf\")];
        tensor<fp32, [1, 4]> b = mul(x = a, y = kf)[name = string(\"scale\")];
        tensor<fp32, [1, 4]> c = identity(x = b);
";
    let text = program("tensor<fp16, [1, 4]> x", body, "c");
    let out = lower(&text);
    // The row of 4 moves to the channels for the per-channel scale, and back.
    assert!(out.contains("scale_data = dense_resource<scale_tmp_1.scale_data> : tensor<1x4x1x1xf16>"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn shape_errors() {
    let body = "        tensor<fp16, [1, 8]> c = concat(values = (x, x), axis = int32(1), interleave = bool(true))[name = string(\"il\")];
        tensor<fp16, [1, 2]> a = slice_by_index(x = x, begin = tensor<int32, [2]>([0, 3]), end = tensor<int32, [2]>([1, 0]), stride = tensor<int32, [2]>([1, -1]))[name = string(\"rev\")];
        tensor<int32, [1, 4]> i = cast(x = x, dtype = string(\"int32\"))[name = string(\"toint\")];
        tensor<fp16, [1, 5]> r = reshape(x = x, shape = tensor<int32, [2]>([1, 5]))[name = string(\"bad\")];
";
    let text = program("tensor<fp16, [1, 4]> x", body, "c, a, i, r");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `concat` (result `c`): `interleave = true` is not supported");
    assert_error(&errs, "test.mil:5:9: cannot lower `slice_by_index` (result `a`): axis 1: stride -1 is not supported");
    assert_error(&errs, "test.mil:6:9: cannot lower `cast` (result `i`): a cast to int32 is not supported");
    assert_error(&errs, "test.mil:7:9: cannot lower `reshape` (result `r`): cannot reshape [1, 4] to [1, 5]");
    assert_eq!(errs.len(), 4, "{errs:?}");
}

#[test]
fn tile_is_nothing_a_broadcast_or_a_concat() {
    let body = "        tensor<fp16, [1, 4, 1, 3]> a = tile(x = x, reps = tensor<int32, [4]>([1, 1, 1, 1]))[name = string(\"same\")];
        tensor<fp16, [1, 4, 2, 6]> b = tile(x = a, reps = tensor<int32, [4]>([1, 1, 2, 2]))[name = string(\"rep\")];
";
    let text = program("tensor<fp16, [1, 4, 1, 3]> x", body, "b");
    let out = lower(&text);
    // reps 1: no op; H (extent 1) is broadcast to 2; W (extent 3) is two copies.
    assert!(out.contains("\"anec.broadcast\"(%0) {axes = [\"height\"]"), "{out}");
    assert!(out.contains("\"anec.concat\"(%1, %1) {axis = \"width\""), "{out}");
    assert_eq!(out.matches("\"anec.").count(), 2, "{out}");
    let bad = "        tensor<fp16, [1, 4, 1, 3]> a = tile(x = x, reps = tensor<int32, [2]>([1, 1]))[name = string(\"bad\")];\n";
    let errs = errors(&program("tensor<fp16, [1, 4, 1, 3]> x", bad, "a"));
    assert_error(&errs, "`reps` [1, 1] must hold one count >= 1 per axis");
}
