//! Documented behaviours on small netplists: weight file resolution, defaults, the `Step`
//! order, neuron and GOC parameters, and binary plists.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::parse_netplist_bytes;
use anec_ir::{verify_module, Attr, DType, TensorType};
use common::*;
use plist::{Dictionary, Value};

fn ok(dir: &std::path::Path, t: &Dictionary) -> anec_ir::Module {
    let m = parse_in(dir, t).unwrap_or_else(|e| panic!("{e}"));
    if let Err(errs) = verify_module(&m) {
        panic!("does not verify: {errs:?}\n{}", summary(&m));
    }
    m
}

#[test]
fn weight_files_resolve_lazily() {
    // Only units that read weights open their file: a neuron network listing a missing file
    // parses (as plists/sum.plist does with its /private/var paths).
    let unit = dict(&[
        ("Bottom", s("image")),
        ("Params", Value::Dictionary(dict(&[("Type", s("ReLU"))]))),
        ("Type", s("Neuron")),
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    ok(dir.path(), &top(net_with(unit, &["/private/var/nowhere.weights", "gone.bin"])));
}

#[test]
fn absolute_weight_paths_are_used_as_is() {
    let wdir = weights_dir(9);
    let abs = wdir.path().join("w.bin");
    let mut net = conv_net();
    net.insert("Weights".into(), strs(&[abs.to_str().expect("utf-8 path")]));
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let m = ok(elsewhere.path(), &top(net));
    assert_eq!(f16s(&m.resources["layer.weights"].bytes), vec![2.0; 9]);
}

#[test]
fn kernel_index_defaults_to_zero() {
    let dir = weights_dir(9);
    let mut t = top(conv_net());
    at(&mut t, &["net", "layer", "Params"]).remove("KernelIndex");
    let m = ok(dir.path(), &t);
    assert_eq!(m.resources["layer.weights"].bytes.len(), 18);
}

/// A 3x3 conv, 3 -> 3 channels, over a 1x3x4x6 input with `step`.
fn strided(step: Value) -> Dictionary {
    let mut net = conv_net();
    let image = at(&mut net, &["image"]);
    image.insert("InputHeight".into(), int(4));
    image.insert("InputWidth".into(), int(6));
    let p = at(&mut net, &["layer", "Params"]);
    p.insert("KernelHeight".into(), int(3));
    p.insert("KernelWidth".into(), int(3));
    p.insert("Step".into(), step);
    top(net)
}

#[test]
fn step_is_width_first() {
    let dir = weights_dir(81);
    let m = ok(dir.path(), &strided(Value::Array(vec![int(2), int(1)])));
    let conv = &m.ops[0];
    assert_eq!(conv.attr("stride").and_then(Attr::as_int_array), Some(vec![1, 2]));
    assert_eq!(result_ty(&m, conv), TensorType::nchw(1, 3, 2, 2, DType::F16));
    let m = ok(dir.path(), &strided(Value::Array(vec![int(1), int(1), int(1)])));
    assert_eq!(result_ty(&m, &m.ops[0]), TensorType::nchw(1, 3, 2, 4, DType::F16));
}

#[test]
fn pads_groups_and_reuse() {
    let dir = weights_dir(27);
    let mut t = strided(Value::Array(vec![int(1), int(1)]));
    let u = at(&mut t, &["net", "layer"]);
    u.insert("NumGroups".into(), int(3));
    let p = at(&mut t, &["net", "layer", "Params"]);
    for (k, v) in [("PadTop", 1), ("PadBot", 1), ("PadLeft", 1), ("PadRight", 0)] {
        p.insert(k.into(), int(v));
    }
    p.insert("KernelGroupReuse".into(), Value::Boolean(true));
    let m = ok(dir.path(), &t);
    let conv = &m.ops[0];
    assert_eq!(conv.attr("pad").and_then(Attr::as_int_array), Some(vec![1, 1, 1, 0]));
    assert_eq!(conv.attr("groups"), Some(&Attr::Int(3)));
    assert_eq!(conv.attr("kernel_group_reuse"), Some(&Attr::Bool(true)));
    let (_, wty) = conv.attr("weights").and_then(Attr::as_resource).expect("weights");
    assert_eq!(*wty, TensorType::nchw(3, 1, 3, 3, DType::F16));
    assert_eq!(result_ty(&m, conv), TensorType::nchw(1, 3, 4, 5, DType::F16));
}

/// A neuron network of `ty` with extra params.
fn neuron(ty: &str, extra: &[(&str, Value)]) -> Dictionary {
    let mut p = dict(extra);
    p.insert("Type".into(), s(ty));
    let unit = dict(&[("Bottom", s("image")), ("Params", Value::Dictionary(p)), ("Type", s("Neuron"))]);
    top(net_with(unit, &[]))
}

#[test]
fn every_neuron_mode_lowers_and_verifies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let apple = [
        "ReLU",
        "Sigmoid",
        "SigmoidHighPrecision",
        "Tanh",
        "ClampedReLU",
        "LeakyReLU",
        "ReLUN",
        "Swish",
        "SwishHard",
        "SigmoidHard",
        "Sqr",
        "Sqrt",
        "Rsqrt",
        "Inv",
        "Log2",
        "Exp2",
        "Exp",
        "ELU",
        "Sign",
        "Sin",
        "Cos",
        "GELU",
        "Degamma",
        "Trunc",
        "RoundNearest",
        "Floor",
        "Ceil",
        "Erf",
        "ThresholdReLU",
        "Gamma",
        "Abs",
    ];
    let mut modes = Vec::new();
    for ty in apple {
        let m = ok(dir.path(), &neuron(ty, &[]));
        modes.push(m.ops[0].attr("mode").and_then(Attr::as_str).map(String::from));
    }
    modes.sort();
    modes.dedup();
    assert_eq!(modes.len(), 31);
}

#[test]
fn neuron_parameters_are_fp16_bit_patterns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = ok(dir.path(), &neuron("LeakyReLU", &[("ReluSlope", int(0x3800)), ("ReluOffset", int(0))]));
    assert_eq!(m.ops[0].attr("alpha"), Some(&Attr::Float(0.5)));
    assert_eq!(m.ops[0].attr("beta"), Some(&Attr::Float(0.0)));
    // Apple writes them with numberWithShort:, so 0xC800 (-8.0) may appear as -14336.
    let m = ok(dir.path(), &neuron("ClampedReLU", &[("ReluMin", int(-14336)), ("ReluMax", int(0x4600))]));
    assert_eq!(m.ops[0].attr("alpha"), Some(&Attr::Float(-8.0)));
    assert_eq!(m.ops[0].attr("beta"), Some(&Attr::Float(6.0)));
    let m = ok(dir.path(), &neuron("ELU", &[("EluAlpha", Value::Real(0.25))]));
    assert_eq!(m.ops[0].attr("alpha"), Some(&Attr::Float(0.25)));
}

