//! The recorded Apple netplists: which parse, which fail and why, and what they lower to.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::{parse_netplist, FrontError};
use anec_ir::{verify_module, Attr, DType, Layout, OpCode, TensorType};
use common::*;
use std::path::Path;

/// What a fixture is expected to do.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Parses,
    /// Fails on the weight file `Weights[i]`.
    MissingWeightFile(usize),
}

/// Every netplist fixture and its expected outcome.
const FIXTURES: [(&str, Expect); 24] = [
    ("net.plist", Expect::Parses),
    // ProcedureList form; its conv reads weights.1, not recorded (tests/procedures.rs
    // supplies one).
    ("procedurelist-conv_relu.net.plist", Expect::MissingWeightFile(1)),
    ("plists/broadcast.plist", Expect::Parses),
    ("plists/concat.plist", Expect::Parses),
    // Its conv reads /private/var/.../model.espresso.weights, recorded on a Mac.
    ("plists/gemm.plist", Expect::MissingWeightFile(0)),
    ("plists/goc.plist", Expect::Parses),
    ("plists/inputview.plist", Expect::Parses),
    ("plists/neuron.plist", Expect::Parses),
    ("plists/reshape.plist", Expect::Parses),
    ("plists/scaled.plist", Expect::Parses),
    ("plists/sum.plist", Expect::Parses),
    ("simple/concat.plist", Expect::Parses),
    ("simple/conv.plist", Expect::Parses),
    ("simple/convneuron.plist", Expect::Parses),
    ("simple/convuint8.plist", Expect::Parses),
    ("simple/doubleconv.plist", Expect::Parses),
    ("simple/doubleconvrev.plist", Expect::Parses),
    ("simple/doubleconvsout.plist", Expect::Parses),
    ("simple/doubleneuron.plist", Expect::Parses),
    // Its conv reads /tmp/zero (made with dd on the recording machine).
    ("simple/gemm.plist", Expect::MissingWeightFile(0)),
    ("simple/goc.plist", Expect::Parses),
    ("simple/neuron.plist", Expect::Parses),
    ("simple/quadconv.plist", Expect::Parses),
    ("simple/reshape.plist", Expect::Parses),
];

fn outcome(rel: &str) -> Result<anec_ir::Module, FrontError> {
    parse_netplist(&fixture(rel))
}

#[test]
fn the_table_lists_every_fixture() {
    let mut found = vec!["net.plist".to_string(), "procedurelist-conv_relu.net.plist".to_string()];
    for dir in ["plists", "simple"] {
        for e in std::fs::read_dir(fixtures().join(dir)).expect("fixture dir") {
            let name = e.expect("entry").file_name().to_string_lossy().into_owned();
            if name.ends_with(".plist") {
                found.push(format!("{dir}/{name}"));
            }
        }
    }
    found.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|(f, _)| f.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn every_fixture_parses_or_fails_clearly() {
    for (rel, expect) in FIXTURES {
        if rel == "simple/gemm.plist" && Path::new("/tmp/zero").exists() {
            continue; // someone made the file; the outcome then depends on its size
        }
        match (outcome(rel), expect) {
            (Ok(m), Expect::Parses) => {
                if let Err(errs) = verify_module(&m) {
                    panic!("{rel}: parsed module does not verify: {errs:?}");
                }
            }
            (Err(FrontError::MissingWeightFile { index, .. }), Expect::MissingWeightFile(want)) if index == want => {}
            (got, want) => panic!("{rel}: expected {want:?}, got {:?}", got.map(|m| summary(&m))),
        }
    }
}

#[test]
fn failing_fixtures_name_file_unit_and_path() {
    let err = outcome("simple/gemm.plist").map(|_| ()).err();
    if !Path::new("/tmp/zero").exists() {
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("simple/gemm.plist:45: unit 'probs': weight file '/tmp/zero' (Weights[0]) cannot be opened"),
            "{msg}"
        );
    }
    let msg = outcome("procedurelist-conv_relu.net.plist").err().map(|e| e.to_string());
    let msg = msg.unwrap_or_default();
    assert!(
        msg.contains("procedurelist-conv_relu.net.plist:79: unit 'conv1x1-1': weight file 'weights.1' (Weights[1]) cannot be opened"),
        "{msg}"
    );
}

