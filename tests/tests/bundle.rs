//! Program bundles (`anec compile --emit bundle`): the `.e5` over the `.hwx` programs.
//!
//! - one engine segment: the root layout and vtable the seed measured, `Cast ->
//!   AneInference -> Cast`, and Debian's `flatc --json` decoding it with the schema;
//! - a layer h13g rejects, compiled with CPU fallback: two AneInference operations around a
//!   CpuInference, and the bundle run (segments on the simulator, the CPU layer on the
//!   reference interpreter from what the `.e5` records) agreeing with the source model;
//! - a multi-function `.mlpackage` and a 1.0.10 netplist with two procedures: one `.e5`
//!   with two functions, each run against the reference;
//! - a hidden layer reached by authoring (seed 003) in its own segment;
//! - the same bytes whatever the output directory; `anec dump` of every `.e5` written here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use anec::bundle::{ProgramForm, Step};
use anec::{compile_bundle, Bundle, Options, Target};
use anec_codegen::e5::{self, OpAttrsT, OpType, SectionKind};
use anec_codegen::read_e5;
use anec_tests::tolerance::Budget;
use anec_tools::bundle::{function_inputs, run_bundle};
use anec_tools::Tensor;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn bundle(rel: &str, fallback: bool) -> Bundle {
    compile_bundle(&root().join(rel), &Options::new(Target::H13g), fallback).unwrap()
}

/// The operation types of every function, in order.
fn op_types(bytes: &[u8]) -> Vec<(String, Vec<OpType>)> {
    let p = read_e5(bytes).unwrap();
    let functions = p.sections.iter().flatten().filter_map(|s| s.function.as_deref());
    functions
        .map(|f| {
            let ops = f.blocks.iter().flatten().flat_map(|b| b.operations.iter().flatten()).map(|o| o.op_type);
            (f.name.clone().unwrap(), ops.collect())
        })
        .collect()
}

/// Writes the bundle into a fresh directory.
fn written(b: &Bundle, stem: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    b.write(dir.path(), stem, ProgramForm::Hwx).unwrap();
    let e5 = dir.path().join(format!("{stem}.e5"));
    (dir, e5)
}

/// Seeded inputs in [-2, 2], rounded to fp16.
fn inputs(specs: &[(String, Vec<usize>)], seed: u32) -> BTreeMap<String, Tensor> {
    let mut state = u64::from(seed) * 0x9e37_79b9_7f4a_7c15 + 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let tensor = |shape: &Vec<usize>, next: &mut dyn FnMut() -> f32| {
        let data = (0..shape.iter().product()).map(|_| half::f16::from_f32(4.0 * next() - 2.0).to_f32()).collect();
        Tensor { shape: shape.clone(), data }
    };
    specs.iter().map(|(n, s)| (n.clone(), tensor(s, &mut next))).collect()
}

/// The rounding budget of a bundle's function: its segments' ops, plus one fp16 rounding
/// per CPU layer and per cast.
fn budget(b: &Bundle, function: &str) -> Budget {
    let f = b.functions.iter().find(|f| f.name == function).unwrap();
    let mut total = Budget::default();
    for step in &f.steps {
        let part = match step {
            Step::Engine(e) => Budget::of_module(&e.compiled.module),
            Step::Cpu(_) => Budget { k: 1.0, ..Budget::default() },
        };
        total.k += part.k + 2.0;
        total.s += part.s;
        total.abs += part.abs;
    }
    total
}

/// Asserts that `got` agrees with `want` output by output within `budget`.
fn agree(got: &BTreeMap<String, Tensor>, want: &BTreeMap<String, Tensor>, budget: Budget, what: &str) {
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{what}: outputs");
    for (name, w) in want {
        let g = &got[name];
        assert_eq!(g.shape, w.shape, "{what}: {name} shape");
        let tol = budget.tolerance(&w.data);
        for (i, (&a, &r)) in g.data.iter().zip(&w.data).enumerate() {
            assert!(tol.accepts(a, r), "{what}: {name}[{i}] = {a}, reference {r} ({tol})");
        }
    }
}

#[test]
fn one_segment_has_the_seed_root_and_three_operations() {
    let b = bundle("tests/bundle/one_segment.mil", false);
    let bytes = b.e5_bytes().unwrap();
    assert_eq!(e5::root_vtable(&bytes).unwrap(), [0x0c, 0, 0x14, 0, 4, 0, 8, 0, 0x0c, 0, 0x10, 0]);
    let root = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) as usize;
    assert_eq!(bytes[root + 16..root + 20], 4i32.to_le_bytes(), "format_version");
    assert_eq!(op_types(&bytes), [("main".to_string(), vec![OpType::Cast, OpType::AneInference, OpType::Cast])]);
    let p = read_e5(&bytes).unwrap();
    assert_eq!(p.build_info.as_ref().unwrap().entries.as_ref().unwrap().len(), 7);
    let sections = p.sections.as_ref().unwrap();
    assert_eq!(sections.iter().filter(|s| s.kind == SectionKind::ArgFrame).count(), 3);
    assert_eq!(sections.iter().filter(|s| s.kind == SectionKind::OpAttrs).count(), 3);
    let ane = sections.iter().find_map(|s| match &s.attrs {
        OpAttrsT::AneInferenceAttrs(a) => Some(a),
        _ => None,
    });
    let ane = ane.unwrap();
    assert_eq!(ane.program_symbol.as_deref(), Some("main.hwx"));
    let engine = b.engine_steps().next().unwrap();
    let digest: String = sha2_hex(engine.bytes());
    assert_eq!(ane.anehash.as_deref(), Some(digest.as_str()), "anehash is the SHA-256 of the program");
}

