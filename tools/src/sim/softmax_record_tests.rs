//! Tests of the simulator on Apple's softmax over W: the register words of the
//! `norm_softmax_a3_*` and `softmax_*` records of `shared/fixtures/apple-h13-oracles/`
//! (`docs/rationale/current-compiler/softmax.md`), decoded and run. Five or six tasks
//! keep everything in L2: the maximum (a reduction kept as a packed row or one line per
//! channel and row), `(x - m) log2 e` (operand 2 broadcast along W), `2^t` through the
//! exp2 table on the NE in place, `1 / sum` (a reduction with the reciprocal post-op),
//! `r e` (operand 1 broadcast along W) to memory; over several rows an NE copy of x
//! first, the rows as the reductions' groups. The constant section is built here (the
//! exp2 table of `anec_backend_h13::activation`) and must hash to Apple's, so the table
//! the simulator evaluates is Apple's.
//!
//! The result must equal the softmax of x (f64) within a bound derived step by step
//! (`bound`): the fp16 log2 e and the fp16 rounding of t, the exp2 table's relative error
//! as measured here on Apple's table, the f32 sum, the rounding of 1 / sum and of the
//! product. The reciprocal is exact in the simulator (the engine's approximation is not
//! known).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::pair_record_tests::{run, surfaces, within_bounds, Ran};
use super::record_tests::{decode, decode_changed, f, inputs, record, Change};
use super::table::Table;
use super::td::{Mac, PostOp, Unit};
use anec_backend_h13::activation::{self, TableFn};
use half::f16;
use sha2::{Digest, Sha256};

/// Apple's softmax records over W the simulator runs, with their task counts.
const RECORDS: [(&str, usize); 12] = [
    ("norm_softmax_a3_1x1x1x64", 5),
    ("norm_softmax_a3_1x1x1x512", 5),
    ("norm_softmax_a3_1x64x1x64", 5),
    ("norm_softmax_a3_1x8x1x128", 5),
    ("norm_softmax_a3_1x64x8x8", 6),
    ("softmax_1x64x8x8", 6),
    ("norm_softmax_a3_1x1x64x64", 6),
    ("norm_softmax_a3_1x12x64x64", 6),
    ("norm_softmax_a3_1x8x64x64", 6),
    // Rows of 128 read by the reductions as 4 rows of 32.
    ("norm_softmax_a3_1x8x128x128", 6),
    // x of 64 x 256 as 1 x 1 x 64 x 256.
    ("chain_base_softmax_d256_s64", 6),
    // Over a W of 1 (every output 1): the subtract packed into one row standing for a
    // memory surface, the exp2 step writing channels back, as over C.
    ("softmax_1x512x1x1", 5),
];

/// Apple's softmax records over the channels of a vector (five tasks: the NE's channel
/// maximum, the subtract packed into one row, exp2 writing channels back, the NE's channel
/// sum through the reciprocal table, the product).
const OVER_C: [&str; 2] = ["norm_softmax_a1_1x512x1x1", "norm_softmax_a1_1x4096x1x1"];

/// The record's constant section: the exp2 table (and, over C, the reciprocal table
/// 0x80 bytes further), zeros after; it must be Apple's.
fn consts(name: &str) -> Vec<u8> {
    let (r, _) = record(name);
    let mut c = activation::table(TableFn::Exp2);
    if OVER_C.contains(&name) {
        c.extend(activation::table(TableFn::Reciprocal));
    }
    c.resize(r.constant_section.size as usize, 0);
    assert_eq!(format!("{:x}", Sha256::digest(&c)), r.constant_section.sha256, "{name}: the table is Apple's");
    c
}

/// Seeded fp16 inputs in [-6, 6) (three times the common [-2, 2) values, rounded).
fn x_of(name: &str) -> Vec<u16> {
    let (ins, _) = surfaces(&record(name).1);
    inputs(ins[0].len()).iter().map(|&b| f16::from_f64(3.0 * f(b)).to_bits()).collect()
}

/// The exp2 table's relative error over its normal outputs, measured on every finite
/// fp16 `t` in [-14, 0] (the arguments softmax gives it are at most 0), and checked to
/// hold below (`|fp16(T(t)) - 2^t| <= eps 2^t + 2^-25`, the subnormal outputs' half
/// spacing).
fn exp2_error(table: &Table) -> f64 {
    let ts = || (0..0x7C00u16).map(|b| f64::from(f16::from_bits(b | 0x8000).to_f32()));
    let err = |t: f64| (f64::from(f16::from_f32(table.eval(t as f32)).to_f32()) - t.exp2()).abs();
    let eps = ts().filter(|&t| t >= -14.0).map(|t| err(t) / t.exp2()).fold(0.0, f64::max);
    for t in ts() {
        assert!(err(t) <= eps * t.exp2() + f64::powi(2.0, -25), "exp2 table at {t}: error {}", err(t));
    }
    eps
}

