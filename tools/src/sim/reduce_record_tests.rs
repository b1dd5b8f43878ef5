//! Tests of the simulator on Apple's reductions: the register words of the `reduce_*`
//! records of `shared/fixtures/apple-h13-oracles/` (the planar engine's per-channel
//! reduction, Common.Cfg 0x51, over the views Apple chooses; the NE's maximum over the
//! channels of a vector, OpMode 3; the reductions over C of a tensor with several pixels,
//! an NE pass transposing it into L2 and a grouped reduction reading it in place, whose
//! results go to memory as packed rows), decoded and run on seeded inputs. Every result
//! must equal the MIL's reduction (f64) within one fp16 rounding and the f32
//! accumulation; a maximum or minimum is exact. Register values outside the model are
//! load errors naming their field.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::memory::{Dims, Region};
use super::pair_record_tests::{run, run_changed, surfaces, within_bounds, x_of, Ran};
use super::record_tests::{decode, decode_changed, f, record, Change};
use super::td::{Mac, PeReduce, PostOp, ReduceOp, Unit};
use anec_backend_h13::td::TdImage;
use serde_json::Value;

/// Apple's reduction records the simulator runs, with their task counts (the one left
/// out, `reduce_probe_max_ax2_1x128x16x16`, ends in an NE task cut in tiles).
const RECORDS: [(&str, usize); 13] = [
    ("reduce_max_axes_2_3", 1),
    ("reduce_probe_max_ax1_1x512x1x1", 1),
    ("reduce_probe_max_ax3_1x64x1x64", 1),
    ("reduce_probe_mean_ax1_1x256x1x1", 1),
    ("reduce_probe_mean_ax1_2_3_1x32x4x4", 1),
    ("reduce_probe_mean_ax3_1x1x1x512", 1),
    ("reduce_probe_sum_ax1_1x64x1x1", 1),
    ("reduce_probe_sum_ax2_3_1x64x8x8", 1),
    ("reduce_sum_axes_2_3", 1),
    // The results packed along one row (keep_dims = false), written with ResultType 1.
    ("reduce_probe_sum_ax2_3_1x64x8x8_flat", 1),
    // Over C of 64 x 8 x 8: the NE transposes x into L2 (Cfg bit 28), the planar engine
    // reduces each of its 8 rows (NumGroups 8) and writes each row's 8 results packed.
    ("reduce_sum_axes_1", 2),
    ("reduce_mean_axes_1", 2),
    ("reduce_probe_sum_ax1_1x64x8x8", 2),
];

/// The record's MIL reduction (`sum`, `mean`, `max`, `min`) and its axes of `[N, C, H, W]`.
fn math(v: &Value) -> (String, Vec<usize>) {
    let p = &v["parameters"];
    let op = p["operation"].as_str().unwrap().trim_start_matches("reduce_").to_string();
    let axes = p["axes"].as_array().unwrap().iter().map(|a| a.as_u64().unwrap() as usize).collect();
    (op, axes)
}

/// The reduction `op` of `x` (shape `shape`) over `axes`, keeping them: per output
/// element, the f64 result and the f32 accumulation bound of its sum (one rounding per
/// add: elements x 2^-24 x the sum of their magnitudes).
fn expected(x: &[u16], shape: [usize; 4], axes: &[usize], op: &str) -> Vec<(f64, f64)> {
    let out: Vec<usize> = (0..4).map(|a| if axes.contains(&a) { 1 } else { shape[a] }).collect();
    let index = |i: [usize; 4]| ((i[0] * shape[1] + i[1]) * shape[2] + i[2]) * shape[3] + i[3];
    let mut results = Vec::new();
    for o in 0..out.iter().product::<usize>() {
        let oi = [o / (out[1] * out[2] * out[3]), o / (out[2] * out[3]) % out[1], o / out[3] % out[2], o % out[3]];
        let mut values = Vec::new();
        for k in 0..shape.iter().product::<usize>() {
            let ki = [
                k / (shape[1] * shape[2] * shape[3]),
                k / (shape[2] * shape[3]) % shape[1],
                k / shape[3] % shape[2],
                k % shape[3],
            ];
            if (0..4).all(|a| axes.contains(&a) || ki[a] == oi[a]) {
                values.push(f(x[index(ki)]));
            }
        }
        let mass = values.iter().map(|v| v.abs()).sum::<f64>() * values.len() as f64 * f64::powi(2.0, -24);
        let v = match op {
            "sum" => values.iter().sum(),
            "mean" => values.iter().sum::<f64>() / values.len() as f64,
            "max" => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            "min" => values.iter().copied().fold(f64::INFINITY, f64::min),
            other => panic!("no reduction {other}"),
        };
        results.push((v, mass));
    }
    results
}

