//! Real inputs: the ironmill MNIST model (MIL vs its lowering) and the conformance
//! netplists (MIL vs netplist, and netplist vs the math written out here).

use crate::common::*;
use anec_tools::reference::{mil_to_program, run_mil, run_module};
use anec_tools::Tensor;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn netplist(name: &str) -> anec_ir::Module {
    let path = root().join("tests/conformance").join(format!("{name}.plist"));
    anec_front::parse_netplist(&path).unwrap_or_else(|e| panic!("{name}.plist: {e}"))
}

fn run_plist(name: &str, ins: &[(&str, Tensor)]) -> BTreeMap<String, Tensor> {
    let map = ins.iter().map(|(k, t)| ((*k).to_string(), t.clone())).collect();
    run_module(&netplist(name), &map).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn mnist_mil_and_its_lowering_agree() {
    let path = root().join("../shared/fixtures/mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil");
    let m = anec_front::load_mil(&path).unwrap_or_else(|e| panic!("{e:?}"));
    for seed in 1..=4 {
        let ins = inputs(&m, 0.0, 1.0, seed);
        let e = agreement_on(&m, &ins);
        // Both sides compute in f32 with the same fp32 weights; only summation order differs.
        assert!(e < 1e-5, "seed {seed}: relative error {e}");
        let out = run_mil(&m, "main", &ins).expect("run");
        let logits = &out["Plus214_Output_0"];
        assert_eq!(logits.shape, vec![1, 10]);
        assert!(logits.data.iter().any(|v| v.abs() > 1e-3), "the logits are all ~0: {:?}", logits.data);
    }
}

#[test]
fn conformance_mil_matches_its_netplist() {
    let mut rng = Rng::new(7);
    for (name, input_shape) in [("sigmoid", vec![1, 1, 1, 77]), ("conv", vec![1, 3, 1, 1])] {
        let path = root().join("tests/conformance").join(format!("{name}.mil"));
        let m = anec_front::load_mil(&path).unwrap_or_else(|e| panic!("{e:?}"));
        let x = rng.tensor(&input_shape, -6.0, 6.0);
        let ins: BTreeMap<String, Tensor> = [("image".to_string(), x.clone())].into();
        let from_mil = run_mil(&m, "main", &ins).expect("run_mil");
        let from_plist = run_plist(name, &[("image", mil_to_program(&x).expect("layout"))]);
        let e = rel_error(&mil_to_program(&from_mil["probs"]).expect("layout"), &from_plist["probs"]);
        assert!(e < 1e-6, "{name}: {e}");
    }
}

#[test]
fn conformance_netplists_compute_their_math() {
    let mut rng = Rng::new(11);
    // relu and sigmoid over 77 values.
    let x = rng.tensor(&[1, 1, 1, 77], -8.0, 8.0);
    let relu = &run_plist("relu", &[("image", x.clone())])["probs"];
    assert_close(&relu.data, &x.data.iter().map(|v| v.max(0.0)).collect::<Vec<_>>(), 0.0);
    let sig = &run_plist("sigmoid", &[("image", x.clone())])["probs"];
    let want: Vec<f32> = x.data.iter().map(|&v| (1.0 / (1.0 + f64::from(-v).exp())) as f32).collect();
    assert_close(&sig.data, &want, 1e-7);
    // conv: 1x1, 3 -> 3, every weight 2.0; model: the same with 3.0.
    let c = rng.tensor(&[1, 3, 1, 1], -4.0, 4.0);
    let sum: f32 = c.data.iter().sum();
    assert_close(&run_plist("conv", &[("image", c.clone())])["probs"].data, &[2.0 * sum; 3], 1e-5);
    assert_close(&run_plist("model", &[("image", c)])["probs"].data, &[3.0 * sum; 3], 1e-5);
    // sum: image + image2 over 64 channels, scale 1.0.
    let (a, b) = (rng.tensor(&[1, 64, 1, 1], -4.0, 4.0), rng.tensor(&[1, 64, 1, 1], -4.0, 4.0));
    let s = &run_plist("sum", &[("image", a.clone()), ("image2", b.clone())])["probs"];
    let want: Vec<f32> = a.data.iter().zip(&b.data).map(|(x, y)| x + y).collect();
    assert_close(&s.data, &want, 0.0);
}

/// The generated MIL programs of an ANE training project (attention, FFN, their backward
/// passes), with random weights (their weight files are not in the fixtures), each
/// against its lowering. They are large (768 channels x 256 positions), so the test is
/// ignored in debug runs: `cargo test --release -p anec-tools --test reference -- --ignored`.
#[test]
#[ignore]
fn generated_models_agree_with_their_lowering() {
    let dir = root().join("../shared/fixtures/mil/generated");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir).expect("list").map(|e| e.expect("entry").path()).collect();
    names.sort();
    let mut report = Vec::new();
    for path in names {
        let text = std::fs::read_to_string(&path).expect("read");
        let mut m = model(&text);
        m.blobs = random_blobs(&m.program, 0.05, 3);
        let e = agreement_on(&m, &inputs(&m, -1.0, 1.0, 9));
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        report.push(format!("{name}: {e:e}"));
        assert!(e < 1e-4, "{name}: relative error {e}");
    }
    println!("{}", report.join("\n"));
}
