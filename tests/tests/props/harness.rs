//! Runs one family: a deterministic proptest runner (fixed ChaCha seed, bounded cases,
//! failures persisted in `tests/proptest-regressions/`), the outcome of every case
//! (compiled and agreeing, or rejected naming a layer), and the counts.

use super::model::{Body, Model};
use anec_tests::agree::{compile_and_compare, random_inputs, source_inputs, AgreeError};
use proptest::strategy::Strategy;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner,
};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The seed every family starts from (mixed with the family name).
const SEED: u64 = 0x616e_6563_5349_4d31;

/// Counts of one family.
#[derive(Debug, Default)]
pub struct Counts {
    /// Cases that compiled and agreed.
    pub compiled: usize,
    /// The largest error of those, as a fraction of the allowed error.
    pub worst_ratio: f32,
    /// Cases the compiler rejected, by reason (the error with layer names removed).
    pub rejected: BTreeMap<String, usize>,
}

impl Counts {
    fn rejected_total(&self) -> usize {
        self.rejected.values().sum()
    }
}

/// Where proptest keeps the seeds of a family's failures (relative to the crate root,
/// the working directory of `cargo test`).
fn persistence(family: &'static str) -> &'static str {
    match family {
        "conv" => "proptest-regressions/properties-conv.txt",
        "linear" => "proptest-regressions/properties-linear.txt",
        "matmul" => "proptest-regressions/properties-matmul.txt",
        "elementwise" => "proptest-regressions/properties-elementwise.txt",
        "neuron" => "proptest-regressions/properties-neuron.txt",
        "activation" => "proptest-regressions/properties-activation.txt",
        "goc" => "proptest-regressions/properties-goc.txt",
        "concat" => "proptest-regressions/properties-concat.txt",
        "reshape" => "proptest-regressions/properties-reshape.txt",
        "reduction" => "proptest-regressions/properties-reduction.txt",
        "cast" => "proptest-regressions/properties-cast.txt",
        _ => "proptest-regressions/properties-other.txt",
    }
}

/// The runner configuration: fixed seed and algorithm (independent of
/// `PROPTEST_RNG_SEED` and `PROPTEST_CASES`), no forking, bounded shrinking.
fn config(family: &'static str, cases: u32) -> Config {
    let mix = family.bytes().fold(SEED, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(mix),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(persistence(family)))),
        source_file: Some(file!()),
        max_shrink_iters: 512,
        max_global_rejects: 0,
        ..Config::default()
    }
}

/// One case: it compiles and agrees, or the compiler rejects it naming a layer.
fn check(model: &Model, counts: &RefCell<Counts>) -> Result<(), TestCaseError> {
    let fail = |msg: String| TestCaseError::fail(msg);
    let source = model.source().map_err(|e| fail(format!("the generated model does not parse: {e}")))?;
    let specs = source_inputs(&source).map_err(|e| fail(e.to_string()))?;
    let inputs = random_inputs(&specs, model.seed, model.range.0, model.range.1);
    match compile_and_compare(&source, &inputs) {
        Ok(report) if report.passed() => {
            let mut c = counts.borrow_mut();
            c.compiled += 1;
            c.worst_ratio = report.outputs.iter().fold(c.worst_ratio, |m, o| m.max(o.max_ratio));
            Ok(())
        }
        Ok(report) => Err(fail(format!("simulation and reference disagree:\n{report}"))),
        Err(AgreeError::Compile(e)) => {
            let text = e.to_string();
            if matches!(e, anec::Error::Invalid { .. }) {
                return Err(fail(format!("the lowering produced an invalid module: {text}")));
            }
            let Some(named) = model.names.iter().find(|n| text.contains(n.as_str())) else {
                return Err(fail(format!("the rejection names no layer ({:?}): {text}", model.names)));
            };
            let reason = reason_class(text.lines().next().unwrap_or_default());
            *counts.borrow_mut().rejected.entry(format!("{reason} (names '{named}')")).or_default() += 1;
            Ok(())
        }
        Err(e @ AgreeError::Run(_)) => Err(fail(e.to_string())),
    }
}

