//! `anec check` and `anec compile` as a user runs them on a model that runs on the engine
//! and one that does not: exit codes 0 / 1 / 2, the JSON document, and a compile that
//! rejects with the rule `anec check` prints and writes nothing; `--print` tables.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_ir::{Attr, Blob, DType, Location, Module, Op, OpCode, Port, TensorType};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

/// `x (1x4x8x32) -> conv 1 x kw (4 -> 8) -> sigmoid` as an `.mlir` file in `dir`.
fn conv_model(dir: &Path, kw: u32) -> PathBuf {
    let mut m = Module::new("net");
    let x = m.add_value(TensorType::nchw(1, 4, 8, 32, DType::F16));
    let loc = |line| Location { file: "model.mlir".into(), line, col: 3 };
    m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: loc(1) });
    let y_ty = TensorType::nchw(1, 8, 8, 32 - kw + 1, DType::F16);
    let y = m.add_value(y_ty);
    let wty = TensorType::nchw(8, 4, 1, kw, DType::F16);
    m.resources
        .insert("conv.weights".into(), Blob { dtype: DType::F16, bytes: vec![0; wty.elements() as usize * 2].into() });
    let attrs = [
        ("kernel", ints(&[1, i64::from(kw)])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[0, 0, 0, 0])),
        ("groups", Attr::Int(1)),
        ("weights", Attr::Resource { name: "conv.weights".into(), ty: wty }),
        ("kernel_group_reuse", Attr::Bool(false)),
    ];
    let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    m.ops.push(Op {
        opcode: OpCode::Conv,
        name: "conv".into(),
        operands: vec![x],
        results: vec![y],
        attrs,
        loc: loc(2),
    });
    let z = m.add_value(y_ty);
    let attrs = [("mode".to_string(), Attr::Str("sigmoid".into()))].into_iter().collect();
    m.ops.push(Op {
        opcode: OpCode::Neuron,
        name: "act".into(),
        operands: vec![y],
        results: vec![z],
        attrs,
        loc: loc(3),
    });
    m.outputs.push(Port { name: "z".into(), value: z, layout: Default::default(), loc: loc(4) });
    let path = dir.join(format!("conv{kw}.mlir"));
    std::fs::write(&path, anec_ir::print_module(&m)).unwrap();
    path
}

#[test]
fn check_exits_0_when_every_layer_runs_on_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let model = conv_model(dir.path(), 3);
    let o = anec(&["check", s(&model), "-t", "h13g"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("engine    conv (anec.conv)"), "{text}");
    assert!(text.contains("engine    act (anec.neuron)"), "{text}");
    assert!(text.contains("verdict: every layer runs on the engine"), "{text}");
    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model), "-t", "h13g", "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("conv3.hwx").exists());
}

#[test]
fn check_exits_1_and_compile_rejects_with_the_same_rule_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = conv_model(dir.path(), 15);
    let rule = "Invalid conv kernel width = 15, It should be in [1, 13]";
    let o = anec(&["check", s(&model), "-t", "h13g"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(text.contains(&format!("rule (validation): {rule}")), "{text}");
    assert!(text.contains("limit conv-kernel-width = 1..=13 on h13g"), "{text}");
    assert!(text.contains("suggestion: kernel 15 > 13 on h13g: write it as kernels of at most 13 taps"), "{text}");

    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model), "-t", "h13g", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains(rule), "{err}");
    assert!(err.contains("model.mlir:2:3: layer 'conv' (anec.conv) rejected on h13g at validation"), "{err}");
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "compile wrote output");
}

#[test]
fn json_report_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let model = conv_model(dir.path(), 15);
    let o = anec(&["check", s(&model), "-t", "h13g", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["target"], "h13g");
    let conv = &v["layers"][0];
    assert_eq!(conv["name"], "conv");
    assert_eq!(conv["op"], "anec.conv");
    assert_eq!(conv["location"], "model.mlir:2:3");
    assert_eq!(conv["verdict"], "rejected");
    assert_eq!(conv["rule"], "Invalid conv kernel width = 15, It should be in [1, 13]");
    assert_eq!(conv["feature"], "limit conv-kernel-width = 1..=13 on h13g");
    assert_eq!(v["layers"][1]["verdict"], "engine");
    assert_eq!(v["summary"]["engine"], 1);
    assert_eq!(v["summary"]["rejected"], 1);
}

#[test]
fn a_chip_without_a_code_generator_checks_and_does_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let model = conv_model(dir.path(), 15);
    let o = anec(&["check", s(&model), "-t", "h16g"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("no code generator for h16g in anec yet"), "{}", stdout(&o));
    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model), "-t", "h16g", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no code generator for h16g yet"), "{}", stderr(&o));
    assert!(!out.exists());
    let o = anec(&["compile", s(&conv_model(dir.path(), 17)), "-t", "h16g", "-o", s(&out)]);
    assert!(stderr(&o).contains("Invalid conv kernel width = 17, It should be in [1, 15]"), "{}", stderr(&o));
}

#[test]
fn usage_and_read_errors_exit_2() {
    let o = anec(&["check", "/nonexistent/net.plist"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let o = anec(&["check", s(&conv_model(dir.path(), 3)), "-t", "h99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown target `h99`; valid targets: h11, h12, h13"), "{}", stderr(&o));
    let o = anec(&["check"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn print_target_tables() {
    let o = anec(&["--print", "target-list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = stdout(&o);
    assert!(list.lines().any(|l| l.starts_with("h13g ") && l.contains("M1")), "{list}");
    assert!(list.lines().any(|l| l.starts_with("h17 ")), "{list}");
    let o = anec(&["--print", "target-features", "-t", "h14g"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let features = stdout(&o);
    assert!(features.starts_with("target h14g (M2)"), "{features}");
    assert!(features.contains("0x81d"), "{features}");
    let o = anec(&["--print", "target-features", "-t", "m1"]);
    assert_eq!(o.status.code(), Some(1));
}
