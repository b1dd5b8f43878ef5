//! Weight banks: a convolution kernel dealt over the 16 kernel-DMA channels (one per NE)
//! and packed as Apple's current compiler packs it (`docs/rationale/current-compiler/
//! convolution.md` §1; the section hash of every stride-1 record and of the 1x1 stride-2
//! records is reproduced).
//!
//! - **Dealing.** The output channels of a group are dealt in passes of `16 * B`
//!   channels, `B = 2^OCGSize`: in a pass of `R` channels NE `i` gets the block of
//!   `b = ceil(R / 16)` consecutive channels starting at `i * b` (`b = B` in a full pass).
//!   Depthwise convolutions are dealt as one group of single-input channels.
//! - **A block** is its channels' biases (fp16, when the bias is inline), then the
//!   coefficients ordered input channel, kernel row, kernel column, output channel
//!   (output channel fastest), without padding.
//! - **A chunk** (NE `i`'s) is its blocks, pass after pass, group after group, each
//!   group's part padded to 64 bytes when there are several groups, the whole padded to
//!   64 bytes.
//! - **Sparse form** (stride-2 1x1 kernels, blocks of at most 4 channels): after the
//!   biases a u16 holds the byte length of the rest of the block; then per input channel
//!   a u16 mask (bit `8 + j` set when channel `j`'s coefficient is nonzero: the tap sits in
//!   slot 2 of a 2x2 grid of 4-lane slots) followed by the nonzero coefficients.
//!
//! Coefficients are converted to the kernel format first (fp32 becomes fp16, round to
//! nearest even; fp16, u8 and i8 stay).

use crate::encode::KERNEL_CHANNELS;
use crate::error::BackendError;
use crate::layout::round_up;
use crate::zeroed::Zeroed;
use anec_ir::mil::SharedBytes;
use anec_ir::{Blob, DType};
use half::f16;
use rayon::prelude::*;
use std::ops::Range;

/// The largest OCGSize Apple writes (32 output channels per NE and pass).
const MAX_OCG: u32 = 5;
/// Output values one NE accumulates at once: `2^OCGSize * Hout * Wout` stays within it
/// (1024 channels at 16x16 get OCGSize 4 with 32 channels per NE).
const ACCUMULATOR_BUDGET: u64 = 4096;
/// Lanes of a sparse tap slot, and the slot a 1x1 tap takes in the 2x2 grid.
const SPARSE_LANES: u32 = 4;
const SPARSE_SLOT_1X1: u32 = 2;

/// A convolution kernel, `[cout][cin_g][kh][kw]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// Element type of the coefficients in the engine's format (fp16, u8 or i8).
    pub fmt: DType,
    /// How `bytes` stores them: `fmt`, or fp32 for an fp16 kernel, converted once as it
    /// is packed (no converted copy of the kernel is ever held).
    pub source: DType,
    /// The coefficients, little-endian, output-channel-major: the blob's own bytes.
    pub bytes: SharedBytes,
    /// Output channels (all groups).
    pub cout: u32,
    /// Input channels per group.
    pub cin_g: u32,
    /// Kernel height and width.
    pub kh: u32,
    /// See `kh`.
    pub kw: u32,
}

impl Kernel {
    /// The kernel of `cout` output channels of `cin_g` x `kh` x `kw` stored in `blob`,
    /// converted to the kernel format.
    pub fn from_blob(blob: &Blob, cout: u32, cin_g: u32, kh: u32, kw: u32) -> Result<Kernel, BackendError> {
        let fmt = if blob.dtype == DType::F32 { DType::F16 } else { blob.dtype };
        let k = Kernel { fmt, source: blob.dtype, bytes: blob.bytes.clone(), cout, cin_g, kh, kw };
        let need = k.taps() * u64::from(cout) * k.source.size() as u64;
        if need != k.bytes.len() as u64 {
            let (have, shape) = (k.bytes.len(), format!("{cout}x{cin_g}x{kh}x{kw}"));
            return Err(BackendError::Internal(format!("{have} weight bytes for a {shape} kernel")));
        }
        Ok(k)
    }

