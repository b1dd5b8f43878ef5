//! Files mapped into memory read-only, as [`SharedBytes`]: the weight files the front end
//! reads, the program file the compiler writes and reads back, and weights the compiler
//! computes ([`spill`]: palettized weights expanded). The one place a file is mapped; its
//! pages can be let go once read ([`SharedBytes::release`]).

use super::blob::{Backing, SharedBytes};
use memmap2::{Mmap, MmapMut};
use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::Arc;

/// A file mapped read-only.
struct Mapped(Mmap);

impl Backing for Mapped {
    fn bytes(&self) -> &[u8] {
        &self.0
    }

    fn release(&self, range: Range<usize>) {
        let len = range.end.saturating_sub(range.start);
        if range.end > self.0.len() || len == 0 {
            return;
        }
        // SAFETY: `MADV_DONTNEED` on a read-only shared map of a file drops the pages from
        // this process; the next read faults them in again from the page cache or the
        // file, with the same bytes (nothing ever writes through the map). memmap2 widens
        // the range to whole pages, which only releases neighbours' pages as well, with
        // the same harmless effect. Failure only means the pages stay.
        #[allow(unsafe_code)]
        let _ = unsafe { self.0.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, len) };
    }
}

/// The whole of `file`, mapped read-only.
///
/// # Errors
/// The system's, when the file cannot be mapped.
pub fn map_file(file: &File) -> io::Result<SharedBytes> {
    // SAFETY: the map is read-only and only ever read through `&[u8]`. memmap2 cannot rule
    // out another process truncating or rewriting the file while it is mapped; the files
    // mapped are model inputs, which nobody writes during a compilation (the assumption of
    // every tool that maps its inputs), and the compiler's own temporary program file.
    #[allow(unsafe_code)]
    let map = unsafe { Mmap::map(file)? };
    let len = map.len();
    SharedBytes::window(Arc::new(Mapped(map)), 0..len)
        .ok_or_else(|| io::Error::other("a mapped file is shorter than its own length"))
}

/// `len` bytes filled by `fill`, held in an unnamed temporary file rather than in memory:
/// once read they can be let go ([`SharedBytes::release`]) like a weight file's, so that a
/// model's expanded weights need not stay resident until the compile ends.
///
/// # Errors
/// The system's, when the file cannot be made or mapped.
pub fn spill(len: usize, fill: impl FnOnce(&mut [u8])) -> io::Result<SharedBytes> {
    let (bytes, ()) = fill_file(&tempfile::tempfile()?, len, fill)?;
    Ok(bytes)
}

/// Sizes `file` (new, empty, this process's own) to `len` zero bytes, lets `fill` write
/// them through a map, and returns them mapped read-only with what `fill` returned: a
/// file written in place, in any order, without a buffer of its size.
///
/// # Errors
/// The system's, when the file cannot be sized or mapped.
pub fn fill_file<R>(file: &File, len: usize, fill: impl FnOnce(&mut [u8]) -> R) -> io::Result<(SharedBytes, R)> {
    file.set_len(len as u64)?;
    // SAFETY: the file was just created by this process (unnamed, or under a fresh
    // temporary name in a directory of the user's): nothing else writes it while it is
    // mapped, and the map is the only access to its bytes while `fill` runs.
    #[allow(unsafe_code)]
    let mut map = unsafe { MmapMut::map_mut(file)? };
    let r = fill(&mut map);
    let map = map.make_read_only()?;
    let len = map.len();
    let bytes = SharedBytes::window(Arc::new(Mapped(map)), 0..len)
        .ok_or_else(|| io::Error::other("a mapped file is shorter than its own length"))?;
    Ok((bytes, r))
}
