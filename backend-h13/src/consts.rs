//! The `__const` section: weight chunks and activation tables, 64-byte aligned, each with
//! its `K<hash>` symbol.
//!
//! The hash is BLAKE3 of the chunk bytes (of the whole bank for weight chunks), 64 upper
//! hex digits like the names in Apple's files. Apple hashes something we could not
//! reproduce (`docs/conformance.md`), so the names only need to tell different constants
//! apart; BLAKE3 does it at several times the speed of SHA-256, on all cores for a large
//! bank.

use crate::deferred::{fill_job, Bank, Deferred, Job};
use crate::error::BackendError;
use crate::layout::round_up;
use crate::task::KernelChunk;
use crate::weights;
use crate::zeroed::Zeroed;
use anec_codegen::hwx::model::ConstSymbol;

/// Size of the zero `__const` Apple writes when a program has no constants.
pub const EMPTY_CONST_SIZE: usize = 0x4000;

/// The section being built.
#[derive(Debug, Clone, Default)]
pub struct ConstSection {
    bytes: Zeroed,
    symbols: Vec<ConstSymbol>,
    /// Dense banks left for later (`deferred.rs`), when the section defers them.
    deferred: Option<Deferred>,
}

/// The name a deferred bank's symbols carry until it is packed (as long as the real one).
const UNNAMED: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Parts at least this large are hashed on all cores.
const PARALLEL_HASH: usize = 1 << 20;

/// The hash part of a `K<hash>` name: BLAKE3 of `parts` one after the other.
pub(crate) fn hash_name<P: AsRef<[u8]>>(parts: &[P]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        let p = p.as_ref();
        if p.len() >= PARALLEL_HASH {
            h.update_rayon(p);
        } else {
            h.update(p);
        }
    }
    h.finalize().as_bytes().iter().map(|b| format!("{b:02X}")).collect()
}

impl ConstSection {
    /// An empty section with room for `bytes` bytes (the weights it will hold: growing a
    /// section of hundreds of megabytes by doubling copies it several times over).
    pub fn with_capacity(bytes: usize) -> Self {
        ConstSection { bytes: Zeroed::with_room(bytes), symbols: Vec::new(), deferred: None }
    }

    /// As [`ConstSection::with_capacity`], leaving dense banks to be packed into the
    /// program file ([`ConstSection::finish_deferred`]).
    pub fn deferring(bytes: usize) -> Self {
        ConstSection { deferred: Some(Deferred::default()), ..Self::with_capacity(bytes) }
    }

    fn push(&mut self, data: &[u8]) -> KernelChunk {
        self.bytes.align(64);
        let offset = self.bytes.len() as u64;
        self.bytes.extend_from_slice(data);
        KernelChunk { offset, size: round_up(data.len() as u64, 64) }
    }

    /// Adds one weight bank and names its chunks `K<hash>_ne_<i>`, as
    /// [`ConstSection::add_weights`] does: packed straight into the section
    /// (`weights::bank_into`), or, when the section defers dense banks, its place reserved.
    pub fn add_bank(&mut self, bank: Bank) -> Result<Vec<KernelChunk>, BackendError> {
        self.bytes.align(64);
        let start = self.bytes.len();
        let plan = weights::dense_plan(&bank.kernel, bank.bias.as_deref(), &bank.packing)?;
        if let (Some(deferred), Some(plan)) = (self.deferred.as_mut(), plan) {
            self.bytes.grow(plan.len());
            let first = self.symbols.len();
            let chunks = name_chunks(&mut self.symbols, &plan.chunk_ranges(start), UNNAMED);
            deferred.jobs.push(Job { bank, plan, at: start, symbols: first..self.symbols.len() });
            return Ok(chunks);
        }
        let ranges = weights::bank_into(&bank.kernel, bank.bias.as_deref(), &bank.packing, &mut self.bytes)?;
        let end = ranges.last().map_or(start, |r| r.end);
        let name = hash_name(&[self.bytes.as_slice().get(start..end).unwrap_or_default()]);
        Ok(name_chunks(&mut self.symbols, &ranges, &name))
    }

    /// Packs the deferred banks at or after offset `from` into the section now.
    fn pack_deferred_from(&mut self, from: usize) -> Result<(), BackendError> {
        let Some(deferred) = self.deferred.as_mut() else { return Ok(()) };
        for job in deferred.split_off(from) {
            fill_job(&job, self.bytes.as_mut_slice(), &mut self.symbols)?;
        }
        Ok(())
    }

