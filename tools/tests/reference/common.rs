//! Helpers: parse MIL text, run it with `run_mil` and (lowered) with `run_module`, and
//! compare the two in the program layout.

use anec_ir::mil::{BlobTable, MilModel};
use anec_ir::Module;
use anec_passes::lower::lower_mil;
use anec_tools::reference::{mil_to_program, run_mil, run_module};
use anec_tools::Tensor;
use std::collections::BTreeMap;

/// A MIL program with one function `main` over `inputs`, returning `outputs`.
pub fn program(inputs: &str, body: &str, outputs: &str) -> String {
    format!("program(1.3)\n{{\n    func main<ios18>({inputs}) {{\n{body}    }} -> ({outputs});\n}}\n")
}

/// Parses `text` into a model (no weight blobs).
pub fn model(text: &str) -> MilModel {
    match anec_front::mil::parse_program(text, "test.mil") {
        Ok(program) => MilModel { program, blobs: BlobTable::new(), file: "test.mil".into(), text: Some(text.into()) },
        Err(errs) => panic!("parse failed: {}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
    }
}

/// Lowers `main`, panicking with the diagnostics.
pub fn lower(m: &MilModel) -> Module {
    match lower_mil(m, "main") {
        Ok(module) => module,
        Err(errs) => {
            panic!("lowering failed:\n{}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// A deterministic generator (xorshift64*), so failures reproduce.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A uniform value in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        lo + (hi - lo) * (bits as f32 / (1u64 << 24) as f32)
    }

    /// A tensor of `shape` with values in `[lo, hi)`.
    pub fn tensor(&mut self, shape: &[usize], lo: f32, hi: f32) -> Tensor {
        let n = shape.iter().product();
        Tensor { shape: shape.to_vec(), data: (0..n).map(|_| self.uniform(lo, hi)).collect() }
    }
}

/// Random inputs for every input of `main`, values in `[lo, hi)`.
pub fn inputs(m: &MilModel, lo: f32, hi: f32, seed: u64) -> BTreeMap<String, Tensor> {
    let f = m.program.function("main").expect("main");
    let mut rng = Rng::new(seed);
    f.inputs
        .iter()
        .map(|p| {
            let shape: Vec<usize> = p.ty.static_shape().expect("static").iter().map(|&d| d as usize).collect();
            (p.name.name.clone(), rng.tensor(&shape, lo, hi))
        })
        .collect()
}

/// Largest difference relative to the reference's largest magnitude (at least 1).
pub fn rel_error(reference: &Tensor, other: &Tensor) -> f32 {
    assert_eq!(reference.shape, other.shape, "shapes differ");
    let scale = reference.data.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    let diff = reference.data.iter().zip(&other.data).fold(0.0f32, |m, (a, b)| {
        if a.is_nan() && b.is_nan() {
            m
        } else {
            m.max((a - b).abs())
        }
    });
    diff / scale
}

/// Runs the MIL program directly and through the lowering on the same inputs and returns
/// the largest relative error over the outputs (each compared in the program layout).
pub fn agreement_on(m: &MilModel, ins: &BTreeMap<String, Tensor>) -> f32 {
    let mil_out = run_mil(m, "main", ins).unwrap_or_else(|e| panic!("run_mil: {e}"));
    let module = lower(m);
    let prog_in: BTreeMap<String, Tensor> =
        ins.iter().map(|(k, t)| (k.clone(), mil_to_program(t).expect("layout"))).collect();
    let mod_out = run_module(&module, &prog_in).unwrap_or_else(|e| panic!("run_module: {e}"));
    assert_eq!(mil_out.len(), mod_out.len(), "output counts differ");
    let mut worst = 0.0f32;
    for (name, t) in &mil_out {
        assert!(t.data.iter().all(|v| v.is_finite()), "output `{name}` of run_mil is not finite");
        assert!(t.data.iter().any(|&v| v != 0.0), "output `{name}` of run_mil is all zeros");
        let expect = mil_to_program(t).expect("layout");
        let got = mod_out.get(name).unwrap_or_else(|| panic!("the module has no output `{name}`"));
        let e = rel_error(&expect, got);
        assert!(e.is_finite(), "output `{name}`: non-finite difference");
        worst = worst.max(e);
    }
    worst
}

/// Asserts that the MIL program and its lowering agree within `tol` (relative) on random
/// inputs in `[lo, hi)`.
pub fn assert_agree(text: &str, lo: f32, hi: f32, tol: f32) {
    let m = model(text);
    for seed in 1..=3 {
        let e = agreement_on(&m, &inputs(&m, lo, hi, seed));
        assert!(e <= tol, "run_mil and run_module differ by {e} (tolerance {tol}) on seed {seed}:\n{text}");
    }
}

/// Runs `main` of a program on explicit inputs and returns output `name`.
pub fn mil(text: &str, ins: &[(&str, &[usize], &[f32])], name: &str) -> Tensor {
    let m = model(text);
    let map: BTreeMap<String, Tensor> =
        ins.iter().map(|(n, s, d)| ((*n).to_string(), Tensor { shape: s.to_vec(), data: d.to_vec() })).collect();
    let mut out = run_mil(&m, "main", &map).unwrap_or_else(|e| panic!("run_mil: {e}"));
    out.remove(name).unwrap_or_else(|| panic!("no output `{name}`"))
}

/// Asserts element-wise closeness.
pub fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "lengths differ: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "element {i}: {g} vs {w} (tolerance {tol})\n{got:?}\n{want:?}");
    }
}

/// A blob table with random values (in `[-scale, scale)`) for every BLOBFILE value of
/// `main`, for models whose weight files are not in the fixtures.
pub fn random_blobs(program: &anec_ir::mil::Program, scale: f32, seed: u64) -> BlobTable {
    use anec_ir::mil::{Arg, BlobData, ScalarType, SharedBytes};
    let mut rng = Rng::new(seed);
    let mut table = BlobTable::new();
    let f = program.function("main").expect("main");
    for stmt in &f.body {
        for arg in stmt.inputs.iter().chain(&stmt.attrs) {
            let Arg::Value(v) = &arg.value else { continue };
            let (Some(key), Some(dtype), Some(n)) = (v.data.blob_key(), v.ty.dtype(), v.ty.elements()) else {
                continue;
            };
            let bytes: Vec<u8> = match dtype {
                ScalarType::Fp16 => {
                    (0..n).flat_map(|_| half::f16::from_f32(rng.uniform(-scale, scale)).to_le_bytes()).collect()
                }
                ScalarType::Fp32 => (0..n).flat_map(|_| rng.uniform(-scale, scale).to_le_bytes()).collect(),
                other => panic!("random blobs of {other} are not supported"),
            };
            table.insert(key, BlobData { dtype, bytes: SharedBytes::from_vec(bytes) });
        }
    }
    table
}
