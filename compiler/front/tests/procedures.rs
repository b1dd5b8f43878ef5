//! The version 1.0.10 ProcedureList form: the recorded ANEForge fixture, procedures built
//! here with the plist crate, `tests/netplists/two_procedures.net.plist`, and one test per
//! error of the form.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::{parse_netplist_bytes, parse_netplist_procedures, parse_netplist_procedures_bytes};
use anec_front::{FrontError, Procedure, Subject};
use anec_ir::{print_module, verify_module, Attr, DType, Layout, Location, Module, OpCode, TensorType};
use common::*;
use plist::{Dictionary, Value};
use std::path::{Path, PathBuf};

const FIXTURE: &str = "procedurelist-conv_relu.net.plist";

/// A directory holding the fixture's weight files (not recorded): `weights.1` holds the
/// one fp16 kernel value 2.0 its conv reads, `weights.0` is empty.
fn fixture_weights() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("weights.0"), []).expect("write");
    std::fs::write(dir.path().join("weights.1"), [0x00, 0x40]).expect("write");
    dir
}

/// The fixture's procedures, its weights read from `dir`.
fn fixture_procedures(dir: &Path) -> Vec<Procedure> {
    let path = fixture(FIXTURE);
    let bytes = std::fs::read(&path).expect("fixture");
    parse_netplist_procedures_bytes(&bytes, &path.display().to_string(), dir).expect("parses")
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    let i = text.lines().position(|l| l.contains(needle)).expect("found");
    u32::try_from(i + 1).expect("small")
}

/// The module with every op and port location cleared.
fn without_locations(mut m: Module) -> Module {
    for op in &mut m.ops {
        op.loc = Location::default();
    }
    for p in m.inputs.iter_mut().chain(m.outputs.iter_mut()) {
        p.loc = Location::default();
    }
    m
}

#[test]
fn the_fixture_is_one_procedure_over_a_conv_and_a_relu() {
    let dir = fixture_weights();
    let procs = fixture_procedures(dir.path());
    let [p] = procs.as_slice() else { panic!("one procedure, got {}", procs.len()) };
    let m = &p.module;
    assert_eq!((p.name.as_str(), m.name.as_str()), ("procedure_conv_relu-1", "procedure_conv_relu-1"));
    verify_module(m).expect("verifies");
    let [x] = m.inputs.as_slice() else { panic!("one input") };
    assert_eq!(x.name, "x");
    assert_eq!(m.ty(x.value), Some(&TensorType::nchw(1, 1, 1, 4, DType::F16)));
    assert_eq!(x.layout, Layout { interleave: Some(1), ..Layout::default() });
    let text = std::fs::read_to_string(fixture(FIXTURE)).expect("text");
    assert_eq!(x.loc.line, line_of(&text, "<key>InputName</key>"));
    let [conv, relu] = m.ops.as_slice() else { panic!("two ops") };
    assert_eq!(
        (conv.opcode, conv.name.as_str(), conv.operands.as_slice()),
        (OpCode::Conv, "conv1x1-1", &[x.value][..])
    );
    assert_eq!((relu.opcode, relu.name.as_str()), (OpCode::Neuron, "relu-1"));
    assert_eq!(
        (relu.operands.as_slice(), relu.attr("mode")),
        (conv.results.as_slice(), Some(&Attr::Str("relu".into())))
    );
    assert_eq!(f16s(&m.resources["conv1x1-1.weights"].bytes), vec![2.0]);
    let [y] = m.outputs.as_slice() else { panic!("one output") };
    assert_eq!((y.name.as_str(), y.value), ("y", relu.results[0]));
    assert_eq!(y.layout, Layout { interleave: Some(1), ..Layout::default() });
    assert_eq!(y.loc.line, line_of(&text, "<key>OutputName</key>"));
}

/// The fixture rewritten in the 1.0.9 form: its network renamed after the procedure, with
/// `Inputs` (an entry `x` holding the InputList item's keys) and `Outputs` (its existing
/// entry `y`), and no ProcedureList.
fn fixture_as_networks_form() -> Dictionary {
    let mut t = Value::from_file(fixture(FIXTURE)).expect("plist").into_dictionary().expect("dict");
    let mut input = item(&mut t, 0, "InputList").clone();
    for key in ["InputName", "Name", "OperationName"] {
        input.remove(key);
    }
    let mut net = t.remove("network_conv_relu-1").and_then(Value::into_dictionary).expect("network");
    net.insert("Inputs".into(), strs(&["x"]));
    net.insert("Outputs".into(), strs(&["y"]));
    net.insert("x".into(), Value::Dictionary(input));
    dict(&[
        ("Networks", strs(&["procedure_conv_relu-1"])),
        ("Version", s("1.0.9")),
        ("procedure_conv_relu-1", Value::Dictionary(net)),
    ])
}

