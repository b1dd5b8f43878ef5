//! Weight banks packed later, straight into the program file.
//!
//! A dense bank's chunk lengths depend on the shapes only ([`weights::dense_plan`]), so
//! the lowering can give every task its kernel chunks and the `__const` section its layout
//! without packing anything: the bank's place in the section stays untouched zero room.
//! Once the whole file is laid out, [`Deferred::pack_each`] packs the banks one by one
//! into a buffer the size of the largest, names their symbols and hands each to the writer
//! of the program file (or [`Deferred::fill`] packs them into a section in memory), so that
//! the weights go from the model's file to the program's in one pass, never through a
//! buffer of their own. Sparse banks (their lengths depend on the values) are packed at once, as are the
//! banks a table activation heads (`ConstSection::with_table_heads` reads them back).

use crate::consts::hash_name;
use crate::error::BackendError;
use crate::weights::{self, DensePlan, Kernel, Packing};
use anec_codegen::hwx::model::ConstSymbol;
use std::ops::Range;

/// A convolution's share of a kernel, to be packed as `packing` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bank {
    /// The kernel.
    pub kernel: Kernel,
    /// Its bias (fp16 bits per output channel), inline in the chunks.
    pub bias: Option<Vec<u16>>,
    /// How the task's share is packed.
    pub packing: Packing,
}

/// A bank whose place is reserved: where it starts in the section and which symbols name
/// its chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Job {
    pub bank: Bank,
    pub plan: DensePlan,
    pub at: usize,
    pub symbols: Range<usize>,
}

impl Job {
    /// Its place in the section.
    fn range(&self) -> Range<usize> {
        self.at..self.at + self.plan.len()
    }
}

/// The banks of a section still to be packed, in section order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deferred {
    pub(crate) jobs: Vec<Job>,
}

impl Deferred {
    /// True when every bank is packed already.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The places of the banks in the section: what [`Deferred::fill`] writes; the rest of
    /// the section is the bytes it was finished with.
    pub fn ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.jobs.iter().map(Job::range)
    }

    /// The parts of a section of `len` bytes that no bank fills (its own bytes: tables,
    /// vectors, packed banks, padding), in order.
    pub fn gaps(&self, len: usize) -> Vec<Range<usize>> {
        let mut at = 0;
        let mut gaps = Vec::new();
        for bank in self.ranges().chain(std::iter::once(len..len)) {
            if bank.start > at {
                gaps.push(at..bank.start.min(len));
            }
            at = at.max(bank.end);
        }
        gaps
    }

    /// Packs every bank into its place in `section` (the whole `__const` section, zero
    /// where the banks go) and names their chunks' symbols `K<hash>_ne_<i>`.
    pub fn fill(&self, section: &mut [u8], symbols: &mut [ConstSymbol]) -> Result<(), BackendError> {
        for job in &self.jobs {
            fill_job(job, section, symbols)?;
        }
        Ok(())
    }

    /// Packs every bank in turn, names its symbols, and hands `write` the bank's place in
    /// the section and its bytes; stops at the first bank `write` refuses (returns false
    /// for). Two buffers are reused (memory stays that of the two largest banks): while
    /// one bank is written, the next is packed.
    pub fn pack_each(
        &self,
        symbols: &mut [ConstSymbol],
        mut write: impl FnMut(usize, &[u8]) -> bool + Send,
    ) -> Result<(), BackendError> {
        let (mut cur, mut next) = (Vec::new(), Vec::new());
        let Some(first) = self.jobs.first() else { return Ok(()) };
        pack_into_buffer(first, &mut cur, symbols)?;
        for (job, following) in self.jobs.iter().zip(self.jobs.iter().skip(1).map(Some).chain([None])) {
            let (written, packed) = rayon::join(
                || write(job.at, &cur),
                || following.map_or(Ok(()), |f| pack_into_buffer(f, &mut next, symbols)),
            );
            packed?;
            if !written {
                break;
            }
            std::mem::swap(&mut cur, &mut next);
        }
        Ok(())
    }

    /// Takes out the banks at or after section offset `from`.
    pub(crate) fn split_off(&mut self, from: usize) -> Vec<Job> {
        let keep = self.jobs.iter().take_while(|j| j.at < from).count();
        self.jobs.split_off(keep)
    }
}

/// Packs one bank into `section` and names its symbols.
pub(crate) fn fill_job(job: &Job, section: &mut [u8], symbols: &mut [ConstSymbol]) -> Result<(), BackendError> {
    let (len, range) = (section.len(), job.range());
    let dst = section.get_mut(range.clone()).ok_or_else(|| {
        BackendError::Internal(format!("a weight bank at {range:?} lies outside a {len}-byte section"))
    })?;
    pack_named(job, dst, symbols)
}

