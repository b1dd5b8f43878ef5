//! The driver: functions, inputs, outputs, names, locations, error collection.

use crate::common::*;
use anec_ir::mil::BlobTable;
use anec_passes::lower::lower_mil;

#[test]
fn unknown_function_lists_the_functions() {
    let text = program("tensor<fp16, [1, 4]> x", "        tensor<fp16, [1, 4]> y = relu(x = x);\n", "y");
    let errs = match lower_mil(&model_with(&text, BlobTable::new()), "encoder") {
        Ok(_) => panic!("lowered an unknown function"),
        Err(e) => e,
    };
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].to_string(), "test.mil: the program has no function `encoder`");
    assert_eq!(errs[0].notes, vec!["functions: main".to_string()]);
}

#[test]
fn names_are_deduplicated_and_locations_follow_the_text() {
    let body = "        tensor<fp16, [1, 4]> a = relu(x = x)[name = string(\"act\")];
        tensor<fp16, [1, 4]> b = sigmoid(x = a)[name = string(\"act\")];
        tensor<fp16, [1, 4]> act_1 = tanh(x = b);
";
    let text = program("tensor<fp16, [1, 4]> x", body, "act_1");
    let m = lower_model(&model_with(&text, BlobTable::new()));
    let names: Vec<&str> = m.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["act", "act_1", "act_1_1"]);
    let locs: Vec<(u32, u32)> = m.ops.iter().map(|o| (o.loc.line, o.loc.col)).collect();
    assert_eq!(locs, [(4, 9), (5, 9), (6, 9)]);
    assert_eq!(m.name, "net", "function `main` is the network `net`, as in Apple's netplists");
    assert_eq!(m.outputs[0].name, "act_1@output");
    assert_eq!(m.inputs[0].name, "x");
}

#[test]
fn protobuf_input_has_no_positions() {
    let text = program("tensor<fp16, [1, 4]> x", "        tensor<fp16, [1, 4]> y = relu(x = x);\n", "y");
    let mut model = model_with(&text, BlobTable::new());
    model.text = None;
    let m = lower_model(&model);
    assert_eq!((m.ops[0].loc.line, m.ops[0].loc.col), (0, 0));
    assert_eq!(m.ops[0].loc.file, FILE);
}

#[test]
fn every_error_is_collected_without_cascades() {
    let body = "        tensor<fp16, [1, 4]> a = cumsum(x = x)[name = string(\"sum\")];
        tensor<fp16, [1, 4]> b = relu(x = a);
        tensor<fp16, [1, 4]> c = band_part(x = x);
        tensor<fp16, [1, 4]> d = sigmoid(x = x);
        tensor<fp16, [1, 4]> k = const()[val = tensor<fp16, [1, 4]>([[1, 2, 3, 4]])];
";
    let text =
        program("tensor<fp16, [1, ?]> dyn, tensor<int32, [1, 4]> ids, tensor<fp16, [1, 4]> x", body, "b, c, d, k");
    let errs = errors(&text);
    let want = [
        "test.mil:3:43: cannot lower input `dyn`: dynamic shapes (`?`) are not supported",
        "test.mil:3:70: cannot lower input `ids`: int32 inputs are not supported (the engine computes in fp16)",
        "test.mil:4:9: cannot lower `cumsum` (result `a`): the anec dialect has no lowering for MIL op `cumsum`",
        "test.mil:6:9: cannot lower `band_part` (result `c`): the anec dialect has no lowering for MIL op `band_part`",
        "test.mil:9:20: output `k` is a compile-time constant; the engine returns only computed tensors",
    ];
    assert_eq!(errs, want);
}

#[test]
fn hostile_parameters_are_errors_not_panics() {
    let body = "        tensor<fp16, [1, 2, 4, 4]> a = max_pool(x = x, kernel_sizes = tensor<int32, [2]>([1, 1]), pad_type = string(\"custom\"), pad = tensor<int32, [4]>([2147483647, 2147483647, 0, 0]));
        tensor<fp16, [1, 2, 4, 4]> b = reshape(x = x, shape = tensor<int64, [3]>([4294967296, 4294967296, 4294967296]));
        tensor<fp16, [1, 2, 4, 4]> c = slice_by_size(x = x, begin = tensor<int32, [4]>([0, 0, 0, 1]), size = tensor<int64, [4]>([1, 1, 1, 9223372036854775807]));
        tensor<fp16, [1, 2, 4, 1]> d0, tensor<fp16, [1, 2, 4, 3]> d1 = split(x = x, num_splits = int32(1000000000), axis = int32(-1));
        tensor<fp16, [4]> e = constexpr_lut_to_dense()[indices = tensor<uint8, [1]>([0]), lut = tensor<fp16, [2]>([0, 1]), shape = tensor<uint32, [2]>([4294967295, 4294967295])];
        tensor<fp16, [4]> f = constexpr_sparse_to_dense()[nonzero_data = tensor<fp16, [1]>([1]), mask = tensor<uint8, [1]>([1]), shape = tensor<uint32, [2]>([4294967295, 4294967295])];
        tensor<fp16, [1, 2, 4, 4]> g = transpose(x = x, perm = tensor<int32, [4]>([0, 0, 1, 2]));
        tensor<fp16, [1, 2, 4, 4]> h = conv(x = x, weight = tensor<fp16, [2, 2, 1, 1]>([[[[1]], [[1]]], [[[1]], [[1]]]]), strides = tensor<int32, [2]>([0, 1]));
";
    let text = program("tensor<fp16, [1, 2, 4, 4]> x", body, "a, b, c, d0, g, h");
    let errs = errors(&text);
    assert_eq!(errs.len(), 8, "{errs:#?}");
    for (i, e) in errs.iter().enumerate() {
        assert!(e.starts_with(&format!("test.mil:{}:9: cannot lower", 4 + i)), "{e}");
    }
}
