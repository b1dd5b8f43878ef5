//! The compile cache (`anec compile --cache-dir DIR`): a program is stored under a key
//! that hashes everything its bytes depend on, and the same key later gives the stored
//! program without compiling.
//!
//! - **Key** (BLAKE3, hex): the compiler's name and version, the options (target, banner
//!   arguments, function, Apple generation, what is emitted) and the model's content as
//!   the compiler reads it: a MIL program as printed plus every weight blob's bytes, a
//!   netplist's bytes plus every resource of its procedures, an `.mlir` file's bytes. Paths
//!   do not enter it except through the banner arguments the program records.
//! - **Entry**: the program as it is, `<DIR>/<key>.hwx`, and its check `<DIR>/<key>.sum`:
//!   the magic `ANECSUM1`, the program's length (u64 LE) and XXH3-128 checksum (LE). A read
//!   checks all three; an entry that fails (cut short, altered, unreadable, without its check) is
//!   removed and reported absent, so the caller compiles and stores it again. Both files
//!   are written atomically (temporary file, then rename), the check last.
//! - **A hit** is put in place by a hard link of the entry's program (then a rename), not
//!   a copy: a warm hit of a large model costs the key's hash of the weights and the
//!   entry's checksum, not a write of the program. The key must not collide, so it is
//!   BLAKE3; the checksum only has to catch a damaged file, so it is XXH3-128, which reads
//!   200 MB in 8 ms on one core where BLAKE3 takes 23 ms on two. The output and the entry then share
//!   their bytes until either is replaced (anec only ever replaces files by renaming); a
//!   tool that edits the output in place alters the entry too, which its check then
//!   refuses. Where a link cannot be made (another file system), the program is copied.
//!
//! Nothing here prints; the CLI decides what to say.

use crate::{Error, InputKind, Options};
use std::path::{Path, PathBuf};

/// The first bytes of every entry's check.
const MAGIC: &[u8; 8] = b"ANECSUM1";
/// The check: magic, length, checksum.
const SUM: usize = 8 + 8 + 16;
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

    /// Where the program of the entry of `key` lives.
    pub fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.hwx"))
    }

    /// Where the check of the entry of `key` lives.
    pub fn sum_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.sum"))
    }

    /// The stored entry of `key`, checked; `None` when there is none or it fails its
    /// check (a failing entry is removed).
    pub fn get(&self, key: &str) -> Option<Entry> {
        let (path, sum) = (self.entry_path(key), self.sum_path(key));
        if !path.exists() && !sum.exists() {
            return None;
        }
        let map = map(&path);
        let ok = map.as_ref().is_some_and(|m| std::fs::read(&sum).is_ok_and(|s| checked(&s, m)));
        match map {
            Some(map) if ok => Some(Entry { map, path }),
            _ => {
                // A corrupt entry is never used; removing it lets the next store replace it.
                let _ = std::fs::remove_file(&sum);
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Stores `payload` under `key`, atomically.
    pub fn put(&self, key: &str, payload: &[u8]) -> Result<(), Error> {
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let mut sum = Vec::with_capacity(SUM);
        sum.extend_from_slice(MAGIC);
        sum.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        sum.extend_from_slice(&checksum(payload).to_le_bytes());
        crate::write_atomically(&self.entry_path(key), payload)?;
        crate::write_atomically(&self.sum_path(key), &sum)
    }
}

/// A checked entry, mapped.
#[derive(Debug)]
pub struct Entry {
    map: memmap2::Mmap,
    path: PathBuf,
}

impl Entry {
    /// The stored program.
    pub fn payload(&self) -> &[u8] {
        &self.map
    }

    /// Puts the stored program at `dest`, atomically: a hard link of the entry renamed into
    /// place, or a copy where no link can be made.
    pub fn place_at(&self, dest: &Path) -> Result<(), Error> {
        let dir = crate::output::directory_of(dest);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let linked = tempfile::Builder::new().prefix(".anec-").make_in(&dir, |p| std::fs::hard_link(&self.path, p));
        match linked {
            Ok(tmp) => tmp.persist(dest).map(drop).map_err(|e| Error::io(dest, e.error)),
            Err(_) => crate::write_atomically(dest, self.payload()),
        }
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

/// Whether `sum` is the check of `program`: magic, length and hash hold.
fn checked(sum: &[u8], program: &[u8]) -> bool {
    let len = sum.get(8..16).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
    sum.len() == SUM
        && sum.get(..8) == Some(MAGIC.as_slice())
        && len == Some(program.len() as u64)
        && sum.get(16..) == Some(checksum(program).to_le_bytes().as_slice())
}

/// The checksum of an entry's program: XXH3-128.
fn checksum(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Feeds `bytes` to the key's hash (on all cores when large).
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
        let (path, sum) = (cache.entry_path("k"), cache.sum_path("k"));
        let good = std::fs::read(&sum).unwrap();
        for damage in [0usize, 9, 20] {
            let mut bad = good.clone();
            bad[damage] ^= 0x40;
            std::fs::write(&sum, &bad).unwrap();
            assert!(cache.get("k").is_none(), "check byte {damage} altered");
            assert!(!path.exists() && !sum.exists(), "the damaged entry is removed");
            cache.put("k", b"program bytes").unwrap();
        }
        std::fs::write(&path, b"program bytez").unwrap();
        assert!(cache.get("k").is_none(), "program altered");
        cache.put("k", b"program bytes").unwrap();
        std::fs::write(&path, b"program").unwrap();
        assert!(cache.get("k").is_none(), "program cut short");
        cache.put("k", b"program bytes").unwrap();
        std::fs::remove_file(&sum).unwrap();
        assert!(cache.get("k").is_none() && !path.exists(), "a program without its check");
    }

    #[test]
    fn a_hit_is_linked_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("c"));
        cache.put("k", b"program bytes").unwrap();
        let dest = dir.path().join("out/p.hwx");
        cache.get("k").unwrap().place_at(&dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"program bytes");
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
            assert_eq!(ino(&dest), ino(&cache.entry_path("k")), "a link, not a copy");
        }
        assert_eq!(std::fs::read_dir(dir.path().join("out")).unwrap().count(), 1, "no temporary file left");
    }
}
