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

/// Runs `anec dump --plan`: compiles the model in memory (nothing written) and prints
/// its memory plan.
pub fn dump_plan(model: &Path, target: &str, function: &str) -> Result<ExitCode, Error> {
    let chip = anec_passes::target::lookup(target).map_err(Error::UnknownChip)?;
    let Some(target) = anec::code_generator(chip) else {
        return Err(Error::NoCodeGenerator { file: model.display().to_string(), target: chip.name().to_string() });
    };
    let mut opts = anec::Options::new(target);
    opts.function = function.to_string();
    let compiled = anec::compile_file(model, &opts)?;
    print(&compiled.plan.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `anec diff`: exit 0 when equal, 1 when different, 2 on error.
pub fn diff(a: &Path, b: &Path, strict: bool) -> Result<ExitCode, Error> {
    match diff_inner(a, b, strict) {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

fn diff_inner(a: &Path, b: &Path, strict: bool) -> Result<ExitCode, Error> {
    if b.extension().is_some_and(|e| e == "json") {
        return diff_record(a, b);
    }
    let (left, right) = (read(a)?, read(b)?);
    let tool_err = |source| Error::Tool { file: format!("{} vs {}", a.display(), b.display()), source };
    let all = diff_files_with(&left, &right, &DiffOptions::default()).map_err(tool_err)?;
    let counted = if strict {
        all.clone()
    } else {
        let opts = DiffOptions { ignore_ident: true, ignore_symbol_hashes: true };
        diff_files_with(&left, &right, &opts).map_err(tool_err)?
    };
    let mut text: String = counted.iter().map(|d| format!("{d}\n")).collect();
    let ignored = all.len().saturating_sub(counted.len());
    if ignored > 0 {
        text.push_str(&format!(
            "note: {ignored} difference(s) in the LC_IDENT banner (and the file offsets its length moves) or weight-symbol hashes not counted (use --strict)\n"
        ));
    }
    print(&text)?;
    Ok(if counted.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `anec diff ours.hwx case.json`: a program against a decoded record of Apple's current
/// compiler (`shared/fixtures/apple-h13-oracles/cases/`), each difference named by task
/// and register field (`TD 0 Common.Cfg.ShPref: 0x1 -> 0x4`, ours then Apple's).
fn diff_record(program: &Path, case: &Path) -> Result<ExitCode, Error> {
    let text = std::fs::read_to_string(case).map_err(|e| Error::io(case, e))?;
    let tool_err = |source| Error::Tool { file: format!("{} vs {}", program.display(), case.display()), source };
    let record = anec_tools::oracle::Record::parse(&text).map_err(tool_err)?;
    let c = anec_tools::oracle::compare_hwx(&read(program)?, &record).map_err(tool_err)?;
    let mut out: String = c.differences.iter().map(|d| format!("{d}\n")).collect();
    out.push_str(&format!(
        "tasks {} (Apple {}); header words equal {}/{}; register words equal {}/{}, {} written only by ours; constants {}; tensors {}\n",
        c.tasks.0,
        c.tasks.1,
        c.header_words.0,
        c.header_words.1,
        c.register_words.0,
        c.register_words.1,
        c.extra_words,
        if c.constants_equal { "equal" } else { "differ" },
        if c.tensors_equal { "equal" } else { "differ" },
    ));
    print(&out)?;
    Ok(if c.identical() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
