//! Tests of tasks that hand their values on in L2, built by hand: the NE's result written
//! with C and W swapped (Common.Cfg bit 28) for any `C x H x W`; a reduction reading it
//! in place over groups one step apart, its results kept as lines or written as packed
//! rows one GroupStride apart; operand 1 read in place and broadcast (lines and a packed
//! vector) with the result laid out like operand 2; a task writing its result exactly
//! over its source (in place) and the overlaps that stay errors; the reciprocal of a
//! reduction. The record tests (`reduce_record_tests.rs`, `softmax_record_tests.rs`,
//! `layer_norm_record_tests.rs`) run Apple's own register words.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::exec;
use super::memory::{Dense, Dims, Fmt, Memory, Region, L2};
use super::td::{L2Operand, PeOp, PeReduce, PeTask, PostOp, ReduceOp, Task, Tile, Unit};
use super::test_build::{self as build, buffer, dims, ne_pass};
use half::f16;

/// A DRAM tile of BAR `bar`: rows of 0x40 bytes, planes of H rows.
fn tile(bar: u8, d: Dims) -> Tile {
    let plane = 0x40 * d.h as i64;
    Tile { bar, base: 0, row: 0x40, plane, depth: plane * d.c as i64, fmt: Fmt::F16, group: 0, interleave: 1 }
}

/// An idle tile (a source read in place, a destination that is off).
fn idle() -> Tile {
    Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: Fmt::F16, group: 0, interleave: 1 }
}

fn dram(t: &Tile, d: Dims, v: impl Fn(usize, usize, usize) -> f32) -> Vec<u8> {
    let mut bytes = vec![0u8; (t.plane * d.c as i64) as usize];
    for (c, _, h, w) in Dense::coords(d) {
        let at = (c as i64 * t.plane + h as i64 * t.row + 2 * w as i64) as usize;
        bytes[at..at + 2].copy_from_slice(&f16::from_f32(v(c, h, w)).to_le_bytes());
    }
    bytes
}

/// A task of `unit` over `d`, its source loaded through `src` into L2 `at`, its result at
/// `result`, kept in L2.
fn task(unit: Unit, d: Dims, src: Tile, at: Region, result: Region) -> Task {
    Task { store: false, ..build::task(unit, d, src, idle(), at, result) }
}

/// `t` reading its source in place.
fn resident(t: Task) -> Task {
    Task { resident: true, sources: vec![idle()], ..t }
}

/// x(c, h, w) of the transposing tests: distinct, exact in fp16.
fn x(c: usize, h: usize, w: usize) -> f32 {
    (c + 4 * w) as f32 - 3.0 * h as f32 + 0.25
}

/// 3 channels of 2 rows of 4, transposed into L2 at 0: W columns of 0x10 bytes (the 3
/// values of a pixel side by side), rows 0x50 apart.
fn transposed(mem: &mut Memory<'_>, l2: &mut L2) -> Region {
    let d = dims(3, 2, 4);
    let result = Region { base: 0, channel: 0x10, row: 0x50, depth: 0 };
    let t = Task {
        transposed: true,
        ..task(ne_pass(1.0), d, tile(4, d), Region { base: 0x200, channel: 0x10, row: 0x30, depth: 0 }, result)
    };
    assert_eq!(t.result_dims(), dims(4, 2, 3));
    exec::run(mem, l2, &t).unwrap();
    result
}

/// Element `(c, h, w)` of the NE's result lands at h x row + w x channel + c x 2.
#[test]
fn a_transposed_result_swaps_c_and_w() {
    let d = dims(3, 2, 4);
    let mut mem = Memory::new(vec![(4, buffer("x", dram(&tile(4, d), d, x), false))]);
    let mut l2 = L2::default();
    let r = transposed(&mut mem, &mut l2);
    let got = l2.read(0, &r, dims(4, 2, 3), Fmt::F16, "result").unwrap();
    for (c, _, h, w) in Dense::coords(d) {
        assert_eq!(got.at(w, 0, h, c), x(c, h, w), "x[{c}][{h}][{w}]");
    }
    // Byte 0x50 + 3 x 0x10 + 2 x 2 holds x(2, 1, 3).
    let one = Region { base: 0x50 + 0x30 + 4, channel: 2, row: 2, depth: 0 };
    assert_eq!(l2.read(0, &one, dims(1, 1, 1), Fmt::F16, "byte").unwrap().data, vec![x(2, 1, 3)]);
}