/// Checks `ran`'s output against `op` of `x` over `axes`; the worst error as a share of
/// the bound: one fp16 rounding of the result plus an f32 rounding per element summed.
fn check(name: &str, ran: &Ran, x: &[u16], axes: &[usize], op: &str) -> f64 {
    let (ins, _) = surfaces(&record(name).1);
    let bound = |(w, acc): (f64, f64)| match op {
        "max" | "min" => (w, 0.0),
        _ => (w, f64::powi(2.0, -11) * w.abs() + acc + f64::powi(2.0, -25)),
    };
    let want: Vec<(f64, f64)> = expected(x, ins[0].shape, axes, op).into_iter().map(bound).collect();
    within_bounds(name, &ran.y, &want).0
}

/// Apple's reductions compute the MIL's reduction.
#[test]
fn apple_reductions_compute_the_mil() {
    for (name, tasks) in RECORDS {
        let (_, v) = record(name);
        let (op, axes) = math(&v);
        let x = x_of(name, 0);
        let ran = run(name, vec![0; 0x4000], std::slice::from_ref(&x));
        assert_eq!(ran.tasks.len(), tasks, "{name}");
        let worst = check(name, &ran, &x, &axes, &op);
        eprintln!("{name}: {} outputs (y[0] = {}), worst {worst:.3} of the bound", ran.y.len(), f(ran.y[0]));
    }
}

/// What the decoder reads from the transposing plan: the NE's 64 x 8 x 8 result with C
/// and W swapped (W columns of 0x80 bytes, rows 0x420 apart), the reduction's 8 groups of
/// an 8 x 1 x 64 view one row (0x420) apart in place, each group's 8 results packed into
/// one 16-byte row (word 0x220 = 0x10) and stored one GroupStride (0x40) further.
#[test]
fn apple_transposed_reductions_decode_to_their_layouts() {
    let tasks: Vec<_> = decode(&record("reduce_sum_axes_1").0).into_iter().map(Result::unwrap).collect();
    let (t, p) = (&tasks[0], &tasks[1]);
    assert!(t.transposed && !t.store);
    assert_eq!(t.result_dims(), Dims { c: 8, d: 1, h: 8, w: 64 });
    assert_eq!(t.l2_result, Region { base: 0, channel: 0x80, row: 0x420, depth: 0 });
    assert!(p.resident && p.store && !p.transposed);
    assert_eq!((p.in_dims, p.repeats, p.source_step), (Dims { c: 8, d: 1, h: 1, w: 64 }, 8, 0x420));
    assert_eq!(p.l2_sources[0], Region { base: 0, channel: 0x80, row: 0x400, depth: 0 });
    let Unit::Reduce(r) = p.unit else { panic!("a reduction") };
    assert!(r.packed && r.post == PostOp::None);
    assert_eq!((p.result_dims(), p.result_step), (Dims { c: 1, d: 1, h: 1, w: 8 }, 0x10));
    assert_eq!((p.l2_result.base, p.dest.group, p.dest.row), (0x2100, 0x40, 0x200));
}

