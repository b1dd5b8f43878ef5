//! The register stream of one task: how a [`TdImage`] is written into `__text`, and read
//! back — writer and reader side by side.
//!
//! A task is its header words (10; 11 when [`TdImage::extra_header`] is set) followed by
//! register records: a record header word `(count - 1) << 26 | address`, then `count`
//! register values at `address`, `address + 4`, ... The v4.2.1 compiler writes each of
//! the seven blocks as one record of all its words (the dense 0x274-byte TD); Apple's
//! current compiler leaves out word runs a task does not use (`generation::OmittedRun`),
//! splitting a block into several records. The reader accepts both and rebuilds the same
//! register image, so everything downstream (dump, diff, the simulator) reads registers,
//! never a serialization.

use crate::generation::{Generation, StreamForm};
use crate::regmap::{Block, BLOCKS, HEADER_SIZE};
use crate::td::TdImage;
use thiserror::Error;

/// Number of header words of a task without the extra word.
pub const HEADER_WORDS: usize = HEADER_SIZE / 4;
/// Largest record count the 6-bit count field holds.
const MAX_RECORD_WORDS: u32 = 64;

/// One register record of a task stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Register byte address of the first word.
    pub address: u32,
    /// Number of words.
    pub count: u32,
}

impl Record {
    /// The record header word.
    pub fn header_word(&self) -> u32 {
        ((self.count - 1) << 26) | self.address
    }

    /// Decodes a record header word.
    pub fn from_header(word: u32) -> Record {
        Record { address: word & 0x03FF_FFFF, count: (word >> 26) + 1 }
    }
}

/// A malformed task stream.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum StreamError {
    /// Fewer bytes than the task's header.
    #[error("the task has {0} bytes, fewer than its header")]
    Short(usize),
    /// A task size that is not a whole number of words.
    #[error("the task size {0:#x} is not a multiple of 4")]
    Unaligned(usize),
    /// A record whose words do not lie inside one register block.
    #[error("record {header:#010x} at task word {word} covers registers outside every block")]
    OutsideBlocks {
        /// The record header word.
        header: u32,
        /// Its index among the task's words.
        word: usize,
    },
    /// A record running past the end of the task.
    #[error("record {header:#010x} at task word {word} runs past the task's {words} words")]
    PastEnd {
        /// The record header word.
        header: u32,
        /// Its index among the task's words.
        word: usize,
        /// The task's size in words.
        words: usize,
    },
    /// A register written twice.
    #[error("register {0:#07x} is written twice")]
    Twice(u32),
}

/// The TD byte offset of register `address` inside `block`, if it lies there.
fn td_offset(block: &Block, address: u32) -> Option<u16> {
    let rel = address.checked_sub(block.register)?;
    (rel % 4 == 0 && rel / 4 < u32::from(block.words)).then(|| block.offset + 4 + rel as u16)
}

/// The block holding `count` words from register `address`, if one holds them all.
fn block_of_run(address: u32, count: u32) -> Option<&'static Block> {
    let last = address.checked_add(4 * count.checked_sub(1)?)?;
    BLOCKS.iter().find(|b| td_offset(b, address).is_some() && td_offset(b, last).is_some())
}

/// The records of one block: the whole block, or (sparse form) the block with every
/// omitted run whose words are all zero left out.
fn block_records(img: &TdImage, b: &Block, gen: &Generation) -> Vec<Record> {
    let mut keep = vec![true; usize::from(b.words)];
    if gen.form == StreamForm::Sparse {
        for run in gen.omitted.iter().filter(|r| block_of_run(r.register, r.words) == Some(b)) {
            let first = ((run.register - b.register) / 4) as usize;
            let range = first..first + run.words as usize;
            if range.clone().all(|i| img.word(b.offset + 4 + 4 * i as u16) == 0) {
                keep[range].iter_mut().for_each(|k| *k = false);
            }
        }
    }
    let mut out: Vec<Record> = Vec::new();
    for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        let address = b.register + 4 * i as u32;
        match out.last_mut() {
            Some(r) if r.address + 4 * r.count == address && r.count < MAX_RECORD_WORDS => r.count += 1,
            _ => out.push(Record { address, count: 1 }),
        }
    }
    out
}

/// The records a task's image is written as, in stream order.
pub fn records(img: &TdImage, gen: &Generation) -> Vec<Record> {
    BLOCKS.iter().flat_map(|b| block_records(img, b, gen)).collect()
}

/// Size in words of a task's stream.
pub fn task_words(img: &TdImage, gen: &Generation) -> usize {
    header_words(img) + records(img, gen).iter().map(|r| r.count as usize + 1).sum::<usize>()
}

fn header_words(img: &TdImage) -> usize {
    HEADER_WORDS + usize::from(img.extra_header().is_some())
}

/// Writes a task's stream.
pub fn write_task(img: &TdImage, gen: &Generation) -> Vec<u32> {
    let mut out: Vec<u32> = (0..HEADER_WORDS as u16).map(|i| img.word(4 * i)).collect();
    out.extend(img.extra_header());
    for r in records(img, gen) {
        out.push(r.header_word());
        let block = block_of_run(r.address, r.count);
        for k in 0..r.count {
            let off = block.and_then(|b| td_offset(b, r.address + 4 * k));
            out.push(off.map_or(0, |o| img.word(o)));
        }
    }
    out
}

