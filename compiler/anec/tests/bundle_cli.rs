//! Bundles as a user makes and runs them: `anec compile --emit bundle` (with and without
//! `--allow-cpu-fallback`), `anec sim` on the `.e5` and on one segment's `.hwx`, `anec dump`
//! and `anec diff` on `.e5` files, and the refusals with their messages.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tools::npy;
use anec_tools::Tensor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/bundle/fallback.mil")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `x`: [1, 8, 16] fp16 values in [-2, 2].
fn input(dir: &Path) -> PathBuf {
    let data = (0..128).map(|i| half::f16::from_f32(-2.0 + 4.0 * ((i * 37) % 128) as f32 / 127.0).to_f32()).collect();
    let t = Tensor { shape: vec![1, 8, 16], data };
    let path = dir.join("x.npy");
    std::fs::write(&path, npy::write_bytes(&t, "x.npy", npy::NpyDtype::F16).unwrap()).unwrap();
    path
}

#[test]
fn a_bundle_with_a_cpu_layer_compiles_runs_and_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model()), "-t", "h13g", "--emit", "bundle", "--allow-cpu-fallback", "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["fallback.e5", "main_0.hwx", "main_1.hwx"]);
    let x = input(dir.path());
    let e5 = out.join("fallback.e5");
    let o = anec(&["sim", s(&e5), "--input", &format!("x={}", s(&x)), "--output-dir", s(&dir.path().join("sim"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = npy::read_bytes(&std::fs::read(dir.path().join("sim/y.npy")).unwrap(), "y.npy").unwrap().tensor;
    assert_eq!(y.shape, [1, 8, 1]);
    // The first segment alone: relu of x in the program's layout.
    let x4 = dir.path().join("x4.npy");
    let t = npy::read_bytes(&std::fs::read(&x).unwrap(), "x.npy").unwrap().tensor;
    std::fs::write(&x4, npy::write_bytes(&t.reshaped(&[1, 1, 8, 16]).unwrap(), "x4.npy", npy::NpyDtype::F16).unwrap())
        .unwrap();
    let seg = dir.path().join("seg");
    let o = anec(&["sim", s(&out.join("main_0.hwx")), "--input", &format!("x={}", s(&x4)), "--output-dir", s(&seg)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = npy::read_bytes(&std::fs::read(seg.join("r.npy")).unwrap(), "r.npy").unwrap().tensor;
    assert_eq!(r.data, t.data.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
    let o = anec(&["dump", s(&e5)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("op Op3_CpuInference: CpuInference")
            && text.contains("root_vtable = 0c 00 14 00 04 00 08 00 0c 00 10 00"),
        "{text}"
    );
    let o = anec(&["diff", s(&e5), s(&e5)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_rejected_layer_without_the_flag_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model()), "--emit", "bundle", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("reduce_log_sum_exp"), "{}", stderr(&o));
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "files written");
}

#[test]
fn the_flag_with_one_program_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = anec(&["compile", s(&model()), "--emit", "hwx", "--allow-cpu-fallback", "-o", s(dir.path())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("use --emit bundle"), "{}", stderr(&o));
}

#[test]
fn a_bundle_input_of_the_wrong_shape_names_the_expected_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = anec(&["compile", s(&model()), "--emit", "bundle", "--allow-cpu-fallback", "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = dir.path().join("bad.npy");
    let t = Tensor { shape: vec![8, 16], data: vec![0.0; 128] };
    std::fs::write(&bad, npy::write_bytes(&t, "bad.npy", npy::NpyDtype::F16).unwrap()).unwrap();
    let o = anec(&[
        "sim",
        s(&out.join("fallback.e5")),
        "--input",
        &format!("x={}", s(&bad)),
        "--output-dir",
        s(&dir.path().join("o")),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("x [1, 8, 16]"), "{}", stderr(&o));
}

#[test]
fn function_picks_a_netplist_procedure() {
    let plist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/netplists/two_procedures.net.plist");
    let dir = tempfile::tempdir().unwrap();
    let mut programs = Vec::new();
    for f in ["relu_fn", "sigmoid_fn"] {
        let out = dir.path().join(f);
        let o = anec(&["compile", s(&plist), "--function", f, "-o", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        programs.push(std::fs::read(out.join("two_procedures.net.hwx")).unwrap());
    }
    assert_ne!(programs[0], programs[1]);
    let o = anec(&["compile", s(&plist), "--function", "nope", "-o", s(&dir.path().join("x"))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no function `nope` (the model defines: relu_fn, sigmoid_fn)"), "{}", stderr(&o));
}
