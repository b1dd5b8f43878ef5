//! Tests of the simulator on Apple's current compiler's convolutions: the register words
//! of every `conv_*` / `env_conv_*` record of `shared/fixtures/apple-h13-oracles/`
//! (Apple's own task streams), decoded and run on a constant section packed here from the
//! record's weights (README "Weights", forms A and B). The packed section must hash to
//! the record's SHA-256, so the bytes the simulator reads are Apple's; every coefficient
//! and bias the simulator reads from them must be the record's weight, and its result
//! must equal a direct f64 convolution of the MIL within one fp16 rounding.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::exec;
use super::kernel;
use super::memory::{Buffer, Memory, L2};
use super::td::{self, Mac, Task, Unit};
use super::SimError;
use crate::oracle::Record;
use anec_backend_h13::td::TdImage;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

pub(super) fn cases() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/apple-h13-oracles/cases")
}

/// A record, with its JSON (for the fields `Record` does not keep).
pub(super) fn record(name: &str) -> (Record, Value) {
    let text = std::fs::read_to_string(cases().join(format!("{name}.json"))).unwrap();
    (Record::parse(&text).unwrap(), serde_json::from_str(&text).unwrap())
}

/// The record's task stream as `__text` bytes (each task at its predecessor's NextPointer).
pub(super) fn text(r: &Record) -> Vec<u8> {
    let mut text: Vec<u8> = Vec::new();
    let mut at = 0usize;
    for t in &r.task_descriptors {
        let header = t.header().unwrap();
        let writes = t.writes().unwrap();
        let mut words = header.clone();
        for (addr, count) in t.records().unwrap() {
            words.push(((count - 1) << 26) | addr);
            words.extend((0..count).map(|k| writes[&(addr + 4 * k)]));
        }
        text.resize(at, 0);
        text.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        at = header[7] as usize;
    }
    text
}

/// Apple's tasks of a record, decoded by the simulator.
pub(super) fn decode(r: &Record) -> Vec<Result<Task, SimError>> {
    let d = &r.program_descriptor;
    let chain = anec_backend_h13::chain::read(&text(r), d.task_words_minus_one + 1, d.task_count).unwrap();
    chain.iter().enumerate().map(|(i, t)| td::decode(&t.task.image, i)).collect()
}

/// The shape of a record's convolution, from its generator parameters.
#[derive(Debug, Clone, Copy)]
struct Conv {
    cin: usize,
    cout: usize,
    k: usize,
    stride: usize,
    groups: usize,
    bias: bool,
    relu: bool,
    h: usize,
    ho: usize,
}

fn conv_of(v: &Value) -> Conv {
    let p = &v["parameters"];
    let n = |key: &str, default: u64| p[key].as_u64().unwrap_or(default) as usize;
    let out = v["tensor_descriptors"].as_array().unwrap().iter().find(|t| t["binding"] == 2).unwrap();
    Conv {
        cin: n("input_channels", 0),
        cout: n("output_channels", 0),
        k: n("kernel", 0),
        stride: n("stride", 1),
        groups: n("groups", 1),
        bias: p["bias"].as_bool().unwrap(),
        relu: p["relu"].as_bool().unwrap_or(false),
        h: n("spatial", 0),
        ho: out["shape"][2].as_u64().unwrap() as usize,
    }
}

/// Halfword `e` of the corpus tool's weight file (forms A and B).
pub(super) fn halfword(e: usize, payload: u64, fill: u16) -> u16 {
    crate::oracle::form_ab_halfword(e as u64, payload, fill)
}

/// The weights Apple's compiler read: `W[co][ci][ky][kx]` and the bias, as fp16 bits.
struct Weights {
    conv: Conv,
    payload: u64,
    fill: u16,
}

impl Weights {
    fn cin_g(&self) -> usize {
        self.conv.cin / self.conv.groups
    }
    fn w(&self, co: usize, ci: usize, ky: usize, kx: usize) -> u16 {
        let k = self.conv.k;
        halfword(((co * self.cin_g() + ci) * k + ky) * k + kx, self.payload, self.fill)
    }
    fn b(&self, co: usize) -> u16 {
        halfword(co, self.payload, self.fill)
    }
}

pub(super) fn f(bits: u16) -> f64 {
    f64::from(half::f16::from_bits(bits).to_f32())
}

