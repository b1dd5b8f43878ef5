//! Does the compiled program compute what the source says? [`compile_and_compare`] compiles
//! a model with anec, runs the `.hwx` on the register-level simulator
//! (`anec_tools::sim::SimProgram`), runs the reference interpreter on the source
//! (`run_module` for netplists, `.mlir` files and modules; `run_mil` for MIL, whose outputs
//! are mapped to the program layout by the lowering's rank rule) and compares every output
//! within the fp16 tolerance of [`crate::tolerance`].
//!
//! A model the compiler rejects is [`AgreeError::Compile`] (an acceptable outcome for
//! generated models); every other failure (simulator, reference, missing or misshapen
//! output) is [`AgreeError::Run`].

use crate::tolerance::{Budget, Tolerance};
use anec::run::{mil_inputs, module_inputs, InputSpec};
use anec::{InputKind, Options, Target};
use anec_codegen::Hwx;
use anec_ir::mil::MilModel;
use anec_ir::Module;
use anec_tools::reference::{mil_to_program, run_mil, run_module};
use anec_tools::SimProgram;
use anec_tools::Tensor;
use half::f16;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// What to compile and compare.
#[derive(Debug, Clone)]
pub enum Source {
    /// A model file the compiler reads; `function` matters for MIL only.
    File {
        /// The path.
        path: PathBuf,
        /// The MIL function.
        function: String,
    },
    /// An anec-dialect module, named `name` in messages.
    Module {
        /// The module.
        module: Module,
        /// A name for messages.
        name: String,
    },
    /// A MIL model in memory.
    Mil {
        /// The model (its `file` names it in messages).
        model: MilModel,
        /// The function.
        function: String,
    },
}

impl Source {
    /// The `main` function of a model file.
    pub fn file(path: impl Into<PathBuf>) -> Source {
        Source::File { path: path.into(), function: anec::DEFAULT_FUNCTION.to_string() }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        match self {
            Source::File { path, function } => format!("{}:{function}", path.display()),
            Source::Module { name, .. } => name.clone(),
            Source::Mil { model, function } => format!("{}:{function}", model.file),
        }
    }
}

/// The source, read: what the reference interprets.
enum Loaded {
    Module(Module),
    Mil(MilModel, String),
}

/// Why a comparison could not be made.
#[derive(Debug)]
pub enum AgreeError {
    /// The compiler (front end, lowering, verifier or backend) rejected the model.
    Compile(anec::Error),
    /// Anything else: reading the source, the simulator, the reference, the outputs.
    Run(String),
}

impl fmt::Display for AgreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgreeError::Compile(e) => write!(f, "rejected by the compiler: {e}"),
            AgreeError::Run(s) => f.write_str(s),
        }
    }
}

/// One output compared.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputReport {
    /// Output name (no `@output`).
    pub name: String,
    /// Program-layout shape.
    pub shape: Vec<usize>,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// Largest |sim - ref|.
    pub max_abs: f32,
    /// Largest |sim - ref| / allowed error (<= 1 passes).
    pub max_ratio: f32,
    /// Flat index, simulated and reference value of the element with the largest ratio.
    pub worst: (usize, f32, f32),
    /// Elements outside the tolerance.
    pub failures: usize,
}

/// The comparison of every output of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The source's name.
    pub source: String,
    /// Per output, in name order.
    pub outputs: Vec<OutputReport>,
}

impl Report {
    /// Whether every element of every output is within tolerance.
    pub fn passed(&self) -> bool {
        self.outputs.iter().all(|o| o.failures == 0)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for o in &self.outputs {
            let (i, s, r) = o.worst;
            writeln!(
                f,
                "{} {} {:?}: max |sim-ref| {:.3e}, worst at [{i}] sim {s} ref {r} ({:.2} of allowed; {}), {} outside",
                self.source, o.name, o.shape, o.max_abs, o.max_ratio, o.tolerance, o.failures
            )?;
        }
        Ok(())
    }
}

fn run_err(source: &Source, what: &str, e: impl fmt::Display) -> AgreeError {
    AgreeError::Run(format!("{}: {what}: {e}", source.name()))
}

