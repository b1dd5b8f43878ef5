//! The register-level simulator (`anec_tools::sim`) on Apple's programs and on ours.
//!
//! Apple's five programs (`../shared/fixtures/apple-h13/hwx/`) run on seeded random fp16
//! inputs and are compared with the mathematics computed here in f64: ReLU and the
//! two-input add exactly up to fp16 rounding, the 1x1 convolutions with the weights read
//! from the program's own `__const` chunks, and sigmoid over every finite fp16 input within
//! the bound of its 33-knot table. Programs we compile (the conformance netplists,
//! `net.plist`'s convolution + per-channel bias, small MIL models with a padded
//! convolution + bias and with pooling, the MNIST model) are simulated and checked
//! against small hand computations. Run with `--nocapture` to see the measured errors
//! (recorded in docs/simulator.md).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

use anec::{compile_file, Options, Target};
use anec_tests::{apple_hwx, conformance_input, fixtures};
use anec_tools::{SimError, SimProgram, Tensor};
use half::f16;
use std::collections::BTreeMap;
use std::path::Path;

/// xorshift64*: a fixed, seeded stream.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `n` fp16 values uniform in [lo, hi).
    fn halves(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f32> {
        (0..n).map(|_| f16::from_f64(lo + (hi - lo) * self.unit()).to_f32()).collect()
    }
}

fn load(bytes: &[u8], what: &str) -> SimProgram {
    SimProgram::load(bytes).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn apple(name: &str) -> SimProgram {
    load(&std::fs::read(apple_hwx(name)).unwrap(), name)
}

fn inputs(pairs: &[(&str, &[usize], Vec<f32>)]) -> BTreeMap<String, Tensor> {
    pairs.iter().map(|(k, s, d)| (k.to_string(), Tensor { shape: s.to_vec(), data: d.clone() })).collect()
}

fn output(p: &SimProgram, given: &BTreeMap<String, Tensor>, key: &str) -> Vec<f32> {
    let mut out = p.run(given).unwrap_or_else(|e| panic!("run: {e}"));
    out.remove(key).unwrap_or_else(|| panic!("no output {key}")).data
}

/// Largest absolute error and largest relative error (over nonzero expected values).
fn errors(got: &[f32], want: &[f64]) -> (f64, f64) {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).fold((0.0, 0.0), |(a, r), (&g, &w)| {
        let e = (f64::from(g) - w).abs();
        (a.max(e), if w == 0.0 { r } else { r.max(e / w.abs()) })
    })
}

/// Half an fp16 ulp, relative: the error of rounding one exact value to fp16.
const FP16_HALF_ULP: f64 = 1.0 / 2048.0;

#[test]
fn relu_is_exact() {
    let p = apple("relu");
    let mut rng = Rng(0x5eed_0001);
    let (mut abs, mut negatives) = (0.0f64, 0);
    for _ in 0..20 {
        let x = rng.halves(77, -100.0, 100.0);
        let want: Vec<f64> = x.iter().map(|&v| f64::from(v).max(0.0)).collect();
        negatives += x.iter().filter(|&&v| v < 0.0).count();
        let got = output(&p, &inputs(&[("image", &[1, 1, 1, 77], x)]), "probs");
        abs = abs.max(errors(&got, &want).0);
    }
    println!("relu: max abs error {abs:e} over 1540 inputs");
    assert!(negatives > 500, "the inputs exercise both sides");
    assert_eq!(abs, 0.0);
}

/// Bound of the 33-knot sigmoid table: linear interpolation at step h = 0.5 errs by at most
/// h^2 / 8 * max|sigmoid''| (max|sigmoid''| = 1 / (6 sqrt 3)); each knot is fp16-rounded
/// (at most half an ulp of values below 1, 2^-12) and so is the result (2^-12 again).
fn sigmoid_bound() -> f64 {
    let interpolation = 0.5f64.powi(2) / 8.0 / (6.0 * 3f64.sqrt());
    interpolation + 2.0 * 2f64.powi(-12)
}