/// What the decoder reads from Apple's words: the view (depth slices, strips), the op and
/// the final scale, the NE's channel maximum.
#[test]
fn apple_reductions_decode_to_their_views() {
    let task = |name: &str| decode(&record(name).0).remove(0).unwrap();
    let reduce = |op, final_scale| Unit::Reduce(PeReduce::plain(op, final_scale));
    // x (1, 64, 8, 8) as it is: one channel per channel of x.
    let t = task("reduce_sum_axes_2_3");
    assert_eq!((t.in_dims, t.unit.clone()), (Dims { c: 64, d: 1, h: 8, w: 8 }, reduce(ReduceOp::Sum, 1.0)));
    assert_eq!(t.l2_sources[0], Region { base: 0, channel: 0x10, row: 0x420, depth: 0x400 });
    assert_eq!(t.result_dims(), Dims { c: 64, d: 1, h: 1, w: 1 });
    assert_eq!(t.l2_result, Region { base: 0x2100, ..t.l2_sources[0] });
    assert_eq!(task("reduce_max_axes_2_3").unit, reduce(ReduceOp::Max, 1.0));
    // (1, 32, 4, 4) over C, H, W: the view (C 1, D 4, H 32, W 4), x's rows as depth
    // slices 0x40 apart in DRAM, 0x10 apart in L2 (word 0x1f4), a row of 0x40 (0x1f8).
    let t = task("reduce_probe_mean_ax1_2_3_1x32x4x4");
    assert_eq!(t.in_dims, Dims { c: 1, d: 4, h: 32, w: 4 });
    assert_eq!((t.sources[0].row, t.sources[0].plane, t.sources[0].depth), (0x100, 0x2000, 0x40));
    assert_eq!(t.l2_sources[0], Region { base: 0, channel: 0x10, row: 0x40, depth: 0x10 });
    assert_eq!(t.unit, reduce(ReduceOp::Sum, 1.0 / 512.0));
    // (1, 1, 1, 512) over W: 4 rows of 128, read in strips of 0x80 bytes.
    let t = task("reduce_probe_mean_ax3_1x1x1x512");
    assert_eq!(t.in_dims, Dims { c: 1, d: 1, h: 4, w: 128 });
    assert!(t.streamed);
    assert_eq!(t.source_dims(), Dims { c: 1, d: 1, h: 4, w: 64 });
    assert_eq!(t.unit, reduce(ReduceOp::Sum, 1.0 / 512.0));
    // The channels of a vector as rows of one channel.
    let t = task("reduce_probe_mean_ax1_1x256x1x1");
    assert_eq!((t.in_dims, t.streamed), (Dims { c: 1, d: 1, h: 256, w: 1 }, false));
    // The NE's maximum over 512 channels: one output channel.
    let t = task("reduce_probe_max_ax1_1x512x1x1");
    let Unit::Ne(ne) = &t.unit else { panic!("an NE task") };
    assert_eq!((ne.mac.clone(), t.in_dims.c, t.out_dims.c), (Mac::ChannelMax, 512, 1));
}

/// The op in the low bits of word 0x22c: Apple's maximum changed to 3 is the minimum, to 0
/// the sum; the final scale of word 0x238 multiplies the result.
#[test]
fn the_op_and_the_final_scale_come_from_the_pe_block() {
    let name = "reduce_max_axes_2_3";
    let (_, v) = record(name);
    let (_, axes) = math(&v);
    let x = x_of(name, 0);
    for (code, op) in [(3, "min"), (0, "sum")] {
        let ran = run_changed(name, vec![0; 0x4000], std::slice::from_ref(&x), &move |i| i.set_raw(0x22C, code));
        check(name, &ran, &x, &axes, op);
    }
    // A mean of the 64 values of each channel: the sum times 1/64.
    let mean = |i: &mut TdImage| {
        i.set_raw(0x22C, 0);
        i.set_raw(0x238, (1.0f32 / 64.0).to_bits());
    };
    let ran = run_changed(name, vec![0; 0x4000], std::slice::from_ref(&x), &mean);
    check(name, &ran, &x, &axes, "mean");
}