/// Reads the source (without compiling it).
fn load(source: &Source) -> Result<Loaded, AgreeError> {
    match source {
        Source::Module { module, .. } => Ok(Loaded::Module(module.clone())),
        Source::Mil { model, function } => Ok(Loaded::Mil(model.clone(), function.clone())),
        Source::File { path, function } => match InputKind::of(path).map_err(AgreeError::Compile)? {
            InputKind::Mil => Ok(Loaded::Mil(anec::load_mil(path).map_err(AgreeError::Compile)?, function.clone())),
            _ => Ok(Loaded::Module(anec::load(path).map_err(AgreeError::Compile)?)),
        },
    }
}

/// The inputs of the source as the caller supplies them (MIL shapes for MIL).
pub fn source_inputs(source: &Source) -> Result<Vec<InputSpec>, AgreeError> {
    match load(source)? {
        Loaded::Module(m) => Ok(module_inputs(&m)),
        Loaded::Mil(model, function) => mil_inputs(&model, &function).map_err(AgreeError::Compile),
    }
}

/// Seeded inputs for `specs`: a float input uniform in `[lo, hi]` and rounded to its
/// storage type; an 8-bit input (`bool`, `uint8`, `int8`) uniform over the integers its
/// type holds (0 and 1 for `bool`), whatever `lo` and `hi`.
pub fn random_inputs(specs: &[InputSpec], seed: u64, lo: f32, hi: f32) -> BTreeMap<String, Tensor> {
    let mut rng = SplitMix(seed);
    specs
        .iter()
        .map(|s| {
            let shape = s.concrete_shape();
            let n = shape.iter().product::<usize>();
            let data = match integer_range(&s.dtype) {
                Some((a, b)) => (0..n).map(|_| (a + ((b - a + 1.0) * rng.unit()).floor()).min(b)).collect(),
                None => (0..n).map(|_| store(&s.dtype, lo + (hi - lo) * rng.unit())).collect(),
            };
            (s.key.clone(), Tensor { shape, data })
        })
        .collect()
}

/// `v` rounded to fp16.
pub fn fp16(v: f32) -> f32 {
    f16::from_f32(v).to_f32()
}

/// The range of an integer storage type (`uint8`, `int8`, and MIL's `bool`, an 8-bit
/// input holding 0 and 1); `None` for float types.
pub fn integer_range(dtype: &str) -> Option<(f32, f32)> {
    anec::run::eight_bit_range(dtype)
}

/// `v` as the engine stores it in `dtype`: integers round to nearest (ties to even) and
/// saturate; every float type is held in fp16.
pub fn store(dtype: &str, v: f32) -> f32 {
    match integer_range(dtype) {
        Some((lo, hi)) => v.round_ties_even().clamp(lo, hi),
        None => fp16(v),
    }
}

