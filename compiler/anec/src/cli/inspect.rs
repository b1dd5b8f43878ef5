//! `anec dump` and `anec diff`.

use anec::Error;
use anec_tools::{diff_files_with, dump_file, DiffOptions};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

fn print(text: &str) -> Result<(), Error> {
    std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::io("<stdout>", e))
}

/// Runs `anec dump`.
pub fn dump(file: &Path) -> Result<ExitCode, Error> {
    let text = dump_file(&read(file)?).map_err(|source| Error::Tool { file: file.display().to_string(), source })?;
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `anec diff`: exit 0 when equal, 1 when different, 2 on error.
pub fn diff(a: &Path, b: &Path, ignore_ident: bool, ignore_symbol_hashes: bool) -> Result<ExitCode, Error> {
    let opts = DiffOptions { ignore_ident, ignore_symbol_hashes };
    let name = format!("{} vs {}", a.display(), b.display());
    let diffs = match diff_files_with(&read(a)?, &read(b)?, &opts) {
        Ok(d) => d,
        Err(source) => {
            let e = Error::Tool { file: name, source };
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut text = String::new();
    for d in &diffs {
        text.push_str(&format!("{d}\n"));
    }
    print(&text)?;
    Ok(if diffs.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