    /// Coefficients per output channel.
    fn taps(&self) -> u64 {
        u64::from(self.cin_g) * u64::from(self.kh) * u64::from(self.kw)
    }

    /// The kernel with its coefficients in the engine's format (an fp32 source converted
    /// whole; for the paths that read single coefficients).
    pub fn in_format(&self) -> Kernel {
        if self.source == self.fmt {
            return self.clone();
        }
        let mut bytes = vec![0; self.bytes.len() / 4 * 2];
        f32_to_f16(&self.bytes, &mut bytes);
        Kernel { source: self.fmt, bytes: bytes.into(), ..self.clone() }
    }

    /// Multiplies output channel `c`'s coefficients by `scale[c]` (fp16 kernels only:
    /// a per-channel gain folded into the weights).
    pub fn scale_channels(&mut self, scale: &[f64]) -> Result<(), BackendError> {
        if self.fmt != DType::F16 || scale.len() != self.cout as usize {
            return Err(BackendError::Internal("per-channel scale of a non-fp16 or mis-sized kernel".into()));
        }
        *self = self.in_format();
        let per = self.taps() as usize * 2;
        let mut bytes = self.bytes.to_vec();
        for (ch, s) in bytes.chunks_mut(per.max(1)).zip(scale) {
            for v in ch.chunks_exact_mut(2) {
                let x = f16::from_le_bytes([v[0], v[1]]).to_f64() * s;
                v.copy_from_slice(&f16::from_f64(x).to_le_bytes());
            }
        }
        self.bytes = bytes.into();
        Ok(())
    }
}

/// How a task's share of a kernel is packed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packing {
    /// Groups dealt separately (the NumGroups register: 1 for ordinary and depthwise
    /// convolutions).
    pub groups: u32,
    /// The output channels of each group this task computes (a slice when the task is
    /// one of several; relative to the group).
    pub channels: Range<u32>,
    /// log2 of the block of output channels an NE gets per pass.
    pub ocg_size: u32,
    /// Sparse form (1x1 kernels with blocks of at most 4 channels).
    pub sparse: bool,
}

/// A packed bank: one chunk per NE that gets output channels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightBank {
    /// Element type of the stored coefficients.
    pub fmt: DType,
    /// The chunks' bytes, chunk `i` for NE `i` (NEs without channels are left out at the
    /// end).
    pub chunks: Vec<Vec<u8>>,
}

/// OCGSize for `n` output channels per group producing `pixels` output values each:
/// `min(ceil(log2(ceil(n / 16))), 5)`, lowered while `2^OCGSize * pixels` exceeds the
/// accumulator budget (evidence: §1 of the rationale; 512..1024 channels at 1x1 give 5,
/// 1024 at 16x16 give 4, 128 at 16x16 give 3, 16 per group or depthwise give 0).
pub fn ocg_size(n: u32, pixels: u64) -> u32 {
    let per_ne = n.div_ceil(KERNEL_CHANNELS as u32).max(1);
    let mut ocg = per_ne.next_power_of_two().trailing_zeros().min(MAX_OCG);
    while ocg > 0 && (1u64 << ocg) * pixels > ACCUMULATOR_BUDGET {
        ocg -= 1;
    }
    ocg
}

/// The blocks (channel ranges, relative to the first) NE `ne` gets of `n` channels dealt
/// in passes of `16 * 2^ocg`.
pub fn blocks(n: u32, ocg: u32, ne: u32) -> Vec<Range<u32>> {
    let pass = (KERNEL_CHANNELS as u32) << ocg;
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        let r = (n - start).min(pass);
        let b = r.div_ceil(KERNEL_CHANNELS as u32);
        let lo = (ne * b).min(r);
        let hi = ((ne + 1) * b).min(r);
        if lo < hi {
            out.push(start + lo..start + hi);
        }
        start += r;
    }
    out
}