/// The sum over C of the transposed x: a reduction of the view (W 4, 1, C 3) over 2
/// groups (x's rows) one row (0x50) apart in place. Kept as lines (one 16-byte line per
/// result, groups 0x40 apart), or written as packed rows (the 4 results of a group side
/// by side, 0x10 apart in L2, one GroupStride (0x40) apart in DRAM).
#[test]
fn a_grouped_reduction_reads_each_group_in_place() {
    let d = dims(3, 2, 4);
    let sum = |h: usize, w: usize| (0..3).map(|c| x(c, h, w)).sum::<f32>();
    for packed in [false, true] {
        let mut mem =
            Memory::new(vec![(4, buffer("x", dram(&tile(4, d), d, x), false)), (9, buffer("y", vec![0; 0x100], true))]);
        let mut l2 = L2::default();
        let src = transposed(&mut mem, &mut l2);
        let view = dims(4, 1, 3);
        let reduce = PeReduce { packed, ..PeReduce::plain(ReduceOp::Sum, 1.0) };
        let (result, step) = match packed {
            true => (Region { base: 0x400, channel: 0x10, row: 0x20, depth: 0 }, 0x10),
            false => (Region { base: 0x400, channel: 0x10, row: 0x80, depth: 0 }, 0x40),
        };
        let mut t = resident(task(Unit::Reduce(reduce), view, idle(), Region { row: 0x40, ..src }, result));
        (t.source_step, t.result_step, t.repeats) = (0x50, step, 2);
        if packed {
            (t.store, t.dest) = (true, Tile { bar: 9, group: 0x40, ..tile(9, dims(1, 1, 4)) });
        }
        exec::run(&mut mem, &mut l2, &t).unwrap();
        for (h, w) in (0..2).flat_map(|h| (0..4).map(move |w| (h, w))) {
            let want = f16::from_f32(sum(h, w)).to_f32();
            let got = match packed {
                true => mem.read(0, 9, 0x40 * h as i64 + 2 * w as i64, Fmt::F16, "y").unwrap(),
                false => {
                    let at = Region { base: 0x400 + 0x40 * h as u64, ..result };
                    l2.read(0, &at, dims(4, 1, 1), Fmt::F16, "lines").unwrap().data[w]
                }
            };
            assert_eq!(got, want, "packed {packed}: y[{h}][{w}]");
        }
    }
}

/// A grouped reduction whose later group was never written, and one whose groups'
/// results overlap, are run-time errors.
#[test]
fn a_grouped_reduction_reads_written_bytes_and_keeps_its_groups_apart() {
    let d = dims(3, 2, 4);
    let mut mem = Memory::new(vec![(4, buffer("x", dram(&tile(4, d), d, x), false))]);
    let mut l2 = L2::default();
    let src = transposed(&mut mem, &mut l2);
    let view = dims(4, 1, 3);
    let result = Region { base: 0x400, channel: 0x10, row: 0x80, depth: 0 };
    let mut t = resident(task(Unit::Reduce(PeReduce::plain(ReduceOp::Max, 1.0)), view, idle(), src, result));
    (t.source_step, t.result_step, t.repeats) = (0xa0, 0x40, 2);
    let e = exec::run(&mut mem, &mut l2, &t).unwrap_err().to_string();
    assert!(e.contains("the L2 source region (SourceType 0") && e.contains("L2 0xa0 was not written"), "{e}");
    (t.source_step, t.result_step) = (0x50, 0x20);
    let e = exec::run(&mut mem, &mut l2, &t).unwrap_err().to_string();
    assert!(e.contains("the L2 results of successive repeats lie 0x20 bytes apart but each takes 0x32"), "{e}");
}

