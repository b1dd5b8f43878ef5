//! One MILBlob v2 file: the header check and the per-blob metadata records.
//!
//! The file's bytes live in one shared buffer (a memory map for files of at least
//! [`MMAP_THRESHOLD`] bytes, a vector below); every blob's data is a [`SharedBytes`] window
//! into it, so resolving a weight never copies it.

use super::dtype_from_code;
use anec_ir::mil::{ScalarType, SharedBytes};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Files at least this large are memory-mapped instead of read.
pub const MMAP_THRESHOLD: u64 = 1 << 20;

/// Size of the file header and of each metadata record.
const RECORD: u64 = 64;
/// The storage version this reader understands.
const VERSION: u32 = 2;
/// The first word of every metadata record.
const SENTINEL: u32 = 0xDEAD_BEEF;

/// An opened MILBlob v2 file.
#[derive(Clone)]
pub struct BlobFile {
    buf: SharedBytes,
    count: u32,
}

impl fmt::Debug for BlobFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobFile({} bytes, {} blobs)", self.len(), self.count)
    }
}

/// Why a file is not a readable MILBlob v2 file.
#[derive(Debug)]
pub enum BlobFileError {
    /// The file could not be opened or read.
    Io(io::Error),
    /// Shorter than the 64-byte header.
    TooShort(u64),
    /// The header's version word is not 2.
    Version(u32),
}

impl fmt::Display for BlobFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobFileError::Io(e) => write!(f, "cannot read it: {e}"),
            BlobFileError::TooShort(len) => {
                write!(f, "not a MILBlob v2 file ({len} bytes, shorter than the {RECORD}-byte header)")
            }
            BlobFileError::Version(v) => write!(f, "not a MILBlob v2 file (header version {v}, expected {VERSION})"),
        }
    }
}

/// One blob's metadata record and its data.
#[derive(Debug, Clone, PartialEq)]
pub struct BlobRecord {
    /// Offset of the metadata record (what `BLOBFILE` names).
    pub offset: u64,
    /// The stored element type.
    pub dtype: ScalarType,
    /// Data size in bytes.
    pub size: u64,
    /// Absolute file offset of the data.
    pub data_offset: u64,
    /// Unused bits at the end of the data (sub-byte types).
    pub padding_bits: u64,
    /// The data bytes (a window into the file's buffer).
    pub bytes: SharedBytes,
}

/// Why the record at an offset cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobRecordError {
    /// The 64-byte record does not fit in the file (or overlaps the header).
    RecordOutside {
        /// Record offset.
        offset: u64,
        /// File length.
        len: u64,
    },
    /// The record does not start with `0xDEADBEEF`.
    Sentinel {
        /// Record offset.
        offset: u64,
        /// The word found instead.
        found: u32,
    },
    /// The dtype code is not a MILBlob type.
    Dtype {
        /// Record offset.
        offset: u64,
        /// The code found.
        code: u32,
    },
    /// The data range runs past the end of the file.
    DataPastEnd {
        /// Data offset.
        data_offset: u64,
        /// Data size.
        size: u64,
        /// File length.
        len: u64,
    },
}

impl fmt::Display for BlobRecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobRecordError::RecordOutside { offset, len } => write!(
                f,
                "offset {offset} is not a blob record: a {RECORD}-byte record there does not fit between \
                 the header and the end of the file ({len} bytes)"
            ),
            BlobRecordError::Sentinel { offset, found } => {
                write!(f, "no blob record at offset {offset}: sentinel is {found:#010x}, expected {SENTINEL:#010x}")
            }
            BlobRecordError::Dtype { offset, code } => {
                write!(f, "the blob record at offset {offset} has unknown dtype code {code}")
            }
            BlobRecordError::DataPastEnd { data_offset, size, len } => write!(
                f,
                "the blob data ({size} bytes at offset {data_offset}) runs past the end of the file ({len} bytes)"
            ),
        }
    }
}

impl BlobFile {
    /// Opens `path`: memory-mapped when at least [`MMAP_THRESHOLD`] bytes, read otherwise.
    pub fn open(path: &Path) -> Result<Self, BlobFileError> {
        let mut file = File::open(path).map_err(BlobFileError::Io)?;
        let len = file.metadata().map_err(BlobFileError::Io)?.len();
        if len >= MMAP_THRESHOLD {
            return Self::from_buffer(anec_ir::mil::map_file(&file).map_err(BlobFileError::Io)?);
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut bytes).map_err(BlobFileError::Io)?;
        Self::from_bytes(bytes)
    }

    /// A file from bytes already in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, BlobFileError> {
        Self::from_buffer(SharedBytes::from_vec(bytes))
    }

    fn from_buffer(buf: SharedBytes) -> Result<Self, BlobFileError> {
        let bytes = buf.as_slice();
        let len = bytes.len() as u64;
        if len < RECORD {
            return Err(BlobFileError::TooShort(len));
        }
        let (count, version) = (le_u32(bytes, 0), le_u32(bytes, 4));
        if version != VERSION {
            return Err(BlobFileError::Version(version));
        }
        Ok(BlobFile { buf, count })
    }

    /// The file length in bytes.
    pub fn len(&self) -> u64 {
        self.buf.as_slice().len() as u64
    }

    /// True for an empty buffer (never, for an opened file: the header is required).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The blob count of the header.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The record at `offset` (a `BLOBFILE` offset) with a window on its data.
    pub fn record(&self, offset: u64) -> Result<BlobRecord, BlobRecordError> {
        let len = self.len();
        let fits = offset >= RECORD && offset.checked_add(RECORD).is_some_and(|end| end <= len);
        let start = usize::try_from(offset).ok().filter(|_| fits);
        let Some(start) = start else {
            return Err(BlobRecordError::RecordOutside { offset, len });
        };
        let bytes = self.buf.as_slice();
        let found = le_u32(bytes, start);
        if found != SENTINEL {
            return Err(BlobRecordError::Sentinel { offset, found });
        }
        let code = le_u32(bytes, start + 4);
        let dtype = dtype_from_code(code).ok_or(BlobRecordError::Dtype { offset, code })?;
        let (size, data_offset) = (le_u64(bytes, start + 8), le_u64(bytes, start + 16));
        let padding_bits = le_u64(bytes, start + 24);
        let window = self.window(data_offset, size).ok_or(BlobRecordError::DataPastEnd { data_offset, size, len })?;
        Ok(BlobRecord { offset, dtype, size, data_offset, padding_bits, bytes: window })
    }

    fn window(&self, start: u64, size: u64) -> Option<SharedBytes> {
        let end = usize::try_from(start.checked_add(size)?).ok()?;
        self.buf.slice(usize::try_from(start).ok()?..end)
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}
