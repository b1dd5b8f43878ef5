//! `anec check` on every input the project has, on h13g (the M1, with anec's code
//! generator) and h16g (the M4, a later chip without one), as reviewed snapshots of the text
//! and JSON reports: the netplist fixtures, the MIL corpus (zero weights where a model ships
//! none) and the hand-written hidden-layer netplists of `tests/hidden/`.
//!
//! The agreement test holds the check to the compile: on h13g a model is "every layer runs
//! on the engine" exactly when `anec compile` succeeds, and when it fails the compile names
//! the rule of every layer the check rejects at the first failing stage.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec::check::{check_file, check_mil};
use anec_backend_h13::lower::LOWERED;
use anec_ir::mil::{zero_blobs, MilModel};
use anec_ir::OpCode;
use anec_passes::legalize::{self, render_json, render_text, LayerVerdict, Report, Stage};
use anec_passes::target::{lookup, Target as Chip};
use anec_tests::{fixtures, workspace};
use std::path::{Path, PathBuf};

/// The chips every input is checked on.
const CHIPS: [&str; 2] = ["h13g", "h16g"];

fn chip(name: &str) -> Chip {
    lookup(name).unwrap()
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn netplists() -> Vec<PathBuf> {
    let root = fixtures().join("apple-h13/netplist");
    let mut v = files(&root.join("simple"), "plist");
    v.extend(files(&root.join("plists"), "plist"));
    v.push(root.join("net.plist"));
    v
}

fn hidden_netplists() -> Vec<PathBuf> {
    files(&workspace().join("tests/hidden"), "plist")
}

fn mil_files() -> Vec<PathBuf> {
    let root = fixtures().join("mil");
    let mut v = files(&root.join("real"), "mil");
    v.extend(files(&root.join("generated"), "mil"));
    v
}

/// A MIL fixture with its weights (`X.weight.bin` beside `X.model.mil`, through a
/// temporary `.mlmodelc`), else zero weights; locations name the fixture's file name.
fn mil_model(path: &Path) -> MilModel {
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    let weights = path.with_file_name(name.replace(".model.mil", ".weight.bin"));
    let mut model = if name.ends_with(".model.mil") && weights.exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("m.mlmodelc");
        std::fs::create_dir_all(root.join("weights")).unwrap();
        std::fs::copy(path, root.join("model.mil")).unwrap();
        std::fs::copy(&weights, root.join("weights/weight.bin")).unwrap();
        anec::load_mil(&root).unwrap_or_else(|e| panic!("{name}: {e}"))
    } else {
        let text = std::fs::read_to_string(path).unwrap();
        let program = anec_front::mil::parse_program(&text, &name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let blobs = zero_blobs(&program);
        MilModel { program, blobs, file: name.clone(), text: Some(text) }
    };
    model.file = name;
    model
}

fn first_function(model: &MilModel) -> String {
    model.program.functions.first().map(|f| f.name.clone()).unwrap_or_default()
}

/// The check of any input; `Err` is the read error as text.
fn check(path: &Path, chip: Chip) -> Result<Report, String> {
    if path.extension().is_some_and(|e| e == "mil") {
        let model = mil_model(path);
        return check_mil(&model, &first_function(&model), chip).map_err(|e| e.to_string());
    }
    check_file(path, anec::DEFAULT_FUNCTION, chip).map_err(|e| e.to_string())
}

/// Paths in reports and errors, independent of the checkout's location.
fn portable(text: &str) -> String {
    let canonical = fixtures().canonicalize().unwrap().display().to_string();
    let ws = workspace().canonicalize().unwrap().display().to_string();
    text.replace(&fixtures().display().to_string(), "<fixtures>")
        .replace(&canonical, "<fixtures>")
        .replace(&workspace().display().to_string(), "<workspace>")
        .replace(&ws, "<workspace>")
}

/// Two snapshots (text, JSON): every file's report (or read error) under a header with its
/// exit code; each file is checked once.
fn reports(paths: &[PathBuf], chip_name: &str) -> (String, String) {
    let (mut text, mut json) = (String::new(), String::new());
    for p in paths {
        let shown = portable(&p.display().to_string());
        match check(p, chip(chip_name)) {
            Ok(r) => {
                let code = if r.all_engine() { 0 } else { 1 };
                text.push_str(&format!("=== {shown} (exit {code})\n{}\n", portable(&render_text(&r))));
                json.push_str(&format!("=== {shown} (exit {code})\n{}\n", portable(&json_lines(&render_json(&r)))));
            }
            Err(e) => {
                let err = format!("=== {shown} (exit 2)\nerror: {}\n\n", portable(&e));
                text.push_str(&err);
                json.push_str(&err);
            }
        }
    }
    (text, json)
}

/// The JSON document, parsed (so it is valid JSON with the documented keys) and shown
/// one layer per line, then the summary.
fn json_lines(doc: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(doc).unwrap_or_else(|e| panic!("invalid JSON: {e}\n{doc}"));
    let keys = ["name", "op", "location", "verdict", "stage", "rule", "feature", "suggestion", "index"];
    let mut out = format!("target {}, route {}\n", v["target"], v["route"]);
    for layer in v["layers"].as_array().unwrap() {
        for k in keys {
            assert!(layer.get(k).is_some(), "layer without `{k}`: {layer}");
        }
        out.push_str(&format!("{layer}\n"));
    }
    out.push_str(&format!("summary {}\n", v["summary"]));
    out
}

fn snapshot_all(group: &str, paths: &[PathBuf]) {
    assert!(!paths.is_empty(), "{group}: no inputs");
    for chip_name in CHIPS {
        let (text, json) = reports(paths, chip_name);
        insta::assert_snapshot!(format!("{group}_{chip_name}_text"), text);
        insta::assert_snapshot!(format!("{group}_{chip_name}_json"), json);
    }
}

#[test]
fn netplist_fixtures() {
    snapshot_all("netplists", &netplists());
}

#[test]
fn mil_corpus() {
    snapshot_all("mil", &mil_files());
}

/// The hand-written hidden-layer netplists include at least these layer kinds.
#[test]
fn hidden_layer_netplists() {
    let paths = hidden_netplists();
    let text: String = paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    for kind in ["SDPA", "TopK", "Sort", "PixelShuffle", "GlobalArgMinMax", "MinMaxNormalization", "Resize"] {
        assert!(text.contains(&format!("<string>{kind}</string>")), "no hidden netplist has a {kind} unit");
    }
    snapshot_all("hidden", &paths);
}

/// The earliest-stage rejections a compile reports: lowering diagnostics first, then the
/// validators' verdicts (validation and their code-generation rules), then the backend's:
/// op kinds it has no lowering for before the layers it lowers and cannot encode.
fn first_stage_rules(r: &Report, validators: &Report) -> Vec<String> {
    let rules = |f: &dyn Fn(&LayerVerdict) -> bool, rep: &Report| -> Vec<String> {
        rep.rejected().filter(|l| f(l)).filter_map(|l| l.verdict.rejection()).map(|x| x.rule.clone()).collect()
    };
    let stage = |l: &LayerVerdict| l.verdict.rejection().map(|x| x.stage);
    // A statement left out because its input did not lower is a consequence the compile
    // does not repeat.
    let mut lowering = rules(&|l| stage(l) == Some(Stage::Lowering), r);
    lowering.retain(|rule| !rule.starts_with("not lowered: "));
    if !lowering.is_empty() {
        return lowering;
    }
    let validated = rules(&|_| true, validators);
    if !validated.is_empty() {
        return validated;
    }
    let unlowered_kind = |l: &LayerVerdict| OpCode::from_name(&l.op).is_some_and(|op| !LOWERED.contains(&op));
    let kinds = rules(&unlowered_kind, r);
    if !kinds.is_empty() {
        return kinds;
    }
    rules(&|_| true, r)
}

/// The module `anec compile` compiles for an input, and its compile result.
fn compile(path: &Path) -> (Option<anec_ir::Module>, Result<(), String>) {
    let opts = anec::Options::new(anec::Target::H13g);
    if path.extension().is_some_and(|e| e == "mil") {
        let model = mil_model(path);
        let module = anec_passes::lower_mil(&model, &first_function(&model));
        let module = match module {
            Ok(m) => m,
            Err(ds) => return (None, Err(ds.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))),
        };
        let opts = anec::Options { route: anec_passes::Route::Conversion, ..opts };
        let result = anec::compile_module(module.clone(), &model.file, &opts).map(drop).map_err(|e| e.to_string());
        return (Some(module), result);
    }
    let module = anec::load(path).ok();
    (module, anec::compile_file(path, &opts).map(drop).map_err(|e| e.to_string()))
}

#[test]
fn check_agrees_with_compile_on_h13g() {
    let mut paths = netplists();
    paths.extend(mil_files());
    paths.extend(hidden_netplists());
    let h13g = chip("h13g");
    for p in paths {
        let Ok(report) = check(&p, h13g) else { continue };
        let (module, result) = compile(&p);
        let name = p.display();
        assert_eq!(report.all_engine(), result.is_ok(), "{name}: check and compile disagree: {result:?}");
        let Err(err) = result else { continue };
        let route = report.route;
        let validators = module.map(|m| legalize::check(&m, h13g, route)).unwrap_or_else(|| report.clone());
        for rule in first_stage_rules(&report, &validators) {
            assert!(err.contains(&rule), "{name}: the compile error does not name `{rule}`:\n{err}");
        }
    }
}
