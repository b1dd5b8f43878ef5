//! The kernel DMA at run time: convolution coefficients (and the inline bias) from the 16
//! coefficient chunks, the per-channel bias and post-scale vectors of the header streams,
//! and activation tables, all read from the buffer of the BAR `KBase0` names (relative
//! to it, as the TD fields hold them; the Mach-O relocations of `__text` are not applied).
//!
//! Coefficient layout of Apple's current compiler
//! (`docs/rationale/current-compiler/convolution.md` §1, exact against the constant
//! sections of 19 records by SHA-256; the v4.2.1 conv.hwx, 3 channels with OCGSize 0, has
//! the same bytes under it). Chunk i belongs to NE i. With B = 2^OCGSize, the n output
//! channels of a group are dealt in passes of 16 B: a pass of R channels gives NE i the
//! block `[i b, min((i + 1) b, R))` of it, b = ceil(R / 16). Chunk i holds, for each
//! group (each group's part padded to 64 bytes when NumGroups > 1), NE i's block of every
//! pass; the chunk ends padded to 64 bytes. A dense block (SparseFmt 0) is
//! `[bias: one fp16 per channel, when inline][for cin, ky, kx, channel: W]` (output
//! channel fastest). A sparse block (SparseFmt 1, 1x1 kernels with B <= 4 only) is
//! `[bias][u16 L: bytes that follow][for cin: u16 mask (bit 8 + j: channel j's value is
//! stored), the stored fp16 values in channel order]`; values not stored are 0.

use super::error::SimError;
use super::memory::{Fmt, Memory};
use super::table::{Table, TABLE_BYTES};
use super::td::Stream;

/// Number of coefficient chunks (one per NE).
pub const NES: usize = 16;

/// How a convolution's coefficients lie in the coefficient chunks, from the registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Coefficient format (KernelFmt).
    pub fmt: Fmt,
    /// log2 of the channels of a full block (OCGSize).
    pub ocg_size: u32,
    /// Chunk i, when `CoeffDMAConfig[i].En`.
    pub chunks: [Option<Stream>; NES],
    /// SparseFmt.
    pub sparse: bool,
    /// Each block starts with the bias of its channels (BiasMode without the bias stream).
    pub bias: bool,
    /// Groups dealt separately (NumGroups; 1 for depthwise).
    pub groups: usize,
    /// Input channels each output channel reads (1 for depthwise).
    pub cin: usize,
    /// Output channels per group.
    pub cout: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Each chunk starts with the activation table of NonlinearMode 2 (128 bytes), the
    /// coefficients after it (`matmul.md` §2: Apple's compute task with a fused gelu).
    pub table: bool,
}

/// The output channels `[start, start + len)` of a group that one NE gets in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// First channel, counted within the group.
    pub start: usize,
    /// Number of channels.
    pub len: usize,
}

fn round64(n: u64) -> u64 {
    n.div_ceil(64).saturating_mul(64)
}

impl Layout {
    /// The blocks of NE `ne`, pass by pass (empty when it gets no channel).
    pub fn blocks(&self, ne: usize) -> Vec<Block> {
        let pass = 16usize.saturating_mul(1usize.checked_shl(self.ocg_size).unwrap_or(usize::MAX));
        let mut out = Vec::new();
        let mut start = 0;
        while start < self.cout {
            let r = (self.cout - start).min(pass);
            let b = r.div_ceil(NES);
            let (lo, hi) = ((ne * b).min(r), ((ne + 1) * b).min(r));
            if hi > lo {
                out.push(Block { start: start + lo, len: hi - lo });
            }
            start = start.saturating_add(pass);
        }
        out
    }

    /// Coefficients per output channel.
    fn taps(&self) -> usize {
        self.cin.saturating_mul(self.kh).saturating_mul(self.kw)
    }

    /// Bytes of a dense block of `len` channels.
    fn dense_block(&self, len: usize) -> u64 {
        let bias = if self.bias { 2 * len } else { 0 };
        let w = self.taps().saturating_mul(len).saturating_mul(self.fmt.size());
        bias.saturating_add(w) as u64
    }

    /// Bytes chunk `ne` needs in the dense format (padded to 64), with its table.
    pub fn dense_chunk(&self, ne: usize) -> u64 {
        let part: u64 = self.blocks(ne).iter().map(|b| self.dense_block(b.len)).sum();
        let part = if self.groups > 1 { round64(part) } else { part };
        round64(part.saturating_mul(self.groups as u64)).saturating_add(self.head())
    }

    /// Bytes before the coefficients of a chunk: the table, when the chunks hold one.
    fn head(&self) -> u64 {
        if self.table {
            TABLE_BYTES as u64
        } else {
            0
        }
    }
}

/// The coefficients and inline bias of every output channel of every group.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// Input channels each output channel reads.
    pub cin: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// `[co][ci][ky][kx]`, `co` = group * (channels per group) + channel in the group.
    pub w: Vec<f32>,
    /// The inline bias of each `co` (empty without one).
    pub bias: Vec<f32>,
}