/// Register values outside the modelled reductions are load errors naming the field.
#[test]
fn apple_reduction_fields_outside_the_model_are_load_errors() {
    let hw = "reduce_sum_axes_2_3";
    let max = "reduce_max_axes_2_3";
    let depth = "reduce_probe_mean_ax1_2_3_1x32x4x4";
    let strip = "reduce_probe_mean_ax3_1x1x1x512";
    let cmax = "reduce_probe_max_ax1_1x512x1x1";
    let cases: [(&str, &Change, &str); 17] = [
        // The results packed into one row; another word 0x158.
        (hw, &|i| i.set_raw(0x158, 0x400), "word 0x158 = 0x400: a reduction's results packed into one row"),
        (hw, &|i| i.set_raw(0x158, 0x10), "word 0x158 = 0x10: a reduction is modelled with 0"),
        // An op with a second operand, op 1, abs; a NaN final scale; a PreScale.
        (hw, &|i| i.set_raw(0x22C, 0x80000), "word 0x22c = 0x80000: a reduction's op sits in the low bits"),
        (max, &|i| i.set_raw(0x22C, 1), "word 0x22c = 0x1: a reduction's op"),
        (max, &|i| i.set_raw(0x22C, 0x42), "word 0x22c = 0x42: a reduction's op"),
        (hw, &|i| i.set_raw(0x238, f32::NAN.to_bits()), "word 0x238 = 0x7fc00000: a reduction's final scale"),
        (hw, &|i| i.set_raw(0x234, 0x4000_0000), "word 0x234 = 0x40000000: PE PreScale"),
        // Result depth unlike the source's; a depth slice or a row of slices of another size.
        (depth, &|i| i.set_raw(0x140, 1), "word 0x140 = 0x1: result depth"),
        (depth, &|i| i.set_raw(0x1F4, 0x20), "word 0x1f4 = 0x20: one depth slice"),
        (depth, &|i| i.set_raw(0x1F8, 0x50), "word 0x1f8 = 0x50: the 4 depth slices"),
        // A channel stride short of a row without being the strip.
        (hw, &|i| i.set("L2.SourceChannelStride.Stride", 0).unwrap(), "L2.SourceChannelStride.Stride = 0x0"),
        (strip, &|i| i.set("L2.SourceChannelStride.Stride", 4).unwrap(), "L2.SourceChannelStride.Stride = 0x4"),
        // Padding that leaves positions out; a batch; the result laid out by other words.
        (max, &|i| i.set("L2.L2Cfg.PaddingMode", 3).unwrap(), "L2.L2Cfg.PaddingMode = 0x3: only 0x0 or 0x1"),
        (hw, &|i| i.set("Common.GroupConvCfg.NumGroups", 2).unwrap(), "Common.GroupConvCfg.NumGroups = 0x2"),
        (
            hw,
            &|i| {
                i.set("L2.ResultCfg.L2BfrMode", 0).unwrap();
                i.set("TileDMADst.DMAConfig.L2BfrMode", 0).unwrap();
            },
            "L2.ResultCfg.L2BfrMode = 0x0: a reduction's result",
        ),
        // The NE's channel maximum with another UnicastCin, or two output channels.
        (cmax, &|i| i.set("Common.GroupConvCfg.UnicastCin", 2).unwrap(), "Common.GroupConvCfg.UnicastCin = 0x2"),
        (cmax, &|i| i.set("Common.Cout.Cout", 2).unwrap(), "Common.Cout.Cout = 0x2: the maximum over the channels"),
    ];
    for (name, change, want) in cases {
        let e = decode_changed(name, 0, change);
        assert!(e.starts_with(&format!("TD 0: {want}")), "{name}: {e}");
    }
    // UnicastCin = Cin on the pass path (OpMode 4), or depth on a task that does not reduce.
    let pass = |i: &mut TdImage| i.set("NE.MACCfg.OpMode", 4).unwrap();
    let e = decode_changed(cmax, 0, &pass);
    assert!(e.starts_with("TD 0: Common.GroupConvCfg.UnicastCin = 0x200: the NE path"), "{e}");
    let deep = |i: &mut TdImage| i.set_raw(0x12C, 2);
    let e = decode_changed("unary_abs_c64", 0, &deep);
    assert!(e.starts_with("TD 0: word 0x12c = 0x2: source depth: depth > 1 is modelled for a planar-engine"), "{e}");
}

/// Apple's maximum over H (`reduce_probe_max_ax2_1x128x16x16`) is not modelled: its
/// transposing pass and its grouped reduction decode (the groups 0x20 apart in place,
/// channels one transposed row apart), the NE task that transposes the result back to
/// memory is cut in tiles (TileHeight 16 of 128 rows).
#[test]
fn apple_reductions_outside_the_model_are_load_errors() {
    let tasks = decode(&record("reduce_probe_max_ax2_1x128x16x16").0);
    let (t0, t1) = (tasks[0].as_ref().unwrap(), tasks[1].as_ref().unwrap());
    assert!(t0.transposed);
    assert_eq!((t1.in_dims.c, t1.in_dims.w, t1.repeats, t1.source_step), (128, 16, 16, 0x20));
    assert_eq!((t1.l2_sources[0].channel, t1.result_step), (0x210, 0x800));
    let e = tasks[2].as_ref().unwrap_err().to_string();
    assert!(e.starts_with("TD 2: Common.TileCfg.TileHeight = 0x10"), "{e}");
}
