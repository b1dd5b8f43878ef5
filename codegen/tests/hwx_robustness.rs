//! Truncated and corrupted `.hwx` files give errors, never panics, from `parse_hwx`,
//! `read_hwx` and `check_canonical` (which runs the other two and the writer).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::{check_canonical, parse_hwx, read_anec, read_hwx, write_anec};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The reference files plus our own file with an intermediate tensor (its reader paths
/// are not in any reference file).
fn files() -> Vec<(String, Vec<u8>)> {
    let mut files = common::fixtures();
    files.push(("chain (ours)".into(), anec_codegen::write_hwx(&common::chain()).unwrap()));
    files
}

/// End of the header part (commands, symbols, strings, relocations) of a reference file.
fn header_end(bytes: &[u8]) -> usize {
    let f = parse_hwx(bytes).unwrap();
    let s = f.symtab().unwrap();
    let strings_end = (s.stroff + s.strsize) as usize;
    let relocs_end = f.section("__TEXT", "__text").map(|t| (t.reloff + 8 * t.nreloc) as usize).unwrap_or(0);
    strings_end.max(relocs_end)
}

/// Runs every reader on `bytes`; a panic fails the test with `what`.
fn readers_do_not_panic(bytes: &[u8], what: &str) -> bool {
    // check_canonical runs parse_hwx, read_hwx and write_hwx in turn.
    let result = catch_unwind(AssertUnwindSafe(|| check_canonical(bytes).is_ok()));
    result.unwrap_or_else(|_| panic!("reader panicked on {what}"))
}

#[test]
fn truncation_is_always_an_error() {
    for (name, bytes) in files() {
        let end = header_end(&bytes);
        let cuts = (0..=end + 8).chain((end..bytes.len()).step_by(0x3f));
        for len in cuts.filter(|&l| l < bytes.len()) {
            let canonical = readers_do_not_panic(&bytes[..len], &format!("{name} cut at {len:#x}"));
            assert!(!canonical, "{name} cut at {len:#x} was accepted as canonical");
            if len < end {
                assert!(read_hwx(&bytes[..len]).is_err(), "{name} cut at {len:#x} read");
            }
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    for (name, bytes) in files() {
        let end = header_end(&bytes);
        for pos in 0..end {
            for mask in [0xFFu8, 0x01] {
                let mut bad = bytes.clone();
                bad[pos] ^= mask;
                readers_do_not_panic(&bad, &format!("{name} byte {pos:#x} ^ {mask:#x}"));
            }
        }
    }
}

#[test]
fn corrupted_words_never_panic() {
    for (name, bytes) in files() {
        let end = header_end(&bytes);
        for pos in (0..end.saturating_sub(4)).step_by(4) {
            for word in [u32::MAX, 0, 0x8000_0000, 0x3000_0000] {
                let mut bad = bytes.clone();
                bad[pos..pos + 4].copy_from_slice(&word.to_le_bytes());
                readers_do_not_panic(&bad, &format!("{name} word {pos:#x} = {word:#x}"));
            }
        }
    }
}

#[test]
fn wrong_magic_and_tiny_inputs_are_errors() {
    let mut bytes = common::fixture("relu.hwx");
    bytes[..4].copy_from_slice(&0xFEED_FACFu32.to_le_bytes());
    let err = parse_hwx(&bytes).unwrap_err().to_string();
    assert!(err.contains("magic"), "{err}");
    for len in 0..40 {
        assert!(parse_hwx(&vec![0u8; len]).is_err());
        assert!(read_anec(&vec![0u8; len]).is_err());
    }
}

#[test]
fn anec_truncation_and_corruption_never_panic() {
    let anec = write_anec(&read_hwx(&common::fixture("conv.hwx")).unwrap()).unwrap();
    for len in 0..anec.len() {
        let r = catch_unwind(|| read_anec(&anec[..len]).is_ok()).unwrap_or_else(|_| panic!("panic at {len}"));
        assert!(!r, "anec cut at {len:#x} accepted");
    }
    for pos in (0..0x6A8).step_by(4) {
        for word in [u32::MAX, 0x8000_0000, 0x10] {
            let mut bad = anec.clone();
            bad[pos..pos + 4].copy_from_slice(&word.to_le_bytes());
            let _ = catch_unwind(|| read_anec(&bad).map(|f| f.to_bytes())).unwrap_or_else(|_| panic!("panic at {pos}"));
        }
    }
}
