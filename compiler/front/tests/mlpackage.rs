//! The `.mlpackage` front end: the golden pair (Apple's `model.mil` compiled from
//! `ironmill-base.mlpackage`), the packages coremltools saved on Linux (tiny graph, state,
//! multi-function), damaged protobufs, and the error messages.
//!
//! The golden comparison removes one line from Apple's text: line 2, coremlc's
//! `[buildInfo = ...]` (its own version stamp, absent from the package). The package has no
//! program attributes, so the printer writes no such line; everything else, down to the
//! missing final newline, must match byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod milfix;

use anec_front::mil::parse_program;
use anec_front::mlpackage::proto::{self, model, OtherModel};
use anec_front::mlpackage::{program_from_bytes, program_from_bytes_as, read_mlpackage, TEXT_VERSION};
use anec_front::{load_mil, milblob::dtype_from_code};
use anec_ir::mil::print::print_program;
use anec_ir::mil::{BlobKey, Dim, ScalarType, Type};
use milfix::{blobfile_offsets, mlmodelc, package, real_mil};
use prost::Message;
use std::collections::BTreeSet;

const GOLDEN_MIL: &str = "jafreck+ironmill__test-q_base.mlmodelc";
const WEIGHTS: &str = "@model_path/weights/weight.bin";

fn model_bytes(name: &str) -> Vec<u8> {
    std::fs::read(package(name).join("Data/com.apple.CoreML/model.mlmodel")).unwrap()
}

/// Apple's text without its buildInfo line (checked to be line 2).
fn apple_text_without_build_info() -> String {
    let text = std::fs::read_to_string(real_mil(GOLDEN_MIL)).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(lines[1].starts_with("[buildInfo = dict<string, string>("), "{}", lines[1]);
    assert_eq!(text.matches("buildInfo").count(), 1);
    let mut kept = lines.clone();
    kept.remove(1);
    kept.join("\n")
}

#[test]
fn golden_package_prints_as_apples_model_mil() {
    let pkg = read_mlpackage(&package("ironmill-base")).unwrap();
    assert!(pkg.program.attrs.is_empty());
    let ours = print_program(&pkg.program);
    let apple = apple_text_without_build_info();
    if ours != apple {
        let first = ours.lines().zip(apple.lines()).position(|(a, b)| a != b);
        panic!("texts differ (first differing line: {first:?}; {} vs {} bytes)", ours.len(), apple.len());
    }
}

#[test]
fn golden_package_equals_the_parsed_apple_text() {
    let pkg = read_mlpackage(&package("ironmill-base")).unwrap();
    let text = std::fs::read_to_string(real_mil(GOLDEN_MIL)).unwrap();
    let mut apple = parse_program(&text, GOLDEN_MIL).unwrap();
    assert_eq!(apple.attrs.len(), 1);
    apple.attrs.clear();
    assert_eq!(pkg.program, apple);
    assert_eq!(pkg.program.version, TEXT_VERSION);
}

/// The `.mlmodelc` form of the golden model (Apple's text in a folder) and the package load
/// the same program.
#[test]
fn golden_package_and_compiled_folder_load_the_same_program() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(real_mil(GOLDEN_MIL)).unwrap();
    let mut from_text = load_mil(&mlmodelc(tmp.path(), &text, None)).unwrap();
    let from_pkg = load_mil(&package("ironmill-base")).unwrap();
    from_text.program.attrs.clear();
    assert_eq!(from_pkg.program, from_text.program);
    assert!(from_pkg.blobs.is_empty() && from_pkg.text.is_none());
    assert!(from_pkg.file.ends_with("ironmill-base.mlpackage"), "{}", from_pkg.file);
}

