//! Loads a MIL model from any of its forms into an [`anec_ir::mil::MilModel`]: the
//! program plus every weight it references, resolved and checked.
//!
//! | path | program | `@model_path` |
//! |---|---|---|
//! | `x.mil` (any file not ending in `.mlmodel`) | the text | the file's folder |
//! | `x.mlmodelc/` (a folder with `model.mil`) | `model.mil` | the folder |
//! | `x.mlpackage/` (a folder with `Manifest.json`) | the root protobuf model | `Data/com.apple.CoreML` |
//! | `model.mlmodel` | the protobuf model | the file's folder |

use crate::mil::parse_program;
use crate::milblob::{resolve_blobs, SourceFile};
use crate::mlpackage::{manifest::MANIFEST, read_mlpackage, read_model_file};
use anec_ir::mil::{MilModel, Program, Span};
use anec_ir::Diagnostic;
use std::path::Path;
use std::sync::Arc;

/// The text file inside a compiled `.mlmodelc` folder.
const MODEL_MIL: &str = "model.mil";

/// Reads the model at `path` (see the module header for the forms) and its weights.
pub fn load_mil(path: &Path) -> Result<MilModel, Vec<Diagnostic>> {
    let err = |msg: String| vec![Diagnostic::new(path.display().to_string(), None, Span::NONE, msg)];
    let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read the model: {e}")))?;
    if meta.is_dir() {
        if path.extension().is_some_and(|e| e == "mlpackage") || path.join(MANIFEST).is_file() {
            return load_package(path);
        }
        if path.join(MODEL_MIL).is_file() {
            return load_text(&path.join(MODEL_MIL), path);
        }
        return Err(err(format!(
            "a folder that is neither a compiled model (no {MODEL_MIL}) nor an .mlpackage (no {MANIFEST})"
        )));
    }
    let dir = model_dir_of(path);
    if path.extension().is_some_and(|e| e == "mlmodel") {
        let program = read_model_file(path)?;
        return with_blobs(program, dir, path.display().to_string(), None);
    }
    load_text(path, dir)
}

/// The folder of a file (`.` for a bare file name).
fn model_dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn load_text(file: &Path, dir: &Path) -> Result<MilModel, Vec<Diagnostic>> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file)
        .map_err(|e| vec![Diagnostic::new(&name, None, Span::NONE, format!("cannot read the model: {e}"))])?;
    let program = parse_program(&text, &name)?;
    with_blobs(program, dir, name, Some(text))
}

fn load_package(pkg: &Path) -> Result<MilModel, Vec<Diagnostic>> {
    let p = read_mlpackage(pkg)?;
    let src = SourceFile { file: p.model_file.display().to_string(), text: None };
    let blobs = resolve_blobs(&p.program, &p.model_dir, &src)?;
    Ok(MilModel { program: p.program, blobs, file: pkg.display().to_string(), text: None })
}

fn with_blobs(program: Program, dir: &Path, file: String, text: Option<String>) -> Result<MilModel, Vec<Diagnostic>> {
    let src = SourceFile { file, text: text.as_deref().map(Arc::from) };
    let blobs = resolve_blobs(&program, dir, &src)?;
    Ok(MilModel { program, blobs, file: src.file, text })
}