impl Kernel {
    /// The coefficient of output channel `co`, input channel `ci`, tap `(ky, kx)`.
    pub fn at(&self, co: usize, ci: usize, ky: usize, kx: usize) -> f32 {
        self.w.get(((co * self.cin + ci) * self.kh + ky) * self.kw + kx).copied().unwrap_or(0.0)
    }
}

fn kbar(td: usize, kbar: Option<u8>) -> Result<u8, SimError> {
    kbar.ok_or_else(|| SimError::access(td, "the kernel DMA is read without KBE0"))
}

/// Reads chunk `ne` front to back; reading past CoeffBfrSize is an error naming it.
struct Cursor<'m> {
    td: usize,
    ne: usize,
    bytes: &'m [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], SimError> {
        let end = self.at.saturating_add(n);
        let out = self.bytes.get(self.at..end).ok_or_else(|| {
            let size = self.bytes.len() as u64;
            let reason = format!("reading {what} reaches byte {end:#x} of chunk {}, which holds {size:#x}", self.ne);
            SimError::field(self.td, format!("KernelDMASrc.CoeffBfrSize[{}].MemBfrSize", self.ne), size / 64, reason)
        })?;
        self.at = end;
        Ok(out)
    }

    fn value(&mut self, fmt: Fmt, what: &str) -> Result<f32, SimError> {
        Ok(fmt.decode(self.take(fmt.size(), what)?))
    }

    fn u16(&mut self, what: &str) -> Result<u16, SimError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
}

/// The bytes of every chunk that holds channels.
fn chunk_bytes<'m>(mem: &'m Memory<'_>, td: usize, bar: u8, l: &Layout) -> Result<Vec<&'m [u8]>, SimError> {
    let mut out = Vec::with_capacity(NES);
    for ne in 0..NES {
        if l.blocks(ne).is_empty() {
            out.push(&[][..]);
            continue;
        }
        let chunk = l.chunks[ne].ok_or_else(|| {
            SimError::field(td, format!("KernelDMASrc.CoeffDMAConfig[{ne}].En"), 0, "this NE's chunk holds channels")
        })?;
        let at = i64::try_from(chunk.addr).unwrap_or(i64::MAX);
        let size = usize::try_from(chunk.size).unwrap_or(usize::MAX);
        out.push(mem.bytes(td, bar, at, size, &format!("KernelDMASrc.CoeffBaseAddr[{ne}] (coefficient chunk)"))?);
    }
    Ok(out)
}

/// Reads every coefficient (and the inline bias) of `l`.
pub fn read(mem: &Memory<'_>, td: usize, bar: Option<u8>, l: &Layout) -> Result<Kernel, SimError> {
    let bar = kbar(td, bar)?;
    let chunks = chunk_bytes(mem, td, bar, l)?;
    let total = l.groups.saturating_mul(l.cout);
    let count = total.saturating_mul(l.taps());
    // Every coefficient takes at least half a byte of its chunk (a sparse mask covers at
    // most 4 of them in 2 bytes), so a larger kernel cannot be read: refused before the
    // kernel is allocated.
    let avail: usize = chunks.iter().map(|c| c.len()).sum();
    if count > avail.saturating_mul(2) {
        let reason = format!(
            "{total} output channels of {} coefficients cannot lie in the {avail:#x} bytes of the coefficient chunks",
            l.taps()
        );
        return Err(SimError::field(td, "Common.Cout.Cout", l.cout as u64, reason));
    }
    let mut k = Kernel {
        cin: l.cin,
        kh: l.kh,
        kw: l.kw,
        w: vec![0.0; count],
        bias: if l.bias { vec![0.0; total] } else { Vec::new() },
    };
    for (ne, bytes) in chunks.into_iter().enumerate() {
        let blocks = l.blocks(ne);
        if blocks.is_empty() {
            continue;
        }
        let mut cur = Cursor { td, ne, bytes, at: l.head() as usize };
        for g in 0..l.groups {
            for b in &blocks {
                let first = g * l.cout + b.start;
                if l.bias {
                    for j in 0..b.len {
                        k.bias[first + j] = cur.value(Fmt::F16, "the inline bias")?;
                    }
                }
                match l.sparse {
                    true => sparse_block(&mut cur, &mut k, first, b.len)?,
                    false => dense_block(&mut cur, &mut k, l.fmt, first, b.len)?,
                }
            }
            if l.groups > 1 {
                cur.at = cur.at.div_ceil(64) * 64;
            }
        }
    }
    Ok(k)
}

/// `[for ci, ky, kx, j: W[first + j][ci][ky][kx]]`.
fn dense_block(cur: &mut Cursor<'_>, k: &mut Kernel, fmt: Fmt, first: usize, len: usize) -> Result<(), SimError> {
    let taps = k.kh * k.kw;
    for ci in 0..k.cin {
        for tap in 0..taps {
            for j in 0..len {
                let v = cur.value(fmt, "the coefficients")?;
                if let Some(slot) = k.w.get_mut(((first + j) * k.cin + ci) * taps + tap) {
                    *slot = v;
                }
            }
        }
    }
    Ok(())
}

