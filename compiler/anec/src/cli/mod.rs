//! Command-line parsing and dispatch to one file per subcommand.

mod compile;
mod inspect;

use anec::Error;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// The anec compiler for the Apple Neural Engine.
#[derive(Debug, Parser)]
#[command(name = "anec", version, about)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

/// What `--emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The `.hwx` program (default).
    Hwx,
    /// The Asahi Linux `.anec` program.
    Anec,
    /// The anec dialect in MLIR generic syntax, on standard output.
    AnecIr,
    /// The MIL program as coremlc writes `model.mil`, on standard output (MIL inputs).
    Mil,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compile a model (model.mil, .mlmodelc, .mlpackage, net.plist or .mlir) into a program.
    Compile {
        /// The model file.
        input: PathBuf,
        /// Target chip (h13g = M1).
        #[arg(short = 't', long = "target", default_value = "h13g")]
        target: String,
        /// Output directory.
        #[arg(short = 'o', long = "output", default_value = "out")]
        output: PathBuf,
        /// What to emit.
        #[arg(long, value_enum, default_value = "hwx")]
        emit: Emit,
        /// The MIL function to compile.
        #[arg(long, default_value = anec::DEFAULT_FUNCTION)]
        function: String,
    },
    /// Print every field of a .hwx or .anec program.
    Dump {
        /// The program file.
        file: PathBuf,
    },
    /// Compare two programs field by field; exit 1 when they differ, 2 on error.
    ///
    /// The LC_IDENT banner and the hash part of `K<sha256>` weight-symbol names identify
    /// the compiler and its hashing, not the program: their differences are reported as a
    /// note unless --strict makes them count.
    Diff {
        /// First program.
        a: PathBuf,
        /// Second program.
        b: PathBuf,
        /// Count banner and symbol-hash differences too.
        #[arg(long)]
        strict: bool,
    },
}

/// Runs the parsed command.
pub fn run(args: Args) -> Result<ExitCode, Error> {
    match args.command {
        Command::Compile { input, target, output, emit, function } => {
            compile::run(&compile::Request { input, target, output, emit, function })
        }
        Command::Dump { file } => inspect::dump(&file),
        Command::Diff { a, b, strict } => inspect::diff(&a, &b, strict),
    }
}

/// Exit status for an error (1 for everything; `diff` reserves 1 for "different").
pub fn exit_code_for_error(_e: &Error) -> u8 {
    1
}