#[test]
fn the_fixture_agrees_with_its_networks_form() {
    let dir = fixture_weights();
    let procs = fixture_procedures(dir.path());
    let old = parse_in(dir.path(), &fixture_as_networks_form()).expect("1.0.9 form parses");
    let new = procs.into_iter().next().expect("one").module;
    assert_eq!(print_module(&without_locations(new)), print_module(&without_locations(old)));
}

#[test]
fn the_networks_form_is_one_procedure_named_after_its_network() {
    let dir = weights_dir(9);
    let bytes = xml(&top(conv_net()));
    let procs = parse_netplist_procedures_bytes(&bytes, "t.plist", dir.path()).expect("parses");
    let module = parse_netplist_bytes(&bytes, "t.plist", dir.path()).expect("parses");
    assert_eq!(procs, vec![Procedure { name: "net".into(), module }]);
}

/// A network `net_<unit>` of one neuron unit `unit` of type `mode` reading `x`.
fn neuron_network(unit: &str, mode: &str) -> Value {
    let params = Value::Dictionary(dict(&[("Type", s(mode))]));
    let neuron = dict(&[
        ("Bottom", strs(&["x"])),
        ("Name", s(unit)),
        ("OutputType", s("Float16")),
        ("Params", params),
        ("Type", s("Neuron")),
    ]);
    Value::Dictionary(dict(&[("Units", strs(&[unit])), ("Weights", strs(&[])), (unit, Value::Dictionary(neuron))]))
}

/// A procedure with input `x` (1x4x1x8 fp16) read by `unit`, the networks `nets`, and
/// output `y` produced by `unit`.
fn procedure(name: &str, unit: &str, nets: &[&str]) -> Dictionary {
    let input = dict(&[
        ("BatchSize", int(1)),
        ("InputChannels", int(4)),
        ("InputDepth", int(1)),
        ("InputHeight", int(1)),
        ("InputInterleave", int(1)),
        ("InputName", s("x")),
        ("InputType", s("Float16")),
        ("InputWidth", int(8)),
        ("Name", s(unit)),
        ("OperationName", s("op0")),
    ]);
    let ops = nets
        .iter()
        .enumerate()
        .map(|(i, n)| Value::Dictionary(dict(&[("NetworkName", s(n)), ("OperationName", s(&format!("op{i}")))])))
        .collect();
    let output = dict(&[
        ("Name", s(unit)),
        ("OperationName", s("op0")),
        ("OutputInterleave", int(1)),
        ("OutputName", s("y")),
        ("OutputType", s("Float16")),
    ]);
    dict(&[
        ("InputList", Value::Array(vec![Value::Dictionary(input)])),
        ("Name", s(name)),
        ("OperationList", Value::Array(ops)),
        ("OutputList", Value::Array(vec![Value::Dictionary(output)])),
    ])
}

/// Procedures `relu_fn` (network `net_relu`: one ReLU) and `sigmoid_fn` (`net_sigmoid`:
/// one Sigmoid), the same file as `tests/netplists/two_procedures.net.plist`.
fn two_procedures() -> Dictionary {
    let list = [procedure("relu_fn", "relu", &["net_relu"]), procedure("sigmoid_fn", "sigmoid", &["net_sigmoid"])];
    dict(&[
        ("Networks", strs(&["net_relu", "net_sigmoid"])),
        ("ProcedureList", Value::Array(list.into_iter().map(Value::Dictionary).collect())),
        ("Version", s("1.0.10")),
        ("net_relu", neuron_network("relu", "ReLU")),
        ("net_sigmoid", neuron_network("sigmoid", "Sigmoid")),
    ])
}

/// Parses a top-level dictionary as `t.plist` into its procedures.
fn procedures_of(t: &Dictionary) -> Result<Vec<Procedure>, FrontError> {
    parse_netplist_procedures_bytes(&xml(t), "t.plist", Path::new("."))
}

