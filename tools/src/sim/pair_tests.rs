//! Tests of the L2 pair modes on tasks and buffers built by hand: an NE result kept in L2
//! (the standard layout, a packed row, the `[bias; scale]` rows from a streamed source),
//! and planar-engine consumers reading an operand from L2 with every broadcast flag of
//! word 0x158, three operands, the absolute value and a batch. The record tests
//! (`pair_record_tests.rs`) run Apple's own register words.

#![allow(clippy::unwrap_used, clippy::panic)]

use super::exec;
use super::memory::{Dense, Dims, Fmt, Memory, Region, L2};
use super::td::{L2Operand, PeOp, PeTask, Task, Tile, Unit};
use super::test_build::{self as build, buffer, dims, ne_pass};
use half::f16;

/// The DRAM layout of the corpus: rows of 64 bytes at least, planes of H rows; the group
/// (batch) stride is C planes.
fn tile(bar: u8, d: Dims) -> Tile {
    let row = (2 * d.w).div_ceil(64) as i64 * 64;
    let plane = row * d.h as i64;
    Tile {
        bar,
        base: 0,
        row,
        plane,
        depth: plane * d.c as i64,
        fmt: Fmt::F16,
        group: plane * d.c as i64,
        interleave: 1,
    }
}

/// The standard L2 layout at `base`: channel stride W rounded up to 16 bytes, row C of them.
fn region(base: u64, d: Dims) -> Region {
    let channel = (2 * d.w as u64).div_ceil(16) * 16;
    Region { base, channel, row: channel * d.c as u64, depth: 0 }
}

fn pe(op: PeOp, abs: bool) -> Unit {
    Unit::Pe(PeTask { op, negate: false, abs, relu: false, scale: 1.0, bias: 0.0 })
}

/// A task of one source (BAR `bar`) at L2 `at`, its result at `result` stored at BAR 9.
fn task(unit: Unit, d: Dims, bar: u8, at: Region, result: Region) -> Task {
    build::task(unit, d, tile(bar, d), tile(9, d), at, result)
}

/// An NE task keeping its result in L2 (no destination).
fn producer(d: Dims, bar: u8, at: Region, result: Region) -> Task {
    Task {
        store: false,
        dest: Tile { bar: 0, base: 0, row: 0, plane: 0, depth: 0, fmt: Fmt::F16, group: 0, interleave: 1 },
        ..task(ne_pass(1.0), d, bar, at, result)
    }
}

/// A DRAM buffer holding `v(c, h, w)` in `t`'s layout (`n` batch entries, the value of
/// entry `b` is `v + 100 b`).
fn dram(t: &Tile, d: Dims, n: usize, v: impl Fn(usize, usize, usize) -> f32) -> Vec<u8> {
    let mut bytes = vec![0u8; (t.group as usize) * n];
    for b in 0..n {
        for (c, _, h, w) in Dense::coords(d) {
            let at = b * t.group as usize + c * t.plane as usize + h * t.row as usize + 2 * w;
            bytes[at..at + 2].copy_from_slice(&f16::from_f32(v(c, h, w) + 100.0 * b as f32).to_le_bytes());
        }
    }
    bytes
}

/// Element `(c, h, w)` of batch entry `b` of a DRAM buffer in `t`'s layout.
fn value(mem: &Memory<'_>, t: &Tile, b: usize, c: usize, h: usize, w: usize) -> f32 {
    let at = b as i64 * t.group + c as i64 * t.plane + h as i64 * t.row + 2 * w as i64;
    mem.read(0, t.bar, at, Fmt::F16, "y").unwrap()
}

/// z(c) = c / 4 + 1, exact in fp16.
fn z(c: usize) -> f32 {
    c as f32 / 4.0 + 1.0
}

