//! `anec dump --plan MODEL`: the memory plan of the CNN example as a user reads it, and
//! the errors of a model that does not compile and of an unknown chip.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::PathBuf;
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).join("model.mil")
}

#[test]
fn the_cnn_example_plan_lists_buffers_and_each_intermediate_with_its_uses() {
    let model = example("cnn");
    let out = anec(&["dump", "--plan", model.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

#[test]
fn a_model_that_does_not_compile_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.mil");
    std::fs::write(&path, "program(1.0)\n{\n    func main<ios16>(tensor<fp16, [1, 2]> x) {\n        tensor<fp16, [1, 2]> y = nonsense(x = x)[name = string(\"y\")];\n    } -> (y);\n}\n").unwrap();
    let out = anec(&["dump", "--plan", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model.mil"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing written");
}

#[test]
fn an_unknown_chip_is_refused() {
    let model = example("cnn");
    let out = anec(&["dump", "--plan", model.to_str().unwrap(), "-t", "h99"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("h99"));
}
