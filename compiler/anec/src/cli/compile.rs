//! `anec compile`: load, compile, and write the program atomically into the output directory.

use super::Emit;
use anec::{Error, Options, Target};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// File name of the program written into the output directory: the input's stem.
fn output_name(input: &Path, ext: &str) -> String {
    let stem = input.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    format!("{stem}.{ext}")
}

/// Runs `anec compile`.
pub fn run(input: &Path, target: &str, out_dir: &Path, emit: Emit) -> Result<ExitCode, Error> {
    let target = Target::parse(target)?;
    let ext = if emit == Emit::Anec { "anec" } else { "hwx" };
    let out_path = out_dir.join(output_name(input, ext));
    let mut opts = Options::new(target);
    opts.banner_args = vec![format!("-i {}", input.display()), format!("-o {}", out_path.display())];
    if emit == Emit::AnecIr {
        let module = anec::load(input)?;
        let text = anec_ir::print_module(&module);
        std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::io("<stdout>", e))?;
        return Ok(ExitCode::SUCCESS);
    }
    let compiled = anec::compile_file(input, &opts)?;
    let bytes = match emit {
        Emit::Anec => compiled.anec_bytes()?,
        _ => compiled.hwx_bytes()?,
    };
    anec::write_atomically(&out_path, &bytes)?;
    Ok(ExitCode::SUCCESS)
}
