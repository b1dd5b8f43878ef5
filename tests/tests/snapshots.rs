//! Snapshot tests of code generation: every netplist of `shared/fixtures/apple-h13/netplist`
//! (`simple/`, `plists/`, `net.plist`) that has no Apple program is compiled for h13g and
//! its output reviewed through `anec dump`; a netplist that does not compile has its
//! one-line error reviewed instead. Re-bless with `INSTA_UPDATE=always`.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tests::fixtures;
use std::path::{Path, PathBuf};

fn netplists() -> Vec<PathBuf> {
    let root = fixtures().join("apple-h13/netplist");
    let mut files: Vec<PathBuf> = ["simple", "plists"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).into_iter().flatten().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "plist"))
        .collect();
    files.push(root.join("net.plist"));
    files.sort();
    files
}

/// The banner names the input path, which differs between machines; snapshots use a
/// fixed one.
fn compile_and_dump(path: &Path) -> String {
    let mut opts = anec::Options::new(anec::Target::H13g);
    opts.banner_args = vec!["-i <input>".into(), "-o <output>".into()];
    match anec::compile_file(path, &opts).and_then(|c| c.hwx_bytes()) {
        Ok(bytes) => anec_tools::dump_file(&bytes).unwrap_or_else(|e| format!("dump failed: {e}")),
        Err(e) => {
            let text = e.to_string();
            let root = fixtures().join("apple-h13/netplist").display().to_string();
            format!("error: {}", text.replace(&root, "<netplist>"))
        }
    }
}

#[test]
fn netplists_compile_or_fail_with_a_reason() {
    for path in netplists() {
        let name = format!(
            "{}_{}",
            path.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()).unwrap_or(""),
            path.file_stem().and_then(|s| s.to_str()).unwrap_or("")
        );
        let text = compile_and_dump(&path);
        if text.starts_with("error: ") {
            for line in text.lines() {
                let names_layer = line.contains("layer '") || line.contains("unit '");
                assert!(line.contains(".plist") && names_layer, "{name}: each line names the file and layer: {line}");
            }
        }
        insta::assert_snapshot!(name, text);
    }
}

#[test]
fn same_input_same_bytes() {
    let path = fixtures().join("apple-h13/netplist/simple/quadconv.plist");
    let opts = anec::Options::new(anec::Target::H13g);
    let a = anec::compile_file(&path, &opts).and_then(|c| c.hwx_bytes()).expect("compiles");
    let b = anec::compile_file(&path, &opts).and_then(|c| c.hwx_bytes()).expect("compiles");
    assert_eq!(a, b);
}
