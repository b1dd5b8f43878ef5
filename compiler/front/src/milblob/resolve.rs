//! Resolves every `BLOBFILE` value of a program into a [`BlobTable`], checking each one
//! against its file: the path stays in the model folder, the file is MILBlob v2, a record
//! with the right sentinel sits at the offset, its dtype is the declared element type, its
//! size is what the declared shape needs, and the data lies inside the file.
//!
//! Errors are [`Diagnostic`]s naming the constant (its `name` attribute, else its result
//! variable) and, for text input, pointing at the `BLOBFILE` value.

use super::{packed_size, resolve_blob_path, BlobFile, BlobRecord};
use anec_ir::mil::print::write_type;
use anec_ir::mil::{Arg, BlobData, BlobKey, BlobTable, NamedArg, Program, Stmt, Type, Value, ValueData};
use anec_ir::Diagnostic;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The file a program was read from, for diagnostics.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The file as the user named it.
    pub file: String,
    /// Its text when it is a `model.mil` (spans index into it); `None` for protobuf.
    pub text: Option<Arc<str>>,
}

/// Reads every blob `program` references, resolving `@model_path` to `model_dir`.
///
/// All problems are reported (one per constant; a weight file that cannot be opened is
/// reported once, at its first use).
pub fn resolve_blobs(program: &Program, model_dir: &Path, src: &SourceFile) -> Result<BlobTable, Vec<Diagnostic>> {
    let mut r = Resolver { dir: model_dir, src, files: HashMap::new(), table: BlobTable::new(), errors: Vec::new() };
    r.named_args(&program.attrs, "program attribute");
    for f in &program.functions {
        r.named_args(&f.attrs, "function attribute");
        for s in &f.body {
            let owner = format!("const `{}`", const_name(s));
            r.args(s.inputs.iter().chain(&s.attrs).map(|a| &a.value), &owner);
        }
    }
    if r.errors.is_empty() {
        Ok(r.table)
    } else {
        Err(r.errors)
    }
}

/// What names a statement in messages: its `name` attribute, else its first result.
fn const_name(s: &Stmt) -> &str {
    s.name_attr().or_else(|| s.outputs.first().map(|p| p.name.name.as_str())).unwrap_or(&s.op.name)
}

struct Resolver<'a> {
    dir: &'a Path,
    src: &'a SourceFile,
    /// Opened files by written path; `None` when opening failed (already reported).
    files: HashMap<String, Option<BlobFile>>,
    table: BlobTable,
    errors: Vec<Diagnostic>,
}

impl Resolver<'_> {
    fn named_args(&mut self, args: &[NamedArg], what: &str) {
        for a in args {
            let owner = format!("{what} `{}`", a.name.name);
            self.args(std::iter::once(&a.value), &owner);
        }
    }

    fn args<'v>(&mut self, args: impl Iterator<Item = &'v Arg>, owner: &str) {
        for a in args {
            match a {
                Arg::Name(_) => {}
                Arg::Value(v) => self.value(v, owner),
                Arg::Tuple(items, _) => self.args(items.iter(), owner),
            }
        }
    }

    fn value(&mut self, v: &Value, owner: &str) {
        if !matches!(v.data, ValueData::BlobFile { .. }) {
            return;
        }
        if let Err(message) = self.blob(v, owner) {
            let d = Diagnostic::new(&self.src.file, self.src.text.clone(), v.span, message);
            self.errors.push(d.with_label("this weight"));
        }
    }

    /// Checks one `BLOBFILE` value and records its data; `Err` carries the message.
    fn blob(&mut self, v: &Value, owner: &str) -> Result<(), String> {
        let Some(key) = v.data.blob_key() else {
            return Err(format!("{owner}: BLOBFILE needs a string path and a non-negative integer offset"));
        };
        let Some(file) = self.file(&key.path, owner)? else {
            return Ok(());
        };
        let rec = file.record(key.offset).map_err(|e| format!("{owner}: {}: {e}", key.path))?;
        check_record(&v.ty, &rec).map_err(|e| format!("{owner}: {}: {e}", key.path))?;
        self.table
            .insert(BlobKey { path: key.path, offset: key.offset }, BlobData { dtype: rec.dtype, bytes: rec.bytes });
        Ok(())
    }

    /// The opened file for a written path; `Ok(None)` when it failed before.
    fn file(&mut self, written: &str, owner: &str) -> Result<Option<BlobFile>, String> {
        if let Some(f) = self.files.get(written) {
            return Ok(f.clone());
        }
        self.files.insert(written.to_string(), None);
        let path =
            resolve_blob_path(written, self.dir).map_err(|e| format!("{owner}: weight path {written:?}: {e}"))?;
        let file = BlobFile::open(&path).map_err(|e| format!("{owner}: weight file {}: {e}", path.display()))?;
        self.files.insert(written.to_string(), Some(file.clone()));
        Ok(Some(file))
    }
}

/// The record holds what the declared type says: same element type, exact byte size.
fn check_record(ty: &Type, rec: &BlobRecord) -> Result<(), String> {
    let declared = ty.dtype().ok_or_else(|| format!("{} is not a tensor type", type_text(ty)))?;
    if declared != rec.dtype {
        return Err(format!(
            "the blob at offset {} holds {} data but the value is declared {}",
            rec.offset,
            rec.dtype,
            type_text(ty)
        ));
    }
    let elements = ty.elements().ok_or_else(|| format!("{} has no static shape", type_text(ty)))?;
    let need = packed_size(declared, elements).unwrap_or(u64::MAX);
    if rec.size != need {
        return Err(format!(
            "the blob at offset {} holds {} bytes but {} needs {need}",
            rec.offset,
            rec.size,
            type_text(ty)
        ));
    }
    Ok(())
}

fn type_text(ty: &Type) -> String {
    let mut s = String::new();
    write_type(&mut s, ty);
    s
}