#[test]
fn sigmoid_every_fp16_input_within_the_table_bound() {
    let p = apple("sigmoid");
    let xs: Vec<f32> = (0..=u16::MAX).map(f16::from_bits).filter(|h| h.is_finite()).map(f16::to_f32).collect();
    let (mut abs, mut abs_tail, mut rel, mut at_knots) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for chunk in xs.chunks(77) {
        let mut x = chunk.to_vec();
        x.resize(77, 0.0);
        let want: Vec<f64> = x.iter().map(|&v| 1.0 / (1.0 + (-f64::from(v)).exp())).collect();
        let got = output(&p, &inputs(&[("image", &[1, 1, 1, 77], x.clone())]), "probs");
        for ((&v, &g), &w) in x.iter().zip(&got).zip(&want) {
            let e = (f64::from(g) - w).abs();
            if v.abs() <= 8.0 {
                abs = abs.max(e);
                rel = rel.max(e / w);
            } else {
                abs_tail = abs_tail.max(e);
            }
            if v.abs() <= 8.0 && (2.0 * v).fract() == 0.0 {
                at_knots = at_knots.max(e);
            }
        }
    }
    let bound = sigmoid_bound();
    println!(
        "sigmoid: {} inputs, max abs error {abs:.6} in [-8, 8] (rel {rel:.4}), {abs_tail:.6} outside, \
         {at_knots:.6} at the knots; bound {bound:.6}",
        xs.len()
    );
    assert!(abs <= bound && abs_tail <= bound, "{abs} / {abs_tail} > {bound}");
    // At the knots only the two roundings remain.
    assert!(at_knots <= 2.0 * 2f64.powi(-12), "{at_knots}");
}

/// The weights of output channel `o` as the program stores them: Cin fp16 values at the
/// `__const` symbol `K..._ne_<o>` (one chunk per output channel for Cout <= 16).
fn stored_weights(bytes: &[u8], cin: usize, cout: usize) -> Vec<Vec<f64>> {
    let h = anec_codegen::read_hwx(bytes).unwrap();
    (0..cout)
        .map(|o| {
            let sym = h.const_symbols.iter().find(|s| s.name.ends_with(&format!("_ne_{o}"))).unwrap();
            let at = usize::try_from(sym.offset).unwrap();
            (0..cin).map(|i| f16::from_le_bytes([h.consts[at + 2 * i], h.consts[at + 2 * i + 1]]).to_f64()).collect()
        })
        .collect()
}

#[test]
fn conv_uses_the_programs_weights() {
    let mut rng = Rng(0x5eed_0002);
    for (name, value) in [("conv", 2.0), ("model", 3.0)] {
        let bytes = std::fs::read(apple_hwx(name)).unwrap();
        let w = stored_weights(&bytes, 3, 3);
        assert!(w.iter().flatten().all(|&v| v == value), "{name}: weights {w:?}");
        let p = load(&bytes, name);
        let (mut abs, mut rel) = (0.0f64, 0.0f64);
        for _ in 0..200 {
            let x = rng.halves(3, -4.0, 4.0);
            let want: Vec<f64> =
                w.iter().map(|row| row.iter().zip(&x).map(|(&k, &v)| k * f64::from(v)).sum()).collect();
            let got = output(&p, &inputs(&[("image", &[1, 3, 1, 1], x)]), "probs");
            let (a, r) = errors(&got, &want);
            (abs, rel) = (abs.max(a), rel.max(r));
        }
        println!("{name}: max abs error {abs:e}, rel {rel:e} (one fp16 rounding: rel <= {FP16_HALF_ULP:e})");
        assert!(rel <= FP16_HALF_ULP, "{name}: {rel}");
    }
}

#[test]
fn sum_adds_its_two_inputs() {
    let p = apple("sum");
    let keys: Vec<&str> = p.inputs().iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["image2", "image"]);
    let mut rng = Rng(0x5eed_0003);
    let (mut abs, mut rel) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let (a, b) = (rng.halves(64, -1000.0, 1000.0), rng.halves(64, -1000.0, 1000.0));
        let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| f64::from(x) + f64::from(y)).collect();
        let given = inputs(&[("image", &[1, 64, 1, 1], a), ("image2", &[1, 64, 1, 1], b)]);
        let (ea, er) = errors(&output(&p, &given, "probs"), &want);
        (abs, rel) = (abs.max(ea), rel.max(er));
    }
    println!("sum: max abs error {abs:e}, rel {rel:e}");
    assert!(rel <= FP16_HALF_ULP, "{rel}");
}

