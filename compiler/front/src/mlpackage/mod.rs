//! The `.mlpackage` front end: CoreML's package folder (what coremltools saves) read into
//! the same [`anec_ir::mil::Program`] the textual parser builds from `model.mil`.
//!
//! A package holds `Manifest.json`, whose root item is the protobuf `Model`
//! (`Data/com.apple.CoreML/model.mlmodel`), and the weights (`weights/weight.bin` next to
//! it, which `@model_path` names). The model must be an ML program (`mlProgram`); its MIL
//! protobuf converts to the tree exactly as coremlc writes the text (see `docs/mil.md` for
//! the layout rules), so printing a converted package gives coremlc's `model.mil`.
//!
//! Errors are [`Diagnostic`]s without a span (protobuf has no text) whose message names the
//! function and op. A damaged protobuf is an error, never a panic.

mod convert;
mod elements;
pub mod manifest;
pub mod proto;
mod types;
mod values;

pub use convert::TEXT_VERSION;

use anec_ir::mil::{Program, Span};
use anec_ir::Diagnostic;
use prost::Message;
use std::path::{Path, PathBuf};

/// A package read and converted.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// The ML program.
    pub program: Program,
    /// The root model file (`.../Data/com.apple.CoreML/model.mlmodel`).
    pub model_file: PathBuf,
    /// The folder `@model_path` stands for: the model file's folder.
    pub model_dir: PathBuf,
}

/// Reads the package folder `pkg` (manifest, then the root model).
pub fn read_mlpackage(pkg: &Path) -> Result<Package, Vec<Diagnostic>> {
    let manifest = pkg.join(manifest::MANIFEST);
    let err = |msg: String| vec![Diagnostic::new(manifest.display().to_string(), None, Span::NONE, msg)];
    let text = std::fs::read_to_string(&manifest).map_err(|e| err(format!("cannot read the package manifest: {e}")))?;
    let model_file = manifest::root_model(pkg, &text).map_err(err)?;
    let program = read_model_file(&model_file)?;
    let model_dir = model_file.parent().map_or_else(|| pkg.join("Data"), Path::to_path_buf);
    Ok(Package { program, model_file, model_dir })
}

/// Reads a protobuf `Model` file (`model.mlmodel`).
pub fn read_model_file(path: &Path) -> Result<Program, Vec<Diagnostic>> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| vec![Diagnostic::new(&file, None, Span::NONE, format!("cannot read the model: {e}"))])?;
    program_from_bytes(&bytes, &file)
}

/// Decodes a protobuf `Model` and converts its ML program in coremlc's current text
/// layout ([`TEXT_VERSION`]); `file` names it in errors.
pub fn program_from_bytes(bytes: &[u8], file: &str) -> Result<Program, Vec<Diagnostic>> {
    program_from_bytes_as(bytes, file, TEXT_VERSION)
}

/// As [`program_from_bytes`], for text version `version`: `"1.0"` writes rank-0 types as
/// `tensor<T, []>`, later versions as the short form `T`.
pub fn program_from_bytes_as(bytes: &[u8], file: &str, version: &str) -> Result<Program, Vec<Diagnostic>> {
    let err = |msg: String| Diagnostic::new(file, None, Span::NONE, msg);
    let model = proto::Model::decode(bytes).map_err(|e| vec![err(format!("not a CoreML model protobuf: {e}"))])?;
    match model.r#type {
        Some(proto::model::Type::MlProgram(p)) => {
            convert::program(&p, version).map_err(|errs| errs.into_iter().map(err).collect())
        }
        Some(other) => Err(vec![err(format!(
            "the model is a `{}` model (specification version {}), not an ML program; anec reads ML programs only",
            kind_name(&other),
            model.specification_version
        ))]),
        None => Err(vec![err("the model holds no model (no mlProgram or other model type)".into())]),
    }
}

/// The protobuf field name of a model kind, from its derived `Debug` (`NeuralNetwork(..)`).
fn kind_name(t: &proto::model::Type) -> String {
    let debug = format!("{t:?}");
    let variant = debug.split('(').next().unwrap_or("");
    let mut chars = variant.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}
