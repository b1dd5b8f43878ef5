//! Tests of the simulator on Apple's cast of a bool input, the record
//! `cast_b_to_f16_1x1x64x1` of `shared/fixtures/apple-h13-oracles/` (Apple's own task
//! stream): the tile DMA loads the 8-bit source with FmtMode 0 and Truncate 0 (L2
//! SourceCfg.DMAFmt 0), the planar engine's one-operand identity reads it as u8 (InFmt 0)
//! and writes fp16. Run on 0/1 and on every byte value, the result must be the integers.
//! The format fields outside that model are load errors naming their field.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::exec;
use super::memory::{Buffer, Fmt, Memory, L2};
use super::record_tests::{decode_changed, f, record, text, Change};
use super::td::{self, Task};
use std::borrow::Cow;

const CAST: &str = "cast_b_to_f16_1x1x64x1";

/// Apple's task, decoded (with `change` made to its register image).
fn task(change: &Change) -> Task {
    let r = record(CAST).0;
    let d = &r.program_descriptor;
    let chain = anec_backend_h13::chain::read(&text(&r), d.task_words_minus_one + 1, d.task_count).unwrap();
    let mut img = chain[0].task.image.clone();
    change(&mut img);
    td::decode(&img, 0).unwrap()
}

/// Runs the record on the 64 bytes `x` (the input `[1, 1, 64, 1]`, row stride 64 bytes)
/// and returns the 64 fp16 results (row stride 64 bytes).
fn run(x: &[u8; 64]) -> Vec<f64> {
    let t = task(&|_| {});
    let mut input = vec![0u8; 4096];
    for (i, &b) in x.iter().enumerate() {
        input[64 * i] = b;
    }
    let (xbar, ybar) = (t.sources[0].bar, t.dest.bar);
    let buf = |name: &str, bytes: Vec<u8>, writable| Buffer { name: name.into(), bytes: Cow::Owned(bytes), writable };
    let mut mem = Memory::new(vec![
        (1, buf("__const", vec![0; 0x4000], false)),
        (xbar, buf("x", input, false)),
        (ybar, buf("y", vec![0; 4096], true)),
    ]);
    exec::run(&mut mem, &mut L2::default(), &t).unwrap();
    let y = &mem.buffer(0, ybar, "").unwrap().bytes;
    (0..64).map(|i| f(u16::from_le_bytes([y[64 * i], y[64 * i + 1]]))).collect()
}

#[test]
fn apple_cast_loads_u8_and_writes_fp16() {
    let t = task(&|_| {});
    assert_eq!((t.sources[0].fmt, t.dest.fmt), (Fmt::U8, Fmt::F16));
    let bools: [u8; 64] = std::array::from_fn(|i| u8::from(i % 3 == 0));
    let want: Vec<f64> = bools.iter().map(|&b| f64::from(b)).collect();
    assert_eq!(run(&bools), want);
    // Every byte value converts exactly (fp16 holds the integers up to 2048).
    let bytes: [u8; 64] = std::array::from_fn(|i| (i * 4 + 3) as u8);
    assert_eq!(run(&bytes), bytes.iter().map(|&b| f64::from(b)).collect::<Vec<_>>());
}

#[test]
fn eight_bit_formats_outside_the_model_are_load_errors() {
    let cases: [(&str, &Change, &str); 4] = [
        // The fp16 format fields on the 8-bit source: the record says FmtMode 0.
        (CAST, &|i| i.set("TileDMASrc.Fmt.FmtMode", 1).unwrap(), "TileDMASrc.Fmt.FmtMode = 0x1: only 0x0"),
        (CAST, &|i| i.set("TileDMASrc.Fmt.Truncate", 3).unwrap(), "TileDMASrc.Fmt.Truncate = 0x3: only 0x0"),
        // DMAFmt mirrors FmtMode.
        (CAST, &|i| i.set("L2.SourceCfg.DMAFmt", 1).unwrap(), "L2.SourceCfg.DMAFmt = 0x1: only 0x0"),
        // The 8-bit source's fields on an fp16 source.
        ("unary_abs_c64", &|i| i.set("TileDMASrc.Fmt.FmtMode", 0).unwrap(), "TileDMASrc.Fmt.FmtMode = 0x0: only 0x1"),
    ];
    for (name, change, want) in cases {
        let e = decode_changed(name, 0, change);
        assert!(e.starts_with(&format!("TD 0: {want}")), "{name}: {e}");
    }
}