#[test]
fn apple_programs_describe_their_inputs_and_outputs() {
    let p = apple("relu");
    let (i, o) = (&p.inputs()[0], &p.outputs()[0]);
    assert_eq!((i.name.as_str(), i.shape.as_slice(), i.dtype.as_str()), ("image", &[1, 1, 1, 77][..], "fp16"));
    assert_eq!((o.name.as_str(), o.key.as_str()), ("probs@output", "probs"));
    assert_eq!(apple("conv").outputs()[0].shape, [1, 3, 1, 1]);
}

#[test]
fn wrong_inputs_are_errors_listing_the_programs_inputs() {
    let p = apple("sum");
    let good = || inputs(&[("image", &[1, 64, 1, 1], vec![0.0; 64]), ("image2", &[1, 64, 1, 1], vec![0.0; 64])]);
    let mut missing = good();
    missing.remove("image2");
    let mut shaped = good();
    shaped.insert("image".into(), Tensor { shape: vec![1, 1, 1, 64], data: vec![0.0; 64] });
    let mut extra = good();
    extra.insert("x".into(), Tensor { shape: vec![1], data: vec![0.0] });
    for (bad, what) in [(missing, "\"image2\" is missing"), (shaped, "[1, 1, 1, 64]"), (extra, "no input named \"x\"")]
    {
        let e = p.run(&bad).unwrap_err();
        assert!(matches!(e, SimError::Input { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(what) && text.contains("image2 [1, 64, 1, 1] fp16, image [1, 64, 1, 1] fp16"), "{text}");
    }
}

#[test]
fn an_unmodelled_field_value_is_an_error_naming_td_and_field() {
    let mut bytes = std::fs::read(apple_hwx("relu")).unwrap();
    // NonlinearMode (TD 0x246 bits 0..1 of byte 2 of MACCfg) = 3: no modelled meaning.
    let text = anec_codegen::parse_hwx(&bytes).unwrap().section("__TEXT", "__text").unwrap().offset as usize;
    bytes[text + 0x246] |= 0x3;
    let e = SimProgram::load(&bytes).unwrap_err().to_string();
    assert_eq!(e, "TD 0: NE.MACCfg.NonlinearMode = 0x3: only 0x0 or 0x1 or 0x2 is modelled");
    // An unnamed bit no modelled field covers.
    let mut bytes = std::fs::read(apple_hwx("relu")).unwrap();
    bytes[text + 0x158] = 0x10;
    let e = SimProgram::load(&bytes).unwrap_err().to_string();
    assert!(e.starts_with("TD 0: word 0x158 = 0x10: bits set"), "{e}");
}

/// Every single-bit corruption of a TD, and truncations of the file, load as a program or
/// an error, and the programs that load run or fail with an error: never a panic.
#[test]
fn corrupted_programs_never_panic() {
    let (mut loaded, mut refused) = (0, 0);
    for name in ["relu", "sigmoid", "conv", "sum"] {
        let bytes = std::fs::read(apple_hwx(name)).unwrap();
        let text = anec_codegen::parse_hwx(&bytes).unwrap().section("__TEXT", "__text").unwrap().offset as usize;
        for bit in 0..0x274 * 8 {
            let mut b = bytes.clone();
            b[text + bit / 8] ^= 1 << (bit % 8);
            match SimProgram::load(&b) {
                Ok(p) => {
                    loaded += 1;
                    let zeros = p.inputs().iter().map(|s| (s.key.clone(), Tensor::zeros(&s.shape))).collect();
                    let _ = p.run(&zeros);
                }
                Err(_) => refused += 1,
            }
        }
        for len in (0..bytes.len()).step_by(0x111) {
            let short = SimProgram::load(&bytes[..len]);
            assert!(len >= text + 0x274 || short.is_err(), "{name} truncated to {len:#x} inside its TD");
        }
    }
    println!("bit flips: {loaded} programs still load (ignored fields), {refused} refused");
    assert!(refused > loaded, "most corruptions touch a modelled or restricted field");
}

fn compile(path: &Path) -> SimProgram {
    let c = compile_file(path, &Options::new(Target::H13g)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    load(&c.hwx_bytes().unwrap(), &path.display().to_string())
}

#[test]
fn our_conformance_programs_simulate_as_apples_do() {
    let mut rng = Rng(0x5eed_0005);
    for name in ["relu", "sigmoid", "conv", "model", "sum"] {
        let (ours, theirs) = (compile(&conformance_input(name)), apple(name));
        assert_eq!(ours.inputs(), theirs.inputs(), "{name}");
        let given: BTreeMap<String, Tensor> = theirs
            .inputs()
            .iter()
            .map(|s| {
                (
                    s.key.clone(),
                    Tensor { shape: s.shape.clone(), data: rng.halves(s.shape.iter().product(), -9.0, 9.0) },
                )
            })
            .collect();
        assert_eq!(ours.run(&given).unwrap(), theirs.run(&given).unwrap(), "{name}");
    }
}

#[test]
fn netplist_conv_with_per_channel_bias() {
    // net.plist: conv 1x1 3->2, weights 3.0 (model.espresso.weights at byte 192), then a
    // GOC with bias_data [1, 1] (net.additional.weights): y = 3 * sum(x) + 1.
    let p = compile(&fixtures().join("apple-h13/netplist/net.plist"));
    let mut rng = Rng(0x5eed_0006);
    for _ in 0..50 {
        let x = rng.halves(3, -2.0, 2.0);
        let s: f64 = x.iter().map(|&v| f64::from(v)).sum();
        let got = output(&p, &inputs(&[("image", &[1, 3, 1, 1], x)]), "probs");
        let (_, rel) = errors(&got, &[3.0 * s + 1.0; 2]);
        assert!(rel <= FP16_HALF_ULP, "{got:?} vs {}", 3.0 * s + 1.0);
    }
}

/// Writes `text` as `model.mil` in a temporary directory and compiles it.
fn compile_mil(text: &str) -> SimProgram {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.mil");
    std::fs::write(&path, text).unwrap();
    compile(&path)
}

const CONV_BIAS_MIL: &str = r#"program(1.0)
[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{"coremlc-version", "3402.4.1"}})]
{
    func main<ios16>(tensor<fp16, [1, 2, 3, 4]> x) {
            tensor<fp16, [3, 2, 2, 2]> w = const()[val = tensor<fp16, [3, 2, 2, 2]>([[[[1, 2], [3, 4]], [[5, 6], [7, 8]]], [[[-1, 0], [0, 1]], [[1, 0], [0, -1]]], [[[0.5, 0.5], [0.5, 0.5]], [[0.25, 0.25], [0.25, 0.25]]]])];
            tensor<fp16, [3]> b = const()[val = tensor<fp16, [3]>([1, -2, 0.5])];
            tensor<fp16, [1, 3, 3, 4]> y = conv(dilations = tensor<int32, [2]>([1, 1]), groups = int32(1), pad = tensor<int32, [4]>([1, 0, 1, 0]), pad_type = string("custom"), strides = tensor<int32, [2]>([1, 1]), weight = w, bias = b, x = x)[name = tensor<string, []>("c")];
        } -> (y);
}"#;

#[test]
fn mil_padded_conv_with_bias_matches_a_hand_computation() {
    let p = compile_mil(CONV_BIAS_MIL);
    let x: Vec<f32> = (0..24).map(|i| (i as f32 - 11.0) / 4.0).collect();
    let w: Vec<f64> = vec![
        1., 2., 3., 4., 5., 6., 7., 8., -1., 0., 0., 1., 1., 0., 0., -1., 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25,
    ];
    let b = [1.0, -2.0, 0.5];
    // Output (o, oy, ox) of a 2x2 kernel, top/left padding 1, no bottom/right padding:
    // rows oy - 1 .. oy, columns ox - 1 .. ox of the 3x4 input.
    let mut want = Vec::new();
    for o in 0..3 {
        for oy in 0..3i64 {
            for ox in 0..4i64 {
                let mut acc = b[o];
                for (ci, ky, kx) in (0..2).flat_map(|c| (0..2).flat_map(move |ky| (0..2).map(move |kx| (c, ky, kx)))) {
                    let (iy, ix) = (oy - 1 + ky, ox - 1 + kx);
                    if (0..3).contains(&iy) && (0..4).contains(&ix) {
                        let xv = f64::from(x[(ci * 3 + iy as usize) * 4 + ix as usize]);
                        acc += w[((o * 2 + ci) * 2 + ky as usize) * 2 + kx as usize] * xv;
                    }
                }
                want.push(acc);
            }
        }
    }
    let got = output(&p, &inputs(&[("x", &[1, 2, 3, 4], x)]), "y");
    let (abs, _) = errors(&got, &want);
    let tol: f64 = want.iter().map(|v| v.abs() * FP16_HALF_ULP).fold(0.0, f64::max);
    assert!(abs <= tol, "{got:?}\nvs {want:?}");
}

const POOL_MIL: &str = r#"program(1.0)
[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{"coremlc-version", "3402.4.1"}})]
{
    func main<ios16>(tensor<fp16, [1, 2, 4, 4]> x) {
            tensor<fp16, [1, 2, 2, 2]> m = max_pool(ceil_mode = bool(false), kernel_sizes = tensor<int32, [2]>([2, 2]), pad = tensor<int32, [4]>([0, 0, 0, 0]), pad_type = string("custom"), strides = tensor<int32, [2]>([2, 2]), x = x)[name = tensor<string, []>("mp")];
            tensor<fp16, [1, 2, 4, 4]> a = avg_pool(ceil_mode = bool(false), exclude_padding_from_average = bool(false), kernel_sizes = tensor<int32, [2]>([3, 3]), pad = tensor<int32, [4]>([1, 1, 1, 1]), pad_type = string("custom"), strides = tensor<int32, [2]>([1, 1]), x = x)[name = tensor<string, []>("ap")];
        } -> (m, a);
}"#;

