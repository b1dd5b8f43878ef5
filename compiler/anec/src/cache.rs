//! The compile cache (`anec compile --cache-dir DIR`): a program is stored under a key
//! that hashes everything its bytes depend on, and the same key later gives the stored
//! program without compiling.
//!
//! - **Key** (BLAKE3, hex): the compiler's name and version, the options (target, banner
//!   arguments, function, Apple generation, what is emitted) and the model's content as
//!   the compiler reads it: a MIL program as printed plus every weight blob's bytes, a
//!   netplist's bytes plus every resource of its procedures, an `.mlir` file's bytes. Paths
//!   do not enter it except through the banner arguments the program records.
//! - **Entry** `<DIR>/<key>.entry`: the magic `ANECCACH`, the payload's length (u64 LE) and
//!   BLAKE3 hash, then the payload. A read checks all three; an entry that fails (cut
//!   short, altered, unreadable) is removed and reported absent, so the caller compiles
//!   and stores it again. Entries are written atomically (temporary file, then rename).
//!
//! Nothing here prints; the CLI decides what to say.

use crate::{Error, InputKind, Options};
use std::path::{Path, PathBuf};

/// The first bytes of every entry.
const MAGIC: &[u8; 8] = b"ANECCACH";
/// Magic, length, hash.
const HEADER: usize = 8 + 8 + 32;
/// Bytes above which a hash runs on several threads.
const PARALLEL_HASH: usize = 1 << 20;

/// A cache directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir` (created when the first entry is stored).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache { dir: dir.into() }
    }

    /// Where the entry of `key` lives.
    pub fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.entry"))
    }

    /// The stored entry of `key`, checked; `None` when there is none or it fails its
    /// check (a failing entry is removed).
    pub fn get(&self, key: &str) -> Option<Entry> {
        let path = self.entry_path(key);
        let map = map(&path)?;
        if checked(&map).is_none() {
            // A corrupt entry is never used; removing it lets the next store replace it.
            let _ = std::fs::remove_file(&path);
            return None;
        }
        Some(Entry { map })
    }

    /// Stores `payload` under `key`, atomically.
    pub fn put(&self, key: &str, payload: &[u8]) -> Result<(), Error> {
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let mut head = Vec::with_capacity(HEADER);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        head.extend_from_slice(hash(payload).as_bytes());
        crate::write_atomically_with(&self.entry_path(key), |f| {
            use std::io::Write;
            f.write_all(&head)?;
            f.write_all(payload)
        })
    }
}

/// A checked entry, mapped: its payload is read from the file as it is written out.
#[derive(Debug)]
pub struct Entry {
    map: memmap2::Mmap,
}

impl Entry {
    /// The stored program.
    pub fn payload(&self) -> &[u8] {
        self.map.get(HEADER..).unwrap_or_default()
    }
}

/// Maps the entry at `path` read-only.
fn map(path: &Path) -> Option<memmap2::Mmap> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the map is read-only and only read through `&[u8]`. Entries are only ever
    // replaced by renaming a new file over them (`put`), which leaves a mapped file
    // untouched; nothing in anec writes an entry in place.
    #[allow(unsafe_code)]
    unsafe {
        memmap2::Mmap::map(&file).ok()
    }
}

/// The payload of an entry whose magic, length and hash hold.
fn checked(entry: &[u8]) -> Option<&[u8]> {
    let (head, payload) = (entry.get(..HEADER)?, entry.get(HEADER..)?);
    let len = u64::from_le_bytes(head.get(8..16)?.try_into().ok()?);
    let ok = head.get(..8)? == MAGIC && len == payload.len() as u64 && head.get(16..)? == hash(payload).as_bytes();
    ok.then_some(payload)
}

/// BLAKE3 of `bytes` (on all cores when large).
fn hash(bytes: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    update(&mut h, bytes);
    h.finalize()
}

fn update(h: &mut blake3::Hasher, bytes: &[u8]) {
    if bytes.len() >= PARALLEL_HASH {
        h.update_rayon(bytes);
    } else {
        h.update(bytes);
    }
}

/// Adds a length-prefixed field, so that two fields can never run together.
fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    update(h, bytes);
}

/// The key of compiling the model at `path` with `opts` into `emit` (`hwx`, `anec`).
pub fn key(path: &Path, opts: &Options, emit: &str) -> Result<String, Error> {
    let mut h = blake3::Hasher::new();
    field(&mut h, crate::COMPILER_ID.as_bytes());
    field(&mut h, opts.ident().as_bytes());
    field(&mut h, opts.function.as_bytes());
    field(&mut h, format!("{:?} {:?} {emit}", opts.compat, opts.route).as_bytes());
    model(&mut h, path)?;
    Ok(h.finalize().to_hex().to_string())
}

/// The model's content as the compiler reads it.
fn model(h: &mut blake3::Hasher, path: &Path) -> Result<(), Error> {
    match InputKind::of(path)? {
        InputKind::Mil => {
            let m = crate::load_mil(path)?;
            field(h, anec_ir::mil::print::print_program(&m.program).as_bytes());
            for (key, blob) in &m.blobs {
                field(h, format!("{} {} {}", key.path, key.offset, blob.dtype.name()).as_bytes());
                field(h, blob.bytes.as_slice());
            }
        }
        InputKind::Netplist => {
            field(h, &std::fs::read(path).map_err(|e| Error::io(path, e))?);
            for p in anec_front::parse_netplist_procedures(path)? {
                for (name, blob) in &p.module.resources {
                    field(h, format!("{} {name} {}", p.name, blob.dtype).as_bytes());
                    field(h, &blob.bytes);
                }
            }
        }
        InputKind::AnecIr => field(h, &std::fs::read(path).map_err(|e| Error::io(path, e))?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_entry_reads_back_and_a_damaged_one_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        assert!(cache.get("k").is_none());
        cache.put("k", b"program bytes").unwrap();
        assert_eq!(cache.get("k").unwrap().payload(), b"program bytes");
        let path = cache.entry_path("k");
        let mut bytes = std::fs::read(&path).unwrap();
        for damage in [0usize, 9, 20, HEADER + 3] {
            let mut bad = bytes.clone();
            bad[damage] ^= 0x40;
            std::fs::write(&path, &bad).unwrap();
            assert!(cache.get("k").is_none(), "byte {damage} altered");
            assert!(!path.exists(), "the damaged entry is removed");
        }
        bytes.truncate(HEADER + 4);
        std::fs::write(&path, &bytes).unwrap();
        assert!(cache.get("k").is_none(), "cut short");
    }
}