    /// Adds the chunks of one weight bank, named `K<hash>_ne_<i>`.
    pub fn add_weights(&mut self, chunks: &[Vec<u8>]) -> Vec<KernelChunk> {
        let name = hash_name(chunks);
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let k = self.push(c);
                self.symbols.push(ConstSymbol { name: format!("K{name}_ne_{i}"), offset: k.offset });
                k
            })
            .collect()
    }

    /// Puts `table` at the head of every chunk of `banks`, the weight banks added last
    /// (in order, ending the section): they are taken out and added again, each chunk
    /// `[table][its bytes]`, and their new chunks returned (a convolution applying an
    /// activation table, `matmul.md` §2).
    pub fn with_table_heads(
        &mut self,
        banks: &[Vec<KernelChunk>],
        table: &[u8],
    ) -> Result<Vec<Vec<KernelChunk>>, BackendError> {
        let Some(start) = banks.iter().flatten().next().map(|k| k.offset) else {
            return Ok(banks.to_vec());
        };
        self.pack_deferred_from(start as usize)?;
        let mut at = start;
        let mut old = Vec::with_capacity(banks.len());
        for bank in banks {
            let mut chunks = Vec::with_capacity(bank.len());
            for k in bank {
                let bytes = self.bytes.as_slice().get(k.offset as usize..(k.offset + k.size) as usize);
                let (true, Some(bytes)) = (k.offset == at, bytes) else {
                    return Err(BackendError::Internal(format!(
                        "a weight chunk at {:#x} is not the next one",
                        k.offset
                    )));
                };
                chunks.push([table, bytes].concat());
                at = round_up(k.offset + k.size, 64);
            }
            old.push(chunks);
        }
        if at != round_up(self.bytes.len() as u64, 64) {
            return Err(BackendError::Internal("the weight banks given a table do not end the section".into()));
        }
        self.bytes.truncate(start as usize);
        self.symbols.retain(|s| s.offset < start);
        Ok(old.iter().map(|chunks| self.add_weights(chunks)).collect())
    }

    /// Adds an activation table read by `nes` NEs, named `K<hash>`: every NE's channel
    /// reads the one table, and the section reserves a table's room per NE after it, zero
    /// (the current corpus: 16 NEs 2 KiB, 8 NEs 1 KiB; v4.2.1's sigmoid, 1 NE, 0x80).
    pub fn add_table(&mut self, table: &[u8], nes: u32) -> KernelChunk {
        let name = hash_name(&[table]);
        let k = self.push(table);
        self.symbols.push(ConstSymbol { name: format!("K{name}"), offset: k.offset });
        let room = table.len() * nes.max(1) as usize;
        let end = k.offset as usize + room;
        self.bytes.grow(end.saturating_sub(self.bytes.len()));
        k
    }

    /// Adds a per-channel vector (bias or post-scale), named `K<hash>_<suffix>` after the
    /// `_bias` / `_scale` relocation names of later ANE compilers (seed ZinAneTd<8u>
    /// relocations); the chunk is padded to 64 bytes.
    pub fn add_vector(&mut self, data: &[u8], suffix: &str) -> KernelChunk {
        let name = hash_name(&[data]);
        let k = self.push(data);
        self.symbols.push(ConstSymbol { name: format!("K{name}_{suffix}"), offset: k.offset });
        k
    }

    /// Adds a constant tensor read through the tile DMA (its rows already laid out),
    /// named `K<hash>_tensor`.
    pub fn add_tensor(&mut self, bytes: &[u8]) -> KernelChunk {
        let name = hash_name(&[bytes]);
        let k = self.push(bytes);
        self.symbols.push(ConstSymbol { name: format!("K{name}_tensor"), offset: k.offset });
        k
    }

    /// The section bytes (padded to the last chunk's end, or 0x4000 zeros when empty) and
    /// its symbols.
    pub fn finish(mut self) -> Result<(Vec<u8>, Vec<ConstSymbol>), BackendError> {
        self.pack_deferred_from(0)?;
        let (bytes, symbols, _) = self.finish_deferred();
        Ok((bytes, symbols))
    }

    /// The section with the places of its deferred banks still zero (untouched room), its
    /// symbols (theirs named once packed), and the banks to pack: [`Deferred::fill`].
    pub fn finish_deferred(mut self) -> (Vec<u8>, Vec<ConstSymbol>, Deferred) {
        let deferred = self.deferred.take().unwrap_or_default();
        if self.bytes.is_empty() {
            return (vec![0; EMPTY_CONST_SIZE], self.symbols, deferred);
        }
        self.bytes.align(64);
        (self.bytes.into_vec(), self.symbols, deferred)
    }
}

/// Symbols `K<name>_ne_<i>` for the chunks at `ranges`; their chunks.
fn name_chunks(symbols: &mut Vec<ConstSymbol>, ranges: &[std::ops::Range<usize>], name: &str) -> Vec<KernelChunk> {
    ranges
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let k = KernelChunk { offset: r.start as u64, size: round_up(r.len() as u64, 64) };
            symbols.push(ConstSymbol { name: format!("K{name}_ne_{i}"), offset: k.offset });
            k
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Two banks (a convolution's two slices) get the table at the head of each chunk, in
    /// place of the banks without it; a bank that does not end the section is refused.
    #[test]
    fn tables_head_every_chunk_of_the_last_banks() {
        let mut c = ConstSection::default();
        c.add_table(&[7; 0x80], 1);
        let a = c.add_weights(&[vec![1; 0x40], vec![2; 0x80]]);
        let b = c.add_weights(&[vec![3; 0x40]]);
        let table = [9u8; 0x80];
        let banks = c.with_table_heads(&[a.clone(), b.clone()], &table).unwrap();
        let offsets: Vec<(u64, u64)> = banks.iter().flatten().map(|k| (k.offset, k.size)).collect();
        assert_eq!(offsets, [(0x80, 0xc0), (0x140, 0x100), (0x240, 0xc0)]);
        let (bytes, symbols) = c.clone().finish().unwrap();
        assert_eq!(bytes.len(), 0x300);
        assert_eq!((&bytes[..0x80], &bytes[0x140..0x1c0], bytes[0x1c0]), (&[7u8; 0x80][..], &table[..], 2));
        assert_eq!(symbols.len(), 4, "the table's symbol and three chunks");
        assert!(c.with_table_heads(&[a], &table).is_err());
    }
}
