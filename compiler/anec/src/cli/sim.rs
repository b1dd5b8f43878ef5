//! `anec sim PROGRAM.hwx --input NAME=FILE.npy ... --output-dir DIR`: run a compiled program
//! on the register-level simulator and write one `NAME.npy` per output. On a bundle's
//! `.e5`, run one function's operations in order (`anec_tools::bundle`).

use anec::run::{bind_inputs, write_outputs, InputSpec};
use anec::Error;
use anec_tools::bundle::{function_inputs, function_names, run_bundle};
use anec_tools::SimProgram;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `anec sim`.
pub fn run(
    program: &Path,
    function: Option<&str>,
    inputs: &[(String, PathBuf)],
    output_dir: &Path,
) -> Result<ExitCode, Error> {
    let file = program.display().to_string();
    let bytes = std::fs::read(program).map_err(|e| Error::io(program, e))?;
    if program.extension().is_some_and(|e| e == "e5") {
        return bundle(program, &bytes, function, inputs, output_dir);
    }
    let sim = SimProgram::load(&bytes).map_err(|source| Error::Sim { file: file.clone(), source })?;
    let specs: Vec<InputSpec> = sim.inputs().iter().map(|s| InputSpec::fixed(&s.key, &s.shape, &s.dtype)).collect();
    let bound = bind_inputs(&file, &specs, inputs)?;
    let outputs = sim.run(&bound).map_err(|source| Error::Sim { file, source })?;
    write_outputs(output_dir, &outputs, anec_tools::npy::NpyDtype::F16)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs function `function` (else the first) of the bundle whose `.e5` is at `path`.
fn bundle(
    path: &Path,
    bytes: &[u8],
    function: Option<&str>,
    inputs: &[(String, PathBuf)],
    output_dir: &Path,
) -> Result<ExitCode, Error> {
    let file = path.display().to_string();
    let e5 = anec_codegen::read_e5(bytes).map_err(|source| Error::Codegen { file: file.clone(), source })?;
    let fail = |message: String| Error::Bundle { file: file.clone(), message };
    let name = match function {
        Some(f) => f.to_string(),
        None => function_names(&e5).into_iter().next().ok_or_else(|| fail("the bundle has no function".into()))?,
    };
    let specs = function_inputs(&e5, &name).map_err(|e| fail(e.to_string()))?;
    let specs: Vec<InputSpec> = specs.iter().map(|(n, s)| InputSpec::fixed(n, s, "fp16")).collect();
    let bound = bind_inputs(&file, &specs, inputs)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let outputs = run_bundle(&e5, dir, &name, &bound).map_err(|e| fail(e.to_string()))?;
    write_outputs(output_dir, &outputs, anec_tools::npy::NpyDtype::F16)?;
    Ok(ExitCode::SUCCESS)
}
