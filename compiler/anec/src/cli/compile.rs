//! `anec compile`: load, compile, and write the program atomically into the output directory.

use super::Emit;
use anec::bundle::ProgramForm;
use anec::{Error, InputKind, Options};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `anec compile` was asked to do.
#[derive(Debug)]
pub struct Request {
    /// The model path.
    pub input: PathBuf,
    /// Target name as given.
    pub target: String,
    /// Output directory.
    pub output: PathBuf,
    /// What to write.
    pub emit: Emit,
    /// MIL function to compile.
    pub function: String,
    /// Which generation of Apple's compiler the program follows.
    pub compat: anec::Compat,
    /// Whether rejected layers may run on the CPU between engine segments.
    pub cpu_fallback: bool,
    /// The compile cache's directory (`--cache-dir`), if any.
    pub cache_dir: Option<PathBuf>,
    /// No progress line (`--quiet`).
    pub quiet: bool,
}

/// File name of the program written into the output directory: the input's stem.
fn output_name(input: &Path, ext: &str) -> String {
    let stem = input.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    format!("{stem}.{ext}")
}

/// Runs `anec compile`.
pub fn run(req: &Request) -> Result<ExitCode, Error> {
    let chip = anec_passes::target::lookup(&req.target).map_err(Error::UnknownChip)?;
    let ext = if req.emit == Emit::Anec { "anec" } else { "hwx" };
    let out_path = req.output.join(output_name(&req.input, ext));
    let Some(target) = anec::code_generator(chip) else { return validate_only(req, chip) };
    let mut opts = Options::new(target);
    opts.function.clone_from(&req.function);
    opts.compat = req.compat;
    opts.banner_args = vec![format!("-i {}", req.input.display()), format!("-o {}", out_path.display())];
    opts.stage_dir = Some(req.output.clone());
    match req.emit {
        Emit::AnecIr => {
            let module = anec::load_function(&req.input, &req.function)?;
            return print_stdout(&anec_ir::print_module(&module));
        }
        Emit::Mil => return print_stdout(&mil_text(&req.input)?),
        Emit::Bundle => return bundle(req, &opts, ProgramForm::Hwx),
        Emit::Anec if req.cpu_fallback => return bundle(req, &opts, ProgramForm::Anec),
        Emit::Hwx if req.cpu_fallback => return Err(Error::FallbackNeedsSegments),
        Emit::Hwx | Emit::Anec => {}
    }
    opts.route = anec::route_of(InputKind::of(&req.input)?);
    let Some(dir) = &req.cache_dir else {
        program(req, &opts)?.persist(&out_path)?;
        return Ok(ExitCode::SUCCESS);
    };
    // The cache: a stored program is written as it is; else compile and store.
    let cache = anec::cache::Cache::new(dir);
    let key = anec::cache::key(&req.input, &opts, ext)?;
    if let Some(entry) = cache.get(&key) {
        entry.place_at(&out_path)?;
        return Ok(ExitCode::SUCCESS);
    }
    let p = program(req, &opts)?;
    cache.put(&key, p.bytes())?;
    p.persist(&out_path)?;
    Ok(ExitCode::SUCCESS)
}

/// The program file `--emit hwx` or `--emit anec` writes.
enum Program {
    /// The compiled program (its `.hwx` file is in it).
    Hwx(Box<anec::Compiled>),
    /// The Asahi form.
    Anec(Vec<u8>),
}

impl Program {
    fn bytes(&self) -> &[u8] {
        match self {
            Program::Hwx(c) => c.hwx_file(),
            Program::Anec(b) => b,
        }
    }

    /// Puts the program at `path`, atomically (a rename when it was written beside it).
    fn persist(self, path: &Path) -> Result<(), Error> {
        match self {
            Program::Hwx(c) => c.persist(path),
            Program::Anec(b) => anec::write_atomically(path, &b),
        }
    }
}

/// Compiles the program `--emit hwx` or `--emit anec` writes.
fn program(req: &Request, opts: &Options) -> Result<Program, Error> {
    let bar = super::progress::Bar::new(super::progress::Bar::wanted(req.quiet));
    let compiled = anec::compile_file_with(&req.input, opts, &bar)?;
    match req.emit {
        Emit::Anec => Ok(Program::Anec(compiled.anec_bytes()?)),
        _ => Ok(Program::Hwx(Box::new(compiled))),
    }
}

/// `--emit bundle` (the `.e5` and every program) or `--emit anec` with CPU fallback (one
/// `.anec` per engine segment).
fn bundle(req: &Request, opts: &Options, form: ProgramForm) -> Result<ExitCode, Error> {
    let bundle = anec::compile_bundle(&req.input, opts, req.cpu_fallback)?;
    let stem = req.input.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    bundle.write(&req.output, stem, form)?;
    Ok(ExitCode::SUCCESS)
}

/// For a chip without a code generator: emits what needs none, else runs the validators
/// and stops (a rejection lists the layers; otherwise "no code generator").
fn validate_only(req: &Request, chip: anec_passes::target::Target) -> Result<ExitCode, Error> {
    if req.emit == Emit::Mil {
        return print_stdout(&mil_text(&req.input)?);
    }
    let module = anec::load_function(&req.input, &req.function)?;
    if req.emit == Emit::AnecIr {
        return print_stdout(&anec_ir::print_module(&module));
    }
    let file = req.input.display().to_string();
    anec::validate_for(module, &file, chip, anec::route_of(InputKind::of(&req.input)?))?;
    Err(Error::NoCodeGenerator { file, target: chip.name().to_string() })
}

/// The MIL program of a MIL input, printed in coremlc's layout.
fn mil_text(input: &Path) -> Result<String, Error> {
    if InputKind::of(input)? != InputKind::Mil {
        return Err(Error::EmitNeedsMil(input.to_path_buf()));
    }
    let model = anec::load_mil(input)?;
    Ok(anec_ir::mil::print::print_program(&model.program))
}

fn print_stdout(text: &str) -> Result<ExitCode, Error> {
    std::io::stdout().write_all(text.as_bytes()).map_err(|e| Error::io("<stdout>", e))?;
    Ok(ExitCode::SUCCESS)
}