fn sha2_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Debian's flatc (flatbuffers-compiler) decodes our `.e5` with the schema. Skipped, with
/// a message, where flatc is not installed (`.ci/run` installs it).
#[test]
fn flatc_decodes_the_e5_with_the_schema() {
    if std::process::Command::new("flatc").arg("--version").output().is_err() {
        eprintln!("flatc not installed (apt-get install flatbuffers-compiler): test skipped");
        return;
    }
    let b = bundle("tests/bundle/one_segment.mil", false);
    let (dir, e5) = written(&b, "one_segment");
    let schema = root().join("codegen/src/e5/schema/e5.fbs");
    let status = std::process::Command::new("flatc")
        .args(["--json", "--strict-json", "--defaults-json", "--raw-binary", "-o"])
        .arg(dir.path())
        .arg(&schema)
        .arg("--")
        .arg(&e5)
        .status()
        .unwrap();
    assert!(status.success());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("one_segment.json")).unwrap()).unwrap();
    assert_eq!(json["format_version"], 4);
    let function = json["sections"].as_array().unwrap().iter().find(|s| s["kind"] == "Function").unwrap();
    let ops: Vec<&str> = function["function"]["blocks"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["op_type"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["Cast", "AneInference", "Cast"]);
    let names: Vec<&str> = json["symbol_names"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(names, ["x", "x_ane", "y_ane", "y"]);
}

#[test]
fn a_rejected_layer_is_an_error_without_fallback() {
    let path = root().join("tests/bundle/fallback.mil");
    let e = compile_bundle(&path, &Options::new(Target::H13g), false).unwrap_err();
    assert!(e.to_string().contains("reduce_log_sum_exp"), "{e}");
}

#[test]
fn cpu_fallback_runs_the_rejected_layer_between_two_segments() {
    let b = bundle("tests/bundle/fallback.mil", true);
    let bytes = b.e5_bytes().unwrap();
    let types = &op_types(&bytes)[0].1;
    let (cast, ane, cpu) = (OpType::Cast, OpType::AneInference, OpType::CpuInference);
    assert_eq!(types, &[cast, ane, cast, cpu, cast, ane, cast]);
    let cpu = read_e5(&bytes).unwrap().sections.unwrap().into_iter().find_map(|s| match s.attrs {
        OpAttrsT::CpuInferenceAttrs(a) => Some(a),
        _ => None,
    });
    let cpu = cpu.unwrap();
    assert_eq!(cpu.op.as_deref(), Some("reduce_log_sum_exp"));
    assert_eq!(cpu.location.as_deref(), Some("fallback.mil:8:9"));
    let (dir, e5) = written(&b, "fallback");
    assert!(dir.path().join("main_0.hwx").exists() && dir.path().join("main_1.hwx").exists());
    let program = read_e5(&std::fs::read(&e5).unwrap()).unwrap();
    let model = anec::load_mil(&root().join("tests/bundle/fallback.mil")).unwrap();
    for seed in 0..3 {
        let x = inputs(&function_inputs(&program, "main").unwrap(), seed);
        let got = run_bundle(&program, dir.path(), "main", &x).unwrap();
        let want = anec_tools::run_mil(&model, "main", &x).unwrap();
        agree(&got, &want, budget(&b, "main"), "fallback.mil");
    }
}

#[test]
fn fallback_finds_layers_of_a_model_without_text() {
    let mut model = anec::load_mil(&root().join("tests/bundle/fallback.mil")).unwrap();
    model.text = None;
    let b = anec::compile_mil_bundle(&model, &Options::new(Target::H13g), true).unwrap();
    let steps: Vec<bool> = b.functions[0].steps.iter().map(|s| matches!(s, Step::Engine(_))).collect();
    assert_eq!(steps, [true, false, true]);
}

#[test]
fn a_multi_function_package_is_one_e5_with_two_functions() {
    let rel = "../shared/fixtures/mlpackage/coremltools-multi.mlpackage";
    let b = bundle(rel, false);
    let bytes = b.e5_bytes().unwrap();
    let names: Vec<String> = op_types(&bytes).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["relu_fn", "sigmoid_fn"]);
    let (dir, e5) = written(&b, "multi");
    let program = read_e5(&std::fs::read(e5).unwrap()).unwrap();
    let model = anec::load_mil(&root().join(rel)).unwrap();
    for f in &names {
        let x = inputs(&function_inputs(&program, f).unwrap(), 7);
        let got = run_bundle(&program, dir.path(), f, &x).unwrap();
        let want = anec_tools::run_mil(&model, f, &x).unwrap();
        agree(&got, &want, budget(&b, f), f);
    }
}