/// Little-endian fp32 values as fp16, as many as `out` holds.
fn f32_to_f16(src: &[u8], out: &mut [u8]) {
    for (h, c) in out.chunks_exact_mut(2).zip(src.chunks_exact(4)) {
        h.copy_from_slice(&f16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes());
    }
}

/// Packs `k` (with `bias`, fp16 bits per output channel, inline) as `p` says.
pub fn bank(k: &Kernel, bias: Option<&[u16]>, p: &Packing) -> Result<WeightBank, BackendError> {
    let mut all = Zeroed::default();
    let ranges = bank_into(k, bias, p, &mut all)?;
    let all = all.into_vec();
    let chunks = ranges.into_iter().map(|r| all.get(r).unwrap_or_default().to_vec()).collect();
    Ok(WeightBank { fmt: k.fmt, chunks })
}

/// [`bank`] written at the end of `out` (whose length must be a multiple of 64): the
/// chunks one after the other, each padded to 64 bytes, in place (no chunk is built
/// apart and copied); returns each chunk's range in `out`.
pub fn bank_into(
    k: &Kernel,
    bias: Option<&[u16]>,
    p: &Packing,
    out: &mut Zeroed,
) -> Result<Vec<Range<usize>>, BackendError> {
    check_packing(k, bias, p)?;
    if !out.len().is_multiple_of(64) {
        return Err(BackendError::Internal("a bank written at an unaligned offset".into()));
    }
    let Some(plan) = dense_plan(k, bias, p)? else {
        let ranges = sparse_chunks(&k.in_format(), bias, p, &ne_blocks(p), out)?;
        release_packed(k, p);
        return Ok(ranges);
    };
    let start = out.len();
    pack_dense(k, bias, p, &plan, out.grow(plan.len()))?;
    Ok(plan.chunk_ranges(start))
}

/// A dense bank before it is packed: each NE's blocks and the length of its chunk, which
/// depend on the shapes only (a sparse bank's depend on the values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DensePlan {
    blocks: Vec<Vec<Range<u32>>>,
    lens: Vec<usize>,
}

impl DensePlan {
    /// The bank's length: its chunks, each padded to 64 bytes.
    pub fn len(&self) -> usize {
        self.lens.iter().sum()
    }

    /// True for a bank with no chunk.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// Each chunk's range when the bank starts at `start`.
    pub fn chunk_ranges(&self, start: usize) -> Vec<Range<usize>> {
        let mut at = start;
        self.lens
            .iter()
            .map(|&len| {
                at += len;
                at - len..at
            })
            .collect()
    }
}

/// The arguments of a packing, checked.
fn check_packing(k: &Kernel, bias: Option<&[u16]>, p: &Packing) -> Result<(), BackendError> {
    if p.groups == 0 || !k.cout.is_multiple_of(p.groups) || bias.is_some_and(|b| b.len() != k.cout as usize) {
        return Err(BackendError::Internal(format!("a kernel of {} channels in {} groups", k.cout, p.groups)));
    }
    if p.sparse && (k.kh, k.kw, k.fmt) != (1, 1, DType::F16) {
        return Err(BackendError::Internal("the sparse form is for fp16 1x1 kernels".into()));
    }
    Ok(())
}

/// Each NE's blocks of output channels (NEs without any left out at the end).
fn ne_blocks(p: &Packing) -> Vec<Vec<Range<u32>>> {
    let n = p.channels.end.saturating_sub(p.channels.start);
    (0..KERNEL_CHANNELS as u32).map(|ne| blocks(n, p.ocg_size, ne)).take_while(|m| !m.is_empty()).collect()
}

/// The plan of `k`'s bank as `p` packs it; `None` for the sparse form.
pub fn dense_plan(k: &Kernel, bias: Option<&[u16]>, p: &Packing) -> Result<Option<DensePlan>, BackendError> {
    check_packing(k, bias, p)?;
    if p.sparse {
        return Ok(None);
    }
    let blocks = ne_blocks(p);
    let lens = blocks.iter().map(|m| dense_len(k, bias.is_some(), p.groups, m)).collect();
    Ok(Some(DensePlan { blocks, lens }))
}