/// Checks a module of [`two_procedures`]: x -> one neuron of `mode` -> y.
fn check_neuron_module(m: &Module, name: &str, mode: &str) {
    verify_module(m).expect("verifies");
    assert_eq!(m.name, name);
    let [x] = m.inputs.as_slice() else { panic!("one input") };
    assert_eq!((x.name.as_str(), m.ty(x.value)), ("x", Some(&TensorType::nchw(1, 4, 1, 8, DType::F16))));
    let [op] = m.ops.as_slice() else { panic!("one op") };
    assert_eq!((op.opcode, op.operands.as_slice()), (OpCode::Neuron, &[x.value][..]));
    assert_eq!(op.attr("mode"), Some(&Attr::Str(mode.into())));
    let [y] = m.outputs.as_slice() else { panic!("one output") };
    assert_eq!((y.name.as_str(), y.value), ("y", op.results[0]));
}

#[test]
fn two_procedures_are_two_modules() {
    let procs = procedures_of(&two_procedures()).expect("parses");
    let [relu, sigmoid] = procs.as_slice() else { panic!("two procedures") };
    assert_eq!((relu.name.as_str(), sigmoid.name.as_str()), ("relu_fn", "sigmoid_fn"));
    check_neuron_module(&relu.module, "relu_fn", "relu");
    check_neuron_module(&sigmoid.module, "sigmoid_fn", "sigmoid");
    // Each procedure's ports are located inside its own entry of the list.
    let (a, b) = (&relu.module.inputs[0].loc, &sigmoid.module.inputs[0].loc);
    assert!(a.line > 0 && b.line > a.line, "{a:?} {b:?}");
    assert!(sigmoid.module.outputs[0].loc.line > relu.module.outputs[0].loc.line);
    let first = parse_netplist_bytes(&xml(&two_procedures()), "t.plist", Path::new(".")).expect("parses");
    assert_eq!(first, relu.module);
}

#[test]
fn binary_plists_read_the_same_procedures() {
    let mut bytes = Vec::new();
    Value::Dictionary(two_procedures()).to_writer_binary(&mut bytes).expect("binary");
    let binary = parse_netplist_procedures_bytes(&bytes, "t.plist", Path::new(".")).expect("parses");
    let text = procedures_of(&two_procedures()).expect("parses");
    let strip = |ps: Vec<Procedure>| ps.into_iter().map(|p| (p.name, without_locations(p.module))).collect::<Vec<_>>();
    assert_eq!(strip(binary), strip(text));
}

#[test]
fn the_two_procedure_file_is_the_one_built_here() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/netplists/two_procedures.net.plist");
    let from_file = parse_netplist_procedures(&path).expect("parses");
    let built = procedures_of(&two_procedures()).expect("parses");
    let strip = |ps: Vec<Procedure>| ps.into_iter().map(|p| (p.name, without_locations(p.module))).collect::<Vec<_>>();
    assert_eq!(strip(from_file), strip(built));
}

#[test]
fn a_procedure_runs_its_networks_in_order_each_with_its_weights() {
    let dir = weights_dir(16);
    let conv_params = dict(&[
        ("KernelHeight", int(1)),
        ("KernelWidth", int(1)),
        ("KernelOffset", int(0)),
        ("KernelType", s("Float16")),
    ]);
    let conv = dict(&[
        ("Bottom", strs(&["relu"])),
        ("OutputChannels", int(4)),
        ("Params", Value::Dictionary(conv_params)),
        ("Type", s("Conv")),
    ]);
    let net_conv =
        dict(&[("Units", strs(&["conv"])), ("Weights", strs(&["w.bin"])), ("conv", Value::Dictionary(conv))]);
    let mut t = two_procedures();
    t.insert("Networks".into(), strs(&["net_relu", "net_conv"]));
    t.insert("net_conv".into(), Value::Dictionary(net_conv));
    at(&mut t, &["net_relu"]).insert("Weights".into(), strs(&["absent.bin"]));
    let mut p = procedure("chain", "conv", &["net_relu", "net_conv"]);
    p.insert(
        "OutputList".into(),
        Value::Array(vec![Value::Dictionary(dict(&[("Name", s("conv")), ("OutputName", s("y"))]))]),
    );
    t.insert("ProcedureList".into(), Value::Array(vec![Value::Dictionary(p)]));
    let procs = parse_netplist_procedures_bytes(&xml(&t), "t.plist", dir.path()).expect("parses");
    let m = &procs[0].module;
    verify_module(m).expect("verifies");
    let names: Vec<_> = m.ops.iter().map(|o| (o.opcode, o.name.as_str())).collect();
    assert_eq!(names, [(OpCode::Neuron, "relu"), (OpCode::Conv, "conv")]);
    assert_eq!(m.ops[1].operands, m.ops[0].results);
    assert_eq!(f16s(&m.resources["conv.weights"].bytes), vec![2.0; 16]);
    assert_eq!(m.outputs[0].value, m.ops[1].results[0]);
}