/// The reason, grouped: from the op kind on (`(anec.conv): not supported ...`), with
/// bracketed lists and kernel sizes replaced by placeholders.
fn reason_class(reason: &str) -> String {
    let tail = reason.find("(anec.").map_or(reason, |i| &reason[i..]);
    let mut out = String::new();
    let mut depth = 0;
    for ch in tail.chars() {
        match ch {
            '[' if depth == 0 => {
                depth = 1;
                out.push_str("[..]");
            }
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth > 0 => {}
            _ => out.push(ch),
        }
    }
    let words: Vec<String> = out.split(' ').map(kernel_size_placeholder).collect();
    words.join(" ")
}

/// `7x1` -> `KxK`.
fn kernel_size_placeholder(word: &str) -> String {
    let is_size = word.split_once('x').is_some_and(|(a, b)| {
        !a.is_empty() && !b.is_empty() && a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit())
    });
    if is_size {
        "KxK".to_string()
    } else {
        word.to_string()
    }
}

/// Runs `cases` generated models of `family`, prints the counts, and on failure saves the
/// shrunk model under `proptest-regressions/cases/` before failing.
pub fn run_family<S>(family: &'static str, cases: u32, strategy: S) -> Counts
where
    S: Strategy<Value = Model>,
{
    let counts = RefCell::new(Counts::default());
    let mut runner = TestRunner::new(config(family, cases));
    let result = runner.run(&strategy, |model| check(&model, &counts));
    let counts = counts.into_inner();
    println!(
        "{family}: {} compiled and agreed (largest error {:.2} of the allowed), {} rejected",
        counts.compiled,
        counts.worst_ratio,
        counts.rejected_total()
    );
    for (reason, n) in &counts.rejected {
        println!("  {n:4} x {reason}");
    }
    match result {
        Ok(()) => counts,
        Err(TestError::Fail(reason, model)) => {
            let saved = save_case(&model);
            panic!("{family}: {reason}\nminimal model (saved as {}):\n{model:?}", saved.display())
        }
        Err(TestError::Abort(reason)) => panic!("{family}: aborted: {reason}"),
    }
}

/// Writes a failing model where [`replay_saved_cases`] finds it: the file name holds the
/// family, the input seed and range (`conv__123__-2__2.mil`).
fn save_case(model: &Model) -> PathBuf {
    let (lo, hi) = model.range;
    let path = Path::new(CASES).join(format!("{}__{}__{lo}__{hi}.{}", model.family, model.seed, model.ext()));
    let written = std::fs::create_dir_all(CASES).and_then(|()| std::fs::write(&path, model.text()));
    if let Err(e) = written {
        eprintln!("could not save {}: {e}", path.display());
    }
    path
}

/// Saved failing models, replayed by [`replay_saved_cases`].
pub const CASES: &str = "proptest-regressions/cases";

/// Checks every saved model again (each must now compile and agree, or be rejected
/// naming a layer); returns how many there were.
pub fn replay_saved_cases() -> usize {
    let Ok(dir) = std::fs::read_dir(CASES) else { return 0 };
    let mut paths: Vec<PathBuf> = dir.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    let mut failures = Vec::new();
    for path in &paths {
        let outcome = load_case(path).and_then(|m| check(&m, &RefCell::default()).map_err(|e| e.to_string()));
        if let Err(e) = outcome {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(failures.is_empty(), "saved regression cases fail:\n{}", failures.join("\n"));
    paths.len()
}

/// A saved model and the seed and range in its name.
fn load_case(path: &Path) -> Result<Model, String> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let parts: Vec<&str> = stem.split("__").collect();
    let [family, seed, lo, hi] = parts[..] else { return Err("name is not FAMILY__SEED__LO__HI".into()) };
    let num = |s: &str| s.parse::<f32>().map_err(|e| format!("{s}: {e}"));
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let body = match path.extension().and_then(|e| e.to_str()) {
        Some("mlir") => Body::Anec(anec_ir::parse_module(&text).map_err(|e| e.to_string())?),
        _ => Body::Mil(text.clone()),
    };
    Ok(Model {
        family: Box::leak(family.to_string().into_boxed_str()),
        body,
        names: layer_names(&text),
        range: (num(lo)?, num(hi)?),
        seed: seed.parse().map_err(|e| format!("{seed}: {e}"))?,
    })
}

/// The `name` strings of a MIL text (`name = tensor<string, []>("x")`) or an MLIR module
/// (`name = "x"`).
fn layer_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in ["name = tensor<string, []>(\"", "name = \""] {
        for (i, _) in text.match_indices(marker) {
            let rest = &text[i + marker.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}
