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
use anec_backend_h13::Deferred;
use anec_codegen::{hwx_pieces, Hwx, HwxPieces};
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

    /// Writes `hwx` with its `deferred` weight banks packed as they are written: in memory
    /// below [`STAGE_ON_DISK`] bytes, else into a temporary file bank by bank (each packed
    /// into a reused buffer, then written at its place), the symbols named and the head
    /// written last. `file` names the input in errors.
    pub fn write_deferred(hwx: &mut Hwx, deferred: &Deferred, dir: Option<&Path>, file: &str) -> Result<Staged, Error> {
        let codegen = |source| Error::Codegen { file: file.to_string(), source };
        if deferred.is_empty() {
            return Staged::write(&hwx_pieces(hwx).map_err(codegen)?, dir);
        }
        let (head_len, total) = {
            let p = hwx_pieces(hwx).map_err(codegen)?;
            (p.head.len(), p.len())
        };
        if total < STAGE_ON_DISK {
            let mut v = vec![0; usize::try_from(total).unwrap_or(0)];
            fill(&mut v, head_len, hwx, deferred, file)?;
            return Ok(Staged { bytes: SharedBytes::from_vec(v), temp: None });
        }
        let dir = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let tmp = temporary_in(&dir)?;
        let io = |e| Error::io(tmp.path(), e);
        tmp.as_file().set_len(total).map_err(io)?;
        write_banks(tmp.as_file(), head_len as u64, hwx, deferred, file).map_err(|e| e.at(tmp.path()))?;
        let head = hwx_pieces(hwx).map_err(codegen)?.head;
        if head.len() != head_len {
            return Err(codegen(anec_codegen::CodegenError::Invalid(
                "the head changed length when the weight symbols were named".into(),
            )));
        }
        write_at(tmp.as_file(), &head, 0).map_err(io)?;
        let bytes = anec_ir::mil::map_file(tmp.as_file()).map_err(io)?;
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

/// Fills the zero file `out`: the section's own bytes around the banks, the banks packed in
/// their places (their symbols named), then the head, laid out again with the names (its
/// length cannot change: every name has the same length).
fn fill(out: &mut [u8], head_len: usize, hwx: &mut Hwx, deferred: &Deferred, file: &str) -> Result<(), Error> {
    let internal = |reason: &str| Error::Codegen {
        file: file.to_string(),
        source: anec_codegen::CodegenError::Invalid(format!("the program file being written: {reason}")),
    };
    let consts = hwx.consts.clone();
    let (head, rest) = out.split_at_mut(head_len.min(out.len()));
    let section = rest.get_mut(..consts.len()).ok_or_else(|| internal("__const does not fit"))?;
    for gap in deferred.gaps(consts.len()) {
        if let (Some(dst), Some(src)) = (section.get_mut(gap.clone()), consts.get(gap)) {
            dst.copy_from_slice(src);
        }
    }
    deferred
        .fill(section, &mut hwx.const_symbols)
        .map_err(|source| Error::Backend { file: file.to_string(), source })?;
    let p = hwx_pieces(hwx).map_err(|source| Error::Codegen { file: file.to_string(), source })?;
    if p.head.len() != head.len() {
        return Err(internal("the head changed length when the weight symbols were named"));
    }
    head.copy_from_slice(&p.head);
    Ok(())
}

/// A failure of [`write_banks`]: the file's, or the packing's.
enum BankError {
    Io(std::io::Error),
    Other(Error),
}

impl BankError {
    fn at(self, path: &Path) -> Error {
        match self {
            BankError::Io(e) => Error::io(path, e),
            BankError::Other(e) => e,
        }
    }
}

/// Writes the `__const` section at `const_off` of the file: its own bytes around the banks,
/// then each bank as it is packed (its symbols named).
fn write_banks(
    f: &std::fs::File,
    const_off: u64,
    hwx: &mut Hwx,
    deferred: &Deferred,
    file: &str,
) -> Result<(), BankError> {
    let consts = hwx.consts.clone();
    for gap in deferred.gaps(consts.len()) {
        if let Some(bytes) = consts.get(gap.clone()) {
            write_at(f, bytes, const_off + gap.start as u64).map_err(BankError::Io)?;
        }
    }
    let mut failed = None;
    let packed =
        deferred.pack_each(&mut hwx.const_symbols, |at, bytes| match write_at(f, bytes, const_off + at as u64) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        });
    if let Some(e) = failed {
        return Err(BankError::Io(e));
    }
    packed.map_err(|source| BankError::Other(Error::Backend { file: file.to_string(), source }))
}

/// Writes `bytes` at `offset` of `f`.
fn write_at(f: &std::fs::File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(f, bytes, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = f;
        f.seek(SeekFrom::Start(offset))?;
        f.write_all(bytes)
    }
}