#[test]
fn conv_plist_is_a_3_to_3_1x1_conv_of_twos() {
    let m = outcome("simple/conv.plist").expect("parses");
    assert_eq!(m.name, "net");
    let [input] = m.inputs.as_slice() else { panic!("one input") };
    assert_eq!(input.name, "image");
    assert_eq!(m.ty(input.value), Some(&TensorType::nchw(1, 3, 1, 1, DType::F16)));
    assert_eq!(input.layout, Layout::default());
    let [conv] = m.ops.as_slice() else { panic!("one op") };
    assert_eq!((conv.opcode, conv.name.as_str()), (OpCode::Conv, "my_layer"));
    assert_eq!(conv.operands, vec![input.value]);
    assert_eq!(result_ty(&m, conv), TensorType::nchw(1, 3, 1, 1, DType::F16));
    let ints = |k: &str| conv.attr(k).and_then(Attr::as_int_array);
    assert_eq!(ints("kernel"), Some(vec![1, 1]));
    assert_eq!(ints("stride"), Some(vec![1, 1]));
    assert_eq!(ints("pad"), Some(vec![0, 0, 0, 0]));
    assert_eq!(conv.attr("groups"), Some(&Attr::Int(1)));
    assert_eq!(conv.attr("kernel_group_reuse"), Some(&Attr::Bool(false)));
    let (key, wty) = conv.attr("weights").and_then(Attr::as_resource).expect("weights");
    assert_eq!(key, "my_layer.weights");
    assert_eq!(*wty, TensorType::nchw(3, 3, 1, 1, DType::F16));
    let blob = &m.resources[key];
    assert_eq!(blob.dtype, DType::F16);
    assert_eq!(f16s(&blob.bytes), vec![2.0; 9]);
    assert_eq!(conv.loc.line, 46);
    assert!(conv.loc.file.ends_with("simple/conv.plist"));
    let [out] = m.outputs.as_slice() else { panic!("one output") };
    assert_eq!((out.name.as_str(), out.value), ("probs@output", conv.results[0]));
}

#[test]
fn neuron_plist_is_a_sigmoid_over_77() {
    let m = outcome("simple/neuron.plist").expect("parses");
    let [op] = m.ops.as_slice() else { panic!("one op") };
    assert_eq!(op.opcode, OpCode::Neuron);
    assert_eq!(op.attr("mode"), Some(&Attr::Str("sigmoid".into())));
    assert_eq!(op.attrs.len(), 1);
    assert_eq!(result_ty(&m, op), TensorType::nchw(1, 1, 1, 77, DType::F16));
}

#[test]
fn sum_plist_adds_image_and_image2() {
    let m = outcome("plists/sum.plist").expect("parses");
    let names: Vec<&str> = m.inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["image2", "image"]);
    let (image2, image) = (m.inputs[0].value, m.inputs[1].value);
    let [op] = m.ops.as_slice() else { panic!("one op") };
    assert_eq!(op.opcode, OpCode::ScaledElementwise);
    assert_eq!(op.operands, vec![image, image2]);
    assert_eq!(op.attr("kind"), Some(&Attr::Str("add".into())));
    assert_eq!(op.attr("scale"), Some(&Attr::Float(1.0)));
    assert_eq!(result_ty(&m, op), TensorType::nchw(1, 64, 1, 1, DType::F16));
    let layout = Layout { row_stride: Some(64), plane_stride: Some(64), interleave: Some(1), ..Layout::default() };
    assert_eq!(m.inputs[0].layout, layout);
    assert_eq!(m.outputs[0].layout, layout);
}

#[test]
fn net_plist_reads_fp32_conv_at_offset_192_and_per_channel_bias() {
    let m = outcome("net.plist").expect("parses");
    let conv = op(&m, "probs_tmp_0");
    assert_eq!(conv.opcode, OpCode::Conv);
    let (key, wty) = conv.attr("weights").and_then(Attr::as_resource).expect("weights");
    assert_eq!(*wty, TensorType::nchw(2, 3, 1, 1, DType::F32));
    assert_eq!(m.resources[key].dtype, DType::F32);
    // model.espresso.weights holds six fp32 3.0 at bytes 192..216.
    assert_eq!(f32s(&m.resources[key].bytes), vec![3.0; 6]);
    assert_eq!(result_ty(&m, conv), TensorType::nchw(1, 2, 1, 1, DType::F16));
    let goc = op(&m, "probs");
    assert_eq!(goc.opcode, OpCode::GainOffsetControl);
    assert_eq!(goc.operands, conv.results);
    let (bkey, bty) = goc.attr("bias_data").and_then(Attr::as_resource).expect("bias_data");
    assert_eq!((bkey, *bty), ("probs.bias_data", TensorType::nchw(1, 2, 1, 1, DType::F16)));
    assert_eq!(f16s(&m.resources[bkey].bytes), vec![1.0, 1.0]);
    assert_eq!(goc.attrs.len(), 1);
    assert_eq!((conv.loc.line, goc.loc.line), (88, 50));
    assert_eq!(m.outputs[0].value, goc.results[0]);
}

