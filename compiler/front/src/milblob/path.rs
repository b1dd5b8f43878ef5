//! Where a `BLOBFILE` path points: `@model_path/...` resolved against the model folder,
//! refusing anything that leaves it (absolute paths, `..`, symbolic links pointing out).

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The prefix standing for the model folder.
const MODEL_PATH: &str = "@model_path";

/// Why a `BLOBFILE` path cannot be used.
#[derive(Debug)]
pub enum BlobPathError {
    /// The path is absolute.
    Absolute,
    /// The path has a `..` component.
    ParentDir,
    /// Nothing exists at the resolved path.
    Missing(PathBuf),
    /// The resolved path (through a symbolic link) lies outside the model folder.
    Escapes(PathBuf),
    /// The path or the model folder could not be resolved.
    Io(PathBuf, io::Error),
}

impl fmt::Display for BlobPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobPathError::Absolute => write!(f, "the path is absolute; it must lie inside the model folder"),
            BlobPathError::ParentDir => write!(f, "the path leaves the model folder (`..`)"),
            BlobPathError::Missing(p) => write!(f, "weight file {} does not exist", p.display()),
            BlobPathError::Escapes(p) => {
                write!(f, "the path leaves the model folder (it resolves to {})", p.display())
            }
            BlobPathError::Io(p, e) => write!(f, "cannot resolve {}: {e}", p.display()),
        }
    }
}

/// The file a `BLOBFILE` path names, resolved against `model_dir` (canonical, inside it).
///
/// `@model_path/weights/weight.bin` and `weights/weight.bin` both name
/// `model_dir/weights/weight.bin`.
pub fn resolve_blob_path(written: &str, model_dir: &Path) -> Result<PathBuf, BlobPathError> {
    let rel = match written.strip_prefix(MODEL_PATH) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => written,
    };
    let rel = Path::new(rel);
    if rel.is_absolute() || rel.has_root() {
        return Err(BlobPathError::Absolute);
    }
    for c in rel.components() {
        match c {
            Component::ParentDir => return Err(BlobPathError::ParentDir),
            Component::Prefix(_) | Component::RootDir => return Err(BlobPathError::Absolute),
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    let joined = model_dir.join(rel);
    let target = joined.canonicalize().map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => BlobPathError::Missing(joined.clone()),
        _ => BlobPathError::Io(joined.clone(), e),
    })?;
    let root = model_dir.canonicalize().map_err(|e| BlobPathError::Io(model_dir.to_path_buf(), e))?;
    if !target.starts_with(&root) {
        return Err(BlobPathError::Escapes(target));
    }
    Ok(target)
}