/// Packs one bank into `buf` (made its length, zero) and names its symbols.
fn pack_into_buffer(job: &Job, buf: &mut Vec<u8>, symbols: &mut [ConstSymbol]) -> Result<(), BackendError> {
    buf.clear();
    buf.resize(job.plan.len(), 0);
    pack_named(job, buf, symbols)
}

/// Packs one bank into `dst` (its exact length, zero) and names its symbols.
fn pack_named(job: &Job, dst: &mut [u8], symbols: &mut [ConstSymbol]) -> Result<(), BackendError> {
    let b = &job.bank;
    weights::pack_dense(&b.kernel, b.bias.as_deref(), &b.packing, &job.plan, dst)?;
    let name = hash_name(&[&*dst]);
    let named = symbols
        .get_mut(job.symbols.clone())
        .ok_or_else(|| BackendError::Internal(format!("the symbols {:?} of a weight bank are missing", job.symbols)))?;
    for (i, s) in named.iter_mut().enumerate() {
        s.name = format!("K{name}_ne_{i}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::consts::ConstSection;
    use anec_ir::DType;

    /// A bank of `cout` x `cin` fp16 weights, all output channels in one task.
    fn bank(cout: u32, cin: u32, seed: u32) -> Bank {
        let bytes: Vec<u8> =
            (0..cout * cin).flat_map(|i| half::f16::from_f32((i ^ seed) as f32 / 64.0).to_le_bytes()).collect();
        let kernel =
            Kernel { fmt: DType::F16, source: DType::F16, bytes: bytes.into(), cout, cin_g: cin, kh: 1, kw: 1 };
        let packing = Packing { groups: 1, channels: 0..cout, ocg_size: weights::ocg_size(cout, 1), sparse: false };
        Bank { kernel, bias: Some((0..cout as u16).collect()), packing }
    }

    /// A finished section: its bytes and symbols.
    type Section = (Vec<u8>, Vec<ConstSymbol>);

    /// The section `build` makes, packed at once and deferred then filled.
    fn both(build: impl Fn(&mut ConstSection)) -> (Section, Section) {
        let mut now = ConstSection::with_capacity(0);
        build(&mut now);
        let mut later = ConstSection::deferring(0);
        build(&mut later);
        let (mut bytes, mut symbols, deferred) = later.finish_deferred();
        deferred.fill(&mut bytes, &mut symbols).unwrap();
        (now.finish().unwrap(), (bytes, symbols))
    }

    #[test]
    fn deferred_banks_fill_to_what_packing_at_once_gives() {
        let (now, later) = both(|c| {
            c.add_table(&[7; 0x80], 1);
            c.add_bank(bank(64, 48, 1)).unwrap();
            c.add_bank(bank(40, 16, 2)).unwrap();
        });
        assert_eq!(now, later);
        assert!(later.1.iter().all(|s| !s.name.contains(UNNAMED_PREFIX)), "every symbol named");
    }

    #[test]
    fn a_table_heading_deferred_banks_packs_them_first() {
        let (now, later) = both(|c| {
            let a = c.add_bank(bank(32, 8, 3)).unwrap();
            let b = c.add_bank(bank(32, 8, 4)).unwrap();
            c.with_table_heads(&[a, b], &[9; 0x80]).unwrap();
        });
        assert_eq!(now, later);
    }

    #[test]
    fn the_gaps_are_what_the_banks_leave() {
        let mut c = ConstSection::deferring(0);
        c.add_table(&[7; 0x80], 1);
        c.add_bank(bank(16, 8, 6)).unwrap();
        c.add_table(&[5; 0x80], 1);
        let (bytes, _, deferred) = c.finish_deferred();
        let banks: Vec<_> = deferred.ranges().collect();
        let gaps = deferred.gaps(bytes.len());
        assert_eq!(gaps.first(), Some(&(0..0x80)));
        assert_eq!(gaps.last().map(|g| g.end), Some(bytes.len()));
        let covered: usize = gaps.iter().chain(&banks).map(|r| r.len()).sum();
        assert_eq!(covered, bytes.len(), "gaps and banks tile the section");
    }

    #[test]
    fn an_unplaceable_bank_is_an_error() {
        let mut c = ConstSection::deferring(0);
        c.add_bank(bank(16, 8, 5)).unwrap();
        let (mut bytes, mut symbols, deferred) = c.finish_deferred();
        bytes.truncate(64);
        assert!(deferred.fill(&mut bytes, &mut symbols).is_err());
    }

    /// The hash part of an unnamed symbol.
    const UNNAMED_PREFIX: &str = "K0000000000000000";
}
