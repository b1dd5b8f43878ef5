//! MILBlob storage version 2: the weight files (`weights/weight.bin`) that `BLOBFILE(path,
//! offset)` values of a MIL program point into.
//!
//! Layout (all integers little-endian):
//! - a 64-byte file header: `u32 count; u32 version (= 2)`, then reserved bytes;
//! - per blob, a 64-byte metadata record at the offset the `BLOBFILE` names:
//!   `u32 sentinel (= 0xDEADBEEF); u32 dtype; u64 size_in_bytes; u64 data_offset`
//!   (absolute) `; u64 padding_size_in_bits` (sub-byte types), then reserved bytes;
//! - the data itself at `data_offset`.
//!
//! [`BlobFile`] opens one file (memory-mapped above [`MMAP_THRESHOLD`], read into memory
//! below) and reads records without copying the data; [`resolve_blobs`] walks a program,
//! checks every `BLOBFILE` value against its file and fills an [`anec_ir::mil::BlobTable`].

mod file;
mod path;
mod resolve;

pub use file::{BlobFile, BlobFileError, BlobRecord, BlobRecordError, MMAP_THRESHOLD};
pub use path::{resolve_blob_path, BlobPathError};
pub use resolve::{resolve_blobs, SourceFile};

use anec_ir::mil::ScalarType;

/// MILBlob dtype codes and the element types they store.
const DTYPE_CODES: [(u32, ScalarType); 17] = [
    (1, ScalarType::Fp16),
    (2, ScalarType::Fp32),
    (3, ScalarType::Uint8),
    (4, ScalarType::Int8),
    (5, ScalarType::Bf16),
    (6, ScalarType::Int16),
    (7, ScalarType::Uint16),
    (8, ScalarType::Int4),
    (9, ScalarType::Uint1),
    (10, ScalarType::Uint2),
    (11, ScalarType::Uint4),
    (12, ScalarType::Uint3),
    (13, ScalarType::Uint6),
    (14, ScalarType::Int32),
    (15, ScalarType::Uint32),
    (16, ScalarType::Fp8E4M3),
    (17, ScalarType::Fp8E5M2),
];

/// The element type a MILBlob dtype code stands for.
pub fn dtype_from_code(code: u32) -> Option<ScalarType> {
    DTYPE_CODES.iter().find(|(c, _)| *c == code).map(|(_, t)| *t)
}

/// The MILBlob dtype code of an element type (`None` for types blobs cannot hold).
pub fn dtype_code(t: ScalarType) -> Option<u32> {
    DTYPE_CODES.iter().find(|(_, d)| *d == t).map(|(c, _)| *c)
}

/// Bytes needed for `elements` values of `t`, sub-byte types packed (rounded up).
pub fn packed_size(t: ScalarType, elements: u64) -> Option<u64> {
    let bits = elements.checked_mul(u64::from(t.bits()))?;
    Some(bits.div_ceil(8))
}
