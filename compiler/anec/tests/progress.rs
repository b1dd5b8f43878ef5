//! Progress: a compile tells its phases in order; `anec compile` shows its progress line
//! on a terminal (a pseudo-terminal from `script`, with the delay shortened) and prints
//! nothing on success when standard error is a pipe or `--quiet` is given.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec::progress::{Phase, Progress};
use std::cell::RefCell;
use std::path::PathBuf;
use std::process::Command;

struct Recorder(RefCell<Vec<Phase>>);

impl Progress for Recorder {
    fn phase(&self, p: Phase) {
        self.0.borrow_mut().push(p);
    }
}

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/bundle/one_segment.mil")
}

#[test]
fn a_compile_tells_its_phases_in_order() {
    let r = Recorder(RefCell::new(Vec::new()));
    anec::compile_file_with(&model(), &anec::Options::new(anec::Target::H13g), &r).unwrap();
    use Phase::*;
    assert_eq!(*r.0.borrow(), [Read, Lower, Validate, PackWeights, Write]);
    let r = Recorder(RefCell::new(Vec::new()));
    let plist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/conv.plist");
    anec::compile_file_with(&plist, &anec::Options::new(anec::Target::H13g), &r).unwrap();
    assert_eq!(*r.0.borrow(), [Read, Validate, PackWeights, Write], "a netplist has nothing to lower");
}

/// `anec compile MODEL -o DIR [extra]` with the progress delay at 0 ms, its standard error
/// a pipe; returns what it printed there.
fn piped(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let m = model();
    let mut args = vec!["compile", m.to_str().unwrap(), "-o", dir.path().to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_anec")).args(&args).env("ANEC_PROGRESS_DELAY_MS", "0").output().unwrap();
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn no_progress_line_when_stderr_is_a_pipe() {
    assert_eq!(piped(&[]), "");
}

/// On a terminal the line shows (and `--quiet` hides it). Needs `script` (util-linux);
/// skipped with a message where it is missing.
#[test]
fn the_progress_line_shows_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("`script` not installed: test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |quiet: &str| {
        let cmd =
            format!("{} compile {} -o {} {quiet}", env!("CARGO_BIN_EXE_anec"), model().display(), dir.path().display());
        let log = dir.path().join("tty.log");
        let o = Command::new("script")
            .args(["-qec", &cmd, log.to_str().unwrap()])
            .env("ANEC_PROGRESS_DELAY_MS", "0")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&std::fs::read(log).unwrap()).into_owned()
    };
    assert!(run("").contains("anec compile:"), "no progress line on a terminal");
    assert!(!run("--quiet").contains("anec compile:"), "--quiet still shows it");
}