/// The error of parsing `t`, which must be one line, start with `t.plist:<line>:` and name
/// the procedure `proc`.
fn procedure_error(t: &Dictionary, proc: &str) -> FrontError {
    let e = procedures_of(t).map(|_| ()).expect_err("an error");
    let site = e.site().expect("a site");
    assert_eq!(site.subject, Subject::Procedure(proc.into()), "{e}");
    assert!(site.line > 0, "{e}");
    let msg = e.to_string();
    assert!(!msg.contains('\n') && msg.starts_with(&format!("t.plist:{}: procedure '{proc}': ", site.line)), "{msg}");
    e
}

/// The procedure `ProcedureList[i]` of `t`.
fn proc_at(t: &mut Dictionary, i: usize) -> &mut Dictionary {
    t.get_mut("ProcedureList")
        .and_then(Value::as_array_mut)
        .and_then(|a| a.get_mut(i))
        .and_then(Value::as_dictionary_mut)
        .expect("procedure")
}

/// Item 0 of the list `list` of procedure `i`.
fn item<'a>(t: &'a mut Dictionary, i: usize, list: &str) -> &'a mut Dictionary {
    proc_at(t, i)
        .get_mut(list)
        .and_then(Value::as_array_mut)
        .and_then(|a| a.first_mut())
        .and_then(Value::as_dictionary_mut)
        .expect("item")
}

#[test]
fn an_operation_must_name_a_network() {
    let mut t = two_procedures();
    item(&mut t, 1, "OperationList").insert("NetworkName".into(), s("net_ghost"));
    let e = procedure_error(&t, "sigmoid_fn");
    let FrontError::BadValue { key, within, .. } = &e else { panic!("{e:?}") };
    assert_eq!((key.as_str(), within.as_str()), ("NetworkName", " in OperationList[0]"));
    assert!(e.to_string().ends_with(
        "key 'NetworkName' in OperationList[0]: 'net_ghost' is not a network (Networks lists: net_relu, net_sigmoid)"
    ));
    let mut t = two_procedures();
    t.insert("Networks".into(), strs(&["net_relu", "net_sigmoid", "net_none"]));
    item(&mut t, 0, "OperationList").insert("NetworkName".into(), s("net_none"));
    let e = procedure_error(&t, "relu_fn");
    assert!(e.to_string().ends_with("network 'net_none' has no dictionary at the top level"), "{e}");
}

#[test]
fn an_output_must_name_a_unit() {
    let mut t = two_procedures();
    item(&mut t, 0, "OutputList").insert("Name".into(), s("sigmoid"));
    let e = procedure_error(&t, "relu_fn");
    let FrontError::BadValue { key, within, .. } = &e else { panic!("{e:?}") };
    assert_eq!((key.as_str(), within.as_str()), ("Name", " in OutputList[0]"));
    assert!(e.to_string().ends_with("no unit of the procedure's networks is named 'sigmoid'"), "{e}");
}

#[test]
fn an_input_needs_its_shape() {
    let mut t = two_procedures();
    item(&mut t, 1, "InputList").remove("InputWidth");
    let e = procedure_error(&t, "sigmoid_fn");
    let FrontError::MissingKey { key, within, .. } = &e else { panic!("{e:?}") };
    assert_eq!((key.as_str(), within.as_str()), ("InputWidth", " in InputList[0]"));
    let line = e.site().map(|s| s.line);
    let text = String::from_utf8(xml(&t)).expect("utf-8");
    let second_input = text.match_indices("<key>InputName</key>").nth(1).map(|(at, _)| text[..at].lines().count());
    assert_eq!(line, second_input.and_then(|n| u32::try_from(n).ok()), "{e}");
}

#[test]
fn procedure_names_differ() {
    let mut t = two_procedures();
    proc_at(&mut t, 1).insert("Name".into(), s("relu_fn"));
    let e = procedure_error(&t, "relu_fn");
    assert!(e.to_string().ends_with("key 'Name': 'relu_fn' is also the name of an earlier procedure"), "{e}");
}

