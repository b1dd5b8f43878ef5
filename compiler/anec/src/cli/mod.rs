//! Command-line parsing and dispatch to one file per subcommand.

mod check;
mod compile;
mod inspect;
mod progress;
mod run;
mod sim;

use anec::Error;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The anec compiler for the Apple Neural Engine.
#[derive(Debug, Parser)]
#[command(name = "anec", version, about, arg_required_else_help = true, args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Print a table instead of running a command: `target-list` (every chip) or
    /// `target-features` (the feature bytes, limits and hardware features of `-t TARGET`).
    #[arg(long, value_enum, value_name = "WHAT")]
    print: Option<Print>,
    /// The chip for `--print target-features`.
    #[arg(short = 't', long = "target", default_value = "h13g", requires = "print")]
    target: String,
}

/// What `--print` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Print {
    /// Every chip: name, products, generation, family, cpusubtype, ISA version.
    TargetList,
    /// One chip's feature bytes, limits and hardware features, each with its source.
    TargetFeatures,
}

/// What `--emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The `.hwx` program (default).
    Hwx,
    /// The Asahi Linux `.anec` program (one per engine segment with
    /// `--allow-cpu-fallback`).
    Anec,
    /// The program bundle: `<model>.e5` (the E5 dispatch descriptor) and the `.hwx`
    /// program of every engine segment of every function (docs/formats/bundle.md).
    Bundle,
    /// The anec dialect in MLIR generic syntax, on standard output.
    AnecIr,
    /// The MIL program as coremlc writes `model.mil`, on standard output (MIL inputs).
    Mil,
}

/// `--apple-compat`: the generation of Apple's compiler a program follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AppleCompat {
    /// Apple's current compiler (macOS 26): sparse register records.
    Current,
    /// Apple's zin_ane_compiler v4.2.1 (2020): dense task descriptors.
    #[value(name = "4.2")]
    V4_2,
}

impl AppleCompat {
    /// The backend's generation.
    pub fn compat(self) -> anec::Compat {
        match self {
            AppleCompat::Current => anec::Compat::Current,
            AppleCompat::V4_2 => anec::Compat::V4_2,
        }
    }
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
        /// The MIL function or netplist procedure to compile (`main`: a netplist's first).
        #[arg(long, default_value = anec::DEFAULT_FUNCTION)]
        function: String,
        /// Which generation of Apple's compiler the program follows: `current` (macOS 26:
        /// sparse register records, the default) or `4.2` (zin_ane_compiler v4.2.1: every
        /// register block written in full, the 0x274-byte TD).
        #[arg(long = "apple-compat", value_enum, default_value = "current")]
        apple_compat: AppleCompat,
        /// Run the layers the chip rejects on the CPU: the function is cut into engine
        /// segments around them, each a program of its own, and the `.e5` records each
        /// rejected layer as a CpuInference operation (MIL models; `--emit bundle` or
        /// `--emit anec`). Without it such a layer is an error.
        #[arg(long = "allow-cpu-fallback")]
        allow_cpu_fallback: bool,
        /// Keep compiled programs in DIR, keyed by the model's content, the options and
        /// the compiler version: the same compile again writes the stored program without
        /// compiling (`--emit hwx` and `--emit anec`). Off by default.
        #[arg(long = "cache-dir", value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// No progress line. (It shows, on a terminal, for a compile still running after
        /// a second: the phase and the time.)
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Report per layer whether a model runs on a chip's neural engine, and why not.
    ///
    /// A rejected layer names the rule, the feature byte or limit with the chip's value and
    /// a suggestion where one exists. Exit 0 when every layer runs on the engine, 1
    /// otherwise, 2 on a usage or read error.
    Check {
        /// The model file (model.mil, .mlmodelc, .mlpackage, net.plist or .mlir).
        model: PathBuf,
        /// Target chip (see `anec --print target-list`).
        #[arg(short = 't', long = "target", default_value = "h13g")]
        target: String,
        /// Report format.
        #[arg(long, value_enum, default_value = "text")]
        format: check::Format,
        /// The MIL function to check.
        #[arg(long, default_value = anec::DEFAULT_FUNCTION)]
        function: String,
    },
    /// Print every field of a .hwx or .anec program; with --plan, compile a model (nothing
    /// written) and print its memory plan.
    ///
    /// The plan lists every buffer the program binds (BAR, role, bytes, name) and every
    /// intermediate: where it lies, its bytes, and the layer and tasks that write it and
    /// that read it last. Intermediates whose lifetimes do not overlap share bytes.
    Dump {
        /// The program file, or with --plan the model file (model.mil, .mlmodelc,
        /// .mlpackage, net.plist or .mlir).
        file: PathBuf,
        /// Compile the model and print its memory plan instead.
        #[arg(long)]
        plan: bool,
        /// Target chip (with --plan).
        #[arg(short = 't', long = "target", default_value = "h13g")]
        target: String,
        /// The MIL function (with --plan).
        #[arg(long, default_value = anec::DEFAULT_FUNCTION)]
        function: String,
    },
    /// Compare two programs field by field; exit 1 when they differ, 2 on error.
    ///
    /// The LC_IDENT banner and the hash part of `K<hash>` weight-symbol names identify
    /// the compiler and its hashing, not the program: their differences are reported as a
    /// note unless --strict makes them count.
    ///
    /// With a decoded record of Apple's current compiler as the second file
    /// (`apple-h13-oracles/cases/NAME.json`), compares the program with it task by task:
    /// header words, every register word by field, record structure, tensor descriptors
    /// and the constant section's SHA-256.
    Diff {
        /// First program.
        a: PathBuf,
        /// Second program (.hwx or .anec), or a decoded Apple record (.json).
        b: PathBuf,
        /// Count banner and symbol-hash differences too.
        #[arg(long)]
        strict: bool,
    },
    /// Run a compiled program (.hwx) on the register-level simulator: one NAME.npy (fp16)
    /// per output, arrays in the program's [N, C, H, W] order ([N, C, D, H, W] when D > 1).
    Sim {
        /// The program (`.hwx`), or a bundle's `.e5` (its programs beside it): every
        /// operation of one function runs, programs on the simulator, CPU operations on
        /// the reference interpreter, with inputs and outputs in the model's shapes.
        program: PathBuf,
        /// The function of an `.e5` bundle to run (its first by default).
        #[arg(long)]
        function: Option<String>,
        /// An input: its name and an .npy file (float16 or float32); once per input.
        #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = anec::run::parse_input_arg)]
        inputs: Vec<(String, PathBuf)>,
        /// Directory for the output .npy files.
        #[arg(long = "output-dir", value_name = "DIR")]
        output_dir: PathBuf,
    },
    /// Evaluate a model with the reference interpreter (f32): one NAME.npy (fp16) per output.
    ///
    /// MIL models take and give MIL shapes; netplists and .mlir modules [N, C, H, W].
    Run {
        /// The model (model.mil, .mlmodelc, .mlpackage, net.plist or .mlir).
        model: PathBuf,
        /// The MIL function to run.
        #[arg(long, default_value = anec::DEFAULT_FUNCTION)]
        function: String,
        /// An input: its name and an .npy file (float16 or float32); once per input.
        #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = anec::run::parse_input_arg)]
        inputs: Vec<(String, PathBuf)>,
        /// Directory for the output .npy files.
        #[arg(long = "output-dir", value_name = "DIR")]
        output_dir: PathBuf,
    },
}

