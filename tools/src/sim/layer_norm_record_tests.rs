//! Tests of the simulator on Apple's layer norms (no affine): the register words of the
//! `layer_norm_*`, `norm_layer_norm_*` and `chain_base_layer_norm_*` records of
//! `shared/fixtures/apple-h13-oracles/` (`docs/rationale/current-compiler/normalization.md`),
//! decoded and run. The mean is a planar-engine reduction kept in L2 (in tiles of 32 rows
//! over C, H and W), rstd the reduction of two operands (Cfg 0x61: the mean broadcast as
//! operand 1 and negated, x, squared, summed, times 1/N, plus the epsilon of word 0x234,
//! rsqrt), then `(x - mean) rstd` with the `[mean; rstd]` rows as operands 2 and 3 (Cfg
//! 0x41) to memory; over W of several rows of several channels an NE copy first and the
//! rows as the reductions' groups, the sum of squares (0x2010) of a centred copy.
//!
//! The result must equal the layer norm of x (f64, epsilon 1e-5) within a bound derived
//! step by step (`expected`): the f32 sum and fp16 rounding of the mean, the variance
//! about that rounded mean in f32, the fp16 epsilon (0x00a8), the rounding of rstd and of
//! the product. The rsqrt is exact in the simulator (the engine's approximation is not
//! known).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::pair_record_tests::{run, surfaces, within_bounds};
use super::record_tests::{decode, f, inputs, record};
use super::td::{PostOp, Unit};
use half::f16;

/// Apple's layer norms the simulator runs: record, normalized axes of its `[N, C, H, W]`
/// tensor, task count, and whether `x - mean` is kept in L2 in fp16 before it is squared
/// and scaled (one more rounding).
const RECORDS: [(&str, &[usize], usize, bool); 11] = [
    ("layer_norm_1x512x1x1", &[1, 2, 3], 3, false),
    ("layer_norm_1x64x8x8", &[1, 2, 3], 3, false),
    ("norm_layer_norm_ax1_2_3_1x256x1x1", &[1, 2, 3], 3, false),
    ("norm_layer_norm_ax1_2_3_1x64x8x8", &[1, 2, 3], 3, false),
    ("norm_layer_norm_ax3_1x1x1x512", &[3], 3, false),
    ("norm_layer_norm_ax3_1x1x1x64", &[3], 3, false),
    ("norm_layer_norm_ax3_1x8x1x64", &[3], 3, false),
    ("chain_base_layer_norm_d256_s64", &[3], 3, false),
    ("norm_layer_norm_ax3_1x128x16x16", &[3], 5, true),
    // Over the channels of a vector: a planar-engine copy packs them into one row (word
    // 0x158 0x400), the three steps run on the row (the ternary in place), a copy unpacks
    // it (0x100).
    ("norm_layer_norm_ax1_1x64x1x1", &[1], 5, false),
    ("norm_layer_norm_ax1_1x4096x1x1", &[1], 5, false),
];

/// The MIL's epsilon.
const EPSILON: f64 = 1e-5;

/// Per element of `x` (`shape`, row-major), the layer norm over `axes` (f64) and the
/// bound of the simulated result's error (see the module documentation); `centred`:
/// `x - mean` is rounded to fp16 before it is squared and multiplied.
fn expected(x: &[u16], shape: [usize; 4], axes: &[usize], centred: bool) -> Vec<(f64, f64)> {
    let (u, tiny, ulp32) = (f64::powi(2.0, -11), f64::powi(2.0, -25), f64::powi(2.0, -24));
    let eps16 = f64::from(f16::from_f64(EPSILON).to_f32());
    let strides = [shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1];
    let index = |i: usize| [0, 1, 2, 3].map(|a| i / strides[a] % shape[a]);
    // The key of an element's group: its indices on the axes not normalized.
    let key =
        |i: usize| index(i).iter().enumerate().map(|(a, &k)| if axes.contains(&a) { 0 } else { k }).collect::<Vec<_>>();
    let mut groups: std::collections::BTreeMap<Vec<usize>, Vec<usize>> = Default::default();
    (0..x.len()).for_each(|i| groups.entry(key(i)).or_default().push(i));
    let mut out = vec![(0.0, 0.0); x.len()];
    for members in groups.values() {
        let n = members.len() as f64;
        let v: Vec<f64> = members.iter().map(|&i| f(x[i])).collect();
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|xi| (xi - mean).powi(2)).sum::<f64>() / n;
        let r = 1.0 / (var + EPSILON).sqrt();
        // The mean: an f32 sum, times fp32 1/N, rounded to fp16.
        let mass = v.iter().map(|xi| xi.abs()).sum::<f64>();
        let d_mean = mean.abs() * (u + ulp32) + n * ulp32 * mass / n + tiny;
        // The variance about the rounded mean (sigma^2 + d^2), its f32 sum, the fp16
        // epsilon; rstd rounded to fp16.
        // A centred copy in fp16: each x - mean off by u relative, its square by 2u.
        let c = if centred { u } else { 0.0 };
        let dv = d_mean * d_mean
            + (var + d_mean * d_mean) * ((n + 3.0) * ulp32 + 2.0 * c * (1.0 + c))
            + (eps16 - EPSILON).abs();
        let rho = 0.5 * dv / (var + EPSILON) * 1.01 + u + 4.0 * ulp32;
        for (&i, xi) in members.iter().zip(&v) {
            let y = (xi - mean) * r;
            let b = (xi - mean).abs() * r * ((1.0 + rho) * (1.0 + u) * (1.0 + c) * (1.0 + 2.0 * ulp32) - 1.0)
                + d_mean * r * (1.0 + rho) * (1.0 + u) * (1.0 + c)
                + tiny;
            out[i] = (y, b);
        }
    }
    out
}

