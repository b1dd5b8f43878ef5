//! Every model the compiler accepts in the test suite simulates, from its registers, to
//! within the stated fp16 tolerance of the reference interpreter run on its source
//! (`anec_tests::agree`, tolerances in `anec_tests::tolerance` and docs/simulator.md).
//! Inputs are seeded uniform random values in [-2, 2]. Run with `--nocapture` to see the
//! measured error of each model.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tests::agree::{compile_and_compare, random_inputs, source_inputs, AgreeError, Source};
use anec_tests::{fixtures, workspace};
use std::path::{Path, PathBuf};

const SEED: u64 = 0x5eed_0004;

/// Compiles, simulates and compares one source; panics with the report on disagreement.
fn agrees(source: &Source) {
    let specs = source_inputs(source).unwrap_or_else(|e| panic!("{}: {e}", source.name()));
    let inputs = random_inputs(&specs, SEED, -2.0, 2.0);
    let report = compile_and_compare(source, &inputs).unwrap_or_else(|e| panic!("{}: {e}", source.name()));
    print!("{report}");
    assert!(report.passed(), "simulation and reference disagree:\n{report}");
    assert!(!report.outputs.is_empty(), "{}: no outputs compared", source.name());
}

/// Files under `dir` (recursively) whose name ends in one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|x| p.extension().and_then(|e| e.to_str()) == Some(x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn conformance_models_agree() {
    let found = files(&workspace().join("tests/conformance"), &["plist", "mil"]);
    assert!(found.len() >= 7, "expected the 5 netplists and 2 MIL files, found {found:?}");
    for path in found {
        agrees(&Source::file(path));
    }
}

/// Apple's example netplists: the ones our compiler accepts must agree; the list of
/// those is printed and must not be empty.
#[test]
fn apple_netplists_that_compile_agree() {
    let mut compiled = Vec::new();
    for path in files(&fixtures().join("apple-h13/netplist"), &["plist"]) {
        let source = Source::file(&path);
        let specs = match source_inputs(&source) {
            Ok(s) => s,
            Err(e) => {
                println!("skipped (does not load): {}: {e}", path.display());
                continue;
            }
        };
        match compile_and_compare(&source, &random_inputs(&specs, SEED, -2.0, 2.0)) {
            Err(AgreeError::Compile(e)) => {
                println!(
                    "skipped (does not compile): {}: {}",
                    path.display(),
                    e.to_string().lines().next().unwrap_or("")
                )
            }
            Err(e) => panic!("{}: {e}", path.display()),
            Ok(report) => {
                print!("{report}");
                assert!(report.passed(), "simulation and reference disagree:\n{report}");
                compiled.push(path.display().to_string());
            }
        }
    }
    println!("netplists that compile and agree ({}):\n  {}", compiled.len(), compiled.join("\n  "));
    assert!(!compiled.is_empty(), "no Apple netplist compiles");
}

#[test]
fn add_model_agrees() {
    agrees(&Source::file(fixtures().join("mil/real/apple+coremltools__add_model.mlmodelc.model.mil")));
}

#[test]
fn ironmill_mnist_agrees() {
    agrees(&Source::file(fixtures().join("mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil")));
}

#[test]
fn both_functions_of_the_multi_function_package_agree() {
    let path = fixtures().join("mlpackage/coremltools-multi.mlpackage");
    let model = anec::load_mil(&path).expect("load the package");
    let functions: Vec<String> = model.program.functions.iter().map(|f| f.name.clone()).collect();
    assert_eq!(functions.len(), 2, "{functions:?}");
    for function in functions {
        agrees(&Source::File { path: path.clone(), function });
    }
}

#[test]
fn conv_example_agrees() {
    agrees(&Source::file(workspace().join("examples/conv/net.plist")));
}

/// The shipped example, a pre-norm transformer block (sequence 128, width 256, 4 heads,
/// causal attention, gelu MLP; `examples/transformer_block/`): every layer on the engine,
/// and the simulated program agrees with the reference interpreter.
#[test]
fn transformer_block_example_agrees() {
    agrees(&Source::file(workspace().join("examples/transformer_block/model.mil")));
}

/// The CNN example (`examples/cnn/`: a stride-2 3 x 3 convolution with padding, batch
/// norms, relus, a depthwise convolution, a residual add, max pooling, a global average
/// pool, a linear layer and a softmax): every layer on the engine, and the simulated
/// program agrees with the reference interpreter.
#[test]
fn cnn_example_agrees() {
    agrees(&Source::file(workspace().join("examples/cnn/model.mil")));
}