#[test]
fn goc_scalars_are_exact_fp16_values() {
    for rel in ["simple/goc.plist", "plists/goc.plist"] {
        let m = outcome(rel).expect("parses");
        let [op] = m.ops.as_slice() else { panic!("one op") };
        // 16354 = 0x3FE2 = 1.970703125, 20544 = 0x5040 = 34.0
        assert_eq!(op.attr("bias"), Some(&Attr::Float(1.970703125)), "{rel}");
        assert_eq!(op.attr("scale"), Some(&Attr::Float(34.0)), "{rel}");
    }
}

#[test]
fn concat_defaults_to_channel_and_sums() {
    let m = outcome("simple/concat.plist").expect("parses");
    let [op] = m.ops.as_slice() else { panic!("one op") };
    assert_eq!(op.attr("axis"), Some(&Attr::Str("channel".into())));
    assert_eq!(op.operands, vec![m.inputs[1].value, m.inputs[0].value]);
    assert_eq!(result_ty(&m, op), TensorType::nchw(1, 16400, 1, 1, DType::F16));
    let m = outcome("plists/concat.plist").expect("parses");
    let want = TensorType { n: 2, c: 6, d: 4, h: 2, w: 3, dtype: DType::F16 };
    assert_eq!(result_ty(&m, &m.ops[0]), want);
}

#[test]
fn shape_units_infer_their_results() {
    let m = outcome("plists/reshape.plist").expect("parses");
    assert_eq!(result_ty(&m, &m.ops[0]), TensorType::nchw(1, 10, 1, 1, DType::F16));
    let m = outcome("plists/inputview.plist").expect("parses");
    let offsets: Vec<_> = m.ops.iter().map(|o| o.attr("offset").and_then(Attr::as_int)).collect();
    assert_eq!(offsets, [Some(0), Some(3), Some(6)]);
    assert!(m.ops.iter().all(|o| result_ty(&m, o) == TensorType::nchw(1, 3, 2, 2, DType::F16)));
    let outs: Vec<_> = m.outputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(outs, ["out_2@output", "out_1@output", "out_0@output"]);
    let m = outcome("plists/broadcast.plist").expect("parses");
    let b = op(&m, "B_broadcasted_output");
    let axes = b.attr("axes").and_then(Attr::as_array).map(<[Attr]>::len);
    assert_eq!((axes, b.attr("sizes").and_then(Attr::as_int_array)), (Some(4), Some(vec![1, 7, 1, 1])));
    let sew = op(&m, "output");
    assert_eq!(sew.attr("kind"), Some(&Attr::Str("min".into())));
    assert_eq!(result_ty(&m, sew), TensorType::nchw(7, 1, 1, 2, DType::F16));
}

#[test]
fn uint8_conv_and_multiple_outputs() {
    let m = outcome("simple/convuint8.plist").expect("parses");
    let conv = &m.ops[0];
    let (key, wty) = conv.attr("weights").and_then(Attr::as_resource).expect("weights");
    assert_eq!(*wty, TensorType::nchw(3, 1, 1, 1, DType::U8));
    assert_eq!(m.resources[key].bytes, vec![1, 2, 3].into());
    assert_eq!(result_ty(&m, conv), TensorType::nchw(1, 3, 1, 3, DType::U8));
    assert_eq!(m.inputs[0].layout.batch_stride, Some(256));
    let m = outcome("simple/doubleconv.plist").expect("parses");
    let outs: Vec<_> = m.outputs.iter().map(|p| (p.name.as_str(), p.value)).collect();
    assert_eq!(outs, [("probs@output", m.ops[0].results[0]), ("zalt@output", m.ops[1].results[0])]);
}

#[test]
fn fixture_summaries() {
    let mut all = String::new();
    for (rel, expect) in FIXTURES {
        if expect == Expect::Parses {
            let m = outcome(rel).expect("parses");
            all.push_str(&format!("== {rel}\n{}", summary(&m)));
        }
    }
    insta::assert_snapshot!(all);
}
