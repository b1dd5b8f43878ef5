//! `anec check MODEL -t TARGET [--format text|json] [--function NAME]`: each layer's
//! verdict on the chip (runs on the engine, or the rule, the feature byte or limit with the
//! chip's value, and a suggestion), then a summary. Exit 0 when every layer runs on the
//! engine, 1 otherwise, 2 when the model cannot be read or the target is unknown.

use anec::Error;
use anec_passes::legalize::{render_json, render_text};
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The report's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One block per layer and a summary.
    Text,
    /// One JSON document: `{"target", "route", "layers": [...], "summary": {...}}`.
    Json,
}

/// What `anec check` was asked to do.
#[derive(Debug)]
pub struct Request {
    /// The model.
    pub model: PathBuf,
    /// The chip's name.
    pub target: String,
    /// The report's format.
    pub format: Format,
    /// The MIL function to check.
    pub function: String,
}

/// Runs `anec check`.
pub fn run(req: &Request) -> Result<ExitCode, Error> {
    let chip = anec_passes::target::lookup(&req.target).map_err(Error::UnknownChip)?;
    let report = anec::check::check_file(&req.model, &req.function, chip)?;
    let text = match req.format {
        Format::Text => render_text(&report),
        Format::Json => render_json(&report),
    };
    std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::io("<stdout>", e))?;
    Ok(if report.all_engine() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