/// softmax's normalize step: operand 1 (read in place) is one value per row broadcast
/// along W (word 0x158 = 0x1: lines 0x10 apart, rows 0x40 apart) or a packed vector of
/// one value per channel (0x101: channel c at 2c), operand 2 the full box; the result,
/// laid out like operand 2, holds r x e.
#[test]
fn operand_one_is_broadcast_from_l2() {
    let d = dims(3, 2, 5);
    let e = |c: usize, h: usize, w: usize| (c * 10 + h * 5 + w) as f32 * 0.5 - 4.0;
    let r = |c: usize, h: usize| 0.25 * (1 + c + 3 * h) as f32;
    let at = Region { base: 0x100, channel: 0x10, row: 0x30, depth: 0 };
    for packed in [false, true] {
        let mut l2 = L2::default();
        l2.write(
            0,
            &at,
            &Dense { dims: d, data: Dense::coords(d).map(|(c, _, h, w)| e(c, h, w)).collect() },
            Fmt::F16,
            "e",
        )
        .unwrap();
        let (region, boxed) = match packed {
            true => (Region { base: 0, channel: 2, row: 0x10, depth: 0 }, dims(3, 1, 1)),
            false => (Region { base: 0, channel: 0x10, row: 0x40, depth: 0 }, dims(3, 2, 1)),
        };
        let data = Dense::coords(boxed).map(|(c, _, h, _)| r(c, h)).collect();
        l2.write(0, &region, &Dense { dims: boxed, data }, Fmt::F16, "r").unwrap();
        let mul = Unit::Pe(PeTask { op: PeOp::Mul, negate: false, abs: false, relu: false, scale: 1.0, bias: 0.0 });
        let mut t = resident(task(mul, d, idle(), region, Region { base: 0x400, ..at }));
        t.source_box = boxed;
        t.operand = Some(L2Operand {
            region: at,
            dims: d,
            fmt: Fmt::F16,
            broadcast: if packed { 0x101 } else { 0x1 },
            third: None,
        });
        (t.store, t.dest) = (true, Tile { bar: 9, ..tile(9, d) });
        let mut mem = Memory::new(vec![(9, buffer("y", vec![0; 0x200], true))]);
        exec::run(&mut mem, &mut l2, &t).unwrap();
        for (c, _, h, w) in Dense::coords(d) {
            let rv = if packed { r(c, 0) } else { r(c, h) };
            let got = mem.read(0, 9, c as i64 * 0x80 + h as i64 * 0x40 + 2 * w as i64, Fmt::F16, "y").unwrap();
            assert_eq!(got, f16::from_f32(rv * e(c, h, w)).to_f32(), "packed {packed}: y[{c}][{h}][{w}]");
        }
    }
}

/// softmax's exp2 step writes its result exactly over its source: allowed (the source is
/// read whole first). A result a line further overlaps the source: an error.
#[test]
fn in_place_is_allowed_and_partial_overlap_is_not() {
    let d = dims(2, 2, 3);
    let at = Region { base: 0x40, channel: 0x10, row: 0x20, depth: 0 };
    let mut l2 = L2::default();
    let v = |c: usize, h: usize, w: usize| (c + 2 * h + 4 * w) as f32;
    l2.write(
        0,
        &at,
        &Dense { dims: d, data: Dense::coords(d).map(|(c, _, h, w)| v(c, h, w)).collect() },
        Fmt::F16,
        "x",
    )
    .unwrap();
    let t = resident(task(ne_pass(2.0), d, idle(), at, at));
    let mut mem = Memory::new(vec![]);
    exec::run(&mut mem, &mut l2, &t).unwrap();
    let got = l2.read(0, &at, d, Fmt::F16, "x").unwrap();
    for (c, _, h, w) in Dense::coords(d) {
        assert_eq!(got.at(c, 0, h, w), 2.0 * v(c, h, w));
    }
    let shifted = Task { l2_result: Region { base: 0x50, ..at }, ..t };
    let e = exec::run(&mut mem, &mut l2, &shifted).unwrap_err().to_string();
    assert!(e.contains("the L2 source 1 region [0x40, 0x76) overlaps the result region [0x50, 0x86)"), "{e}");
}

/// softmax's denominator: the sum of each row with the reciprocal post-op, kept as one
/// packed row.
#[test]
fn a_reduction_with_the_reciprocal_post_op() {
    let d = dims(4, 1, 6);
    let mut mem = Memory::new(vec![(4, buffer("x", dram(&tile(4, d), d, |c, _, w| 0.5 + (c * w) as f32), false))]);
    let mut l2 = L2::default();
    let reduce = PeReduce { post: PostOp::Reciprocal, packed: true, ..PeReduce::plain(ReduceOp::Sum, 1.0) };
    let result = Region { base: 0, channel: 0x10, row: 0x10, depth: 0 };
    let t =
        task(Unit::Reduce(reduce), d, tile(4, d), Region { base: 0x40, channel: 0x10, row: 0x40, depth: 0 }, result);
    exec::run(&mut mem, &mut l2, &t).unwrap();
    let got = l2.read(0, &result, dims(1, 1, 4), Fmt::F16, "r").unwrap();
    for c in 0..4 {
        let sum: f32 = (0..6).map(|w| 0.5 + (c * w) as f32).sum();
        assert_eq!(got.data[c], f16::from_f32(1.0 / sum).to_f32(), "channel {c}");
    }
}
