//! Where a compiled program's file lives between the writer and its destination.
//!
//! A small program is laid out in memory. A large one is written piece by piece
//! ([`anec_codegen::HwxPieces`]: the head, the constants, the closing zeros) to a
//! temporary file (in the output directory when the caller names it,
//! [`Options::stage_dir`](crate::Options::stage_dir)), which is then mapped read-only:
//! the verifier and the program's model read the file itself, so the program is never
//! held twice, and [`Staged::persist`] moves it into place with a rename. The temporary
//! file is deleted if nothing persists it.

use crate::output::{temporary_in, write_atomically};
use crate::Error;
use anec_codegen::HwxPieces;
use anec_ir::mil::SharedBytes;
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Programs at least this large are written to a temporary file, not laid out in memory.
pub const STAGE_ON_DISK: u64 = 1 << 20;

/// A program file, written.
#[derive(Clone)]
pub struct Staged {
    /// Its bytes (a map of the temporary file, or memory).
    bytes: SharedBytes,
    /// The temporary file, when there is one.
    temp: Option<Arc<tempfile::TempPath>>,
}

impl fmt::Debug for Staged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = if self.temp.is_some() { "a temporary file" } else { "memory" };
        write!(f, "Staged({} bytes in {place})", self.bytes.len())
    }
}

impl PartialEq for Staged {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Staged {
    /// Writes `pieces`: in memory below [`STAGE_ON_DISK`] bytes, else to a temporary file
    /// in `dir` (the system's temporary directory when `None`). `file` names the input in
    /// errors.
    pub fn write(pieces: &HwxPieces<'_>, dir: Option<&Path>) -> Result<Staged, Error> {
        if pieces.len() < STAGE_ON_DISK {
            let mut v = Vec::with_capacity(usize::try_from(pieces.len()).unwrap_or(0));
            pieces.write_to(&mut v).map_err(|e| Error::io("<memory>", e))?;
            return Ok(Staged { bytes: SharedBytes::from_vec(v), temp: None });
        }
        let dir = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let mut tmp = temporary_in(&dir)?;
        let path = tmp.path().to_path_buf();
        let mut w = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        pieces.write_to(&mut w).and_then(|()| w.flush()).map_err(|e| Error::io(&path, e))?;
        drop(w);
        let bytes = anec_ir::mil::map_file(tmp.as_file()).map_err(|e| Error::io(&path, e))?;
        Ok(Staged { bytes, temp: Some(Arc::new(tmp.into_temp_path())) })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &SharedBytes {
        &self.bytes
    }

    /// Puts the file at `path` (atomically): a rename of the temporary file when it is
    /// this program's only handle and on the same file system, else a copy.
    pub fn persist(self, path: &Path) -> Result<(), Error> {
        let Some(temp) = self.temp.and_then(Arc::into_inner) else {
            return write_atomically(path, &self.bytes);
        };
        match temp.persist(path) {
            Ok(()) => Ok(()),
            // Another file system (EXDEV) or the like: copy, and let the temporary go.
            Err(_) => write_atomically(path, &self.bytes),
        }
    }
}