/// Packs the planned dense bank into `dst` (its exact length, zero), on all cores when it
/// is large, then lets the kernel rows it read leave memory.
pub fn pack_dense(
    k: &Kernel,
    bias: Option<&[u16]>,
    p: &Packing,
    plan: &DensePlan,
    dst: &mut [u8],
) -> Result<(), BackendError> {
    if dst.len() != plan.len() {
        return Err(BackendError::Internal(format!("a bank of {} bytes given {} bytes", plan.len(), dst.len())));
    }
    let mut slots = Vec::with_capacity(plan.lens.len());
    let mut rest = dst;
    for &len in &plan.lens {
        let (chunk, tail) = rest.split_at_mut(len.min(rest.len()));
        slots.push(chunk);
        rest = tail;
    }
    let fill = |(buf, mine): (&mut [u8], &Vec<Range<u32>>)| dense_chunk(&mut Slot { buf, at: 0 }, k, bias, p, mine);
    let work = slots.into_iter().zip(&plan.blocks);
    if plan.len() >= PARALLEL_BANK {
        let jobs: Vec<_> = work.collect();
        jobs.into_par_iter().try_for_each(fill)?;
    } else {
        work.map(fill).collect::<Result<Vec<()>, _>>()?;
    }
    release_packed(k, p);
    Ok(())
}

/// Lets the kernel rows just packed leave memory (a mapped weight file's pages): each
/// weight is read once, so a model's weights need not all be resident at the end.
fn release_packed(k: &Kernel, p: &Packing) {
    let row = k.taps() as usize * k.source.size();
    let (start, end) = (p.channels.start as usize * row, p.channels.end as usize * row);
    if p.groups == 1 {
        k.bytes.slice(start..end).inspect(SharedBytes::release);
    } else if p.channels == (0..k.cout / p.groups) {
        k.bytes.release();
    }
}

/// Banks at least this large are packed on all cores, one NE's chunk per job (each chunk
/// has its own place, so the bytes do not depend on the thread count).
const PARALLEL_BANK: usize = 1 << 20;

/// One NE's dense chunk: its blocks of every group, each group's part padded to 64 bytes
/// when there are several, the whole padded to 64. Fails unless it fills exactly the
/// length [`dense_len`] gave.
fn dense_chunk(
    out: &mut Slot<'_>,
    k: &Kernel,
    bias: Option<&[u16]>,
    p: &Packing,
    mine: &[Range<u32>],
) -> Result<(), BackendError> {
    let per_group = k.cout / p.groups;
    for g in 0..p.groups {
        let first = g * per_group + p.channels.start;
        for b in mine {
            dense_block(out, k, bias, first + b.start..first + b.end);
        }
        if p.groups > 1 {
            out.pad64();
        }
    }
    out.pad64();
    if out.at != out.buf.len() {
        return Err(BackendError::Internal(format!(
            "a weight chunk of {} bytes where {} were planned",
            out.at,
            out.buf.len()
        )));
    }
    Ok(())
}

/// The exact length of one NE's dense chunk of `mine`.
fn dense_len(k: &Kernel, bias: bool, groups: u32, mine: &[Range<u32>]) -> usize {
    let per_channel = k.taps() * k.fmt.size() as u64 + if bias { 2 } else { 0 };
    let part: u64 = mine.iter().map(|b| u64::from(b.end - b.start) * per_channel).sum();
    let mut len = 0u64;
    for _ in 0..groups {
        len += part;
        if groups > 1 {
            len = round_up(len, 64);
        }
    }
    round_up(len, 64) as usize
}