#[test]
fn a_netplist_with_two_procedures_is_one_e5_with_two_functions() {
    let rel = "tests/netplists/two_procedures.net.plist";
    let b = bundle(rel, false);
    let bytes = b.e5_bytes().unwrap();
    let ops = op_types(&bytes);
    let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["relu_fn", "sigmoid_fn"]);
    let (dir, e5) = written(&b, "two_procedures");
    let program = read_e5(&std::fs::read(e5).unwrap()).unwrap();
    let procedures = anec_front::parse_netplist_procedures(&root().join(rel)).unwrap();
    for p in procedures {
        let x = inputs(&function_inputs(&program, &p.name).unwrap(), 3);
        let got = run_bundle(&program, dir.path(), &p.name, &x).unwrap();
        let want = anec_tools::run_module(&p.module, &x).unwrap();
        let want = want.into_iter().map(|(k, v)| (k.strip_suffix("@output").unwrap_or(&k).to_string(), v)).collect();
        agree(&got, &want, budget(&b, &p.name), &p.name);
    }
}

/// Seed 003: a hidden layer reached by authoring (here fused attention in an `.mlir`
/// module, the direct route) cuts its own dispatch segment.
#[test]
fn a_hidden_layer_cuts_its_own_segment() {
    let rel = "tests/bundle/hidden_cut.mlir";
    let b = bundle(rel, false);
    let bytes = b.e5_bytes().unwrap();
    let types = &op_types(&bytes)[0].1;
    let ane = types.iter().filter(|t| **t == OpType::AneInference).count();
    assert_eq!(ane, 3, "relu | sdpa | sigmoid: {types:?}");
    let sdpa_alone = b.engine_steps().nth(1).unwrap();
    let opcodes: Vec<_> = sdpa_alone.compiled.module.ops.iter().map(|o| o.opcode).collect();
    assert!(opcodes.contains(&anec_ir::OpCode::Sdpa) && !opcodes.contains(&anec_ir::OpCode::Neuron), "{opcodes:?}");
    let (dir, e5) = written(&b, "hidden_cut");
    let program = read_e5(&std::fs::read(e5).unwrap()).unwrap();
    let module = anec::load(&root().join(rel)).unwrap();
    let x = inputs(&function_inputs(&program, "main").unwrap(), 11);
    let got = run_bundle(&program, dir.path(), "main", &x).unwrap();
    let want = anec_tools::run_module(&module, &x).unwrap();
    let want = want.into_iter().map(|(k, v)| (k.strip_suffix("@output").unwrap_or(&k).to_string(), v)).collect();
    agree(&got, &want, budget(&b, "main"), rel);
}

/// Same model, same bytes: whatever the output directory and however the model's path is
/// written (absolute, or relative to the tests' working directory).
#[test]
fn the_bundle_is_the_same_whatever_the_paths() {
    for (rel, stem, fallback) in
        [("bundle/fallback.mil", "fallback", true), ("netplists/two_procedures.net.plist", "two", false)]
    {
        let b = bundle(&format!("tests/{rel}"), fallback);
        let (d1, _) = written(&b, stem);
        let relative = compile_bundle(Path::new(rel), &Options::new(Target::H13g), fallback).unwrap();
        let (d2, _) = written(&relative, stem);
        let files = |d: &Path| {
            let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
            v.sort();
            v
        };
        assert_eq!(files(d1.path()), files(d2.path()));
        for name in files(d1.path()) {
            let (a, b) = (std::fs::read(d1.path().join(&name)).unwrap(), std::fs::read(d2.path().join(&name)).unwrap());
            assert!(a == b, "{name:?} of {rel} differs between two paths");
        }
    }
}

#[test]
fn anec_emit_anec_with_fallback_writes_one_program_per_segment() {
    let b = bundle("tests/bundle/fallback.mil", true);
    let dir = tempfile::tempdir().unwrap();
    let written = b.write(dir.path(), "fallback", ProgramForm::Anec).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["main_0.anec", "main_1.anec"]);
    for p in written {
        anec_codegen::read_anec(&std::fs::read(p).unwrap()).unwrap();
    }
}

/// `anec dump` of every `.e5` this file writes, as snapshots.
#[test]
fn dumps_of_every_e5() {
    let cases = [
        ("one_segment", "tests/bundle/one_segment.mil", false),
        ("fallback", "tests/bundle/fallback.mil", true),
        ("multi_function", "../shared/fixtures/mlpackage/coremltools-multi.mlpackage", false),
        ("two_procedures", "tests/netplists/two_procedures.net.plist", false),
        ("hidden_cut", "tests/bundle/hidden_cut.mlir", false),
    ];
    for (name, rel, fallback) in cases {
        let bytes = bundle(rel, fallback).e5_bytes().unwrap();
        insta::assert_snapshot!(format!("bundle_{name}"), anec_tools::dump_file(&bytes).unwrap());
    }
}
