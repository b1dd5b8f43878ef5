//! The kernel DMA at run time: convolution coefficients from the coefficient chunks, the
//! per-channel bias and post-scale vectors of the header streams, and activation tables,
//! all read from the buffer of the BAR `KBase0` names (relative to it, as the TD fields
//! hold them; the Mach-O relocations of `__text` are not applied).
//!
//! Coefficient layout (Apple's conv.hwx, formats-hwx.md §3): output channels are grouped
//! 2^OCGSize per chunk, chunk j holding channels j * 2^OCGSize onwards; within a chunk each
//! output channel's coefficients start on a 64-byte boundary and run over the input
//! channels of its group, then kernel rows, then kernel columns (Cin/groups x Kh x Kw;
//! the order within a channel for windows larger than 1x1 is our encoder's, unconfirmed
//! by an Apple program). Vectors are one fp16 value per output channel.

use super::error::SimError;
use super::memory::{Fmt, Memory};
use super::table::{Table, TABLE_BYTES};
use super::td::Stream;

/// Coefficients of a convolution, `[cout][cin_g][kh][kw]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    /// Input channels per group.
    pub cin_g: usize,
    /// Kernel height and width.
    pub kh: usize,
    /// See `kh`.
    pub kw: usize,
    /// The values.
    pub data: Vec<f32>,
}

impl Weights {
    /// The coefficient of output channel `co`, group input channel `ci`, tap `(ky, kx)`.
    pub fn at(&self, co: usize, ci: usize, ky: usize, kx: usize) -> f32 {
        self.data.get(((co * self.cin_g + ci) * self.kh + ky) * self.kw + kx).copied().unwrap_or(0.0)
    }
}

/// The shape of a convolution kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelShape {
    /// Output channels.
    pub cout: usize,
    /// Input channels per group.
    pub cin_g: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
}

fn kbar(td: usize, kbar: Option<u8>) -> Result<u8, SimError> {
    kbar.ok_or_else(|| SimError::access(td, "the kernel DMA is read without KBE0"))
}

/// Reads the coefficients of `shape` in format `fmt` from `chunks` (2^`ocg_size` output
/// channels each).
pub fn weights(
    mem: &Memory<'_>,
    td: usize,
    bar: Option<u8>,
    fmt: Fmt,
    ocg_size: u32,
    chunks: &[Stream],
    shape: KernelShape,
) -> Result<Weights, SimError> {
    let bar = kbar(td, bar)?;
    let taps = shape.cin_g * shape.kh * shape.kw;
    let per_channel = taps * fmt.size();
    let stride = per_channel.div_ceil(64) * 64;
    let group = 1usize << ocg_size.min(16);
    let mut data = Vec::new();
    for co in 0..shape.cout {
        let (j, k) = (co / group, co % group);
        let chunk = chunks.get(j).ok_or_else(|| SimError::access(td, format!("no coefficient chunk {j}")))?;
        let field = format!("KernelDMASrc.CoeffBfrSize[{j}].MemBfrSize");
        let start = (k * stride) as u64;
        if start + per_channel as u64 > chunk.size {
            let need = start + per_channel as u64;
            let reason =
                format!("output channel {co} needs {need:#x} bytes of chunk {j}, which holds {:#x}", chunk.size);
            return Err(SimError::field(td, field, chunk.size / 64, reason));
        }
        let at = i64::try_from(chunk.addr + start).unwrap_or(i64::MAX);
        let what = format!("KernelDMASrc.CoeffBaseAddr[{j}] (output channel {co})");
        let bytes = mem.bytes(td, bar, at, per_channel, &what)?;
        data.extend(bytes.chunks_exact(fmt.size()).map(|b| fmt.decode(b)));
    }
    Ok(Weights { cin_g: shape.cin_g, kh: shape.kh, kw: shape.kw, data })
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::sim::memory::Buffer;
    use std::borrow::Cow;

    fn mem(bytes: Vec<u8>) -> Memory<'static> {
        Memory::new(vec![(1, Buffer { name: "__const".into(), bytes: Cow::Owned(bytes), writable: false })])
    }

    #[test]
    fn channels_start_on_64_byte_boundaries_within_chunks() {
        // Two output channels per chunk (OCGSize 1), 3 fp16 taps each: channel 1 at 0x40.
        let mut bytes = vec![0u8; 0x100];
        for (ch, base) in [(0u8, 0x00usize), (1, 0x40), (2, 0x80)] {
            for t in 0..3 {
                let v = half::f16::from_f32(f32::from(10 * ch + t as u8)).to_le_bytes();
                bytes[base + 2 * t..base + 2 * t + 2].copy_from_slice(&v);
            }
        }
        let chunks = [Stream { addr: 0, size: 0x80 }, Stream { addr: 0x80, size: 0x40 }];
        let shape = KernelShape { cout: 3, cin_g: 3, kh: 1, kw: 1 };
        let w = weights(&mem(bytes), 0, Some(1), Fmt::F16, 1, &chunks, shape).unwrap();
        assert_eq!(w.data, vec![0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0]);
    }

    #[test]
    fn short_chunks_and_streams_are_errors_naming_the_size_field() {
        let chunks = [Stream { addr: 0, size: 0x40 }];
        let shape = KernelShape { cout: 2, cin_g: 3, kh: 1, kw: 1 };
        let e = weights(&mem(vec![0; 0x100]), 3, Some(1), Fmt::F16, 1, &chunks, shape).unwrap_err().to_string();
        assert!(e.starts_with("TD 3: KernelDMASrc.CoeffBfrSize[0].MemBfrSize = 0x1"), "{e}");
        let s = Stream { addr: 0xC0, size: 0x40 };
        assert!(vector(&mem(vec![0; 0x100]), 0, Some(1), &s, 40, "bias", 0x114).is_err());
        assert!(vector(&mem(vec![0; 0x100]), 0, Some(1), &s, 4, "bias", 0x114).is_ok());
        assert!(vector(&mem(vec![0; 0x100]), 0, None, &s, 4, "bias", 0x114).is_err());
    }
}
