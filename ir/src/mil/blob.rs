//! Resolved weight data: the bytes behind `BLOBFILE(path, offset)` references.
//!
//! The front end reads MILBlob files (memory-mapped when large) and fills a [`BlobTable`];
//! passes read the data through it without copying. [`SharedBytes`] is a cheap-to-clone
//! window into a buffer that owns the bytes (a `Vec<u8>` or a memory map).

use super::types::ScalarType;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// What a [`SharedBytes`] window looks into: bytes in memory, or a memory-mapped file.
pub trait Backing: Send + Sync {
    /// The bytes.
    fn bytes(&self) -> &[u8];

    /// Says that `range` will not be read again soon. A memory map drops those pages from
    /// the process (a later read brings them back from the file), so that weights already
    /// packed stop counting in the compiler's memory; bytes in memory stay as they are.
    fn release(&self, _range: Range<usize>) {}
}

impl Backing for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A window into a shared, immutable byte buffer.
#[derive(Clone)]
pub struct SharedBytes {
    buf: Arc<dyn Backing>,
    range: Range<usize>,
}

impl SharedBytes {
    /// Bytes owned by a vector.
    pub fn from_vec(v: Vec<u8>) -> Self {
        let len = v.len();
        SharedBytes { buf: Arc::new(v), range: 0..len }
    }

    /// A window `range` of a shared buffer; `None` when it does not fit.
    pub fn window(buf: Arc<dyn Backing>, range: Range<usize>) -> Option<Self> {
        let len = buf.bytes().len();
        (range.start <= range.end && range.end <= len).then_some(SharedBytes { buf, range })
    }

    /// The window `range` of these bytes (relative to them), sharing the buffer; `None`
    /// when it does not fit.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        let start = self.range.start.checked_add(range.start)?;
        let end = self.range.start.checked_add(range.end)?;
        (range.start <= range.end && end <= self.range.end)
            .then(|| SharedBytes { buf: self.buf.clone(), range: start..end })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.buf.bytes().get(self.range.clone()).unwrap_or(&[])
    }

    /// Says that these bytes will not be read again soon ([`Backing::release`]): the pages
    /// of a memory-mapped window leave the process's memory; reading them again is still
    /// correct, only slower.
    pub fn release(&self) {
        self.buf.release(self.range.clone());
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(v: Vec<u8>) -> Self {
        SharedBytes::from_vec(v)
    }
}

impl FromIterator<u8> for SharedBytes {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        SharedBytes::from_vec(iter.into_iter().collect())
    }
}

impl Default for SharedBytes {
    fn default() -> Self {
        SharedBytes::from_vec(Vec::new())
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SharedBytes {}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedBytes({} bytes)", self.range.len())
    }
}

/// Where a blob is referenced from: the path as written and the metadata offset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlobKey {
    /// The path as written (`@model_path/weights/weight.bin`).
    pub path: String,
    /// The `offset` of the BLOBFILE reference (its metadata record).
    pub offset: u64,
}

/// One blob: its stored element type and raw little-endian bytes (sub-byte types packed
/// as stored, without the padding bits).
#[derive(Debug, Clone, PartialEq)]
pub struct BlobData {
    /// The element type recorded in the blob's metadata.
    pub dtype: ScalarType,
    /// The data bytes.
    pub bytes: SharedBytes,
}

/// Every resolved blob of a program.
pub type BlobTable = BTreeMap<BlobKey, BlobData>;

/// A table with a zero-filled blob of the declared type and size for every `BLOBFILE`
/// value of `program`: for looking at a model's ops (eligibility checks, tests) when its
/// weight file is not at hand. Never use it to compile a program that will run.
pub fn zero_blobs(program: &super::Program) -> BlobTable {
    let mut table = BlobTable::new();
    for f in &program.functions {
        for stmt in &f.body {
            for arg in stmt.inputs.iter().chain(&stmt.attrs) {
                if let super::Arg::Value(v) = &arg.value {
                    add_zero_blob(&mut table, v);
                }
            }
        }
    }
    table
}

fn add_zero_blob(table: &mut BlobTable, v: &super::Value) {
    if let (Some(key), Some(dtype), Some(n)) = (v.data.blob_key(), v.ty.dtype(), v.ty.elements()) {
        let bits = n.saturating_mul(u64::from(dtype.bits()));
        if let Ok(len) = usize::try_from(bits.div_ceil(8)) {
            table.insert(key, BlobData { dtype, bytes: SharedBytes::from_vec(vec![0; len]) });
        }
    }
}