/// The packed write: the NE's 20 x 1 x 1 result as one row, channel c at base + 2c; the
/// consumer reads it as a per-channel vector (0x200) and adds it to x (20 x 2 x 3).
#[test]
fn a_packed_vector_is_one_row_read_per_channel() {
    let zd = dims(20, 1, 1);
    let mut p = producer(zd, 6, region(0x40, zd), Region { base: 0, channel: 0x30, row: 0x30, depth: 0 });
    p.transposed = true;
    let xd = dims(20, 2, 3);
    let (xt, zt) = (tile(4, xd), tile(6, zd));
    let mut mem = Memory::new(vec![
        (4, buffer("x", dram(&xt, xd, 1, |c, h, w| (c + 10 * h + w) as f32), false)),
        (6, buffer("z", dram(&zt, zd, 1, |c, _, _| z(c)), false)),
        (9, buffer("y", vec![0; xt.group as usize], true)),
    ]);
    let mut l2 = L2::default();
    exec::run(&mut mem, &mut l2, &p).unwrap();
    let row = l2.read(0, &Region { base: 0, channel: 0, row: 0, depth: 0 }, dims(1, 1, 20), Fmt::F16, "row").unwrap();
    assert_eq!(row.data, (0..20).map(z).collect::<Vec<_>>());
    let operand = L2Operand {
        region: Region { base: 0, channel: 2, row: 0x30, depth: 0 },
        dims: dims(20, 1, 1),
        fmt: Fmt::F16,
        broadcast: 0x200,
        third: None,
    };
    let c = Task { operand: Some(operand), ..task(pe(PeOp::Add, false), xd, 4, region(0x40, xd), region(0x400, xd)) };
    exec::run(&mut mem, &mut l2, &c).unwrap();
    for (ch, _, h, w) in Dense::coords(xd) {
        assert_eq!(value(&mem, &c.dest, 0, ch, h, w), (ch + 10 * h + w) as f32 + z(ch), "y[{ch}][{h}][{w}]");
    }
}

