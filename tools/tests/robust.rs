//! Truncated and corrupted inputs: `dump_file` and `diff_files` return errors or
//! listings, never panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_tools::{diff_files, dump_file};
use common::{fixture, FIXTURES};

/// Offsets to cut at: every byte of the header and load-command area (where all the
/// parsing happens), every byte of the first TD, a sparse sample of the rest.
fn cuts(len: usize) -> impl Iterator<Item = usize> {
    (0..len).filter(|&i| i < 0x1400 || (0x4000..0x4300).contains(&i) || i % 251 == 0)
}

/// Offsets to corrupt at: every header byte and the first 16 bytes of every load
/// command, every 13th byte of the load-command and symbol area and every 3rd of the
/// first TD (both steps reach every byte position within a 32-bit word), a sparse
/// sample of the rest. A corrupted file usually still parses, so each case costs a full
/// dump and diff.
fn corruptions(bytes: &[u8]) -> Vec<usize> {
    let commands: Vec<u64> = match anec_codegen::parse_hwx(bytes) {
        Ok(f) => f.load_commands.iter().map(|c| c.header().offset).collect(),
        Err(e) => panic!("fixture does not parse: {e}"),
    };
    let command_start = |i: usize| commands.iter().any(|&o| (o..o + 16).contains(&(i as u64)));
    (0..bytes.len())
        .filter(|&i| {
            i < 0x20
                || command_start(i)
                || (i < 0x1400 && i % 13 == 0)
                || ((0x4000..0x4300).contains(&i) && i % 3 == 0)
                || i % 509 == 0
        })
        .collect()
}

fn exercise(bytes: &[u8], reference: &[u8]) {
    let _ = dump_file(bytes);
    let _ = diff_files(bytes, reference);
}

#[test]
fn truncated_inputs_do_not_panic() {
    for name in FIXTURES {
        let bytes = fixture(name);
        for cut in cuts(bytes.len()) {
            assert!(dump_file(&bytes[..cut]).is_err() || cut >= 0x4000, "{name} cut at {cut:#x} accepted");
            exercise(&bytes[..cut], &bytes);
        }
    }
}

#[test]
fn corrupted_inputs_do_not_panic() {
    for name in FIXTURES {
        let bytes = fixture(name);
        for (k, at) in corruptions(&bytes).into_iter().enumerate() {
            // Rotate through a cleared byte, a saturated one and a flipped top bit.
            let value = [0x00, 0xFF, bytes[at] ^ 0x80][k % 3];
            let mut bad = bytes.clone();
            bad[at] = value;
            exercise(&bad, &bytes);
        }
    }
}

#[test]
fn corrupted_anec_inputs_do_not_panic() {
    let anec = anec_codegen::write_anec(&anec_codegen::read_hwx(&fixture("sum.hwx")).unwrap()).unwrap();
    assert!(dump_file(&anec).is_ok());
    for (k, at) in (0..0x6A8).step_by(5).chain((0x1000..0x1274).step_by(3)).enumerate() {
        exercise(&anec[..at], &anec);
        let mut bad = anec.clone();
        bad[at] = [0x00, 0xFF, anec[at] ^ 0x01][k % 3];
        exercise(&bad, &anec);
    }
}

#[test]
fn empty_and_tiny_inputs_are_errors() {
    for bytes in [&[][..], &[0xCE], &[0xCE, 0xFA, 0xEF, 0xBE], &[0u8; 64]] {
        assert!(dump_file(bytes).is_err());
        assert!(diff_files(bytes, bytes).is_err());
    }
}