/// The reciprocal table's relative error (output rounding included) over the arguments a
/// softmax's sum takes, [1, 2^13): 2^16 mantissas in [0.5, 1) in each binade (the mode
/// splits off the exponent).
fn reciprocal_error(table: &Table) -> f64 {
    let mut eps = 0.0f64;
    for e in 1..=13 {
        for k in 0..1 << 16 {
            let v = (0.5 + f64::from(k) / f64::from(1u32 << 17)) * f64::powi(2.0, e);
            let got = f64::from(f16::from_f32(table.eval(v as f32)).to_f32());
            eps = eps.max((got * v - 1.0).abs());
        }
    }
    eps
}

/// Softmax over runs of `w` consecutive elements of `x` in f64, and per element the bound
/// of the simulated result's error (see the module documentation): `eps` the exp2 table's
/// relative error, `eps_r` the relative error of 1 / sum (2^-11, its fp16 rounding, for
/// the planar engine's exact reciprocal; the reciprocal table's over C).
fn bound(x: &[u16], w: usize, eps: f64, eps_r: f64) -> Vec<(f64, f64)> {
    let u = f64::powi(2.0, -11);
    let tiny = f64::powi(2.0, -25);
    let log2e = std::f64::consts::LOG2_E;
    let scale = f64::from(f16::from_f64(log2e).to_f32());
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(w) {
        let v: Vec<f64> = row.iter().map(|&b| f(b)).collect();
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = v.iter().map(|&xi| ((xi - m) * log2e).exp2()).collect();
        // The relative error of each 2^t: t = fp16((x - m) fp16(log2 e)).
        let alpha: Vec<f64> = v
            .iter()
            .map(|&xi| {
                let d = (xi - m).abs();
                let dt = d * (scale - log2e).abs() + u * d * scale + tiny;
                (dt.exp2() - 1.0) + eps * dt.exp2()
            })
            .collect();
        let sum: f64 = e.iter().sum();
        let err_sum: f64 = e.iter().zip(&alpha).map(|(ei, a)| ei * a + tiny).sum::<f64>()
            + w as f64 * f64::powi(2.0, -24) * (sum + 1.0);
        let beta = err_sum / sum;
        let rel_r = beta / (1.0 - beta) + eps_r * (1.0 + beta / (1.0 - beta));
        for (ei, a) in e.iter().zip(&alpha) {
            let y = ei / sum;
            let b = y * ((1.0 + a) * (1.0 + rel_r) * (1.0 + u) - 1.0) + (1.0 + rel_r) * tiny / sum + tiny;
            out.push((y, b));
        }
    }
    out
}

/// Runs `name` on its seeded x and checks every output against the bound of softmax over
/// runs of `w` elements; the worst share of the bound and the largest absolute error.
fn check(name: &str, w: usize, eps: f64, eps_r: f64) -> (Ran, f64, f64) {
    let x = x_of(name);
    let ran = run(name, consts(name), std::slice::from_ref(&x));
    let want = bound(&x, w, eps, eps_r);
    let (worst, abs) = within_bounds(name, &ran.y, &want);
    (ran, worst, abs)
}

/// Apple's softmax programs compute the softmax of x over W.
#[test]
fn apple_softmax_computes_the_softmax() {
    let table = Table::parse(&activation::table(TableFn::Exp2)).unwrap();
    let eps = exp2_error(&table);
    eprintln!("exp2 table: relative error {eps:.3e} over t in [-14, 0]");
    assert!(eps < 1e-3, "exp2 table error {eps}");
    for (name, tasks) in RECORDS {
        let (ins, _) = surfaces(&record(name).1);
        let (ran, worst, abs) = check(name, ins[0].shape[3], eps, f64::powi(2.0, -11));
        assert_eq!(ran.tasks.len(), tasks, "{name}");
        eprintln!("{name}: {} outputs, max |error| {abs:.2e}, worst {worst:.3} of the bound", ran.y.len());
    }
}

/// Apple's softmax over the channels of a vector computes the softmax of x over C: the
/// subtract's packed row stands for a memory surface (DPC, WBase 3) the exp2 step stands
/// for reading (SPC, RBase0 3, DependencyMode 1) while the values pass through L2; the sum
/// over the channels (MACCfg 0x121c08) goes through the reciprocal table.
#[test]
fn apple_softmax_over_channels_computes_the_softmax() {
    let exp2 = Table::parse(&activation::table(TableFn::Exp2)).unwrap();
    let eps = exp2_error(&exp2);
    let eps_r = reciprocal_error(&Table::parse(&activation::table(TableFn::Reciprocal)).unwrap());
    eprintln!("reciprocal table: relative error {eps_r:.3e} over [1, 2^13)");
    assert!(eps_r < 1e-3, "reciprocal table error {eps_r}");
    for name in OVER_C {
        let (ins, _) = surfaces(&record(name).1);
        let (ran, worst, abs) = check(name, ins[0].shape[1], eps, eps_r);
        assert_eq!(ran.tasks.len(), 5, "{name}");
        let t = &ran.tasks;
        assert!(t[1].transposed && !t[1].store && t[2].transposed && t[2].resident);
        let Unit::Ne(sum) = &t[3].unit else { panic!("an NE task") };
        assert_eq!((&sum.mac, t[3].in_dims.c, t[3].out_dims.c), (&Mac::ChannelSum, ins[0].shape[1], 1));
        eprintln!("{name}: {} outputs, max |error| {abs:.2e}, worst {worst:.3} of the bound", ran.y.len());
    }
}

