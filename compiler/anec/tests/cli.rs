//! The `anec` binary as a user runs it: exit codes, one-line errors naming the file, the
//! unit and the key, and no output left behind when a compile fails.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const GOOD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Networks</key><array><string>net</string></array>
<key>Version</key><string>1.0.9</string>
<key>net</key><dict>
  <key>Inputs</key><array><string>image</string></array>
  <key>Units</key><array><string>conv</string></array>
  <key>Outputs</key><array><string>out@output</string></array>
  <key>Weights</key><array><string>w.bin</string></array>
  <key>image</key><dict>
    <key>InputChannels</key><integer>2</integer>
    <key>InputHeight</key><integer>1</integer>
    <key>InputWidth</key><integer>4</integer>
    <key>InputType</key><string>Float16</string>
  </dict>
  <key>conv</key><dict>
    <key>Bottom</key><string>image</string>
    <key>Name</key><string>conv</string>
    <key>OutputChannels</key><integer>2</integer>
    <key>OutputType</key><string>Float16</string>
    <key>Params</key><dict>
      <key>KernelHeight</key><integer>1</integer>
      <key>KernelWidth</key><integer>1</integer>
      <key>KernelIndex</key><integer>0</integer>
      <key>KernelOffset</key><integer>OFFSET</integer>
      <key>KernelType</key><string>Float16</string>
      <key>Type</key><string>Conv</string>
    </dict>
    <key>Type</key><string>Conv</string>
  </dict>
  <key>out@output</key><dict><key>Bottom</key><string>conv</string></dict>
</dict></dict></plist>
"#;

/// Writes a netplist (and an 8-byte weight file unless `weights` is false) into a tempdir.
fn case(plist: &str, weights: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("net.plist"), plist).expect("write plist");
    if weights {
        std::fs::write(dir.path().join("w.bin"), [0u8, 0x3c, 0, 0, 0, 0, 0, 0x3c]).expect("write weights");
    }
    dir
}

/// Compiles `dir/net.plist` into `dir/out` and returns (status, stderr, output files).
fn compile(dir: &Path) -> (i32, String, Vec<PathBuf>) {
    let input = dir.join("net.plist");
    let out = dir.join("out");
    let o = anec(&["compile", input.to_str().unwrap_or(""), "-t", "h13g", "-o", out.to_str().unwrap_or("")]);
    let files = std::fs::read_dir(&out).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned(), files)
}

fn assert_rejected(plist: &str, weights: bool, expect: &[&str]) {
    let dir = case(plist, weights);
    let (code, err, files) = compile(dir.path());
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("net.plist"), "names the file: {err}");
    for e in expect {
        assert!(err.contains(e), "mentions {e:?}: {err}");
    }
    assert!(files.is_empty(), "nothing written: {files:?}");
}

#[test]
fn good_netplist_compiles_and_writes_one_file() {
    let dir = case(&GOOD.replace("OFFSET", "0"), true);
    let (code, err, files) = compile(dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(files.len(), 1);
    assert!(files[0].ends_with("out/net.hwx"));
}

#[test]
fn missing_key_names_unit_and_key() {
    assert_rejected(
        &GOOD.replace("OFFSET", "0").replace("<key>KernelWidth</key><integer>1</integer>", ""),
        true,
        &["conv", "KernelWidth"],
    );
}

#[test]
fn wrong_type_names_unit_and_key() {
    let p = GOOD
        .replace("OFFSET", "0")
        .replace("<key>KernelHeight</key><integer>1</integer>", "<key>KernelHeight</key><string>one</string>");
    assert_rejected(&p, true, &["conv", "KernelHeight"]);
}

#[test]
fn missing_weight_file() {
    assert_rejected(&GOOD.replace("OFFSET", "0"), false, &["conv", "w.bin"]);
}

#[test]
fn weight_offset_past_end_of_file() {
    assert_rejected(&GOOD.replace("OFFSET", "4"), true, &["conv", "KernelOffset"]);
}

#[test]
fn unknown_unit_type_is_an_error() {
    let p = GOOD.replace("OFFSET", "0").replace(
        "<key>Type</key><string>Conv</string>\n  </dict>",
        "<key>Type</key><string>Frobnicate</string>\n  </dict>",
    );
    assert_rejected(&p, true, &["conv", "Frobnicate"]);
}

#[test]
fn unknown_target_lists_valid_ones() {
    let o = anec(&["compile", "x.plist", "-t", "h99"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("valid targets: h11, h12, h13, h13g, h14"));
}

#[test]
fn compile_then_diff_against_apple_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["relu", "sigmoid", "conv", "model", "sum"] {
        let input = workspace().join(format!("tests/conformance/{name}.plist"));
        let out = dir.path().join(name);
        let args = ["compile", input.to_str().unwrap_or(""), "-t", "h13g", "--apple-compat", "4.2", "-o"];
        let o = anec(&[&args[..], &[out.to_str().unwrap_or("")]].concat());
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let ours = out.join(format!("{name}.hwx"));
        let apple = workspace().join(format!("../shared/fixtures/apple-h13/hwx/{name}.hwx"));
        let d = anec(&["diff", ours.to_str().unwrap_or(""), apple.to_str().unwrap_or("")]);
        assert_eq!(
            d.status.code(),
            Some(0),
            "{name} differs:\n{}{}",
            String::from_utf8_lossy(&d.stdout),
            String::from_utf8_lossy(&d.stderr)
        );
        let strict = anec(&["diff", "--strict", ours.to_str().unwrap_or(""), apple.to_str().unwrap_or("")]);
        assert_eq!(strict.status.code(), Some(1), "{name}: the banner always differs");
    }
}

/// `anec diff ours.hwx case.json` on a record of Apple's current compiler: the program
/// compiled from the record's MIL is identical, tensor descriptors included (they are
/// read from the file in its thread order).
#[test]
fn compile_then_diff_against_a_current_record_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let case = workspace().join("../shared/fixtures/apple-h13-oracles/cases/unary_abs_c64.json");
    let record = anec_tools::oracle::Record::parse(&std::fs::read_to_string(&case).expect("record")).expect("parse");
    let mil = dir.path().join("model.mil");
    std::fs::write(&mil, &record.mil).expect("write");
    let out = dir.path().join("out");
    let o = anec(&["compile", mil.to_str().unwrap_or(""), "-t", "h13g", "-o", out.to_str().unwrap_or("")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = anec(&["diff", out.join("model.hwx").to_str().unwrap_or(""), case.to_str().unwrap_or("")]);
    let text = String::from_utf8_lossy(&d.stdout);
    assert_eq!(d.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&d.stderr));
    assert!(text.contains("constants equal; tensors equal"), "{text}");
}

#[test]
fn emit_anec_ir_prints_the_module() {
    let input = workspace().join("tests/conformance/conv.plist");
    let o = anec(&["compile", input.to_str().unwrap_or(""), "--emit", "anec-ir"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"anec.conv\""), "{text}");
}