/// The sparse chunks (their lengths depend on the values), one after the other.
fn sparse_chunks(
    k: &Kernel,
    bias: Option<&[u16]>,
    p: &Packing,
    plans: &[Vec<Range<u32>>],
    section: &mut Zeroed,
) -> Result<Vec<Range<usize>>, BackendError> {
    let per_group = k.cout / p.groups;
    let mut ranges = Vec::with_capacity(plans.len());
    // Built apart (the lengths depend on the values), then appended: `section` is at a
    // multiple of 64, so the padding within is the same.
    let base = section.len();
    let out = &mut Vec::new();
    for mine in plans {
        let start = out.len();
        for g in 0..p.groups {
            let first = g * per_group + p.channels.start;
            for b in mine {
                sparse_block(out, k, bias, first + b.start..first + b.end)?;
            }
            if p.groups > 1 {
                pad64(out);
            }
        }
        pad64(out);
        ranges.push(base + start..base + out.len());
    }
    section.extend_from_slice(out);
    Ok(ranges)
}

fn pad64(v: &mut Vec<u8>) {
    v.resize(round_up(v.len() as u64, 64) as usize, 0);
}

/// Where a dense chunk is written: the section's vector (appending) or the chunk's own
/// slice of it (filled in place, on any thread).
trait Sink {
    /// Appends `b`.
    fn put(&mut self, b: &[u8]);

    /// The next `len` bytes, to be filled (zero).
    fn next(&mut self, len: usize) -> &mut [u8];
}

impl Sink for Vec<u8> {
    fn put(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }

    fn next(&mut self, len: usize) -> &mut [u8] {
        let start = self.len();
        self.resize(start + len, 0);
        self.get_mut(start..).unwrap_or_default()
    }
}

/// A chunk's slice, filled from its start (already zero).
struct Slot<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Slot<'_> {
    /// Skips to the next multiple of 64 bytes from the chunk's start (the zeros are there).
    fn pad64(&mut self) {
        self.at = round_up(self.at as u64, 64) as usize;
    }
}

impl Sink for Slot<'_> {
    fn put(&mut self, b: &[u8]) {
        self.next(b.len()).copy_from_slice(b);
    }

    /// Past the end of the slot, nothing (the length check of [`dense_chunk`] then fails).
    fn next(&mut self, len: usize) -> &mut [u8] {
        let at = self.at;
        self.at += len;
        self.buf.get_mut(at..at + len).unwrap_or_default()
    }
}

fn push_bias(out: &mut impl Sink, bias: Option<&[u16]>, chans: &Range<u32>) {
    if let Some(b) = bias {
        for oc in chans.clone() {
            out.put(&b.get(oc as usize).copied().unwrap_or(0).to_le_bytes());
        }
    }
}

/// `[biases][coefficients: tap-major, output channel fastest]`: the block's rows of the
/// kernel (one per output channel) read across, a coefficient of each row per tap.
fn dense_block(out: &mut impl Sink, k: &Kernel, bias: Option<&[u16]>, chans: Range<u32>) {
    push_bias(out, bias, &chans);
    let size = k.fmt.size();
    let (row, stored) = (k.taps() as usize * size, k.taps() as usize * k.source.size());
    let all: &[u8] = &k.bytes;
    let converted: Vec<u8>;
    let (all, first) = if k.source == k.fmt {
        (all, chans.start as usize)
    } else {
        // An fp32 source: the block's rows converted here, once.
        let src = all.get(chans.start as usize * stored..chans.end as usize * stored).unwrap_or_default();
        let mut v = vec![0; chans.len() * row];
        f32_to_f16(src, &mut v);
        converted = v;
        (converted.as_slice(), 0)
    };
    let rows: Vec<&[u8]> =
        (first..first + chans.len()).map(|oc| all.get(oc * row..(oc + 1) * row).unwrap_or(&[])).collect();
    let dst = out.next(rows.len() * row);
    match size {
        1 => transpose::<1>(dst, &rows),
        2 => transpose_halves(dst, &rows),
        _ => transpose::<4>(dst, &rows),
    }
}

