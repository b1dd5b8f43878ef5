//! Constants: `const`, the `constexpr_*` decompressions (blob-backed), folding.

use crate::common::*;
use anec_ir::mil::{BlobTable, ScalarType};
use anec_ir::print_module;

const BLOB: &str = "path = string(\"@model_path/weights/weight.bin\")";

fn blobfile(ty: &str, offset: u64) -> String {
    format!("{ty}(BLOBFILE({BLOB}, offset = uint64({offset})))")
}

#[test]
fn affine_dequantize_from_blobs_feeds_a_conv() {
    let body = format!(
        "        tensor<fp16, [2, 1, 1, 1]> w = constexpr_affine_dequantize()[quantized_data = {q}, zero_point = {zp}, scale = {s}, axis = int32(0), name = string(\"w_q\")];
        tensor<fp16, [1, 2, 2, 2]> y = conv(x = x, weight = w)[name = string(\"c\")];
",
        q = blobfile("tensor<int8, [2, 1, 1, 1]>", 64),
        zp = blobfile("tensor<int8, [2]>", 128),
        s = blobfile("tensor<fp16, [2]>", 192),
    );
    let text = program("tensor<fp16, [1, 1, 2, 2]> x", &body, "y");
    let blobs: BlobTable = [
        blob(64, ScalarType::Int8, vec![10, (-4i8) as u8]),
        blob(128, ScalarType::Int8, vec![2, 0]),
        blob(192, ScalarType::Fp16, vec![0x00, 0x38, 0x00, 0x34]), // 0.5, 0.25
    ]
    .into_iter()
    .collect();
    let out = print_module(&lower_model(&model_with(&text, blobs)));
    // (10 - 2) * 0.5 = 4, (-4 - 0) * 0.25 = -1.
    assert!(out.contains("\"c.weights\": \"0x02000000004400BC\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn palettes_sparse_masks_and_blockwise_scales() {
    let body = format!(
        "        tensor<fp16, [4, 1, 1, 1]> l = constexpr_lut_to_dense()[indices = {idx}, lut = tensor<fp16, [4]>([0.5, 1.5, 2.5, 3.5]), shape = tensor<uint32, [4]>([4, 1, 1, 1])];
        tensor<fp16, [4, 1, 1, 1]> sp = constexpr_sparse_to_dense()[nonzero_data = tensor<fp16, [2]>([1, 2]), mask = tensor<uint8, [1]>([5]), shape = tensor<uint32, [4]>([4, 1, 1, 1])];
        tensor<fp16, [4, 1, 1, 1]> w = add(x = l, y = sp);
        tensor<fp16, [1, 4, 2, 2]> y = conv(x = x, weight = w)[name = string(\"c\")];
        tensor<fp16, [2, 4]> b = constexpr_blockwise_shift_scale(data = tensor<int8, [2, 4]>([[1, 2, 3, 4], [5, 6, 7, 8]]), scale = tensor<fp16, [2, 2]>([[2, 1], [0.5, 1]]), offset = tensor<int8, [2, 2]>([[1, 0], [1, 0]]))[name = string(\"bss\")];
        tensor<fp16, [1, 2, 2, 4]> z = transpose(x = y, perm = tensor<int32, [4]>([0, 2, 3, 1]));
        tensor<fp16, [1, 2, 2, 2]> u = linear(x = z, weight = b)[name = string(\"fc\")];
",
        idx = blobfile("tensor<uint8, [1]>", 64),
    );
    let text = program("tensor<fp16, [1, 1, 2, 2]> x", &body, "u");
    let blobs: BlobTable = [blob(64, ScalarType::Uint8, vec![0b1110_0100])].into_iter().collect();
    let out = print_module(&lower_model(&model_with(&text, blobs)));
    // lut [0.5, 1.5, 2.5, 3.5] + sparse [1, 0, 2, 0] = [1.5, 1.5, 4.5, 3.5].
    assert!(out.contains("\"c.weights\": \"0x02000000003E003E80440043\""), "{out}");
    // blockwise: scale * (data - offset) per 1 x 2 block: [[0, 2, 3, 4], [2, 2.5, 7, 8]].
    assert!(out.contains("\"fc_tmp_2.weights\": \"0x0200000000000040004200440040004100470048\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn weight_errors() {
    let body = format!(
        "        tensor<fp16, [2, 1, 1, 1]> w = const()[val = {missing}];
        tensor<fp16, [3, 1, 1, 1]> l = constexpr_lut_to_dense()[indices = tensor<uint8, [1]>([0]), lut = tensor<fp16, [3]>([1, 2, 3]), shape = tensor<uint32, [4]>([3, 1, 1, 1])];
        tensor<uint8, [4]> m, tensor<fp16, [2]> nz = constexpr_lut_to_sparse()[indices_mask = tensor<uint1, [4]>([1, 0, 1, 0])];
        tensor<fp16, [1, 2, 2, 2]> y = conv(x = x, weight = w);
",
        missing = blobfile("tensor<fp16, [2, 1, 1, 1]>", 4096),
    );
    let text = program("tensor<fp16, [1, 1, 2, 2]> x", &body, "y");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `const` (result `w`): `val`: the weights at @model_path/weights/weight.bin offset 4096 were not loaded");
    assert_error(&errs, "test.mil:5:9: cannot lower `constexpr_lut_to_dense` (result `l`): `lut` has 3 entries");
    assert_error(
        &errs,
        "test.mil:6:9: cannot lower `constexpr_lut_to_sparse` (result `m`): `constexpr_lut_to_sparse` is not supported",
    );
    assert_eq!(errs.len(), 3, "the conv reading the failed weight is not reported: {errs:?}");
}