/// The 1x1 sparse block after its bias: `[u16 L][for ci: u16 mask, the stored values]`.
fn sparse_block(cur: &mut Cursor<'_>, k: &mut Kernel, first: usize, len: usize) -> Result<(), SimError> {
    let (td, ne) = (cur.td, cur.ne);
    let at = cur.at;
    let declared = usize::from(cur.u16("the sparse block's length word")?);
    let lanes = ((1u32 << len.min(8)) - 1) << 8;
    for ci in 0..k.cin {
        let mask_at = cur.at;
        let mask = cur.u16("a sparse mask")?;
        if u32::from(mask) & !lanes != 0 {
            let field = format!("the sparse mask at byte {mask_at:#x} of chunk {ne} (input channel {ci})");
            let reason =
                format!("only bits 8..{} (the 1x1 tap's lanes of the block's {len} channels) are modelled", 8 + len);
            return Err(SimError::field(td, field, mask.into(), reason));
        }
        for j in 0..len {
            if mask & (1 << (8 + j)) != 0 {
                let v = cur.value(Fmt::F16, "a sparse value")?;
                if let Some(slot) = k.w.get_mut((first + j) * k.cin + ci) {
                    *slot = v;
                }
            }
        }
    }
    let read = cur.at - at - 2;
    if read != declared {
        let field = format!("the sparse block's length word at byte {at:#x} of chunk {ne}");
        let reason = format!("the masks and values of its {} input channels take {read:#x} bytes", k.cin);
        return Err(SimError::field(td, field, declared as u64, reason));
    }
    Ok(())
}

/// `count` fp16 values of a header stream (`name` is `bias` or `post-scale`).
pub fn vector(
    mem: &Memory<'_>,
    td: usize,
    bar: Option<u8>,
    s: &Stream,
    count: usize,
    name: &str,
    size_word: u16,
) -> Result<Vec<f32>, SimError> {
    let bar = kbar(td, bar)?;
    let need = 2 * count as u64;
    if need > s.size {
        let reason = format!("the {name} stream holds {:#x} bytes, {count} channels need {need:#x}", s.size);
        return Err(SimError::field(td, format!("word {size_word:#05x}"), s.size, reason));
    }
    let at = i64::try_from(s.addr).unwrap_or(i64::MAX);
    let bytes =
        mem.bytes(td, bar, at, 2 * count, &format!("the {name} stream (base word {:#05x})", size_word - 0x10))?;
    Ok(bytes.chunks_exact(2).map(|b| Fmt::F16.decode(b)).collect())
}

/// The activation tables at the head of every chunk that holds channels (a convolution
/// with NonlinearMode 2): each NE reads its own; the model runs one, so they must be the
/// same bytes.
pub fn chunk_table(mem: &Memory<'_>, td: usize, bar: Option<u8>, l: &Layout) -> Result<Table, SimError> {
    let heads: Vec<(usize, Stream)> = (0..NES)
        .filter(|&ne| !l.blocks(ne).is_empty())
        .filter_map(|ne| l.chunks[ne].map(|s| (ne, Stream { addr: s.addr, size: TABLE_BYTES as u64 })))
        .collect();
    let (_, first) =
        heads.first().ok_or_else(|| SimError::access(td, "a table in the coefficient chunks, but no chunk"))?;
    let table = self::table(mem, td, bar, first)?;
    let b = kbar(td, bar)?;
    let bytes =
        |s: &Stream| mem.bytes(td, b, i64::try_from(s.addr).unwrap_or(i64::MAX), TABLE_BYTES, "a chunk's table");
    let want = bytes(first)?.to_vec();
    for (ne, s) in &heads {
        if bytes(s)? != want.as_slice() {
            let reason = "every chunk starts with the same table (the model applies one)";
            return Err(SimError::field(td, format!("KernelDMASrc.CoeffBaseAddr[{ne}]"), s.addr, reason));
        }
    }
    Ok(table)
}

/// The activation table of coefficient channel 0.
pub fn table(mem: &Memory<'_>, td: usize, bar: Option<u8>, s: &Stream) -> Result<Table, SimError> {
    let bar = kbar(td, bar)?;
    if (s.size as usize) < TABLE_BYTES {
        let reason = format!("an activation table is {TABLE_BYTES:#x} bytes");
        return Err(SimError::field(td, "KernelDMASrc.CoeffBfrSize[0].MemBfrSize", s.size / 64, reason));
    }
    let at = i64::try_from(s.addr).unwrap_or(i64::MAX);
    let bytes = mem.bytes(td, bar, at, TABLE_BYTES, "KernelDMASrc.CoeffBaseAddr[0] (activation table)")?;
    Table::parse(bytes).map_err(|e| SimError::field(td, "activation table", s.addr, e))
}

#[cfg(test)]
#[path = "kernel_tests.rs"]
mod tests;
