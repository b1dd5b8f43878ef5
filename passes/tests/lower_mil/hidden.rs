//! MIL ops lowered to the hidden-layer ops: ranking (`topk`, `argsort`, `reduce_argmax`,
//! `reduce_argmin`), `pad`, `gather`, `local_response_norm`, the spatial rearrangements,
//! the resize family, `crop_resize`, `affine`, `resample`, `non_maximum_suppression`.

use crate::common::*;

#[test]
fn ranking_ops_return_fp16_encoded_indices() {
    let body = "        tensor<fp16, [1, 4, 2]> v, tensor<int32, [1, 4, 2]> i = topk(x = x, k = int32(2), axis = int32(-1), ascending = bool(false))[name = string(\"top\")];
        tensor<int32, [1, 4, 6]> o = argsort(x = x, axis = int32(-1), ascending = bool(true))[name = string(\"order\")];
        tensor<int32, [1, 4]> am = reduce_argmax(x = x, axis = int32(-1), keep_dims = bool(false))[name = string(\"am\")];
        tensor<int32, [1, 1, 6]> an = reduce_argmin(x = x, axis = int32(1), keep_dims = bool(true))[name = string(\"an\")];
";
    let text = program("tensor<fp16, [1, 4, 6]> x", body, "v, i, o, am, an");
    let out = lower(&text);
    // Rank 3 ([b, s, d] -> 1, b, 1, s, d) puts MIL axis -1 on W and axis 1 on H.
    assert!(
        out.contains("indices = true, k = 2 : i64, kind = \"max\", name = \"i\", sort_dimension = \"width\""),
        "{out}"
    );
    assert!(out.contains("\"anec.global_arg_min_max\"(%0) {dimension = \"height\", kind = \"min\""), "{out}");
    assert!(out.contains("direction = \"ascending\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn pad_gather_and_lrn() {
    let body = "        tensor<fp16, [1, 3, 6, 9]> p = pad(x = x, pad = tensor<int32, [4]>([1, 1, 2, 3]), mode = string(\"constant\"), constant_val = fp16(0.5))[name = string(\"pc\")];
        tensor<fp16, [1, 3, 8]> r = pad(x = s, pad = tensor<int32, [2]>([2, 1]), mode = string(\"reflect\"))[name = string(\"pr\")];
        tensor<fp16, [1, 2, 5]> g = gather(x = s, indices = tensor<int32, [2]>([2, 0]), axis = int32(1))[name = string(\"g\")];
        tensor<fp16, [1, 3, 4, 2, 2]> g2 = gather(x = x, indices = tensor<int32, [2, 2]>([[0, 3], [1, 2]]), axis = int32(-1))[name = string(\"g2\")];
        tensor<fp16, [1, 3, 4, 4]> l = local_response_norm(x = x, size = int32(3), alpha = fp16(0.0001), beta = fp16(0.75), k = fp16(2))[name = string(\"lrn\")];
";
    let text = program("tensor<fp16, [1, 3, 4, 4]> x, tensor<fp16, [1, 3, 5]> s", body, "p, r, g, g2, l");
    let out = lower(&text);
    assert!(out.contains("mode = \"constant\", name = \"pc\", pad = [0, 0, 0, 0, 0, 0, 1, 1, 2, 3]"), "{out}");
    // Rank 3: MIL axis -1 lives on W.
    assert!(out.contains("mode = \"reflect\", name = \"pr\", pad = [0, 0, 0, 0, 0, 0, 0, 0, 2, 1]"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn rearrangements_and_samplers() {
    let body = "        tensor<fp16, [1, 2, 8, 8]> a = pixel_shuffle(x = x, upscale_factor = uint32(2))[name = string(\"ps\")];
        tensor<fp16, [1, 8, 4, 4]> b = pixel_unshuffle(x = a, downscale_factor = uint32(2))[name = string(\"pu\")];
        tensor<fp16, [1, 2, 8, 8]> c = depth_to_space(x = b, block_size = int32(2))[name = string(\"d2s\")];
        tensor<fp16, [1, 8, 4, 4]> d = space_to_depth(x = c, block_size = int32(2))[name = string(\"s2d\")];
        tensor<fp16, [4, 8, 2, 2]> e = space_to_batch(x = d, block_shape = tensor<int32, [2]>([2, 2]), paddings = tensor<int32, [2, 2]>([[0, 0], [0, 0]]))[name = string(\"s2b\")];
        tensor<fp16, [1, 8, 4, 4]> f = batch_to_space(x = e, block_shape = tensor<int32, [2]>([2, 2]), crops = tensor<int32, [2, 2]>([[0, 0], [0, 0]]))[name = string(\"b2s\")];
        tensor<fp16, [1, 8, 8, 8]> u = upsample_bilinear(x = f, scale_factor_height = fp32(2), scale_factor_width = fp32(2), align_corners = bool(true))[name = string(\"up\")];
        tensor<fp16, [1, 8, 3, 5]> n = resize_nearest_neighbor(x = u, target_size_height = int32(3), target_size_width = int32(5))[name = string(\"rn\")];
";
    let text = program("tensor<fp16, [1, 8, 4, 4]> x", body, "n");
    let out = lower(&text);
    assert!(out.contains("factor_x = 2 : i64, factor_y = 2 : i64, factor_z = 1 : i64, name = \"d2s\""), "{out}");
    assert!(out.contains("ratio_x = 2.0 : f64, ratio_y = 2.0 : f64, sampling_mode = \"align_corners\""), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn crop_resize_affine_resample_and_nms() {
    let body = "        tensor<fp16, [1, 2, 3, 4, 4]> c = crop_resize(x = x, roi = roi, target_height = int32(4), target_width = int32(4), normalized_coordinates = bool(true), box_coordinate_mode = string(\"CORNERS_HEIGHT_FIRST\"), sampling_mode = string(\"ALIGN_CORNERS\"))[name = string(\"crop\")];
        tensor<fp16, [1, 3, 5, 6]> a = affine(x = x, transform_matrix = m, output_height = int32(5), output_width = int32(6), sampling_mode = string(\"bilinear\"), padding_mode = string(\"constant\"), padding_value = fp16(0), coordinates_mode = string(\"normalized_minus_one_to_one\"), align_corners = bool(true))[name = string(\"aff\")];
        tensor<fp16, [1, 3, 2, 7]> r = resample(x = x, coordinates = g, sampling_mode = string(\"nearest\"), padding_mode = string(\"border\"), padding_value = fp16(0), coordinates_mode = string(\"unnormalized\"), align_corners = bool(false))[name = string(\"rs\")];
        tensor<fp16, [1, 3, 4]> nb, tensor<fp16, [1, 3, 2]> ns, tensor<int32, [1, 3]> ni, tensor<int32, [1]> nc = non_maximum_suppression(boxes = boxes, scores = scores, iou_threshold = fp16(0.5), score_threshold = fp16(0.1), max_boxes = int32(3), per_class_suppression = bool(false))[name = string(\"nms\")];
";
    let inputs = "tensor<fp16, [1, 3, 8, 8]> x, tensor<fp16, [1, 2, 4, 1, 1]> roi, tensor<fp16, [1, 6]> m, tensor<fp16, [1, 2, 7, 2]> g, tensor<fp16, [1, 10, 4]> boxes, tensor<fp16, [1, 10, 2]> scores";
    let text = program(inputs, body, "c, a, r, nb, ns, ni, nc");
    let out = lower(&text);
    assert!(out.contains("box_coordinate_mode = \"corners_height_first\""), "{out}");
    // The coordinates [1, 2, 7, 2] (anec 1 x 2 x 1 x 7 x 2) move the pair onto C.
    assert!(out.contains("perm = [\"batch\", \"width\", \"depth\", \"channel\", \"height\"]"), "{out}");
    assert_eq!(out.matches("\"anec.nms\"").count(), 4, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn unsupported_forms_are_errors() {
    let body = "        tensor<fp16, [1, 4, 7]> a = topk(x = x, k = int32(7), axis = int32(-1))[name = string(\"top\")];
        tensor<fp16, [1, 4, 6]> b = pad(x = x, pad = tensor<int32, [2]>([0, 0]), mode = string(\"wrap\"))[name = string(\"p\")];
        tensor<fp16, [1, 4, 6]> c = gather(x = x, indices = tensor<int32, [1, 6]>([[0, 1, 2, 3, 4, 5]]), axis = int32(2), batch_dims = int32(1))[name = string(\"g\")];
        tensor<fp16, [1, 2, 1, 1]> d = batch_to_space(x = y, block_shape = tensor<int32, [2]>([2, 2]), crops = tensor<int32, [2, 2]>([[0, 1], [0, 0]]))[name = string(\"b2s\")];
        tensor<fp16, [1, 3, 4, 4]> e = pixel_shuffle(x = y, upscale_factor = uint32(2))[name = string(\"ps\")];
";
    let text = program("tensor<fp16, [1, 4, 6]> x, tensor<fp16, [4, 2, 1, 1]> y", body, "a, b, c, d, e");
    let errs = errors(&text);
    assert_error(&errs, "test.mil:4:9: cannot lower `topk` (result `a`): `k` = 7 must be in 1..=6");
    assert_error(&errs, "cannot lower `pad` (result `b`): `mode` \"wrap\" is not constant, reflect or replicate");
    assert_error(&errs, "cannot lower `gather` (result `c`): `batch_dims` other than 0 is not supported");
    assert_error(&errs, "cannot lower `batch_to_space` (result `d`): nonzero `crops` are not supported");
    assert_error(&errs, "cannot lower `pixel_shuffle` (result `e`): the channel count 2 is not divisible by 4");
}
