//! `anec run MODEL [--function NAME] --input NAME=FILE.npy ... --output-dir DIR`: evaluate a
//! model with the reference interpreter (f32) and write one `NAME.npy` per output.
//!
//! Netplists and `.mlir` files are interpreted as the anec dialect the compiler reads
//! (verified first); MIL models (`.mil`, `.mlmodelc`, `.mlpackage`) as MIL, function
//! `--function`, with MIL shapes.

use anec::run::{bind_inputs, mil_inputs, module_inputs, write_outputs};
use anec::{Error, InputKind};
use anec_tools::reference::{run_mil, run_module};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs `anec run`.
pub fn run(model: &Path, function: &str, inputs: &[(String, PathBuf)], output_dir: &Path) -> Result<ExitCode, Error> {
    let file = model.display().to_string();
    let outputs = match InputKind::of(model)? {
        InputKind::Mil => {
            let mil = anec::load_mil(model)?;
            let bound = bind_inputs(&file, &mil_inputs(&mil, function)?, inputs)?;
            run_mil(&mil, function, &bound).map_err(|source| Error::Reference { file, source })?
        }
        InputKind::Netplist | InputKind::AnecIr => {
            let module = anec::load(model)?;
            let valid =
                anec_passes::validate(module).map_err(|source| Error::Invalid { file: file.clone(), source })?;
            let bound = bind_inputs(&file, &module_inputs(valid.module()), inputs)?;
            run_module(valid.module(), &bound).map_err(|source| Error::Reference { file, source })?
        }
    };
    write_outputs(output_dir, &outputs, anec_tools::npy::NpyDtype::F32)?;
    Ok(ExitCode::SUCCESS)
}
