//! The `anec` command-line tool: `compile`, `dump`, `diff`.
//!
//! Errors print as one line on stderr and exit 1; `diff` exits 1 when the programs differ
//! and 2 on error. Rendering of errors happens here only; the libraries never print.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(cli::exit_code_for_error(&e))
        }
    }
}