/// What the decoder reads from the plan over one row (`norm_softmax_a3_1x64x1x64`): the
/// maximum's source loaded and kept, its result one packed row; the subtract reading x in
/// place with operand 2 packed along W (0x210); the exp2 step in place; the sum with the
/// reciprocal; the product with operand 1 a packed vector broadcast along W (0x101), its
/// result laid out like operand 2.
#[test]
fn apple_softmax_decodes_to_its_plan() {
    let t: Vec<_> = decode(&record("norm_softmax_a3_1x64x1x64").0).into_iter().map(Result::unwrap).collect();
    let Unit::Reduce(max) = t[0].unit else { panic!("a reduction") };
    assert!(max.packed && max.post == PostOp::None && !t[0].store && !t[0].resident);
    assert_eq!((t[0].l2_sources[0].base, t[0].l2_result.base, t[0].result_dims().w), (0x2080, 0, 64));
    let op = t[1].operand.unwrap();
    assert_eq!((op.broadcast, op.dims.c, op.dims.w, op.region.channel), (0x210, 64, 1, 2));
    assert!(t[1].resident && t[1].l2_sources[0].base == 0x2080);
    assert_eq!((t[2].l2_sources[0], t[2].resident), (t[2].l2_result, true));
    let Unit::Reduce(sum) = t[3].unit else { panic!("a reduction") };
    assert!(sum.packed && sum.post == PostOp::Reciprocal);
    assert_eq!((t[4].source_box.c, t[4].source_box.w, t[4].l2_sources[0].channel), (64, 1, 2));
    assert_eq!((t[4].l2_result.base, t[4].l2_result.channel), (0x2080, 0x80));
}

/// Register changes outside the model are load errors naming the field.
#[test]
fn apple_softmax_fields_outside_the_model_are_load_errors() {
    let row = "norm_softmax_a3_1x64x1x64";
    let rows = "norm_softmax_a3_1x64x8x8";
    let over_c = "norm_softmax_a1_1x512x1x1";
    let cases: [(&str, usize, &Change, &str); 12] = [
        // The tokens: DPC with the destination on; SPC with the source loaded; RBE0 on a
        // source read in place without SPC; DependencyMode without SPC.
        (over_c, 4, &|i| i.set("aneTD.Header[6].DPC", 1).unwrap(), "aneTD.Header[6].DPC = 0x1: DPC (standing"),
        (over_c, 0, &|i| i.set("aneTD.Header[6].SPC", 1).unwrap(), "aneTD.Header[6].SPC = 0x1: SPC (standing"),
        (over_c, 2, &|i| i.set("aneTD.Header[6].SPC", 0).unwrap(), "aneTD.Header[8].RBE0 = 0x1: RBE0"),
        (
            over_c,
            3,
            &|i| i.set("TileDMASrc.DMAConfig.DependencyMode", 1).unwrap(),
            "TileDMASrc.DMAConfig.DependencyMode = 0x1",
        ),
        // The product's result packed (transposed) and written to memory; operand 1 packed
        // and broadcast along C; the statistic's packed row not the channels' row.
        (row, 4, &|i| i.set_raw(0x158, 0x501), "word 0x158 bit 0x400 = 0x1: a transposed result"),
        (row, 4, &|i| i.set_raw(0x158, 0x109), "word 0x158 = 0x109: the flags of one operand"),
        (
            row,
            4,
            &|i| i.set("L2.SourceChannelStride.Stride", 4).unwrap(),
            "L2.SourceChannelStride.Stride = 0x4: a packed",
        ),
        // The reciprocal bit on an elementwise op; a reduction's op beside it.
        (row, 4, &|i| i.set_raw(0x22C, 0x81004), "word 0x22c = 0x81004: PE config"),
        (row, 3, &|i| i.set_raw(0x22C, 0x1001), "word 0x22c = 0x1001: a reduction's op"),
        // A grouped reduction in place without a group step; a one-group one with a step.
        (rows, 1, &|i| i.set_raw(0x1F8, 0), "word 0x1f8 = 0x0: the groups of a reduction"),
        (row, 3, &|i| i.set_raw(0x1F8, 0x400), "word 0x1f8 = 0x400: a reduction of one group"),
        // A grouped reduction's row word other than every group.
        (rows, 1, &|i| i.set("L2.ConvResultRowStride.Stride", 0x100).unwrap(), "L2.ConvResultRowStride.Stride = 0x100"),
    ];
    for (name, task, change, want) in cases {
        let e = decode_changed(name, task, change);
        assert!(e.starts_with(&format!("TD {task}: {want}")), "{name} TD {task}: {e}");
    }
}