/// A small deterministic generator (SplitMix64).
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Compiles `source`, simulates the program and runs the reference on `inputs` (keyed by
/// input name, shaped as [`source_inputs`] says; values are rounded to fp16 first), then
/// compares every output.
pub fn compile_and_compare(source: &Source, inputs: &BTreeMap<String, Tensor>) -> Result<Report, AgreeError> {
    compile_substitute_and_compare(source, inputs, &|h| Ok(h.clone()))
}

/// As [`compile_and_compare`], but simulates the program `substitute` makes of ours (the
/// oracle harness runs Apple's register words with our constants and buffers this way).
pub fn compile_substitute_and_compare(
    source: &Source,
    inputs: &BTreeMap<String, Tensor>,
    substitute: &dyn Fn(&Hwx) -> Result<Hwx, String>,
) -> Result<Report, AgreeError> {
    let loaded = load(source)?;
    let specs = match &loaded {
        Loaded::Module(m) => module_inputs(m),
        Loaded::Mil(model, function) => mil_inputs(model, function).map_err(AgreeError::Compile)?,
    };
    let dtype_of = |k: &str| specs.iter().find(|s| s.key == k).map_or("fp16", |s| s.dtype.as_str());
    let inputs: BTreeMap<String, Tensor> = inputs
        .iter()
        .map(|(k, t)| {
            let data = t.data.iter().map(|&v| store(dtype_of(k), v)).collect();
            (k.clone(), Tensor { shape: t.shape.clone(), data })
        })
        .collect();
    let module = match (&loaded, source) {
        (Loaded::Module(m), _) => m.clone(),
        (Loaded::Mil(model, function), _) => anec_passes::lower::lower_mil(model, function)
            .map_err(|d| AgreeError::Compile(anec::Error::Diagnostics(d)))?,
    };
    let compiled =
        anec::compile_module(module, &source.name(), &Options::new(Target::H13g)).map_err(AgreeError::Compile)?;
    let program = substitute(&compiled.hwx).map_err(|e| run_err(source, "program", e))?;
    let hwx = anec_codegen::write_hwx(&program).map_err(|e| run_err(source, "writing the program", e))?;
    let sim = SimProgram::load(&hwx).map_err(|e| run_err(source, "simulator load", e))?;
    let (sim_inputs, reference) = match &loaded {
        Loaded::Module(_) => {
            let r = run_module(&compiled.module, &inputs).map_err(|e| run_err(source, "reference", e))?;
            (inputs, r)
        }
        Loaded::Mil(model, function) => {
            let r = run_mil(model, function, &inputs).map_err(|e| run_err(source, "reference", e))?;
            (to_program(source, &inputs)?, to_program(source, &r)?)
        }
    };
    let simulated = sim.run(&sim_inputs).map_err(|e| run_err(source, "simulator", e))?;
    let dtypes: BTreeMap<String, String> = sim.outputs().iter().map(|o| (o.key.clone(), o.dtype.clone())).collect();
    compare(source, &Budget::of_module(&compiled.module), &dtypes, &simulated, &reference)
}

/// MIL tensors in the program layout.
fn to_program(source: &Source, ts: &BTreeMap<String, Tensor>) -> Result<BTreeMap<String, Tensor>, AgreeError> {
    ts.iter()
        .map(|(k, t)| Ok((k.clone(), mil_to_program(t).map_err(|e| run_err(source, &format!("layout of '{k}'"), e))?)))
        .collect()
}

/// Compares the simulated outputs with the reference ones, name by name.
fn compare(
    source: &Source,
    budget: &Budget,
    dtypes: &BTreeMap<String, String>,
    simulated: &BTreeMap<String, Tensor>,
    reference: &BTreeMap<String, Tensor>,
) -> Result<Report, AgreeError> {
    let sim_names: Vec<&String> = simulated.keys().collect();
    let ref_names: Vec<&String> = reference.keys().collect();
    if sim_names != ref_names {
        return Err(run_err(source, "outputs differ", format!("simulator {sim_names:?}, reference {ref_names:?}")));
    }
    let mut outputs = Vec::new();
    for (name, s) in simulated {
        let r = &reference[name];
        if s.shape != r.shape {
            let what = format!("output '{name}'");
            return Err(run_err(source, &what, format!("simulator shape {:?}, reference {:?}", s.shape, r.shape)));
        }
        let dtype = dtypes.get(name).map_or("fp16", String::as_str);
        outputs.push(compare_one(name, dtype, budget, s, r));
    }
    Ok(Report { source: source.name(), outputs })
}

/// One output. An integer output (`uint8`, `int8`) is compared with the reference
/// saturated to the type's range, allowing the half step of rounding to an integer on top
/// of the float tolerance.
fn compare_one(name: &str, dtype: &str, budget: &Budget, s: &Tensor, r: &Tensor) -> OutputReport {
    let mut tolerance = budget.tolerance(&r.data);
    let r = match integer_range(dtype) {
        Some((lo, hi)) => {
            tolerance.atol += 0.5;
            Tensor { shape: r.shape.clone(), data: r.data.iter().map(|v| v.clamp(lo, hi)).collect() }
        }
        None => r.clone(),
    };
    let mut out = OutputReport {
        name: name.to_string(),
        shape: s.shape.clone(),
        tolerance,
        max_abs: 0.0,
        max_ratio: 0.0,
        worst: (0, 0.0, 0.0),
        failures: 0,
    };
    for (i, (&sv, &rv)) in s.data.iter().zip(&r.data).enumerate() {
        // Equal values (infinities included) and NaN on both sides agree; NaN on one side
        // only, or infinities that differ, are infinitely wrong.
        let same = sv == rv || (sv.is_nan() && rv.is_nan());
        let err = if same { 0.0 } else { (sv - rv).abs() };
        let err = if err.is_nan() { f32::INFINITY } else { err };
        let ratio = if err == 0.0 { 0.0 } else { err / tolerance.allowed(rv) };
        let ratio = if ratio.is_nan() { f32::INFINITY } else { ratio };
        out.max_abs = out.max_abs.max(err);
        if ratio > out.max_ratio || i == 0 {
            out.max_ratio = out.max_ratio.max(ratio);
            out.worst = (i, sv, rv);
        }
        if !same && !tolerance.accepts(sv, rv) {
            out.failures += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn t(data: &[f32]) -> Tensor {
        Tensor::new(vec![1, data.len(), 1, 1], data.to_vec()).unwrap()
    }

    /// One ulp step of rounding: k = 1, s = 1, no absolute part.
    const ONE: Budget = Budget { k: 1.0, s: 1.0, abs: 0.0 };

    #[test]
    fn flags_an_element_outside_the_tolerance() {
        // S = 2: atol = 2^-10 * 2; at ref 2 the allowed error is 4 * 2^-10 = 0.0039.
        let ok = compare_one("y", "fp16", &ONE, &t(&[2.0035, -1.0]), &t(&[2.0, -1.0]));
        assert_eq!(ok.failures, 0, "{ok:?}");
        let bad = compare_one("y", "fp16", &ONE, &t(&[2.0045, -1.0]), &t(&[2.0, -1.0]));
        assert_eq!((bad.failures, bad.worst.0), (1, 0), "{bad:?}");
        assert!(bad.max_ratio > 1.0);
    }

    #[test]
    fn nan_on_one_side_fails_equal_infinities_agree() {
        let r = compare_one("y", "fp16", &ONE, &t(&[f32::NAN, 0.0]), &t(&[1.0, 0.0]));
        assert_eq!(r.failures, 1);
        let inf = f32::INFINITY;
        let r = compare_one("y", "fp16", &ONE, &t(&[inf, -inf, f32::NAN]), &t(&[inf, -inf, f32::NAN]));
        assert_eq!(r.failures, 0, "{r:?}");
        let r = compare_one("y", "fp16", &ONE, &t(&[65504.0]), &t(&[inf]));
        assert_eq!(r.failures, 1, "{r:?}");
    }

    #[test]
    fn integer_outputs_allow_half_a_step_after_saturation() {
        let r = compare_one("y", "uint8", &ONE, &t(&[255.0, 0.0, 3.0]), &t(&[300.0, -4.0, 3.49]));
        assert_eq!(r.failures, 0, "{r:?}");
        let r = compare_one("y", "uint8", &ONE, &t(&[3.0]), &t(&[3.9]));
        assert_eq!(r.failures, 1, "truncation is not rounding: {r:?}");
    }

    #[test]
    fn stores_as_the_engine_does() {
        assert_eq!(store("uint8", 2.5), 2.0);
        assert_eq!(store("uint8", -3.0), 0.0);
        assert_eq!(store("int8", 200.0), 127.0);
        assert_eq!(store("fp16", 1.0 + 1.0 / 4096.0), 1.0);
    }

    #[test]
    fn random_eight_bit_inputs_cover_their_type() {
        let specs = [
            InputSpec::fixed("b", &[1, 1, 64, 4], "bool"),
            InputSpec::fixed("u", &[1, 1, 64, 4], "uint8"),
            InputSpec::fixed("i", &[1, 1, 64, 4], "int8"),
        ];
        let a = random_inputs(&specs, 3, -2.0, 2.0);
        for (k, lo, hi) in [("b", 0.0, 1.0), ("u", 0.0, 255.0), ("i", -128.0, 127.0)] {
            let d = &a[k].data;
            assert!(d.iter().all(|v| v.fract() == 0.0 && (lo..=hi).contains(v)), "{k}: {d:?}");
            let (min, max) = d.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            // 256 draws reach both ends of the type's range (within a tenth of it).
            assert!(min <= lo + (hi - lo) / 10.0 && max >= hi - (hi - lo) / 10.0, "{k}: {min}..{max}");
        }
        assert_eq!(store("bool", 1.0), 1.0);
    }

    #[test]
    fn random_inputs_are_seeded_and_in_range() {
        let specs = [InputSpec::fixed("x", &[1, 3, 2, 2], "fp16")];
        let a = random_inputs(&specs, 7, -2.0, 2.0);
        assert_eq!(a, random_inputs(&specs, 7, -2.0, 2.0));
        assert_ne!(a, random_inputs(&specs, 8, -2.0, 2.0));
        assert_eq!(a["x"].shape, vec![1, 3, 2, 2]);
        assert!(a["x"].data.iter().all(|v| (-2.0..=2.0).contains(v) && fp16(*v) == *v));
    }
}
