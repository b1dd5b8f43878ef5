//! Weight file resolution: the network's `Weights` array and reads of byte ranges from it.
//!
//! Files are resolved lazily: a file is opened only when a unit reads from it, so entries
//! naming files that do not exist are harmless unless used. Relative paths resolve against
//! the plist's directory; absolute paths are used as is. A read checks that
//! `offset + size` lies within the file before allocating, so a bad plist cannot make the
//! front end allocate more than the file holds.

use super::super::reader::{Dict, Result};
use crate::error::{one_line, FrontError};
use anec_ir::{Blob, DType};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The network's weight files, as listed in its `Weights` array.
#[derive(Debug)]
pub(crate) struct WeightFiles {
    entries: Vec<String>,
    base_dir: PathBuf,
}

/// One read: which file (`index_key` in the params names the `Weights` index), where
/// (`offset_key`), how many elements of which type.
pub(crate) struct Request {
    /// Key holding the index (`KernelIndex`, `BiasIndex`, ...), for messages.
    pub index_key: &'static str,
    /// Index into `Weights`.
    pub index: i64,
    /// Key holding the byte offset (`KernelOffset`, ...), for messages.
    pub offset_key: &'static str,
    /// Byte offset into the file.
    pub offset: u64,
    /// Number of elements.
    pub count: u64,
    /// Element type.
    pub dtype: DType,
}

impl WeightFiles {
    /// The files of a `Weights` array, relative ones resolving against `base_dir`.
    pub(crate) fn new(entries: Vec<&str>, base_dir: &Path) -> Self {
        WeightFiles { entries: entries.into_iter().map(String::from).collect(), base_dir: base_dir.to_path_buf() }
    }

    /// Reads the elements `req` asks for; `params` is the dictionary holding the keys, used
    /// for error messages.
    pub(crate) fn read(&self, params: &Dict<'_>, req: &Request) -> Result<Blob> {
        let (index, written) = self.entry(params, req)?;
        let size = req
            .count
            .checked_mul(req.dtype.size() as u64)
            .ok_or_else(|| params.bad(req.offset_key, "weight size overflows"))?;
        let file_error = |message: String| FrontError::MissingWeightFile {
            site: Box::new(params.site().clone()),
            index,
            path: written.into(),
            message,
        };
        let mut file =
            File::open(self.resolve(written)).map_err(|e| file_error(format!("cannot be opened: {}", one_line(e))))?;
        let len = file.metadata().map_err(|e| file_error(format!("cannot be read: {}", one_line(e))))?.len();
        let end = req.offset.checked_add(size);
        if !matches!(end, Some(end) if end <= len) {
            return Err(FrontError::WeightOutOfRange {
                site: Box::new(params.site().clone()),
                key: req.offset_key.into(),
                within: params.within(),
                path: written.into(),
                offset: req.offset,
                size,
                len,
            });
        }
        let size = usize::try_from(size).map_err(|_| params.bad(req.offset_key, "weight size too large"))?;
        let mut bytes = vec![0u8; size];
        file.seek(SeekFrom::Start(req.offset))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(|e| file_error(format!("cannot be read: {}", one_line(e))))?;
        Ok(Blob { dtype: req.dtype, bytes: bytes.into() })
    }

    /// The `Weights` entry a request names, with its index.
    fn entry(&self, params: &Dict<'_>, req: &Request) -> Result<(usize, &str)> {
        let found = usize::try_from(req.index).ok().and_then(|i| self.entries.get(i).map(|s| (i, s.as_str())));
        found.ok_or_else(|| {
            params.bad(
                req.index_key,
                format!(
                    "index {} is out of range: the network lists {} weight file(s) in Weights",
                    req.index,
                    self.entries.len()
                ),
            )
        })
    }

    /// The path of a `Weights` entry: absolute as is, relative to the plist's directory.
    fn resolve(&self, written: &str) -> PathBuf {
        let p = Path::new(written);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }
}
