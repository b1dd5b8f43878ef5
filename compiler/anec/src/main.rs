//! The `anec` command-line tool: `compile`, `check`, `dump`, `diff`, `sim`, `run`, and
//! `--print target-list` / `--print target-features -t TARGET`.
//!
//! Errors print on stderr and exit 1; `diff` exits 1 when the programs differ and 2 on
//! error. Errors with source positions (MIL) are rendered with the source line and a caret
//! (`anec::diagnostic`); the others print as one line. Rendering happens here only; the
//! libraries never print.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            cli::print_error(&e);
            ExitCode::from(cli::exit_code_for_error(&e))
        }
    }
}
