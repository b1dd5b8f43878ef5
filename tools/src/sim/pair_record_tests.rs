//! Tests of the simulator on Apple's NE-producer / PE-consumer pairs and the PE's abs:
//! the register words of the records `binary_real_div_1x64x1x1`,
//! `env_bcast_add_{1x64x8x8, 8x64x8x8}_runtime_{1x64x1x1, 1x1x1x1}`,
//! `binary_mul_c512_constant_blob`, `env_bcast_mul_1x768x16x16_blob_1x768x1x1` and
//! `unary_abs_c64` of `shared/fixtures/apple-h13-oracles/` (Apple's own task streams),
//! decoded and run. The constant sections are built here (the reciprocal table by
//! `anec_backend_h13::activation`, the `[bias; scale]` rows from the README's weights form
//! A) and must hash to the record's SHA-256, so the bytes the simulator reads are Apple's.
//! The results must equal the MIL's math within one fp16 rounding (the reciprocal: within
//! one rounding of `x * fp16(table(z))`, the table evaluated by the backend's own model).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::exec;
use super::memory::{Buffer, Memory, L2};
use super::record_tests::{decode_changed, f, halfword, inputs, record, text, Change};
use super::td::{self, Task, Unit};
use anec_backend_h13::activation::{self, TableFn};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// A tensor of a record: shape `[N, C, H, W]` and byte strides.
#[derive(Debug, Clone)]
pub(super) struct Surface {
    pub(super) shape: [usize; 4],
    strides: [u64; 4],
}

impl Surface {
    pub(super) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Byte offset of element `i` (row-major N, C, H, W).
    fn at(&self, i: usize) -> usize {
        let [_, c, h, w] = self.shape;
        let idx = [i / (c * h * w), i / (h * w) % c, i / w % h, i % w];
        idx.iter().zip(&self.strides).map(|(&k, &s)| k as u64 * s).sum::<u64>() as usize
    }

    fn bytes(&self) -> usize {
        self.shape[0] * self.strides[0] as usize
    }
}

/// The record's inputs (in MIL argument order) and its output.
pub(super) fn surfaces(v: &Value) -> (Vec<Surface>, Surface) {
    let surface = |t: &Value| {
        let n = |a: &Value, i: usize| a[i].as_u64().unwrap();
        let (s, st) = (&t["shape"], &t["strides"]);
        Surface { shape: [0, 1, 2, 3].map(|i| n(s, i) as usize), strides: [0, 1, 2, 3].map(|i| n(st, i)) }
    };
    let all = v["tensor_descriptors"].as_array().unwrap();
    let ins = all.iter().filter(|t| t["binding"] == 1).map(surface).collect();
    let out = all.iter().find(|t| t["binding"] == 2).map(surface).unwrap();
    (ins, out)
}

/// The outcome of a record's tasks: the decoded tasks and the output's fp16 bits.
pub(super) struct Ran {
    pub(super) tasks: Vec<Task>,
    pub(super) y: Vec<u16>,
}

/// Runs the record `name` with `consts` as `__const` and the inputs `x` (and `z`): `x` is
/// the source of the last task that loads one, `z` the first task's (when it does not read
/// `__const`).
pub(super) fn run(name: &str, consts: Vec<u8>, values: &[Vec<u16>]) -> Ran {
    run_changed(name, consts, values, &|_| {})
}

