//! Writing outputs so that nothing half-written is ever left on disk: bytes go to a
//! temporary file in the destination directory, which is then renamed into place. The
//! file gets the permissions of any new file (0666 less the umask), not the temporary
//! file's private 0600.

use crate::error::Error;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (temporary file + rename).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically_with(path, |f| f.write_all(bytes))
}

/// Writes what `write` puts in the file to `path` atomically (temporary file + rename):
/// for outputs written piece by piece.
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut File) -> io::Result<()>) -> Result<(), Error> {
    let mut tmp = temporary_in(&directory_of(path))?;
    write(tmp.as_file_mut()).map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// The directory `path` goes in (`.` for a bare file name), created if missing.
pub(crate) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A new temporary file in `dir` (created if missing), deleted unless persisted.
pub(crate) fn temporary_in(dir: &Path) -> Result<tempfile::NamedTempFile, Error> {
    if dir.exists() && !dir.is_dir() {
        let e = io::Error::new(io::ErrorKind::NotADirectory, "the output directory is a file, not a directory");
        return Err(Error::io(dir, e));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut b = tempfile::Builder::new();
    b.prefix(".anec-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir).map_err(|e| Error::io(dir, e))
}
