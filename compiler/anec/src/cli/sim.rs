//! `anec sim PROGRAM.hwx --input NAME=FILE.npy ... --output-dir DIR`: run a compiled program
//! on the register-level simulator and write one `NAME.npy` per output.

use anec::run::{bind_inputs, write_outputs, InputSpec};
use anec::Error;
use anec_tools::SimProgram;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `anec sim`.
pub fn run(program: &Path, inputs: &[(String, PathBuf)], output_dir: &Path) -> Result<ExitCode, Error> {
    let file = program.display().to_string();
    let bytes = std::fs::read(program).map_err(|e| Error::io(program, e))?;
    let sim = SimProgram::load(&bytes).map_err(|source| Error::Sim { file: file.clone(), source })?;
    let specs: Vec<InputSpec> = sim.inputs().iter().map(|s| InputSpec::fixed(&s.key, &s.shape, &s.dtype)).collect();
    let bound = bind_inputs(&file, &specs, inputs)?;
    let outputs = sim.run(&bound).map_err(|source| Error::Sim { file, source })?;
    write_outputs(output_dir, &outputs, anec_tools::npy::NpyDtype::F16)?;
    Ok(ExitCode::SUCCESS)
}
