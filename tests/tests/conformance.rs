//! Conformance with Apple's compiler: compiling the netplist each Apple program in
//! `shared/fixtures/apple-h13/hwx` was built from must reproduce its TDs word for word, its
//! `__const` bytes, and its load commands (except the LC_IDENT text and the hash part of
//! `K<hash>` symbol names). Remaining differences are listed in `docs/conformance.md`.
//! These programs are v4.2.1's, so they are compiled with `--apple-compat 4.2`.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_codegen::{read_hwx, Hwx};
use anec_tests::{apple_hwx, conformance_input};

const PROGRAMS: [&str; 5] = ["relu", "sigmoid", "conv", "model", "sum"];

fn ours(name: &str) -> Hwx {
    let mut opts = anec::Options::new(anec::Target::H13g);
    opts.compat = anec::Compat::V4_2;
    let compiled = anec::compile_file(&conformance_input(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bytes = compiled.hwx_bytes().unwrap_or_else(|e| panic!("{name}: {e}"));
    read_hwx(&bytes).unwrap_or_else(|e| panic!("{name}: reading our file: {e}"))
}

fn apple(name: &str) -> Hwx {
    let bytes = std::fs::read(apple_hwx(name)).expect("Apple fixture");
    read_hwx(&bytes).expect("Apple fixture parses")
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Strips the hash of `K<64 hex>` or `K<64 hex>_ne_<i>`.
fn unhash(name: &str) -> String {
    match name.strip_prefix('K') {
        Some(rest) if rest.len() >= 64 && rest[..64].chars().all(|c| c.is_ascii_hexdigit()) => {
            format!("K<hash>{}", &rest[64..])
        }
        _ => name.to_string(),
    }
}

#[test]
fn task_descriptors_identical_in_every_word() {
    for name in PROGRAMS {
        let (a, o) = (apple(name), ours(name));
        let diffs: Vec<String> = words(&a.text)
            .iter()
            .zip(words(&o.text))
            .enumerate()
            .filter(|(_, (x, y))| *x != y)
            .map(|(i, (x, y))| format!("  word {:#05x}: apple {x:#010x} ours {y:#010x}", i * 4))
            .collect();
        assert!(diffs.is_empty() && a.text.len() == o.text.len(), "{name}: TD differs\n{}", diffs.join("\n"));
    }
}

#[test]
fn const_bytes_identical() {
    for name in PROGRAMS {
        let (a, o) = (apple(name), ours(name));
        assert_eq!(a.consts.len(), o.consts.len(), "{name}: __const size");
        let first = a.consts.iter().zip(o.consts.iter()).position(|(x, y)| x != y);
        assert_eq!(first, None, "{name}: __const differs first at byte {first:?}");
    }
}

#[test]
fn load_commands_match_except_ident_and_hashes() {
    for name in PROGRAMS {
        let (a, mut o) = (apple(name), ours(name));
        o.ident = a.ident.clone();
        let rename = |h: &mut Hwx| h.const_symbols.iter_mut().for_each(|s| s.name = unhash(&s.name));
        let mut a = a;
        rename(&mut a);
        rename(&mut o);
        assert_eq!(a, o, "{name}: program model differs");
    }
}