#[test]
fn goc_per_channel_scale_and_scalar_bias() {
    let dir = weights_dir(9);
    let group =
        dict(&[("ScaleCount", int(3)), ("ScaleIndex", int(0)), ("ScaleOffset", int(2)), ("ScaleType", s("Float16"))]);
    let p = dict(&[("BiasScalar", int(15360)), ("BiasScaleGroupData", Value::Dictionary(group))]);
    let unit = dict(&[("Bottom", s("image")), ("Params", Value::Dictionary(p)), ("Type", s("GOC"))]);
    let m = ok(dir.path(), &top(net_with(unit, &["w.bin"])));
    let goc = &m.ops[0];
    assert_eq!(goc.attr("bias"), Some(&Attr::Float(1.0)));
    let (key, ty) = goc.attr("scale_data").and_then(Attr::as_resource).expect("scale_data");
    assert_eq!((key, *ty), ("layer.scale_data", TensorType::nchw(1, 3, 1, 1, DType::F16)));
    assert_eq!(f16s(&m.resources[key].bytes), vec![2.0; 3]);
}

#[test]
fn binary_plists_parse_like_xml_without_lines() {
    let path = fixture("simple/conv.plist");
    let value = Value::from_file(&path).expect("fixture");
    let mut bin = Vec::new();
    value.to_writer_binary(&mut bin).expect("binary");
    let base = fixture("simple");
    let from_xml = anec_front::parse_netplist(&path).expect("xml parses");
    let file = path.display().to_string();
    let mut from_bin = parse_netplist_bytes(&bin, &file, &base).expect("binary parses");
    assert_eq!(from_bin.ops[0].loc.line, 0);
    for op in &mut from_bin.ops {
        op.loc = from_xml.ops[0].loc.clone();
    }
    for p in from_bin.inputs.iter_mut().chain(from_bin.outputs.iter_mut()) {
        p.loc.line = 0;
        p.loc.col = 0;
    }
    let mut from_xml = from_xml;
    for p in from_xml.inputs.iter_mut().chain(from_xml.outputs.iter_mut()) {
        p.loc.line = 0;
        p.loc.col = 0;
    }
    assert_eq!(from_bin, from_xml);
}
