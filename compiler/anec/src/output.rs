//! Writing outputs so that nothing half-written is ever left on disk: bytes go to a
//! temporary file in the destination directory, which is then renamed into place.

use crate::error::Error;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file + rename).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}
