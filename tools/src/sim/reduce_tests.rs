//! Tests of the planar engine's reduction on tasks and buffers built by hand: a view with
//! several channels and depth slices (the `[h][d][c][w]` L2 layout), a source read in
//! strips (channel stride 0x80 shorter than the row, the staging bytes not written), and
//! the result, one value per channel, laid out like the source and stored with the
//! destination's strides. The record tests (`reduce_record_tests.rs`) run Apple's words.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::exec;
use super::memory::{Dense, Dims, Fmt, Memory, Region, L2};
use super::td::{PeReduce, ReduceOp, Task, Tile, Unit};
use super::test_build::{self as build, buffer};
use half::f16;

/// A reduction of `d` read through `src` into L2 at `at`, its result at `result`, stored
/// at BAR 9 one value per 0x40 bytes.
fn task(op: ReduceOp, final_scale: f32, d: Dims, src: Tile, at: Region, result: Region, streamed: bool) -> Task {
    let dest = Tile { bar: 9, base: 0, row: 0x40, plane: 0x40, depth: 0x40, fmt: Fmt::F16, group: 0, interleave: 1 };
    let unit = Unit::Reduce(PeReduce::plain(op, final_scale));
    Task { streamed, ..build::task(unit, d, src, dest, at, result) }
}

/// A DRAM buffer of `size` bytes holding `v(c, d, h, w)` in `t`'s layout.
fn dram(t: &Tile, d: Dims, size: usize, v: &impl Fn(usize, usize, usize, usize) -> f32) -> Vec<u8> {
    let mut bytes = vec![0u8; size];
    for (c, k, h, w) in Dense::coords(d) {
        let at = (c as i64 * t.plane + k as i64 * t.depth + h as i64 * t.row + 2 * w as i64) as usize;
        bytes[at..at + 2].copy_from_slice(&f16::from_f32(v(c, k, h, w)).to_le_bytes());
    }
    bytes
}

/// Runs `t` on `x` (BAR 4) and returns the stored values, one per channel, and the L2.
fn run(t: &Task, x: Vec<u8>) -> (Vec<f32>, L2) {
    let mut mem = Memory::new(vec![(4, buffer("x", x, false)), (9, buffer("y", vec![0; 0x40 * t.in_dims.c], true))]);
    let mut l2 = L2::default();
    exec::run(&mut mem, &mut l2, t).unwrap();
    let y = (0..t.in_dims.c).map(|c| mem.read(0, 9, 0x40 * c as i64, Fmt::F16, "y").unwrap()).collect();
    (y, l2)
}

/// Every `(c, d, h, w)` value of `d` combined per channel.
fn per_channel(d: Dims, v: &impl Fn(usize, usize, usize, usize) -> f32, f: impl Fn(&[f32]) -> f32) -> Vec<f32> {
    (0..d.c)
        .map(|c| {
            let vals: Vec<f32> = Dense::coords(d).filter(|p| p.0 == c).map(|(c, k, h, w)| v(c, k, h, w)).collect();
            f16::from_f32(f(&vals)).to_f32()
        })
        .collect()
}

/// A view of 2 channels, 3 depth slices, 2 rows of 5: in DRAM the slices 0x40 apart inside
/// rows of 0x100 (Apple's depth-as-rows view); in L2 each row holds the 3 slices of 2
/// channels side by side (depth stride 0x20 = C x channel, row 0x60). The result, one value
/// per channel, lies at ResultBase with the source's channel stride.
#[test]
fn depth_slices_are_combined_per_channel() {
    let d = Dims { c: 2, d: 3, h: 2, w: 5 };
    let src = Tile { bar: 4, base: 0, row: 0x100, plane: 0x200, depth: 0x40, fmt: Fmt::F16, group: 0, interleave: 1 };
    let at = Region { base: 0, channel: 0x10, row: 0x60, depth: 0x20 };
    let result = Region { base: 0xC0, ..at };
    let v = |c: usize, k: usize, h: usize, w: usize| (c * 7 + k * 5 + h * 3 + w) as f32 * 0.25 - 3.0 * c as f32;
    let x = dram(&src, d, 0x400, &v);
    let sum = |s: &[f32]| s.iter().sum::<f32>();
    let (y, l2) = run(&task(ReduceOp::Sum, 1.0, d, src, at, result, false), x.clone());
    assert_eq!(y, per_channel(d, &v, sum));
    // The source in L2: element (1, 2, 1, 4) at 0x60 + 2 x 0x20 + 0x10 + 8; the result of
    // channel 1 at 0xc0 + 0x10.
    let source = l2.read(0, &at, d, Fmt::F16, "source").unwrap();
    assert_eq!(source.at(1, 2, 1, 4), v(1, 2, 1, 4));
    let r = l2.read(0, &result, Dims { c: 2, d: 1, h: 1, w: 1 }, Fmt::F16, "result").unwrap();
    assert_eq!(r.data, y);
    let n = 30.0;
    let (mean, _) = run(&task(ReduceOp::Sum, 1.0 / n, d, src, at, result, false), x.clone());
    assert_eq!(mean, per_channel(d, &v, |s| sum(s) * (1.0 / n)));
    let (max, _) = run(&task(ReduceOp::Max, 1.0, d, src, at, result, false), x.clone());
    assert_eq!(max, per_channel(d, &v, |s| s.iter().copied().fold(f32::NEG_INFINITY, f32::max)));
    let (min, _) = run(&task(ReduceOp::Min, 1.0, d, src, at, result, false), x);
    assert_eq!(min, per_channel(d, &v, |s| s.iter().copied().fold(f32::INFINITY, f32::min)));
}

/// Rows of 100 values (0xc8 bytes) with a channel stride of 0x80: the source is read in
/// strips straight from DRAM, every value counts, the staging area is not written.
#[test]
fn rows_longer_than_the_strip_are_read_whole() {
    let d = Dims { c: 2, d: 1, h: 2, w: 100 };
    let src = Tile { bar: 4, base: 0, row: 0x100, plane: 0x200, depth: 0x400, fmt: Fmt::F16, group: 0, interleave: 1 };
    let staging = Region { base: 0, channel: 0x80, row: 0x100, depth: 0x100 };
    let result = Region { base: 0x200, ..staging };
    let v = |c: usize, _: usize, h: usize, w: usize| if w == 99 - h - c { 10.0 } else { (w % 7) as f32 - 3.0 };
    let x = dram(&src, d, 0x400, &v);
    let t = task(ReduceOp::Max, 1.0, d, src, staging, result, true);
    assert_eq!(t.source_dims(), Dims { w: 64, ..d });
    let (y, l2) = run(&t, x.clone());
    assert_eq!(y, vec![10.0, 10.0]);
    let e = l2.check_written(0, &staging, Dims { c: 1, d: 1, h: 1, w: 1 }, Fmt::F16, "staging").unwrap_err();
    assert!(e.to_string().contains("was not written"), "{e}");
    let (sum, _) = run(&task(ReduceOp::Sum, 1.0, d, src, staging, result, true), x);
    assert_eq!(sum, per_channel(d, &v, |s| s.iter().sum()));
}