/// Apple's layer norms compute the layer norm of x.
#[test]
fn apple_layer_norms_compute_the_layer_norm() {
    for (name, axes, tasks, centred) in RECORDS {
        let (r, v) = record(name);
        let (ins, _) = surfaces(&v);
        let x = inputs(ins[0].len());
        let ran = run(name, vec![0; r.constant_section.size as usize], std::slice::from_ref(&x));
        assert_eq!(ran.tasks.len(), tasks, "{name}");
        let want = expected(&x, ins[0].shape, axes, centred);
        let (worst, abs) = within_bounds(name, &ran.y, &want);
        eprintln!("{name}: {} outputs, max |error| {abs:.2e}, worst {worst:.3} of the bound", ran.y.len());
    }
}

/// What the decoder reads from the plan over C, H and W (`layer_norm_1x64x8x8`): the mean
/// over the view (1, D 8, H 64, W 8) in tiles of 32 rows, kept at L2 0; rstd from the mean
/// (operand 1, broadcast along W, H and depth, negated) and x where the mean's task left
/// it (operand 2, its depth slices 0x10 apart), squared, 1/4096, epsilon 0x00a8, rsqrt,
/// kept one row (0x20) after the mean; the ternary reading both as one value each.
#[test]
fn apple_layer_norm_decodes_to_its_plan() {
    let t: Vec<_> = decode(&record("layer_norm_1x64x8x8").0).into_iter().map(Result::unwrap).collect();
    let Unit::Reduce(mean) = t[0].unit else { panic!("a reduction") };
    assert_eq!((t[0].in_dims.d, t[0].in_dims.h, mean.final_scale), (8, 64, 1.0 / 4096.0));
    let Unit::Reduce(rstd) = t[1].unit else { panic!("a reduction") };
    assert!(rstd.negate1 && rstd.square && rstd.post == PostOp::Rsqrt);
    assert_eq!(rstd.epsilon, f16::from_bits(0xa8).to_f32());
    assert_eq!((t[1].source_box.d, t[1].source_box.h, t[1].source_box.w), (1, 1, 1));
    let op = t[1].operand.unwrap();
    assert_eq!((op.region.base, op.region.depth, op.dims.d), (0x40, 0x10, 8));
    assert_eq!(t[1].l2_result.base, 0x20);
    let op = t[2].operand.unwrap();
    assert_eq!((op.broadcast, op.dims.c, op.third.map(|r| r.base)), (0x80, 1, Some(0x20)));
}

/// Apple's layer norm over C of 128 x 16 x 16 is not modelled: its second NE transposer
/// (of the centred x) has KernelCfg bit 12, whose meaning on an NE task is unknown.
#[test]
fn apple_layer_norms_outside_the_model_are_load_errors() {
    let tasks = decode(&record("norm_layer_norm_ax1_1x128x16x16").0);
    let e = tasks[3].as_ref().unwrap_err().to_string();
    assert!(e.starts_with("TD 3: word 0x240 = 0x1000"), "{e}");
    assert!(tasks.iter().enumerate().all(|(i, t)| i == 3 || t.is_ok()));
}

/// The packing copy of the layer norm over C (`norm_layer_norm_ax1_1x64x1x1`): a
/// one-operand planar-engine task whose 64 x 1 x 1 result goes along one row (word 0x158
/// 0x400: the words of a transposed result, 0x80 x 3); the unpacking copy reads that row
/// as operand 1 packed (0x100, channel stride 2).
#[test]
fn apple_layer_norm_over_c_packs_and_unpacks() {
    let t: Vec<_> = decode(&record("norm_layer_norm_ax1_1x64x1x1").0).into_iter().map(Result::unwrap).collect();
    assert!(t[0].transposed && !t[0].store);
    assert_eq!((t[0].result_dims(), t[0].l2_result.base), (super::memory::Dims { c: 1, d: 1, h: 1, w: 64 }, 0x40));
    assert!(t[4].resident && t[4].store && !t[4].transposed);
    assert_eq!((t[4].l2_sources[0].base, t[4].l2_sources[0].channel, t[4].source_box.c), (0x40, 2, 64));
    assert_eq!(t[3].l2_sources[0], t[3].l2_result);
}