/// The standard copy kept in L2: the values at the result strides, nothing written to
/// DRAM (there is no destination buffer), the source region written by the load.
#[test]
fn a_standard_copy_stays_in_l2() {
    let d = dims(3, 1, 2);
    let result = Region { base: 0, channel: 0x10, row: 0x30, depth: 0 };
    let p = producer(d, 6, region(0x30, d), result);
    let t = tile(6, d);
    let mut mem = Memory::new(vec![(6, buffer("z", dram(&t, d, 1, |c, _, w| (2 * c + w) as f32), false))]);
    let mut l2 = L2::default();
    exec::run(&mut mem, &mut l2, &p).unwrap();
    l2.check_written(0, &result, d, Fmt::F16, "result").unwrap();
    assert_eq!(l2.read(0, &result, d, Fmt::F16, "result").unwrap().data, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

/// The `[bias; scale]` rows: a 1 x 2 x 160 copy from `__const` (a row of 0x140 bytes, so
/// the source is streamed in 0x100-byte pieces) into rows 0x160 apart; the staging area's
/// bytes are not written. The three-operand consumer computes `(x + row 0) * row 1`.
#[test]
fn rows_from_a_streamed_source_feed_three_operands() {
    let (n, rows) = (160usize, dims(1, 2, 160));
    let ct = tile(1, rows);
    let result = Region { base: 0, channel: 0x140, row: 0x160, depth: 0 };
    let staging = Region { base: 0x2c0, channel: 0x100, row: 0x100, depth: 0 };
    let mut p = producer(rows, 1, staging, result);
    p.streamed = true;
    assert_eq!(p.source_dims(), dims(1, 2, 128));
    let xd = dims(n, 1, 2);
    let xt = tile(4, xd);
    let mut mem = Memory::new(vec![
        (1, buffer("__const", dram(&ct, rows, 1, |_, h, w| if h == 0 { w as f32 } else { z(w % 8) }), false)),
        (4, buffer("x", dram(&xt, xd, 1, |c, _, w| (w as f32) - (c % 5) as f32), false)),
        (9, buffer("y", vec![0; xt.group as usize], true)),
    ]);
    let mut l2 = L2::default();
    exec::run(&mut mem, &mut l2, &p).unwrap();
    let e = l2.check_written(0, &staging, dims(1, 1, 1), Fmt::F16, "staging").unwrap_err().to_string();
    assert!(e.contains("was not written"), "{e}");
    let operand = L2Operand {
        region: Region { base: 0, channel: 2, row: 0x160, depth: 0 },
        dims: dims(n, 1, 1),
        fmt: Fmt::F16,
        broadcast: 0x200,
        third: Some(Region { base: 0x160, channel: 2, row: 0x160, depth: 0 }),
    };
    let c = Task { operand: Some(operand), ..task(pe(PeOp::Add, false), xd, 4, region(0x2c0, xd), region(0x2000, xd)) };
    exec::run(&mut mem, &mut l2, &c).unwrap();
    for (ch, _, _, w) in Dense::coords(xd) {
        let want = (w as f32 - (ch % 5) as f32 + ch as f32) * z(ch % 8);
        assert_eq!(value(&mem, &c.dest, 0, ch, 0, w), f16::from_f32(want).to_f32(), "y[{ch}][0][{w}]");
    }
}

/// Every broadcast of word 0x158 (W 0x10, H 0x20, C 0x80 and their combinations, none):
/// the operand box has extent 1 on the flagged axes and is repeated along them; a batch
/// of 2 reads the same operand each time.
#[test]
fn consumers_broadcast_by_the_flags_of_word_0x158() {
    let xd = dims(3, 2, 4);
    for flags in [0, 0x10, 0x20, 0x80, 0x30, 0x90, 0xa0, 0xb0] {
        let keep = |flag: u32, n: usize| if flags & flag != 0 { 1 } else { n };
        let od = dims(keep(0x80, 3), keep(0x20, 2), keep(0x10, 4));
        let at = region(0, od);
        let mut l2 = L2::default();
        let ov = |c: usize, h: usize, w: usize| (100 * c + 10 * h + w) as f32;
        let data = Dense::coords(od).map(|(c, _, h, w)| ov(c, h, w)).collect();
        l2.write(0, &at, &Dense { dims: od, data }, Fmt::F16, "operand").unwrap();
        let xt = tile(4, xd);
        let mut mem = Memory::new(vec![
            (4, buffer("x", dram(&xt, xd, 2, |c, h, w| -((c + h + w) as f32)), false)),
            (9, buffer("y", vec![0; 2 * xt.group as usize], true)),
        ]);
        let operand = L2Operand { region: at, dims: od, fmt: Fmt::F16, broadcast: flags, third: None };
        let mut c = task(pe(PeOp::Add, false), xd, 4, region(0x200, xd), region(0x400, xd));
        c.operand = Some(operand);
        c.repeats = 2;
        c.dest.base = 0;
        exec::run(&mut mem, &mut l2, &c).unwrap();
        let pick = |i: usize, n: usize| if n == 1 { 0 } else { i };
        for b in 0..2 {
            for (ch, _, h, w) in Dense::coords(xd) {
                let want = 100.0 * b as f32 - (ch + h + w) as f32 + ov(pick(ch, od.c), pick(h, od.h), pick(w, od.w));
                assert_eq!(value(&mem, &c.dest, b, ch, h, w), want, "flags {flags:#x}: y[{b}][{ch}][{h}][{w}]");
            }
        }
    }
}

/// The absolute value comes last: `|(x * operand) * scale + ...|`, here `|x * z|`.
#[test]
fn abs_of_a_product_with_an_l2_operand() {
    let xd = dims(4, 1, 2);
    let od = dims(4, 1, 1);
    let mut l2 = L2::default();
    l2.write(0, &region(0, od), &Dense { dims: od, data: vec![-1.0, 2.0, -3.0, 0.5] }, Fmt::F16, "z").unwrap();
    let xt = tile(4, xd);
    let mut mem = Memory::new(vec![
        (4, buffer("x", dram(&xt, xd, 1, |c, _, w| c as f32 - 2.0 * w as f32), false)),
        (9, buffer("y", vec![0; xt.group as usize], true)),
    ]);
    let operand = L2Operand { region: region(0, od), dims: od, fmt: Fmt::F16, broadcast: 0x30, third: None };
    let c = Task { operand: Some(operand), ..task(pe(PeOp::Mul, true), xd, 4, region(0x100, xd), region(0x200, xd)) };
    exec::run(&mut mem, &mut l2, &c).unwrap();
    let zs = [-1.0f32, 2.0, -3.0, 0.5];
    for (ch, _, _, w) in Dense::coords(xd) {
        assert_eq!(value(&mem, &c.dest, 0, ch, 0, w), ((ch as f32 - 2.0 * w as f32) * zs[ch]).abs());
    }
}

/// An operand region that overlaps the source's is an error (aliasing is not modelled).
#[test]
fn an_operand_overlapping_the_source_is_an_error() {
    let xd = dims(4, 1, 2);
    let od = dims(4, 1, 1);
    let operand = L2Operand { region: region(0x30, od), dims: od, fmt: Fmt::F16, broadcast: 0x10, third: None };
    let c = Task { operand: Some(operand), ..task(pe(PeOp::Add, false), xd, 4, region(0, xd), region(0x200, xd)) };
    let mut mem = Memory::new(vec![]);
    let e = exec::run(&mut mem, &mut L2::default(), &c).unwrap_err().to_string();
    assert!(e.contains("the L2 source 1 region [0x0, 0x34) overlaps the operand 2 region"), "{e}");
}