/// Runs the parsed command.
pub fn run(args: Args) -> Result<ExitCode, Error> {
    let Some(command) = args.command else { return print(args.print, &args.target) };
    match command {
        Command::Compile {
            input,
            target,
            output,
            emit,
            function,
            apple_compat,
            allow_cpu_fallback,
            cache_dir,
            quiet,
        } => compile::run(&compile::Request {
            input,
            target,
            output,
            emit,
            function,
            compat: apple_compat.compat(),
            cpu_fallback: allow_cpu_fallback,
            cache_dir,
            quiet,
        }),
        Command::Check { model, target, format, function } => {
            match check::run(&check::Request { model, target, format, function }) {
                Ok(code) => Ok(code),
                Err(e) => {
                    print_error(&e);
                    Ok(ExitCode::from(2))
                }
            }
        }
        Command::Dump { file, plan: false, .. } => inspect::dump(&file),
        Command::Dump { file, plan: true, target, function } => inspect::dump_plan(&file, &target, &function),
        Command::Diff { a, b, strict } => inspect::diff(&a, &b, strict),
        Command::Sim { program, function, inputs, output_dir } => {
            sim::run(&program, function.as_deref(), &inputs, &output_dir)
        }
        Command::Run { model, function, inputs, output_dir } => run::run(&model, &function, &inputs, &output_dir),
    }
}

/// `anec --print WHAT [-t TARGET]`.
fn print(what: Option<Print>, target: &str) -> Result<ExitCode, Error> {
    let text = match what {
        Some(Print::TargetList) | None => anec_passes::target::target_list_text(),
        Some(Print::TargetFeatures) => {
            let chip = anec_passes::target::lookup(target).map_err(Error::UnknownChip)?;
            anec_passes::target::target_features_text(chip)
        }
    };
    std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::io("<stdout>", e))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints an error on standard error: diagnostics with their source line and caret, the
/// others one `error:` line per line of the message.
pub fn print_error(e: &Error) {
    match e {
        Error::Diagnostics(ds) => eprint!("{}", anec::diagnostic::render_all(ds)),
        other => other.to_string().lines().for_each(|l| eprintln!("error: {l}")),
    }
}

/// Exit status for an error (1 for everything; `diff` reserves 1 for "different").
pub fn exit_code_for_error(e: &Error) -> u8 {
    match e {
        // A compiler bug, not the input's fault.
        Error::Unverified { .. } => INTERNAL_ERROR,
        _ => 1,
    }
}

/// Exit status of an internal compiler error (a program that fails verification).
const INTERNAL_ERROR: u8 = 101;

#[cfg(test)]
mod exit_tests {
    use super::*;

    #[test]
    fn a_program_failing_verification_exits_101_and_any_other_error_1() {
        let e = Error::Unverified { file: "m.mil".into(), layer: "conv".into(), reason: "TD 0: ...".into() };
        assert_eq!(exit_code_for_error(&e), 101);
        assert_eq!(exit_code_for_error(&Error::EmitNeedsMil("x.plist".into())), 1);
    }
}
