//! MIL models end to end: the same network written as MIL and as a netplist compiles to the
//! same program; the shipped real models compile or name each op they cannot place.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec::{compile_file, Options, Target};
use anec_tests::workspace;
use std::path::{Path, PathBuf};

/// Options with a fixed banner, so two inputs of different names can give equal bytes.
fn opts() -> Options {
    let mut o = Options::new(Target::H13g);
    o.banner_args = vec!["-i model".to_string()];
    o
}

fn hwx(path: &Path) -> Vec<u8> {
    hwx_with(path, &opts())
}

fn hwx_with(path: &Path, opts: &Options) -> Vec<u8> {
    match compile_file(path, opts).and_then(|c| c.hwx_bytes()) {
        Ok(bytes) => bytes,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn real(name: &str) -> PathBuf {
    Path::new(REAL).join(name)
}

/// The 77-wide sigmoid and the 1x1 conv 3->3 with weights 2.0, written both ways.
#[test]
fn mil_and_netplist_give_identical_programs() {
    for name in ["sigmoid", "conv"] {
        let dir = workspace().join("tests/conformance");
        let from_mil = hwx(&dir.join(format!("{name}.mil")));
        let from_plist = hwx(&dir.join(format!("{name}.plist")));
        assert!(from_mil == from_plist, "{name}: the MIL and netplist programs differ");
    }
}

/// The equal programs above are also Apple's, up to the banner and symbol hashes.
#[test]
fn mil_sigmoid_matches_apples_program() {
    let v4_2 = Options { compat: anec::Compat::V4_2, ..opts() };
    let ours = hwx_with(&workspace().join("tests/conformance/sigmoid.mil"), &v4_2);
    let apple = std::fs::read(anec_tests::apple_hwx("sigmoid")).expect("read apple sigmoid");
    let opts = anec_tools::DiffOptions { ignore_ident: true, ignore_symbol_hashes: true };
    let diffs = anec_tools::diff_files_with(&ours, &apple, &opts).expect("diff");
    assert!(diffs.is_empty(), "{diffs:#?}");
}

#[test]
fn add_model_compiles() {
    let c = compile_file(&real("apple+coremltools__add_model.mlmodelc.model.mil"), &opts()).expect("compile");
    assert_eq!(c.hwx.td_count, 1, "one elementwise multiply");
    insta::assert_snapshot!("add_model_ir", anec_ir::print_module(&c.module));
}

#[test]
fn ironmill_mnist_compiles() {
    let c = compile_file(&real("jafreck+ironmill__test-q_base.mlmodelc.model.mil"), &opts()).expect("compile");
    insta::assert_snapshot!("mnist_ir", anec_ir::print_module(&c.module));
    let dump = anec_tools::dump_file(&c.hwx_bytes().expect("bytes")).expect("dump");
    insta::assert_snapshot!("mnist_dump", dump);
}

/// Every real model either compiles or fails with messages that each name an op and its
/// line. Models whose weight file is shipped are read from a staged `.mlmodelc` folder;
/// the others (no weight file in the fixtures) get zero weights of the declared types, so
/// the op mix is what is judged.
#[test]
fn real_models_compile_or_name_what_they_cannot_place() {
    let mut names: Vec<_> = std::fs::read_dir(REAL)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".mil"))
        .collect();
    names.sort();
    let mut report = String::new();
    for name in names {
        let outcome = match compile_real(&name) {
            Ok(c) => format!("compiled: {} TDs, {} bytes", c.hwx.td_count, c.hwx_bytes().map_or(0, |b| b.len())),
            Err(anec::Error::Diagnostics(ds)) => ds.iter().map(|d| located(&name, d)).collect::<Vec<_>>().join("\n"),
            Err(e) => unstaged(&format!("{e}")),
        };
        report.push_str(&format!("== {name}\n{outcome}\n"));
    }
    insta::assert_snapshot!("real_models", report);
}

/// `text` with each temporary folder a model was staged in (`<tmp>/.tmpXXXXXX`) written
/// `<staged>`: the outcome, not where the test put the files.
fn unstaged(text: &str) -> String {
    let tmp = std::env::temp_dir().display().to_string();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(&tmp) {
        out.push_str(&rest[..at]);
        let after = &rest[at + tmp.len()..];
        let after = after.strip_prefix('/').unwrap_or(after);
        out.push_str("<staged>");
        rest = &after[after.find('/').unwrap_or(after.len())..];
    }
    out.push_str(rest);
    out
}

/// `line:col: message`, failing the test for a diagnostic without a position.
fn located(name: &str, d: &anec_ir::Diagnostic) -> String {
    let Some((line, col)) = d.line_col() else { panic!("{name}: diagnostic without a line: {d}") };
    format!("{line}:{col}: {}", d.message)
}

/// The real models, relative to the test's working directory (the `tests` crate), so
/// locations in snapshots do not depend on where the checkout lives.
const REAL: &str = "../../shared/fixtures/mil/real";

fn compile_real(name: &str) -> Result<anec::Compiled, anec::Error> {
    let stem = name.trim_end_matches(".model.mil");
    let weights = Path::new(REAL).join(format!("{stem}.weight.bin"));
    if weights.exists() {
        let dir = tempfile::tempdir().map_err(|e| anec::Error::io("tempdir", e))?;
        let root = dir.path().join(format!("{stem}.mlmodelc"));
        std::fs::create_dir_all(root.join("weights")).map_err(|e| anec::Error::io(&root, e))?;
        std::fs::copy(Path::new(REAL).join(name), root.join("model.mil")).map_err(|e| anec::Error::io(&root, e))?;
        std::fs::copy(&weights, root.join("weights/weight.bin")).map_err(|e| anec::Error::io(&root, e))?;
        return compile_file(&root, &opts());
    }
    let path = Path::new(REAL).join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| anec::Error::io(&path, e))?;
    let file = path.display().to_string();
    let program = anec_front::mil::parse_program(&text, &file).map_err(anec::Error::Diagnostics)?;
    let blobs = anec_ir::mil::zero_blobs(&program);
    let model = anec_ir::mil::MilModel { program, blobs, file: file.clone(), text: Some(text) };
    let module = anec_passes::lower::lower_mil(&model, "main").map_err(anec::Error::Diagnostics)?;
    anec::compile_module(module, &file, &opts())
}

/// The `.mlpackage` and the `model.mil` coremlc wrote from it are the same program.
#[test]
fn mlpackage_and_its_model_mil_give_identical_programs() {
    let pkg = hwx(Path::new("../../shared/fixtures/mlpackage/ironmill-base.mlpackage"));
    let text = hwx(&real("jafreck+ironmill__test-q_base.mlmodelc.model.mil"));
    assert!(pkg == text, "the package and its model.mil compile differently");
}