/// [`run`] with `change` made to the register image of every task.
pub(super) fn run_changed(name: &str, consts: Vec<u8>, values: &[Vec<u16>], change: &Change) -> Ran {
    let (r, v) = record(name);
    let d = &r.program_descriptor;
    let chain = anec_backend_h13::chain::read(&text(&r), d.task_words_minus_one + 1, d.task_count).unwrap();
    let decode = |(i, t): (usize, &anec_backend_h13::chain::ChainTask)| {
        let mut img = t.task.image.clone();
        change(&mut img);
        td::decode(&img, i).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let tasks: Vec<Task> = chain.iter().enumerate().map(decode).collect();
    let (ins, out) = surfaces(&v);
    let buf = |name: &str, bytes: Vec<u8>, writable| Buffer { name: name.into(), bytes: Cow::Owned(bytes), writable };
    let fill = |s: &Surface, vals: &[u16]| {
        let mut b = vec![0u8; s.bytes()];
        for (i, &bits) in vals.iter().enumerate() {
            b[s.at(i)..][..2].copy_from_slice(&bits.to_le_bytes());
        }
        b
    };
    // x: the source of the last task that loads one (the others read L2 in place).
    let loads = tasks.iter().rev().find(|t| !t.resident).unwrap();
    let (xbar, ybar) = (loads.sources[0].bar, tasks.last().unwrap().dest.bar);
    let mut buffers = vec![(1, buf("__const", consts, false)), (xbar, buf("x", fill(&ins[0], &values[0]), false))];
    if let (Some(s), Some(z)) = (ins.get(1), values.get(1)) {
        buffers.push((tasks[0].sources[0].bar, buf("z", fill(s, z), false)));
    }
    buffers.push((ybar, buf("y", vec![0; out.bytes()], true)));
    let mut mem = Memory::new(buffers);
    let mut l2 = L2::default();
    for t in &tasks {
        exec::run(&mut mem, &mut l2, t).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let bytes = &mem.buffer(0, ybar, "").unwrap().bytes;
    let y = (0..out.len()).map(|i| u16::from_le_bytes([bytes[out.at(i)], bytes[out.at(i) + 1]])).collect();
    Ran { tasks, y }
}

/// `x` of the record's first input shape, seeded values in [-2, 2).
pub(super) fn x_of(name: &str, input: usize) -> Vec<u16> {
    let (ins, _) = surfaces(&record(name).1);
    inputs(ins[input].len())
}

/// Positive divisors in [0.25, 2).
/// Checks every output `y[i]` against `want[i]` = (expected value, error bound); the worst
/// share of its bound an output uses and the largest absolute error.
pub(super) fn within_bounds(name: &str, y: &[u16], want: &[(f64, f64)]) -> (f64, f64) {
    assert_eq!(y.len(), want.len(), "{name}: output elements");
    let (mut worst, mut abs) = (0.0f64, 0.0f64);
    for (i, (&y, &(w, b))) in y.iter().zip(want).enumerate() {
        let err = (f(y) - w).abs();
        assert!(err <= b, "{name}: y[{i}] = {}, expected {w} (bound {b:e})", f(y));
        worst = worst.max(if b > 0.0 { err / b } else { 0.0 });
        abs = abs.max(err);
    }
    (worst, abs)
}

fn positive(v: &[u16]) -> Vec<u16> {
    v.iter().map(|&b| half::f16::from_f64(f(b).abs() * 0.875 + 0.25).to_bits()).collect()
}

/// `|got - want|` within one fp16 rounding of `want` (and the subnormal spacing).
fn one_rounding(name: &str, i: usize, got: u16, want: f64) {
    let bound = f64::powi(2.0, -11) * want.abs() + f64::powi(2.0, -25);
    assert!((f(got) - want).abs() <= bound, "{name}: y[{i}] = {}, expected {want}", f(got));
}

fn sha(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The reciprocal of z stays in L2 as one packed row (8 NEs, Cfg bit 28), the PE
/// multiplies x by it (Cfg 0x31, word 0x158 = 0x200). Alone, the consumer finds nothing in L2.
#[test]
fn apple_real_div_keeps_the_reciprocal_packed_in_l2() {
    let name = "binary_real_div_1x64x1x1";
    let (r, _) = record(name);
    let mut consts = activation::table(TableFn::Reciprocal);
    consts.resize(r.constant_section.size as usize, 0);
    assert_eq!(sha(&consts), r.constant_section.sha256, "{name}: the table is Apple's");
    let (x, z) = (x_of(name, 0), positive(&x_of(name, 1)));
    let ran = run(name, consts, &[x.clone(), z.clone()]);
    let (p, c) = (&ran.tasks[0], &ran.tasks[1]);
    assert!(p.transposed && !p.store && c.store && !c.transposed);
    let op = c.operand.unwrap();
    assert_eq!((op.broadcast, op.region.base, op.region.channel, op.dims.c), (0x200, 0, 2, 64));
    let table = activation::layout(TableFn::Reciprocal);
    let mut worst = 0.0f64;
    for (i, &y) in ran.y.iter().enumerate() {
        let inv = f64::from(half::f16::from_f32(table.eval(f(z[i]) as f32)).to_f32());
        one_rounding(name, i, y, f(x[i]) * inv);
        worst = worst.max((f(y) - f(x[i]) / f(z[i])).abs() / (f(x[i]) / f(z[i])).abs().max(f64::MIN_POSITIVE));
    }
    eprintln!("{name}: worst relative error against x / z: {worst:.2e}");
    let x = Buffer { name: "x".into(), bytes: Cow::Owned(vec![0; 0x1000]), writable: false };
    let mut mem = Memory::new(vec![(c.sources[0].bar, x)]);
    let e = exec::run(&mut mem, &mut L2::default(), c).unwrap_err().to_string();
    assert!(e.starts_with("TD 1: operand 2 in L2") && e.contains("was not written"), "{e}");
}

/// An NE copy of z in the standard layout, read by the PE with broadcast flags 0x30
/// (over H and W) and 0xb0 (also over C); the batch of 8 reads the same copy each time.
#[test]
fn apple_broadcast_adds_read_the_copy_from_l2() {
    for (name, flags) in [
        ("env_bcast_add_1x64x8x8_runtime_1x64x1x1", 0x30),
        ("env_bcast_add_1x64x8x8_runtime_1x1x1x1", 0xb0),
        ("env_bcast_add_8x64x8x8_runtime_1x64x1x1", 0x30),
    ] {
        let (x, z) = (x_of(name, 0), x_of(name, 1));
        let ran = run(name, vec![0; 0x4000], &[x.clone(), z.clone()]);
        let c = &ran.tasks[1];
        assert_eq!((ran.tasks[0].store, c.operand.map(|o| o.broadcast)), (false, Some(flags)));
        let (ins, _) = surfaces(&record(name).1);
        let [_, ch, h, w] = ins[0].shape;
        for (i, &y) in ran.y.iter().enumerate() {
            let zi = if z.len() == 1 { 0 } else { i / (h * w) % ch };
            one_rounding(name, i, y, f(x[i]) + f(z[zi]));
        }
        eprintln!("{name}: {} tasks, {} outputs, repeats {}", ran.tasks.len(), ran.y.len(), c.repeats);
    }
}

/// A per-channel constant: the NE streams the `[bias; scale]` rows (1 x 2 x C, a row of
/// C >= 128 values cut in 0x100-byte pieces) from `__const` into L2, the three-operand PE
/// computes `(x + row 0) * row 1` = x * c.
#[test]
fn apple_per_channel_constants_are_three_operand_rows() {
    for name in ["binary_mul_c512_constant_blob", "env_bcast_mul_1x768x16x16_blob_1x768x1x1"] {
        let (r, v) = record(name);
        let payload = v["weights"]["payload_bytes"].as_u64().unwrap();
        let (ins, _) = surfaces(&v);
        let [_, c, h, w] = ins[0].shape;
        let row = (2 * c).div_ceil(64) * 64;
        let mut consts = vec![0u8; r.constant_section.size as usize];
        for k in 0..c {
            consts[row + 2 * k..][..2].copy_from_slice(&halfword(k, payload, 0x3800).to_le_bytes());
        }
        assert_eq!(sha(&consts), r.constant_section.sha256, "{name}: the rows are Apple's");
        let x = x_of(name, 0);
        let ran = run(name, consts, std::slice::from_ref(&x));
        assert!(ran.tasks[0].streamed && !ran.tasks[0].store, "{name}: the rows are streamed and kept");
        let op = ran.tasks[1].operand.unwrap();
        assert_eq!(op.third.map(|t| t.base - op.region.base), Some(if c == 512 { 0x420 } else { 0x610 }));
        for (i, &y) in ran.y.iter().enumerate() {
            one_rounding(name, i, y, f(x[i]) * f(halfword(i / (h * w) % c, payload, 0x3800)));
        }
    }
}

/// PE config bit 6: the absolute value, one operand (Cfg 0x21).
#[test]
fn apple_abs_is_pe_bit_6() {
    let name = "unary_abs_c64";
    let x = x_of(name, 0);
    let ran = run(name, vec![0; 0x4000], std::slice::from_ref(&x));
    let Unit::Pe(pe) = ran.tasks[0].unit else { panic!("a PE task") };
    assert!(pe.abs);
    for (i, &y) in ran.y.iter().enumerate() {
        assert_eq!(f(y), f(x[i]).abs(), "{name}: y[{i}]");
    }
}

/// Register values outside the modelled pairs are load errors naming the field.
#[test]
fn apple_pair_fields_outside_the_model_are_load_errors() {
    let div = "binary_real_div_1x64x1x1";
    let add = "env_bcast_add_1x64x8x8_runtime_1x64x1x1";
    let mul = "binary_mul_c512_constant_blob";
    let abs = "unary_abs_c64";
    let cases: [(&str, usize, &Change, &str); 19] = [
        // The result kept in L2 but DstLoc says DRAM; WBE without a destination.
        (add, 0, &|i| i.set("aneTD.Header[6].DstLoc", 1).unwrap(), "aneTD.Header[6].DstLoc = 0x1: DstLoc"),
        (add, 0, &|i| i.set("aneTD.Header[8].WBE", 1).unwrap(), "aneTD.Header[8].WBE = 0x1: WBE"),
        // A destination that is off with an address.
        (add, 0, &|i| i.set("TileDMADst.BaseAddr.Addr", 1).unwrap(), "TileDMADst.BaseAddr.Addr = 0x1"),
        // ResultType 2 (to DRAM) with the destination off; kept with L2BfrMode 1.
        (add, 0, &|i| i.set("L2.ResultCfg.ResultType", 2).unwrap(), "L2.ResultCfg.ResultType = 0x2: 0 (the result"),
        (add, 0, &|i| i.set("L2.ResultCfg.L2BfrMode", 1).unwrap(), "L2.ResultCfg.L2BfrMode = 0x1: a result kept"),
        // A transposed result of 2 columns whose plane word holds one; a row stride
        // shorter than the plane.
        (
            div,
            0,
            &|i| {
                for f in ["Common.InDim.Win", "Common.OutDim.Wout"] {
                    i.set(f, 2).unwrap();
                }
            },
            "Common.Cfg bit 28 (word 0x15c) = 0x1: a transposed result of 64 x 1 x 2 is modelled with word 0x220 = \
             W x channel stride = 0x100",
        ),
        (
            div,
            0,
            &|i| i.set("L2.ConvResultRowStride.Stride", 7).unwrap(),
            "Common.Cfg bit 28 (word 0x15c) = 0x1: a transposed result of 64 x 1 x 1",
        ),
        // Bit 28 on a planar-engine task.
        (abs, 0, &|i| i.set_raw(0x15C, i.word(0x15C) | 1 << 28), "word 0x15c unnamed bits = 0x10000021"),
        // Broadcast flags: the third loop, per-channel mixed with C, both operands
        // broadcast, operand 1 broadcast while loaded by the tile DMA, three operands
        // with axis flags, flags on a one-operand task.
        (add, 1, &|i| i.set_raw(0x158, 0x40), "word 0x158 = 0x40"),
        (div, 1, &|i| i.set_raw(0x158, 0x280), "word 0x158 = 0x280"),
        (add, 1, &|i| i.set_raw(0x158, 0x31), "word 0x158 = 0x31: the flags of one operand"),
        (add, 1, &|i| i.set_raw(0x158, 0x1), "word 0x158 = 0x1: operand-1 broadcast flags are modelled for a"),
        (mul, 1, &|i| i.set_raw(0x158, 0x30), "word 0x158 = 0x30: three operands"),
        (abs, 0, &|i| i.set_raw(0x158, 0x10), "word 0x158 = 0x10: one operand is modelled with 0, 0x100"),
        // On an NE task word 0x158 is not read at all.
        (add, 0, &|i| i.set_raw(0x158, 0x200), "word 0x158 = 0x200: bits set that no modelled field covers"),
        // The packed vector's channel word is not its row; a second plane word.
        (div, 1, &|i| i.set_raw(0x200, 0x90), "word 0x200 = 0x90: a packed vector of 64 channels"),
        (div, 1, &|i| i.set_raw(0x20C, 0x10), "word 0x20c = 0x10: plane2 word"),
        // The three-operand rows with mul; a bit no record sets (7).
        (mul, 1, &|i| i.set_raw(0x22C, 0x80004), "word 0x22c = 0x80004: PE config"),
        (add, 1, &|i| i.set_raw(0x22C, 0x80080), "word 0x22c = 0x80080: PE config"),
    ];
    for (name, task, change, want) in cases {
        let e = decode_changed(name, task, change);
        assert!(e.starts_with(&format!("TD {task}: {want}")), "{name} TD {task}: {e}");
    }
    // The consumer's SourceCfg with the planar alias bits; a DRAM second source (RBE1)
    // while Cfg says the operand is in L2.
    let planar = |i: &mut anec_backend_h13::td::TdImage| i.set("L2.SourceCfg.AliasPlanarSrc", 1).unwrap();
    let e = decode_changed(add, 1, &planar);
    assert!(e.starts_with("TD 1: L2.SourceCfg alias bits = 0x7"), "{e}");
    let rbe1 = |i: &mut anec_backend_h13::td::TdImage| i.set("aneTD.Header[8].RBE1", 1).unwrap();
    let e = decode_changed(add, 1, &rbe1);
    assert!(e.starts_with("TD 1: aneTD.Header[8].RBE1 = 0x1"), "{e}");
}
