//! `anec compile --cache-dir`: a second compile of the same model writes the stored
//! program (proved with an entry forged under the real key), a damaged entry is never used
//! but rebuilt, and a changed model is a new entry.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Compiles `model` into `out` with the cache in `cache`; returns the program's bytes.
fn compile(model: &Path, out: &Path, cache: &Path) -> Vec<u8> {
    let o = anec(&["compile", s(model), "-o", s(out), "--cache-dir", s(cache)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stem = model.file_stem().unwrap().to_str().unwrap();
    std::fs::read(out.join(format!("{stem}.hwx"))).unwrap()
}

/// The cache's entries (their keys).
fn keys(cache: &Path) -> Vec<String> {
    let mut k: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".hwx").map(str::to_string))
        .collect();
    k.sort();
    k
}

fn model(dir: &Path) -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/bundle/one_segment.mil");
    let path = dir.join("model.mil");
    std::fs::copy(src, &path).unwrap();
    path
}

#[test]
fn a_second_compile_is_served_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (m, out, cache) = (model(dir.path()), dir.path().join("out"), dir.path().join("cache"));
    let first = compile(&m, &out, &cache);
    let k = keys(&cache);
    assert_eq!(k.len(), 1);
    assert_eq!(compile(&m, &out, &cache), first);
    // A valid entry under the same key is what the next compile writes.
    anec::cache::Cache::new(&cache).put(&k[0], b"stored program").unwrap();
    assert_eq!(compile(&m, &out, &cache), b"stored program");
}

#[test]
fn a_damaged_entry_is_rebuilt_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let (m, out, cache) = (model(dir.path()), dir.path().join("out"), dir.path().join("cache"));
    let first = compile(&m, &out, &cache);
    let entry = anec::cache::Cache::new(&cache).entry_path(&keys(&cache)[0]);
    for cut in [true, false] {
        let mut bytes = std::fs::read(&entry).unwrap();
        if cut {
            bytes.truncate(bytes.len() / 2);
        } else {
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
        }
        std::fs::write(&entry, &bytes).unwrap();
        assert_eq!(compile(&m, &out, &cache), first, "damaged ({}) entry used", if cut { "cut" } else { "altered" });
        let back = anec::cache::Cache::new(&cache).get(&keys(&cache)[0]).expect("rebuilt entry");
        assert_eq!(back.payload(), first.as_slice());
    }
}

#[test]
fn a_changed_model_is_a_new_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (m, out, cache) = (model(dir.path()), dir.path().join("out"), dir.path().join("cache"));
    let first = compile(&m, &out, &cache);
    let text = std::fs::read_to_string(&m).unwrap().replace("sigmoid", "tanh");
    std::fs::write(&m, text).unwrap();
    let second = compile(&m, &out, &cache);
    assert_ne!(first, second);
    assert_eq!(keys(&cache).len(), 2);
}