/// The blocks `(first channel, count)` NE `ne` gets of `n` channels with OCGSize `o`
/// (written out independently of `kernel::Layout::blocks`).
fn deal(n: usize, o: u32, ne: usize) -> Vec<(usize, usize)> {
    let pass = 16 << o;
    (0..n.div_ceil(pass))
        .filter_map(|p| {
            let r = (n - p * pass).min(pass);
            let b = r.div_ceil(16);
            let (lo, hi) = ((ne * b).min(r), ((ne + 1) * b).min(r));
            (hi > lo).then_some((p * pass + lo, hi - lo))
        })
        .collect()
}

/// Chunk `ne` of a task computing output channels `first..` (of the whole convolution).
fn pack(wt: &Weights, t: &Task, first: usize, ne: usize) -> Vec<u8> {
    let Unit::Ne(n) = &t.unit else { panic!("an NE task") };
    let Mac::Kernel { layout: l, depthwise } = &n.mac else { panic!("a convolution") };
    let c = wt.conv;
    let (cin, groups) = if *depthwise { (1, 1) } else { (wt.cin_g(), l.groups) };
    let mut out = Vec::new();
    let push = |out: &mut Vec<u8>, bits: u16| out.extend(bits.to_le_bytes());
    for g in 0..groups {
        for (start, len) in deal(l.cout, l.ocg_size, ne) {
            let co = |j: usize| first + g * l.cout + start + j;
            if c.bias {
                (0..len).for_each(|j| push(&mut out, wt.b(co(j))));
            }
            if l.sparse {
                let mut body = Vec::new();
                for ci in 0..cin {
                    let stored: Vec<usize> = (0..len).filter(|&j| wt.w(co(j), ci, 0, 0) & 0x7FFF != 0).collect();
                    push(&mut body, stored.iter().map(|j| 1u16 << (8 + j)).sum());
                    stored.iter().for_each(|&j| push(&mut body, wt.w(co(j), ci, 0, 0)));
                }
                push(&mut out, body.len() as u16);
                out.extend(body);
                continue;
            }
            for ci in 0..cin {
                for ky in 0..c.k {
                    for kx in 0..c.k {
                        (0..len).for_each(|j| push(&mut out, wt.w(co(j), ci, ky, kx)));
                    }
                }
            }
        }
        if groups > 1 {
            out.resize(out.len().div_ceil(64) * 64, 0);
        }
    }
    out.resize(out.len().div_ceil(64) * 64, 0);
    out
}

/// The first output channel a task computes: its destination base in planes.
fn first_channel(t: &Task) -> usize {
    (t.dest.base / t.dest.plane) as usize
}

/// The constant section of every task's chunks at their CoeffBaseAddr.
fn section(wt: &Weights, tasks: &[Task], size: usize) -> Vec<u8> {
    let mut s = vec![0u8; size];
    for t in tasks {
        let Unit::Ne(n) = &t.unit else { panic!("an NE task") };
        let Mac::Kernel { layout, .. } = &n.mac else { panic!("a convolution") };
        for (ne, chunk) in layout.chunks.iter().enumerate() {
            if let Some(c) = chunk {
                let bytes = pack(wt, t, first_channel(t), ne);
                assert_eq!(bytes.len() as u64, c.size, "task {} chunk {ne}", t.index);
                s[c.addr as usize..][..bytes.len()].copy_from_slice(&bytes);
            }
        }
    }
    s
}

/// Seeded fp16 values in [-2, 2).
pub(super) fn inputs(n: usize) -> Vec<u16> {
    let mut state = 0x5eed_0005u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (state >> 40) as f32 / (1u64 << 24) as f32;
            half::f16::from_f32(4.0 * u - 2.0).to_bits()
        })
        .collect()
}

/// The direct f64 convolution of output channel `co` at `(oy, ox)` and the sum of the
/// magnitudes of its terms.
fn expected(wt: &Weights, x: &[u16], co: usize, oy: usize, ox: usize) -> (f64, f64) {
    let c = wt.conv;
    let pad = ((c.ho - 1) * c.stride + c.k).saturating_sub(c.h) / 2;
    let g = co / (c.cout / c.groups);
    let (mut acc, mut mag) = if c.bias { (f(wt.b(co)), f(wt.b(co)).abs()) } else { (0.0, 0.0) };
    for ci in 0..wt.cin_g() {
        for ky in 0..c.k {
            for kx in 0..c.k {
                let (iy, ix) = ((oy * c.stride + ky).checked_sub(pad), (ox * c.stride + kx).checked_sub(pad));
                let (Some(iy), Some(ix)) = (iy.filter(|&i| i < c.h), ix.filter(|&i| i < c.h)) else { continue };
                let term = f(wt.w(co, ci, ky, kx)) * f(x[((g * wt.cin_g() + ci) * c.h + iy) * c.h + ix]);
                acc += term;
                mag += term.abs();
            }
        }
    }
    (if c.relu { acc.max(0.0) } else { acc }, mag)
}