/// Each coremltools package loads, its weights resolve (one blob per distinct offset,
/// matching the record in the file), and its printed text parses back to the same program.
#[test]
fn coremltools_packages_load_print_and_parse_back() {
    for name in ["coremltools-tiny", "coremltools-state", "coremltools-multi"] {
        let model = load_mil(&package(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let text = print_program(&model.program);
        let back = parse_program(&text, name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(back, model.program, "{name}");
        let offsets: BTreeSet<u64> = blobfile_offsets(&text).into_iter().collect();
        assert_eq!(model.blobs.len(), offsets.len(), "{name}");
        let weights = package(name).join("Data/com.apple.CoreML/weights/weight.bin");
        for off in offsets {
            let raw = std::fs::read(&weights).unwrap();
            let at = off as usize;
            let code = u32::from_le_bytes(raw[at + 4..at + 8].try_into().unwrap());
            let blob = &model.blobs[&BlobKey { path: WEIGHTS.into(), offset: off }];
            assert_eq!(Some(blob.dtype), dtype_from_code(code), "{name} @{off}");
        }
    }
}

fn tensor(dtype: ScalarType, shape: &[u64]) -> Type {
    Type::Tensor { dtype, shape: shape.iter().map(|d| Dim::Known(*d)).collect() }
}

#[test]
fn tiny_package_has_the_built_graph() {
    let p = read_mlpackage(&package("coremltools-tiny")).unwrap().program;
    let main = p.function("main").unwrap();
    assert_eq!(main.opset, "ios18");
    let inputs: Vec<_> = main.inputs.iter().map(|i| (i.name.name.as_str(), i.ty.clone())).collect();
    assert_eq!(
        inputs,
        [("x", tensor(ScalarType::Fp32, &[1, 8, 32])), ("img", tensor(ScalarType::Fp32, &[1, 8, 16, 16]))]
    );
    let outputs: Vec<_> = main.outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(outputs, ["rm", "cat"]);
    let concat = main.body.iter().find(|s| s.op.name == "concat").unwrap();
    let keys: Vec<_> = concat.inputs.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(keys, ["axis", "interleave", "values"], "sorted keys");
    assert!(matches!(concat.arg("values"), Some(anec_ir::mil::Arg::Tuple(items, _)) if items.len() == 2));
    let eps = main.body.iter().find(|s| s.name_attr() == Some("ln_epsilon_0_to_fp16")).unwrap();
    // fp16 immediates are stored as bytes: 1e-5 in fp16 is 0x1.5p-17.
    match eps.arg("val") {
        Some(anec_ir::mil::Arg::Value(v)) => {
            assert_eq!(v.ty, Type::Scalar(ScalarType::Fp16));
            assert_eq!(
                v.data,
                anec_ir::mil::ValueData::Literal(anec_ir::mil::Literal::Float(0x15 as f64 * 2f64.powi(-21)))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn state_package_has_a_state_input() {
    let p = read_mlpackage(&package("coremltools-state")).unwrap().program;
    let main = p.function("main").unwrap();
    assert_eq!(main.inputs[1].name.name, "acc");
    assert_eq!(main.inputs[1].ty, Type::State(Box::new(tensor(ScalarType::Fp16, &[1, 64]))));
    let ops: Vec<_> = main.body.iter().map(|s| s.op.name.as_str()).collect();
    assert_eq!(ops, ["read_state", "add", "write_state", "read_state", "mul"]);
    assert!(main.body[2].outputs.is_empty());
}

#[test]
fn multi_function_package_shares_one_weight_file() {
    let m = load_mil(&package("coremltools-multi")).unwrap();
    let names: Vec<_> = m.program.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["relu_fn", "sigmoid_fn"]);
    assert_eq!(m.blobs.len(), 1, "both functions read the blob at offset 64");
    let blob = m.blobs.values().next().unwrap();
    assert_eq!((blob.dtype, blob.bytes.as_slice().len()), (ScalarType::Fp16, 8 * 8 * 2));
}

#[test]
fn text_version_1_0_writes_rank_0_as_tensors() {
    let p = program_from_bytes_as(&model_bytes("coremltools-tiny"), "tiny", "1.0").unwrap();
    let text = print_program(&p);
    assert!(text.starts_with("program(1.0)\n"));
    assert!(text.contains("val = tensor<int32, []>(1)"), "rank-0 int32 as a tensor");
    assert!(
        text.contains("path = tensor<string, []>(\"@model_path/weights/weight.bin\"), offset = tensor<uint64, []>(64)")
    );
    assert!(!text.contains(" int32("));
    assert_eq!(parse_program(&text, "tiny").unwrap(), p);
}

/// Every prefix of a model (and every single-byte corruption of a small one) is either
/// read or rejected with an error naming the file; none panics.
#[test]
fn damaged_protobufs_are_errors_not_panics() {
    for name in ["coremltools-state", "coremltools-multi", "ironmill-base", "coremltools-tiny"] {
        let bytes = model_bytes(name);
        let step = (bytes.len() / 2000).max(1);
        let mut rejected = 0;
        for cut in (0..bytes.len()).step_by(step) {
            if let Err(errs) = program_from_bytes(&bytes[..cut], "cut.mlmodel") {
                assert!(!errs.is_empty() && errs.iter().all(|e| e.file == "cut.mlmodel"));
                rejected += 1;
            }
        }
        assert!(rejected > 0, "{name}: some cut must be rejected");
        assert!(program_from_bytes(&bytes, "whole").is_ok(), "{name}");
    }
    for name in ["coremltools-state", "coremltools-multi"] {
        let bytes = model_bytes(name);
        for i in 0..bytes.len() {
            for flip in [0xff, 0x80, 0x01] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                let _ = program_from_bytes(&b, "flipped.mlmodel");
            }
        }
    }
}

#[test]
fn truncated_package_model_is_an_error() {
    let bytes = model_bytes("coremltools-tiny");
    let errs = program_from_bytes(&bytes[..bytes.len() / 2], "half.mlmodel").unwrap_err();
    assert!(errs[0].message.contains("not a CoreML model protobuf"), "{}", errs[0].message);
}

#[test]
fn other_model_kinds_are_named() {
    let m = proto::Model { specification_version: 4, r#type: Some(model::Type::NeuralNetwork(OtherModel {})) };
    let errs = program_from_bytes(&m.encode_to_vec(), "nn.mlmodel").unwrap_err();
    assert!(
        errs[0].message.contains("`neuralNetwork` model (specification version 4), not an ML program"),
        "{}",
        errs[0].message
    );
    let errs = program_from_bytes(&[], "empty.mlmodel").unwrap_err();
    assert!(errs[0].message.contains("holds no model"), "{}", errs[0].message);
}

fn tiny_program() -> proto::Program {
    match proto::Model::decode(model_bytes("coremltools-tiny").as_slice()).unwrap().r#type {
        Some(model::Type::MlProgram(p)) => p,
        other => panic!("{other:?}"),
    }
}

fn encode(p: proto::Program) -> Vec<u8> {
    proto::Model { specification_version: 9, r#type: Some(model::Type::MlProgram(p)) }.encode_to_vec()
}

#[test]
fn unsupported_opset_names_the_function() {
    let mut p = tiny_program();
    let f = p.functions.get_mut("main").unwrap();
    let block = f.block_specializations.remove("CoreML8").unwrap();
    f.opset = "CoreML9".into();
    f.block_specializations.insert("CoreML9".into(), block);
    let errs = program_from_bytes(&encode(p), "x.mlmodel").unwrap_err();
    assert!(errs[0].message.starts_with("function `main`: unsupported opset `CoreML9`"), "{}", errs[0].message);
}

#[test]
fn control_flow_and_bad_values_name_the_op() {
    let mut p = tiny_program();
    let ops = &mut p.functions.get_mut("main").unwrap().block_specializations.get_mut("CoreML8").unwrap().operations;
    let relu = ops.iter_mut().find(|o| o.r#type == "relu").unwrap();
    relu.blocks.push(proto::Block::default());
    let axis = ops.iter_mut().find(|o| o.outputs[0].name == "probs_axis_0").unwrap();
    axis.attributes.get_mut("val").unwrap().value = None;
    let errs = program_from_bytes(&encode(p), "x.mlmodel").unwrap_err();
    let messages: Vec<_> = errs.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "function `main`, op `const` (`probs_axis_0`): attribute `val`: a value has no contents",
            "function `main`, op `relu` (`r_cast_fp16`): nested blocks (control flow) are not supported",
        ]
    );
}

#[test]
fn manifest_errors_name_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("bad.mlpackage");
    std::fs::create_dir_all(&pkg).unwrap();
    let errs = load_mil(&pkg).unwrap_err();
    assert!(errs[0].file.ends_with("Manifest.json") && errs[0].message.contains("cannot read the package manifest"));
    std::fs::write(pkg.join("Manifest.json"), r#"{"itemInfoEntries": {}, "rootModelIdentifier": "X"}"#).unwrap();
    let errs = load_mil(&pkg).unwrap_err();
    assert!(errs[0].message.contains("root model `X` is not among the itemInfoEntries"), "{}", errs[0].message);
    let escaping = r#"{"itemInfoEntries": {"X": {"path": "../../model.mlmodel"}}, "rootModelIdentifier": "X"}"#;
    std::fs::write(pkg.join("Manifest.json"), escaping).unwrap();
    let errs = load_mil(&pkg).unwrap_err();
    assert!(errs[0].message.contains("leaves the model folder"), "{}", errs[0].message);
    std::fs::write(pkg.join("Manifest.json"), "{").unwrap();
    let errs = load_mil(&pkg).unwrap_err();
    assert!(errs[0].message.contains("not a package manifest"), "{}", errs[0].message);
}

#[test]
fn package_weight_errors_name_the_const_and_the_model_file() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("tiny.mlpackage");
    let src = package("coremltools-tiny");
    std::fs::create_dir_all(pkg.join("Data/com.apple.CoreML/weights")).unwrap();
    std::fs::copy(src.join("Manifest.json"), pkg.join("Manifest.json")).unwrap();
    let model = "Data/com.apple.CoreML/model.mlmodel";
    std::fs::copy(src.join(model), pkg.join(model)).unwrap();
    let weights = std::fs::read(src.join("Data/com.apple.CoreML/weights/weight.bin")).unwrap();
    std::fs::write(pkg.join("Data/com.apple.CoreML/weights/weight.bin"), &weights[..4416]).unwrap();
    let errs = load_mil(&pkg).unwrap_err();
    // The file ends where q_weight's record (offset 4416) would start: the blobs at 64 and
    // 4224 resolve, q_weight and the four after it do not.
    assert_eq!(errs.len(), 5, "{errs:?}");
    assert!(errs[0].message.starts_with("const `q_weight_0_to_fp16`: "), "{}", errs[0].message);
    assert!(errs[0].file.ends_with(model) && errs[0].span.is_none());
}

#[test]
fn loader_rejects_unknown_folders_and_missing_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let errs = load_mil(tmp.path()).unwrap_err();
    assert!(errs[0].message.contains("neither a compiled model"), "{}", errs[0].message);
    let errs = load_mil(&tmp.path().join("nope.mil")).unwrap_err();
    assert!(errs[0].message.contains("cannot read the model"), "{}", errs[0].message);
}

/// A bare `model.mlmodel` file loads with its folder as `@model_path`.
#[test]
fn bare_protobuf_model_file_loads() {
    let m = load_mil(&package("coremltools-multi").join("Data/com.apple.CoreML/model.mlmodel")).unwrap();
    assert_eq!(m.blobs.len(), 1);
    assert_eq!(m.program.functions.len(), 2);
}