#[test]
fn mil_max_and_average_pooling_match_a_hand_computation() {
    let p = compile_mil(POOL_MIL);
    // Channel 0 counts up, channel 1 down, both negative in places.
    let x: Vec<f32> = (0..32).map(|i| if i < 16 { i as f32 - 5.0 } else { 20.0 - i as f32 }).collect();
    let at = |c: usize, y: i64, x0: i64| -> Option<f64> {
        ((0..4).contains(&y) && (0..4).contains(&x0)).then(|| f64::from(x[c * 16 + y as usize * 4 + x0 as usize]))
    };
    let mut want_max = Vec::new();
    for c in 0..2 {
        for (oy, ox) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let vals = (0..2).flat_map(|ky| (0..2).map(move |kx| (2 * oy + ky, 2 * ox + kx)));
            want_max.push(vals.filter_map(|(y, x0)| at(c, y, x0)).fold(f64::MIN, f64::max));
        }
    }
    let mut want_avg = Vec::new();
    for c in 0..2 {
        for (oy, ox) in (0..4).flat_map(|y| (0..4).map(move |x0| (y, x0))) {
            let vals = (-1..2).flat_map(|ky| (-1..2).map(move |kx| (oy + ky, ox + kx)));
            want_avg.push(vals.filter_map(|(y, x0)| at(c, y, x0)).sum::<f64>() / 9.0);
        }
    }
    let out = p.run(&inputs(&[("x", &[1, 2, 4, 4], x)])).unwrap();
    assert_eq!(out["m"].data.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), want_max);
    // The post-scale is fp16(1/9), then one fp16 rounding of the result.
    let q = f16::from_f64(1.0 / 9.0).to_f64();
    for (&g, &w) in out["a"].data.iter().zip(&want_avg) {
        let tol = w.abs() * ((9.0 * q - 1.0).abs() + FP16_HALF_ULP);
        assert!((f64::from(g) - w).abs() <= tol, "{g} vs {w}: {:?}\nvs {want_avg:?}", out["a"].data);
    }
}

#[test]
fn mnist_model_compiles_and_simulates() {
    let path = fixtures().join("mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil");
    let p = compile(&path);
    assert_eq!(p.task_count(), 5, "conv, pool, conv, pool, conv (writing its 10 channels as one row)");
    let spec = p.inputs()[0].clone();
    let x = Rng(0x5eed_0007).halves(spec.shape.iter().product(), 0.0, 1.0);
    let out = p.run(&inputs(&[(spec.key.as_str(), &spec.shape, x)])).unwrap();
    let logits = out.values().next().unwrap();
    // MIL [1, 10]: one row (the last axis on W).
    assert_eq!(logits.shape, [1, 1, 1, 10]);
    assert!(logits.data.iter().all(|v| v.is_finite()) && logits.data.iter().any(|&v| v != 0.0), "{logits:?}");
}