/// Every coefficient and bias value the reader finds equals the record's weight.
fn check_kernel(name: &str, wt: &Weights, mem: &Memory<'_>, t: &Task) {
    let Unit::Ne(n) = &t.unit else { panic!("an NE task") };
    let Mac::Kernel { layout: l, depthwise } = &n.mac else { panic!("a convolution") };
    let k = kernel::read(mem, t.index, n.kbar, l).unwrap_or_else(|e| panic!("{name}: {e}"));
    let first = first_channel(t);
    let c = wt.conv;
    let cin = if *depthwise { 1 } else { wt.cin_g() };
    for co in 0..l.groups * l.cout {
        if c.bias {
            assert_eq!(f64::from(k.bias[co]), f(wt.b(first + co)), "{name}: bias[{}]", first + co);
        }
        for ci in 0..cin {
            for (ky, kx) in (0..c.k).flat_map(|y| (0..c.k).map(move |x| (y, x))) {
                let (got, want) = (f64::from(k.at(co, ci, ky, kx)), f(wt.w(first + co, ci, ky, kx)));
                assert_eq!(got, want, "{name}: W[{}][{ci}][{ky}][{kx}]", first + co);
            }
        }
    }
}

/// A record's program: the sections' hash must be Apple's, then every task runs and
/// every output element is checked against the f64 convolution.
fn check(name: &str) {
    let (r, v) = record(name);
    let conv = conv_of(&v);
    let fill = if v["weights"]["value"] == "distinct" { 0x3801 } else { 0x3800 };
    let wt = Weights { conv, payload: v["weights"]["payload_bytes"].as_u64().unwrap(), fill };
    let tasks: Vec<Task> = decode(&r).into_iter().map(|t| t.unwrap()).collect();
    let consts = section(&wt, &tasks, r.constant_section.size as usize);
    assert_eq!(format!("{:x}", Sha256::digest(&consts)), r.constant_section.sha256, "{name}: packed section");
    let tensor = |b: u32| r.tensor_descriptors.iter().find(|t| t.binding == b).unwrap();
    let (si, so) = (&tensor(1).strides, &tensor(2).strides);
    let x = inputs(conv.cin * conv.h * conv.h);
    let mut input = vec![0u8; tensor(1).total_bytes as usize];
    for (i, &bits) in x.iter().enumerate() {
        let (c, h, w) = (i / (conv.h * conv.h), i / conv.h % conv.h, i % conv.h);
        let at = (c as u64 * si[1] + h as u64 * si[2] + w as u64 * 2) as usize;
        input[at..at + 2].copy_from_slice(&bits.to_le_bytes());
    }
    let out_bytes = tensor(2).total_bytes as usize;
    let buf = |name: &str, bytes: Vec<u8>, writable| Buffer { name: name.into(), bytes: Cow::Owned(bytes), writable };
    let (src, dst) = (tasks[0].sources[0].bar, tasks[0].dest.bar);
    let mut mem = Memory::new(vec![
        (1, buf("__const", consts, false)),
        (src, buf("x", input, false)),
        (dst, buf("y", vec![0; out_bytes], true)),
    ]);
    for t in &tasks {
        check_kernel(name, &wt, &mem, t);
    }
    let mut l2 = L2::default();
    for t in &tasks {
        exec::run(&mut mem, &mut l2, t).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let y = &mem.buffer(0, dst, "").unwrap().bytes;
    let mut worst = 0.0f64;
    for co in 0..conv.cout {
        for oy in 0..conv.ho {
            for ox in 0..conv.ho {
                let at = (co as u64 * so[1] + oy as u64 * so[2] + ox as u64 * 2) as usize;
                let sim = f(u16::from_le_bytes([y[at], y[at + 1]]));
                let (want, mag) = expected(&wt, &x, co, oy, ox);
                // One fp16 rounding of the f32 sum, whose own error is below n u32 mag.
                let n = (wt.cin_g() * conv.k * conv.k + 1) as f64;
                let e32 = n * f64::powi(2.0, -24) * mag;
                let bound = f64::powi(2.0, -11) * (want.abs() + e32) + e32 + f64::powi(2.0, -24);
                let err = (sim - want).abs();
                assert!(err <= bound, "{name}: y[{co}][{oy}][{ox}] = {sim}, expected {want} (bound {bound})");
                worst = worst.max(err / bound);
            }
        }
    }
    eprintln!("{name}: {} tasks, worst error {worst:.3} of the bound", tasks.len());
}

/// Stride 1: dense blocks with and without inline bias, passes (768 channels, OCGSize 5),
/// OCGSize 2 and 3, 1x1 and 3x3, grouped (g4) and depthwise (g64, g128), the conv result
/// wider than the source (64 -> 128, 64 -> 256: the dense L2 result).
#[test]
fn apple_stride_1_convolutions_compute_the_mil() {
    for name in [
        "conv_k1_c64_n64_s8_bias0_relu",
        "conv_k3_c64_n64_s8_bias0",
        "conv_known_k1_c64_n128_s16_st1_g1_bias1_same",
        "conv_known_k3_c64_n64_s16_st1_g1_bias1_same",
        "conv_known_k3_c64_n64_s16_st1_g64_bias0_same",
        "conv_probe_k3_c128_n128_s16_st1_g128_bias0_same",
        "conv_probe_k3_c64_n64_s1_st1_g1_bias1_same",
        "env_conv_k1_c64_n256_s8_st1_g1_bias0",
        "env_conv_k1_c768_n768_s1_st1_g1_bias1",
        "env_conv_k3_c64_n64_s16_st1_g1_bias1",
        "env_conv_k3_c64_n64_s16_st1_g4_bias1",
        "env_conv_k3_c64_n64_s16_st1_g64_bias1",
        "conv_k1_c1024_n512_s1_bias0",
        "conv_k1_c256_n1024_s1_bias0",
        "conv_k1_c256_n512_s1_bias0",
        "conv_k1_c512_n1024_s1_bias0",
    ] {
        check(name);
    }
}

/// The sparse kernel of 1x1 stride-2 convolutions (`..._st2_g1_bias1`, `..._st2_g4_bias1`:
/// the header's zero halfwords are left out of the blocks).
#[test]
fn apple_sparse_1x1_convolutions_compute_the_mil() {
    check("env_conv_k1_c64_n64_s16_st2_g1_bias1");
    check("env_conv_k1_c64_n64_s16_st2_g4_bias1");
}

/// 1024 -> 1024 at 16x16 in two tasks: task 0 loads the source and keeps it in L2
/// (SourceType 1) for channels 512..1023; task 1 reads it from L2 (tile-DMA source off,
/// SourceType 0) for channels 0..511. Alone, task 1 finds nothing in L2.
#[test]
#[cfg_attr(debug_assertions, ignore = "268M multiply-adds: run with --release")]
fn apple_split_convolution_reads_its_source_from_l2() {
    let name = "conv_probe_k1_c1024_n1024_s16_st1_g1_bias0_same";
    let tasks: Vec<Task> = decode(&record(name).0).into_iter().map(|t| t.unwrap()).collect();
    assert_eq!((tasks[0].resident, tasks[1].resident), (false, true));
    assert_eq!((first_channel(&tasks[0]), first_channel(&tasks[1])), (512, 0));
    let consts = Buffer { name: "__const".into(), bytes: Cow::Owned(vec![0; 1 << 21]), writable: false };
    let out = Buffer { name: "y".into(), bytes: Cow::Owned(vec![0; 1 << 21]), writable: true };
    let mut mem = Memory::new(vec![(1, consts), (5, out)]);
    let e = exec::run(&mut mem, &mut L2::default(), &tasks[1]).unwrap_err().to_string();
    assert!(e.starts_with("TD 1: the L2 source region (SourceType 0") && e.contains("was not written"), "{e}");
    check(name);
}

/// The 3x3 stride-2 records use the sparse format with a 4x4 tap grid whose bit order is
/// not established (rationale §1): a load error naming SparseFmt.
#[test]
fn apple_sparse_3x3_convolutions_are_load_errors() {
    for name in [
        "conv_probe_k3_c256_n256_s16_st2_g256_bias1_same",
        "conv_probe_k3_c512_n64_s16_st2_g1_bias0_same",
        "env_conv_k3_c128_n128_s16_st2_g1_bias1",
        "env_conv_k3_c64_n64_s16_st2_g1_bias1",
        "env_conv_k3_c64_n64_s16_st2_g4_bias1",
    ] {
        let e = decode(&record(name).0).remove(0).unwrap_err().to_string();
        assert!(e.starts_with("TD 0: NE.KernelCfg.SparseFmt = 0x1: the sparse kernel is modelled for 1x1"), "{e}");
    }
}

/// A change to a register image.
pub(super) type Change = dyn Fn(&mut TdImage);

/// Task `task` of record `name` with `change` made to its register image, decoded.
pub(super) fn decode_changed(name: &str, task: usize, change: &Change) -> String {
    let r = record(name).0;
    let d = &r.program_descriptor;
    let chain = anec_backend_h13::chain::read(&text(&r), d.task_words_minus_one + 1, d.task_count).unwrap();
    let mut img = chain[task].task.image.clone();
    change(&mut img);
    td::decode(&img, task).map(|_| ()).map_or_else(|e| e.to_string(), |()| "decoded".into())
}

/// Register values outside the modelled convolution are load errors naming the field.
#[test]
fn apple_convolution_fields_outside_the_model_are_load_errors() {
    let g1 = "env_conv_k3_c64_n64_s16_st1_g1_bias1";
    let cases: [(&str, usize, &Change, &str); 9] = [
        // Inline bias (BiasMode, bias stream off) with a nonzero AccBias.
        (g1, 0, &|i| i.set("NE.AccBias.AccBias", 0x3C00).unwrap(), "NE.AccBias.AccBias = 0x3c00: the inline bias"),
        // A chunk smaller than NE 3's 0x1240 bytes, a chunk NE 15 needs switched off.
        (
            g1,
            0,
            &|i| i.set("KernelDMASrc.CoeffBfrSize[3].MemBfrSize", 0x48).unwrap(),
            "KernelDMASrc.CoeffBfrSize[3].MemBfrSize = 0x48",
        ),
        (
            g1,
            0,
            &|i| i.set("KernelDMASrc.CoeffDMAConfig[15].En", 0).unwrap(),
            "KernelDMASrc.CoeffDMAConfig[15].En = 0x0",
        ),
        // The dense result of 128 channels (rows of 0x1000, 16 rows) from 0x1f1000.
        (
            "conv_known_k1_c64_n128_s16_st1_g1_bias1_same",
            0,
            &|i| i.set("L2.ResultBase.Addr", 0x1F100).unwrap(),
            "L2.ResultBase.Addr = 0x1f100: the dense result",
        ),
        // The kernel-stream word says dense while SparseFmt says sparse.
        ("env_conv_k1_c64_n64_s16_st2_g1_bias1", 0, &|i| i.set_raw(0x2C, 0x40), "word 0x02c = 0x40"),
        // Every group on the same source channels.
        (
            "env_conv_k3_c64_n64_s16_st1_g4_bias1",
            0,
            &|i| i.set("TileDMASrc.GroupStride.Stride", 0).unwrap(),
            "TileDMASrc.GroupStride.Stride = 0x0",
        ),
        // A depthwise convolution with blocks of two channels.
        (
            "env_conv_k3_c64_n64_s16_st1_g64_bias1",
            0,
            &|i| i.set("Common.ConvCfg.OCGSize", 1).unwrap(),
            "Common.ConvCfg.OCGSize = 0x1: a depthwise",
        ),
        // A loaded source that says it is read from L2, and SourceType 3.
        (
            "conv_probe_k1_c1024_n1024_s16_st1_g1_bias0_same",
            0,
            &|i| i.set("L2.SourceCfg.SourceType", 0).unwrap(),
            "L2.SourceCfg.SourceType",
        ),
        (
            "conv_probe_k1_c1024_n1024_s16_st1_g1_bias0_same",
            1,
            &|i| i.set("L2.SourceCfg.SourceType", 3).unwrap(),
            "L2.SourceCfg.SourceType = 0x3: only 0x0 or 0x1 or 0x2 is modelled",
        ),
    ];
    for (name, task, change, want) in cases {
        let e = decode_changed(name, task, change);
        assert!(e.starts_with(&format!("TD {task}: {want}")), "{name}: {e}");
    }
}
