//! A large program is written once, to a temporary file beside its destination, and
//! renamed into place: the CLI leaves exactly the program in the output directory, with a
//! new file's permissions; the library's compile gives the same bytes through a file in
//! the system's temporary directory or in memory; an unpersisted program leaves nothing.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

mod common;

use common::write_model;
use std::path::Path;
use std::process::Command;

/// The names of the entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn the_cli_renames_the_program_into_place_and_leaves_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path());
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_anec"))
        .args(["compile", dir.path().join("model.mil").to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(entries(&out), ["model.hwx"], "no temporary file is left");
    let program = out.join("model.hwx");
    assert!(std::fs::metadata(&program).unwrap().len() > anec::staged::STAGE_ON_DISK, "written through a file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let sibling = out.join("sibling");
        std::fs::write(&sibling, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&program), mode(&sibling), "the program has a new file's permissions, not 0600");
    }
}

#[test]
fn staged_and_in_memory_programs_are_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path());
    let model = dir.path().join("model.mil");
    let stage = dir.path().join("stage");
    let opts = anec::Options::new(anec::Target::H13g);
    let through_tmp = anec::compile_file(&model, &opts).unwrap();
    let staged_opts = anec::Options { stage_dir: Some(stage.clone()), ..opts };
    let beside = anec::compile_file(&model, &staged_opts).unwrap();
    assert_eq!(through_tmp.hwx_file(), beside.hwx_file());
    assert_eq!(entries(&stage).len(), 1, "the program's temporary file, until persisted or dropped");
    let copy = beside.clone();
    drop(copy);
    let dest = stage.join("model.hwx");
    let want = beside.hwx_file().to_vec();
    beside.persist(&dest).unwrap();
    assert_eq!(entries(&stage), ["model.hwx"], "persisting renamed the temporary file");
    assert_eq!(std::fs::read(&dest).unwrap(), want);
    let dropped = anec::compile_file(&model, &staged_opts).unwrap();
    drop(dropped);
    assert_eq!(entries(&stage), ["model.hwx"], "a dropped program leaves no file");
    // Its own model reads the constants from the staged file: it reads back equal.
    let again = anec::compile_file(&model, &staged_opts).unwrap();
    let read = anec_codegen::read_hwx(again.hwx_file()).unwrap();
    assert_eq!(read.consts, again.hwx.consts);
}

#[test]
fn an_output_directory_that_is_a_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path());
    let not_a_dir = dir.path().join("out");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_anec"))
        .args(["compile", dir.path().join("model.mil").to_str().unwrap(), "-o", not_a_dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(not_a_dir.to_str().unwrap()) && stderr.contains("is a file"), "{stderr}");
    assert_eq!(std::fs::read(&not_a_dir).unwrap(), b"x", "left as it was");
    assert_eq!(entries(dir.path()), ["model.mil", "out", "weights"], "nothing written beside it");
}