/// [`transpose`] of 2-byte elements: when the rows and the elements of each come in whole
/// 8 x 8 tiles, each tile is turned in registers and written as 16-byte runs; otherwise
/// [`transpose`]'s path (the result is the same).
fn transpose_halves(dst: &mut [u8], rows: &[&[u8]]) {
    const T: usize = 8;
    let (n, width) = (rows.len(), rows.len() * 2);
    let taps = if n == 0 { 0 } else { dst.len() / width };
    if n == 0 || !n.is_multiple_of(T) || !taps.is_multiple_of(T) {
        return transpose::<2>(dst, rows);
    }
    for c0 in (0..taps).step_by(T) {
        for (g, group) in rows.chunks_exact(T).enumerate() {
            let mut tile = [[0u16; T]; T];
            for (i, row) in group.iter().enumerate() {
                let Some(src) = row.get(c0 * 2..c0 * 2 + 2 * T) else { continue };
                for (j, v) in src.chunks_exact(2).enumerate() {
                    tile[j][i] = u16::from_le_bytes([v[0], v[1]]);
                }
            }
            for (j, column) in tile.iter().enumerate() {
                let at = (c0 + j) * width + g * T * 2;
                if let Some(out) = dst.get_mut(at..at + 2 * T) {
                    for (o, v) in out.chunks_exact_mut(2).zip(column) {
                        o.copy_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
    }
}

/// Writes `rows` (of `S`-byte elements) into `dst` column by column: element `t` of every
/// row, then element `t + 1`. The element size is a constant so that each copy is one move,
/// not a call, and the columns go in bands of [`BAND`] bytes of each row, so that every row
/// is read a cache line at a time and a band's writes stay in the first-level cache (this
/// loop is most of a large model's packing).
fn transpose<const S: usize>(dst: &mut [u8], rows: &[&[u8]]) {
    let width = rows.len() * S;
    if width == 0 {
        return;
    }
    let per_band = BAND / S;
    for (b, band) in dst.chunks_mut(width * per_band).enumerate() {
        let first = b * per_band;
        for (r, row) in rows.iter().enumerate() {
            let src = row.get(first * S..).unwrap_or_default().chunks_exact(S);
            for (v, column) in src.zip(band.chunks_exact_mut(width)) {
                if let Some(slot) = column.get_mut(r * S..r * S + S) {
                    slot.copy_from_slice(v);
                }
            }
        }
    }
}

/// Bytes of each row a band of [`transpose`] takes: one cache line.
const BAND: usize = 64;

/// The bytes of coefficient `(oc, tap)` of `k`, `tap` running over input channel, row,
/// column.
fn coefficient(k: &Kernel, oc: u32, tap: u64) -> &[u8] {
    let size = k.fmt.size();
    let i = (u64::from(oc) * k.taps() + tap) as usize * size;
    k.bytes.get(i..i + size).unwrap_or(&[])
}

/// `[biases][u16 length][per input channel: u16 mask, nonzero values]` of a 1x1 kernel.
fn sparse_block(out: &mut Vec<u8>, k: &Kernel, bias: Option<&[u16]>, chans: Range<u32>) -> Result<(), BackendError> {
    if chans.len() > SPARSE_LANES as usize {
        return Err(BackendError::Internal(format!("a sparse block of {} channels", chans.len())));
    }
    push_bias(out, bias, &chans);
    let mut body = Vec::new();
    for cin in 0..u64::from(k.cin_g) {
        let values: Vec<(u32, &[u8])> =
            chans.clone().enumerate().map(|(j, oc)| (j as u32, coefficient(k, oc, cin))).collect();
        let nonzero: Vec<&(u32, &[u8])> = values.iter().filter(|(_, v)| !is_zero(v)).collect();
        let mask = nonzero.iter().fold(0u16, |m, (j, _)| m | 1 << (SPARSE_SLOT_1X1 * SPARSE_LANES + j));
        body.extend_from_slice(&mask.to_le_bytes());
        nonzero.iter().for_each(|(_, v)| body.extend_from_slice(v));
    }
    let len = u16::try_from(body.len())
        .map_err(|_| BackendError::Internal(format!("a sparse block of {} bytes", body.len())))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(())
}

/// +0 or -0 in fp16 (the sparse form leaves both out).
fn is_zero(v: &[u8]) -> bool {
    matches!(v, [0, 0] | [0, 0x80])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn kernel(cout: u32, cin_g: u32, k: u32, value: impl Fn(u32, u64) -> f32) -> Kernel {
        let taps = u64::from(cin_g * k * k);
        let bytes = (0..cout)
            .flat_map(|oc| (0..taps).map(move |t| (oc, t)))
            .flat_map(|(oc, t)| f16::from_f32(value(oc, t)).to_le_bytes());
        Kernel { fmt: DType::F16, source: DType::F16, bytes: bytes.collect(), cout, cin_g, kh: k, kw: k }
    }

    fn halves(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect()
    }

    fn all(cout: u32, ocg: u32) -> Packing {
        Packing { groups: 1, channels: 0..cout, ocg_size: ocg, sparse: false }
    }

    /// Rationale §1: 512..1024 channels at 1x1 give 5 (cap), 1024 at 16x16 give 4 (the
    /// accumulator budget), 128 at 16x16 3, 64 at 8x8 2, 16 per group and depthwise 0.
    #[test]
    fn ocg_size_follows_channels_and_the_accumulator_budget() {
        assert_eq!(ocg_size(1024, 1), 5);
        assert_eq!(ocg_size(768, 1), 5);
        assert_eq!(ocg_size(512, 256), 4);
        assert_eq!(ocg_size(128, 256), 3);
        assert_eq!(ocg_size(64, 64), 2);
        assert_eq!(ocg_size(16, 256), 0);
        assert_eq!(ocg_size(1, 256), 0);
        assert_eq!(ocg_size(3, 1), 0);
    }

    /// `env_conv_k1_c768_n768` (OCGSize 5): NE i gets 32i..32i+31, then 512+16i..+15.
    #[test]
    fn a_partial_last_pass_gives_each_ne_a_smaller_block() {
        assert_eq!(blocks(768, 5, 1), vec![32..64, 528..544]);
        assert_eq!(blocks(64, 0, 3), vec![3..4, 19..20, 35..36, 51..52]);
        assert_eq!(blocks(3, 0, 2), vec![2..3]);
        assert!(blocks(3, 0, 3).is_empty());
    }

    /// The 3x3 64->64 record with bias: chunk = 4 biases + 64x9x4 coefficients = 0x1240,
    /// the coefficients output channel fastest.
    #[test]
    fn blocks_put_the_bias_first_and_the_output_channel_fastest() {
        let k = kernel(64, 64, 3, |oc, t| (oc * 16) as f32 + (t % 16) as f32);
        let bias: Vec<u16> = (0..64).map(|c| f16::from_f32(c as f32).to_bits()).collect();
        let b = bank(&k, Some(&bias), &all(64, 2)).unwrap();
        assert_eq!(b.chunks.len(), 16);
        assert!(b.chunks.iter().all(|c| c.len() == 0x1240));
        let c1 = halves(&b.chunks[1]);
        assert_eq!(&c1[..4], &[4.0, 5.0, 6.0, 7.0]);
        assert_eq!(&c1[4..9], &[64.0, 80.0, 96.0, 112.0, 65.0]);
    }

    /// Grouped (g4, 16 per group, 3x3, bias): each group's part (2 + 288 bytes) padded to
    /// 64, chunk 0x500; NE i gets channel i of every group.
    #[test]
    fn groups_are_dealt_separately_and_padded() {
        let k = kernel(64, 16, 3, |oc, _| oc as f32);
        let bias = vec![0x3C00u16; 64];
        let p = Packing { groups: 4, channels: 0..16, ocg_size: 0, sparse: false };
        let b = bank(&k, Some(&bias), &p).unwrap();
        assert!(b.chunks.iter().all(|c| c.len() == 0x500));
        assert_eq!(halves(&b.chunks[2][0x140..0x144]), vec![1.0, 18.0]);
    }

    /// Depthwise with bias: 4 x (2 + 18) = 80 bytes -> 0x80; NE i gets i, i+16, ...
    #[test]
    fn depthwise_is_one_group_of_single_channel_blocks() {
        let k = kernel(64, 1, 3, |oc, _| oc as f32);
        let bias = vec![0u16; 64];
        let b = bank(&k, Some(&bias), &all(64, 0)).unwrap();
        assert!(b.chunks.iter().all(|c| c.len() == 0x80));
        assert_eq!(halves(&b.chunks[5][..20])[1..3], [5.0, 5.0]);
        assert_eq!(halves(&b.chunks[5][20..40])[1], 21.0);
    }

    /// `env_conv_k1_c64_n64_s16_st2_g1_bias1`: the leading u16 of a block is the byte
    /// length of the masks and values after it (526 = 64 masks + 199 values there).
    #[test]
    fn sparse_blocks_hold_masks_and_nonzero_values() {
        let k = kernel(4, 2, 1, |oc, cin| if oc == 1 && cin == 0 { 0.0 } else { 1.0 + oc as f32 });
        let p = Packing { groups: 1, channels: 0..4, ocg_size: 0, sparse: true };
        let b = bank(&k, Some(&[0x3C00; 4]), &p).unwrap();
        let c0 = &b.chunks[0];
        // One channel per NE: [bias][len = 2 * (2 + 2)][mask 0x100][v][mask 0x100][v].
        assert_eq!(&c0[..12], &[0x00, 0x3C, 8, 0, 0, 1, 0x00, 0x3C, 0, 1, 0x00, 0x3C]);
        let c1 = &b.chunks[1];
        // Channel 1's coefficient of input 0 is zero: an empty mask, no value.
        assert_eq!(&c1[2..10], &[6, 0, 0, 0, 0, 1, 0x00, 0x40]);
    }

    /// The 8 x 8 tiles of 2-byte elements give what the element-by-element path gives,
    /// whole tiles or not.
    #[test]
    fn tiled_halves_transpose_as_the_plain_path_does() {
        for (n, taps) in [(8, 8), (32, 2048), (16, 24), (5, 8), (8, 5), (13, 29), (1, 1), (40, 17)] {
            let data: Vec<Vec<u8>> = (0..n).map(|r| (0..taps * 2).map(|i| (r * 31 + i * 7) as u8).collect()).collect();
            let rows: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let (mut tiled, mut plain) = (vec![0u8; n * taps * 2], vec![0u8; n * taps * 2]);
            transpose_halves(&mut tiled, &rows);
            transpose::<2>(&mut plain, &rows);
            assert_eq!(tiled, plain, "{n} rows of {taps}");
            if n > 1 {
                assert_eq!(&plain[2..4], &data[1][0..2], "element 0 of row 1 comes second");
            }
        }
    }

    #[test]
    fn per_channel_scales_fold_into_the_coefficients() {
        let mut k = kernel(2, 1, 1, |_, _| 3.0);
        k.scale_channels(&[0.5, 2.0]).unwrap();
        assert_eq!(halves(&k.bytes), vec![1.5, 6.0]);
    }

    #[test]
    fn fp32_converts_to_fp16_and_sizes_are_checked() {
        let values = [3.0f32, -1.0, 0.5, 2.0, 1.0, 4.0];
        let blob = Blob { dtype: DType::F32, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let k = Kernel::from_blob(&blob, 2, 3, 1, 1).unwrap();
        assert_eq!((k.fmt, k.source), (DType::F16, DType::F32));
        assert_eq!(halves(&k.in_format().bytes), values);
        // Packed as the same kernel stored in fp16 is.
        let f16k = kernel(2, 3, 1, |oc, tap| values[oc as usize * 3 + tap as usize]);
        assert_eq!(bank(&k, None, &all(2, 0)).unwrap(), bank(&f16k, None, &all(2, 0)).unwrap());
        assert!(Kernel::from_blob(&blob, 3, 1, 1, 1).is_err());
    }
}