/// The word index, in a task's stream, of the register at TD byte offset `td_offset`
/// (`None` when the stream leaves it out or the offset is no register).
pub fn stream_position(img: &TdImage, gen: &Generation, td_offset: u16) -> Option<usize> {
    let b = crate::regmap::block_of(td_offset)?;
    let address = b.register + u32::from(td_offset - b.offset - 4);
    let mut at = header_words(img);
    for r in records(img, gen) {
        if (r.address..r.address + 4 * r.count).contains(&address) {
            return Some(at + 1 + ((address - r.address) / 4) as usize);
        }
        at += 1 + r.count as usize;
    }
    None
}

/// A task read back from its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadTask {
    /// The register image (unwritten registers read as zero).
    pub image: TdImage,
    /// The header words as written (10 or 11).
    pub header: Vec<u32>,
    /// The records in stream order.
    pub records: Vec<Record>,
}

impl ReadTask {
    /// Every register written, as (address, value), in stream order.
    pub fn writes(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for r in &self.records {
            for k in 0..r.count {
                let a = r.address + 4 * k;
                let off = block_of_run(a, 1).and_then(|b| td_offset(b, a));
                out.push((a, off.map_or(0, |o| self.image.word(o))));
            }
        }
        out
    }
}

/// Reads a task of `words` words from `bytes`. The header has 10 words, or 11 when the
/// task's kernel DMA reads a tensor buffer (see [`TdImage::needs_extra_header`]).
pub fn read_task(bytes: &[u8], words: usize) -> Result<ReadTask, StreamError> {
    let bytes = bytes.get(..words.saturating_mul(4)).ok_or(StreamError::Short(bytes.len()))?;
    let all: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let head = all.get(..HEADER_WORDS).ok_or(StreamError::Short(bytes.len()))?;
    let mut image = TdImage::new("");
    for (i, &w) in head.iter().enumerate() {
        image.set_header_word(i, w);
    }
    let mut at = HEADER_WORDS;
    if image.needs_extra_header() {
        let w = *all.get(at).ok_or(StreamError::Short(bytes.len()))?;
        image.set_extra_header(Some(w));
        at += 1;
    }
    let header = all[..at].to_vec();
    let mut records = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    while at < all.len() {
        let r = Record::from_header(all[at]);
        let block = block_of_run(r.address, r.count).ok_or(StreamError::OutsideBlocks { header: all[at], word: at })?;
        let data = all.get(at + 1..at + 1 + r.count as usize).ok_or(StreamError::PastEnd {
            header: all[at],
            word: at,
            words: all.len(),
        })?;
        for (k, &v) in data.iter().enumerate() {
            let a = r.address + 4 * k as u32;
            if !seen.insert(a) {
                return Err(StreamError::Twice(a));
            }
            if let Some(o) = td_offset(block, a) {
                image.set_raw(o, v);
            }
        }
        records.push(r);
        at += 1 + r.count as usize;
    }
    Ok(ReadTask { image, header, records })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::generation::{CURRENT, V4_2};

    fn pe_like() -> TdImage {
        let mut td = TdImage::new("t");
        td.set("Common.InDim.Win", 1).unwrap();
        td.set_unnamed(0xF4, 0x80).unwrap();
        td
    }

    #[test]
    fn dense_is_the_v4_2_td() {
        let td = pe_like();
        let words = write_task(&td, &V4_2);
        assert_eq!(words.len() * 4, crate::regmap::TD_SIZE);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(bytes, td.to_bytes());
    }

    #[test]
    fn sparse_leaves_out_zero_coefficient_arrays() {
        let td = pe_like();
        let rs = records(&td, &CURRENT);
        assert_eq!(rs[0], Record { address: 0x1F800, count: 18 });
        assert_eq!(rs[1], Record { address: 0x1F8C8, count: 12 });
        assert_eq!(rs[0].header_word(), 0x4401_F800);
        assert_eq!(rs[1].header_word(), 0x2C01_F8C8);
        assert_eq!(task_words(&td, &CURRENT), 126);
    }

    #[test]
    fn both_forms_read_back_to_the_same_image() {
        let mut td = pe_like();
        td.set("KernelDMASrc.CoeffBfrSize[3].MemBfrSize", 2).unwrap();
        for gen in [&V4_2, &CURRENT] {
            let words = write_task(&td, gen);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let back = read_task(&bytes, words.len()).unwrap();
            assert_eq!(back.image.to_bytes(), td.to_bytes());
            assert_eq!(back.records, records(&td, gen));
        }
    }

    #[test]
    fn malformed_streams_are_errors() {
        let mut words = write_task(&pe_like(), &CURRENT);
        words[10] = 0x0000_0100 | (3 << 26); // inside no block
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(matches!(read_task(&bytes, words.len()), Err(StreamError::OutsideBlocks { .. })));
        assert!(matches!(read_task(&bytes[..8], 2), Err(StreamError::Short(_))));
    }
}