#[test]
fn a_procedure_runs_something() {
    let mut t = two_procedures();
    proc_at(&mut t, 0).insert("OperationList".into(), Value::Array(Vec::new()));
    let e = procedure_error(&t, "relu_fn");
    assert!(e.to_string().ends_with("key 'OperationList': lists no operation"), "{e}");
}

#[test]
fn malformed_lists() {
    let mut t = two_procedures();
    t.insert("ProcedureList".into(), Value::Array(Vec::new()));
    let e = procedures_of(&t).map(|_| ()).expect_err("an error");
    assert_eq!(e.to_string(), "t.plist: top level: key 'ProcedureList': lists no procedure");
    let mut t = two_procedures();
    proc_at(&mut t, 1).remove("Name");
    let e = procedures_of(&t).map(|_| ()).expect_err("an error");
    let msg = e.to_string();
    assert!(msg.starts_with("t.plist:") && msg.ends_with("top level: missing key 'Name' in ProcedureList[1]"), "{msg}");
    let mut t = two_procedures();
    proc_at(&mut t, 0).insert("InputList".into(), Value::Array(vec![s("x")]));
    let e = procedure_error(&t, "relu_fn");
    assert!(e.to_string().ends_with("key 'InputList[0]' must be a dictionary, found a string"), "{e}");
}

/// Every leaf path (keys and `#i` indices) of a value.
fn leaf_paths(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Dictionary(d) => d.iter().map(|(k, c)| (k.clone(), c)).collect(),
        Value::Array(a) => a.iter().enumerate().map(|(i, c)| (format!("#{i}"), c)).collect(),
        _ => return out.push(path.clone()),
    };
    for (k, c) in children {
        path.push(k);
        leaf_paths(c, path, out);
        path.pop();
    }
}

/// The value at a leaf path.
fn leaf_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match (v, k.strip_prefix('#')) {
        (Value::Array(a), Some(i)) => a.get_mut(i.parse::<usize>().ok()?),
        (Value::Dictionary(d), None) => d.get_mut(k),
        _ => None,
    })
}

/// Parses bytes; an error must be one non-empty line.
fn no_panic(bytes: &[u8]) {
    if let Err(e) = parse_netplist_procedures_bytes(bytes, "t.plist", Path::new(".")) {
        let msg = e.to_string();
        assert!(!msg.contains('\n') && !msg.is_empty(), "{msg:?}");
    }
}

#[test]
fn no_input_makes_the_procedure_reader_panic() {
    let original = Value::Dictionary(two_procedures());
    let replacements =
        [int(-1), int(i64::MAX), s(""), s("x"), Value::Array(Vec::new()), Value::Dictionary(Dictionary::new())];
    let mut paths = Vec::new();
    leaf_paths(&original, &mut Vec::new(), &mut paths);
    for p in &paths {
        for r in &replacements {
            let mut v = original.clone();
            if let Some(leaf) = leaf_mut(&mut v, p) {
                *leaf = r.clone();
            }
            no_panic(&xml(v.as_dictionary().expect("dict")));
        }
    }
    let bytes = xml(&two_procedures());
    for len in (0..bytes.len()).step_by(5) {
        no_panic(&bytes[..len]);
    }
    // (A newline inside a name would print inside the message, as with the 1.0.9 reader.)
    for (at, byte) in [b'<', b'>', b'/', b'x', b' '].iter().cycle().enumerate().take(bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[at] = *byte;
        no_panic(&b);
    }
}

#[test]
fn error_messages() {
    let edits: [fn(&mut Dictionary); 6] = [
        |t| {
            item(t, 1, "OperationList").insert("NetworkName".into(), s("net_ghost"));
        },
        |t| {
            item(t, 0, "OutputList").insert("Name".into(), s("ghost"));
        },
        |t| {
            item(t, 1, "InputList").remove("InputWidth");
        },
        |t| {
            proc_at(t, 1).insert("Name".into(), s("relu_fn"));
        },
        |t| {
            proc_at(t, 0).insert("OperationList".into(), Value::Array(Vec::new()));
        },
        |t| {
            proc_at(t, 1).remove("Name");
        },
    ];
    let mut all = String::new();
    for edit in edits {
        let mut t = two_procedures();
        edit(&mut t);
        let e = procedures_of(&t).map(|_| ()).expect_err("an error");
        all.push_str(&format!("{e}\n"));
    }
    insta::assert_snapshot!(all);
}
