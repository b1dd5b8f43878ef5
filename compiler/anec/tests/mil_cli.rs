//! `anec` on MIL inputs as a user runs it: `--emit mil` of an `.mlpackage`, `--function`,
//! rendered diagnostics with a caret, and no output written for a rejected model.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::PathBuf;
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// Apple's text without coremlc's `[buildInfo = ...]` line (the one line coremlc adds).
fn without_build_info(s: &str) -> String {
    s.lines().filter(|l| !l.starts_with("[buildInfo")).collect::<Vec<_>>().join("\n")
}

#[test]
fn emit_mil_of_the_ironmill_package_is_apples_model_mil() {
    let pkg = shared().join("mlpackage/ironmill-base.mlpackage");
    let out = anec(&["compile", pkg.to_str().expect("utf8"), "--emit", "mil"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let apple = std::fs::read_to_string(shared().join("mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil"))
        .expect("read apple mil");
    let ours = text(&out.stdout);
    assert_eq!(without_build_info(&ours), without_build_info(&apple));
}

#[test]
fn function_option_selects_a_function_of_a_multi_function_package() {
    let pkg = shared().join("mlpackage/coremltools-multi.mlpackage");
    let pkg = pkg.to_str().expect("utf8");
    let dir = tempfile::tempdir().expect("tempdir");
    let o = dir.path().to_str().expect("utf8");
    let missing = anec(&["compile", pkg, "-o", o, "--function", "no_such_function"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("no_such_function"), "{}", text(&missing.stderr));
    assert!(std::fs::read_dir(dir.path()).expect("ls").next().is_none(), "nothing written");
}

#[test]
fn each_function_of_a_multi_function_package_compiles() {
    let pkg = shared().join("mlpackage/coremltools-multi.mlpackage");
    let pkg = pkg.to_str().expect("utf8");
    let listing = text(&anec(&["compile", pkg, "--emit", "mil"]).stdout);
    for function in ["relu_fn", "sigmoid_fn"] {
        assert!(listing.contains(&format!("func {function}<ios18>")), "{listing}");
        let dir = tempfile::tempdir().expect("tempdir");
        let out = anec(&["compile", pkg, "-o", dir.path().to_str().expect("utf8"), "--function", function]);
        assert!(out.status.success(), "{function}: {}", text(&out.stderr));
        let ir = text(&anec(&["compile", pkg, "--emit", "anec-ir", "--function", function]).stdout);
        let mode = function.trim_end_matches("_fn");
        assert!(ir.contains(&format!("mode = \"{mode}\"")), "{function} lowers to its own activation:\n{ir}");
        assert!(dir.path().join("coremltools-multi.hwx").exists());
    }
}

#[test]
fn mlmodelc_folder_and_mil_file_compile_through_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let modelc = dir.path().join("add.mlmodelc");
    std::fs::create_dir(&modelc).expect("mkdir");
    let mil = shared().join("mil/real/apple+coremltools__add_model.mlmodelc.model.mil");
    std::fs::copy(&mil, modelc.join("model.mil")).expect("copy");
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().expect("utf8");
    let a = anec(&["compile", modelc.to_str().expect("utf8"), "-t", "h13g", "-o", o]);
    assert!(a.status.success(), "{}", text(&a.stderr));
    let b = anec(&["compile", mil.to_str().expect("utf8"), "-t", "h13g", "-o", o]);
    assert!(b.status.success(), "{}", text(&b.stderr));
    let dump = anec(&["dump", out_dir.join("add.hwx").to_str().expect("utf8")]);
    assert!(text(&dump.stdout).contains("name = \"var_3@output\""), "{}", text(&dump.stdout));
    assert!(out_dir.join("apple+coremltools__add_model.mlmodelc.model.hwx").exists());
}

#[test]
fn syntax_error_is_rendered_with_file_line_and_caret() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("bad.mil");
    let src = "program(1.0)\n{\n    func main<ios16>(tensor<fp16, [1, 4]> x) {\n            tensor<fp16, [1, 4]> y = relu(x = x)[name = tensor<string, []>(\"y\")]\n        } -> (y);\n}\n";
    std::fs::write(&model, src).expect("write");
    let out_dir = dir.path().join("out");
    let out = anec(&["compile", model.to_str().expect("utf8"), "-o", out_dir.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.mil:5:9"), "{err}");
    assert!(err.contains('^'), "{err}");
    assert!(!out_dir.exists(), "no output directory for a failed compile");
}

#[test]
fn emit_mil_needs_a_mil_input() {
    let plist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/conv.plist");
    let out = anec(&["compile", plist.to_str().expect("utf8"), "--emit", "mil"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--emit mil needs a MIL input"), "{}", text(&out.stderr));
}
