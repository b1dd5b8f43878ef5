//! Memory the engines see: one byte buffer per BAR (DRAM, byte addressed, every access
//! bounds-checked), the on-chip L2 buffer, the element formats (fp16, u8, i8) and the dense
//! `[C][D][H][W]` arrays the engines compute on.

use super::error::SimError;
use half::f16;
use std::borrow::Cow;

/// Number of BAR entries.
pub const BARS: usize = 32;
/// Bytes of L2 the 17-bit, 16-byte-unit L2 address fields reach (2 MiB).
pub const L2_SIZE: usize = 1 << 21;

/// An element format: the ChCfg / tile-DMA MemFmt / KernelFmt code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// Code 0: unsigned 8-bit integer.
    U8,
    /// Code 1: signed 8-bit integer.
    I8,
    /// Code 2: IEEE half precision.
    F16,
}

impl Fmt {
    /// The format of a register code (0 u8, 1 i8, 2 fp16); 3 and above are not modelled.
    pub fn from_code(code: u64) -> Option<Fmt> {
        match code {
            0 => Some(Fmt::U8),
            1 => Some(Fmt::I8),
            2 => Some(Fmt::F16),
            _ => None,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Fmt::U8 | Fmt::I8 => 1,
            Fmt::F16 => 2,
        }
    }

    /// The name used in [`crate::sim::IoSpec::dtype`].
    pub fn name(self) -> &'static str {
        match self {
            Fmt::U8 => "uint8",
            Fmt::I8 => "int8",
            Fmt::F16 => "fp16",
        }
    }

    /// `v` as this format stores it: fp16 rounds to nearest even (overflow to infinity);
    /// the 8-bit formats round half to even and saturate (NaN stores as 0).
    pub fn round(self, v: f32) -> f32 {
        match self {
            Fmt::F16 => f16::from_f32(v).to_f32(),
            _ if v.is_nan() => 0.0,
            Fmt::U8 => v.round_ties_even().clamp(0.0, 255.0),
            Fmt::I8 => v.round_ties_even().clamp(-128.0, 127.0),
        }
    }

    /// The value of the element stored at the start of `bytes` (which holds at least
    /// [`Fmt::size`] bytes).
    pub fn decode(self, bytes: &[u8]) -> f32 {
        match (self, bytes) {
            (Fmt::F16, [a, b, ..]) => f16::from_le_bytes([*a, *b]).to_f32(),
            (Fmt::U8, [a, ..]) => f32::from(*a),
            (Fmt::I8, [a, ..]) => f32::from(i8::from_le_bytes([*a])),
            _ => 0.0,
        }
    }

    /// Stores `v` (rounded by [`Fmt::round`]) at the start of `bytes`.
    pub fn encode(self, v: f32, bytes: &mut [u8]) {
        let r = self.round(v);
        match (self, bytes) {
            (Fmt::F16, [a, b, ..]) => [*a, *b] = f16::from_f32(r).to_le_bytes(),
            // `r` is integral and in range after `round`, so the casts are exact.
            (Fmt::U8, [a, ..]) => *a = r as u8,
            (Fmt::I8, [a, ..]) => *a = (r as i8).to_le_bytes()[0],
            _ => {}
        }
    }
}

/// Extents of a tensor box as the engines address it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Channels.
    pub c: usize,
    /// Depth.
    pub d: usize,
    /// Height.
    pub h: usize,
    /// Width.
    pub w: usize,
}

impl Dims {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.c * self.d * self.h * self.w
    }

    /// Index of `(c, d, h, w)` in a dense array.
    pub fn index(&self, c: usize, d: usize, h: usize, w: usize) -> usize {
        ((c * self.d + d) * self.h + h) * self.w + w
    }
}

/// A dense `[C][D][H][W]` array of values.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// Extents.
    pub dims: Dims,
    /// `dims.len()` values.
    pub data: Vec<f32>,
}

impl Dense {
    /// Zeros of `dims`.
    pub fn zeros(dims: Dims) -> Dense {
        Dense { dims, data: vec![0.0; dims.len()] }
    }

    /// The value at `(c, d, h, w)` (0 outside).
    pub fn at(&self, c: usize, d: usize, h: usize, w: usize) -> f32 {
        self.data.get(self.dims.index(c, d, h, w)).copied().unwrap_or(0.0)
    }

    /// Every `(c, d, h, w)` in index order.
    pub fn coords(dims: Dims) -> impl Iterator<Item = (usize, usize, usize, usize)> {
        (0..dims.c).flat_map(move |c| {
            (0..dims.d).flat_map(move |d| (0..dims.h).flat_map(move |h| (0..dims.w).map(move |w| (c, d, h, w))))
        })
    }
}

/// One buffer a BAR points at.
#[derive(Debug, Clone)]
pub struct Buffer<'a> {
    /// What it is (`__const`, `"image"`), for errors.
    pub name: String,
    /// Its bytes.
    pub bytes: Cow<'a, [u8]>,
    /// False for `__text`, `__const` and program inputs.
    pub writable: bool,
}

/// The BAR-indexed buffers of one run.
#[derive(Debug, Clone)]
pub struct Memory<'a> {
    bars: Vec<Option<Buffer<'a>>>,
}

impl<'a> Memory<'a> {
    /// Memory with the given buffer per BAR (missing entries have none).
    pub fn new(buffers: Vec<(u8, Buffer<'a>)>) -> Memory<'a> {
        let mut bars: Vec<Option<Buffer<'a>>> = (0..BARS).map(|_| None).collect();
        for (i, b) in buffers {
            if let Some(slot) = bars.get_mut(usize::from(i)) {
                *slot = Some(b);
            }
        }
        Memory { bars }
    }

    /// The buffer of BAR `bar`.
    pub fn buffer(&self, td: usize, bar: u8, what: &str) -> Result<&Buffer<'a>, SimError> {
        self.bars
            .get(usize::from(bar))
            .and_then(Option::as_ref)
            .ok_or_else(|| SimError::access(td, format!("{what} names BAR {bar}, which holds no buffer")))
    }

    /// `len` bytes of BAR `bar` from `addr`.
    pub fn bytes(&self, td: usize, bar: u8, addr: i64, len: usize, what: &str) -> Result<&[u8], SimError> {
        let b = self.buffer(td, bar, what)?;
        let start = usize::try_from(addr).ok();
        start.and_then(|s| b.bytes.get(s..s.checked_add(len)?)).ok_or_else(|| out_of(td, what, bar, b, addr, len))
    }

    /// The element of format `fmt` at `addr` of BAR `bar`.
    pub fn read(&self, td: usize, bar: u8, addr: i64, fmt: Fmt, what: &str) -> Result<f32, SimError> {
        Ok(fmt.decode(self.bytes(td, bar, addr, fmt.size(), what)?))
    }

    /// Stores `v` in format `fmt` at `addr` of BAR `bar`.
    pub fn write(&mut self, td: usize, bar: u8, addr: i64, fmt: Fmt, v: f32, what: &str) -> Result<(), SimError> {
        let b = self
            .bars
            .get_mut(usize::from(bar))
            .and_then(Option::as_mut)
            .ok_or_else(|| SimError::access(td, format!("{what} names BAR {bar}, which holds no buffer")))?;
        if !b.writable {
            return Err(SimError::access(td, format!("{what} writes BAR {bar} ({}), which is read-only", b.name)));
        }
        let size = fmt.size();
        let start = usize::try_from(addr).ok();
        let len = b.bytes.len();
        match start.and_then(|s| b.bytes.to_mut().get_mut(s..s.checked_add(size)?)) {
            Some(slot) => {
                fmt.encode(v, slot);
                Ok(())
            }
            None => Err(SimError::access(
                td,
                format!("{what} writes BAR {bar} ({}) at {addr:#x}, outside its {len:#x} bytes", b.name),
            )),
        }
    }
}

fn out_of(td: usize, what: &str, bar: u8, b: &Buffer<'_>, addr: i64, len: usize) -> SimError {
    SimError::access(
        td,
        format!(
            "{what} reads {len} bytes of BAR {bar} ({}) at {addr:#x}, outside its {:#x} bytes",
            b.name,
            b.bytes.len()
        ),
    )
}

/// A region of L2 laid out by depth, then row, then channel, then W (byte strides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub base: u64,
    /// Between channels.
    pub channel: u64,
    /// Between rows.
    pub row: u64,
    /// Between depth slices.
    pub depth: u64,
}

impl Region {
    /// The byte offset of `(c, d, h, w)` for elements of `size` bytes.
    pub fn offset(&self, c: usize, d: usize, h: usize, w: usize, size: usize) -> u64 {
        let m = |n: usize, s: u64| (n as u64).saturating_mul(s);
        self.base
            .saturating_add(m(d, self.depth))
            .saturating_add(m(h, self.row))
            .saturating_add(m(c, self.channel))
            .saturating_add(m(w, size as u64))
    }

    /// One past the last byte a `dims` box of `size`-byte elements touches.
    pub fn end(&self, dims: Dims, size: usize) -> u64 {
        let last = |n: usize| n.saturating_sub(1);
        self.offset(last(dims.c), last(dims.d), last(dims.h), last(dims.w), size).saturating_add(size as u64)
    }
}

/// Checks that no two elements of a strided box share a byte: sorted by stride, each
/// dimension's stride must reach past everything the smaller ones span.
pub fn check_disjoint(extents_strides: &[(usize, u64)], size: usize) -> Result<(), String> {
    let mut dims: Vec<(usize, u64)> = extents_strides.iter().copied().filter(|&(n, _)| n > 1).collect();
    dims.sort_by_key(|&(_, s)| s);
    let mut span = size as u64;
    for (n, s) in dims {
        if s < span {
            return Err(format!(
                "a stride of {s:#x} bytes is smaller than the {span:#x} bytes the inner dimensions span"
            ));
        }
        span = s.saturating_mul(n as u64 - 1).saturating_add(span);
    }
    Ok(())
}

/// The on-chip L2 buffer (zero at the start of a run), with a record of which bytes a
/// task of the run has written (a tile-DMA load or an engine result).
#[derive(Debug, Clone)]
pub struct L2 {
    bytes: Vec<u8>,
    written: Vec<bool>,
}

impl Default for L2 {
    fn default() -> Self {
        L2 { bytes: vec![0; L2_SIZE], written: vec![false; L2_SIZE] }
    }
}

impl L2 {
    /// Checks that a `dims` box of `fmt` at `r` lies inside L2 and its elements do not
    /// overlap; `what` names the fields for errors.
    pub fn check_region(&self, td: usize, r: &Region, dims: Dims, fmt: Fmt, what: &str) -> Result<(), SimError> {
        let end = r.end(dims, fmt.size());
        if end > L2_SIZE as u64 {
            return Err(SimError::access(
                td,
                format!("{what}: the region ends at {end:#x}, past the {L2_SIZE:#x}-byte L2"),
            ));
        }
        let layout = [(dims.w, fmt.size() as u64), (dims.c, r.channel), (dims.h, r.row), (dims.d, r.depth)];
        check_disjoint(&layout, fmt.size())
            .map_err(|e| SimError::access(td, format!("{what}: elements of the {} region overlap: {e}", fmt.name())))
    }

    /// Reads a `dims` box of `fmt` from region `r` (checked with [`L2::check_region`]).
    pub fn read(&self, td: usize, r: &Region, dims: Dims, fmt: Fmt, what: &str) -> Result<Dense, SimError> {
        self.check_region(td, r, dims, fmt, what)?;
        let mut out = Dense::zeros(dims);
        for (v, (c, d, h, w)) in out.data.iter_mut().zip(Dense::coords(dims)) {
            let at = usize::try_from(r.offset(c, d, h, w, fmt.size())).unwrap_or(usize::MAX);
            let bytes =
                self.bytes.get(at..).ok_or_else(|| SimError::access(td, format!("{what}: L2 read at {at:#x}")))?;
            *v = fmt.decode(bytes);
        }
        Ok(out)
    }

    /// Writes `x` in format `fmt` to region `r` (checked with [`L2::check_region`]).
    pub fn write(&mut self, td: usize, r: &Region, x: &Dense, fmt: Fmt, what: &str) -> Result<(), SimError> {
        self.check_region(td, r, x.dims, fmt, what)?;
        for (&v, (c, d, h, w)) in x.data.iter().zip(Dense::coords(x.dims)) {
            let at = usize::try_from(r.offset(c, d, h, w, fmt.size())).unwrap_or(usize::MAX);
            let slot =
                self.bytes.get_mut(at..).ok_or_else(|| SimError::access(td, format!("{what}: L2 write at {at:#x}")))?;
            fmt.encode(v, slot);
            if let Some(w) = self.written.get_mut(at..at.saturating_add(fmt.size())) {
                w.fill(true);
            }
        }
        Ok(())
    }

    /// Checks that every byte of a `dims` box of `fmt` at `r` was written by an earlier
    /// task of the run (a source read from L2 without a load).
    pub fn check_written(&self, td: usize, r: &Region, dims: Dims, fmt: Fmt, what: &str) -> Result<(), SimError> {
        self.check_region(td, r, dims, fmt, what)?;
        for (c, d, h, w) in Dense::coords(dims) {
            let at = usize::try_from(r.offset(c, d, h, w, fmt.size())).unwrap_or(usize::MAX);
            let done = self.written.get(at..at.saturating_add(fmt.size())).is_some_and(|b| b.iter().all(|&x| x));
            if !done {
                return Err(SimError::access(
                    td,
                    format!(
                        "{what}: element (channel {c}, row {h}, column {w}) at L2 {at:#x} was not written by an \
                         earlier task of the run"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn formats_round_and_saturate() {
        assert_eq!(Fmt::F16.round(1.0 + 1.0 / 4096.0), 1.0);
        assert_eq!(Fmt::F16.round(70000.0), f32::INFINITY);
        assert_eq!(Fmt::U8.round(-3.0), 0.0);
        assert_eq!(Fmt::U8.round(2.5), 2.0);
        assert_eq!(Fmt::I8.round(-200.0), -128.0);
        assert_eq!(Fmt::I8.round(f32::NAN), 0.0);
        let mut b = [0u8; 2];
        Fmt::I8.encode(-2.0, &mut b);
        assert_eq!((b[0], Fmt::I8.decode(&b)), (0xFE, -2.0));
        Fmt::F16.encode(2.0, &mut b);
        assert_eq!(b, [0x00, 0x40]);
    }

    #[test]
    fn overlapping_layouts_are_found() {
        // 77 fp16 per channel in a 0xa0-byte channel stride: disjoint.
        assert!(check_disjoint(&[(77, 2), (3, 0xa0)], 2).is_ok());
        // A 0x90-byte channel stride is shorter than 154 bytes of row.
        assert!(check_disjoint(&[(77, 2), (3, 0x90)], 2).is_err());
        // Extent-1 dimensions never overlap, whatever their stride.
        assert!(check_disjoint(&[(4, 2), (1, 0)], 2).is_ok());
    }

    #[test]
    fn out_of_range_and_read_only_accesses_are_errors() {
        let input = Buffer { name: "x".into(), bytes: Cow::Owned(vec![0; 4]), writable: false };
        let output = Buffer { name: "y".into(), bytes: Cow::Owned(vec![0; 4]), writable: true };
        let mut m = Memory::new(vec![(5, input), (4, output)]);
        assert!(m.read(0, 5, 2, Fmt::F16, "src").is_ok());
        assert!(m.read(0, 5, 3, Fmt::F16, "src").is_err());
        assert!(m.read(0, 5, -1, Fmt::U8, "src").is_err());
        assert!(m.read(0, 6, 0, Fmt::U8, "src").is_err());
        assert!(m.write(0, 5, 0, Fmt::F16, 1.0, "dst").is_err());
        assert!(m.write(0, 4, 2, Fmt::F16, 3.0, "dst").is_ok());
        assert_eq!(m.read(0, 4, 2, Fmt::F16, "dst").ok(), Some(3.0));
    }

    /// A source read from L2 must have been written in the run (the split convolution of
    /// record `conv_probe_k1_c1024_n1024_s16_st1_g1_bias0_same`, task 1).
    #[test]
    fn l2_reads_of_unwritten_bytes_are_found() {
        let mut l2 = L2::default();
        let r = Region { base: 0x40, channel: 0x10, row: 0x20, depth: 0 };
        let dims = Dims { c: 2, d: 1, h: 2, w: 3 };
        assert!(l2.check_written(0, &r, dims, Fmt::F16, "src").is_err());
        let x = Dense { dims, data: vec![1.0; 12] };
        assert!(l2.write(0, &r, &x, Fmt::F16, "dst").is_ok());
        assert!(l2.check_written(0, &r, dims, Fmt::F16, "src").is_ok());
        let wider = Dims { w: 4, ..dims };
        let e = l2.check_written(3, &r, wider, Fmt::F16, "src").unwrap_err().to_string();
        assert_eq!(
            e,
            "TD 3: src: element (channel 0, row 0, column 3) at L2 0x46 was not written by an earlier task of the run"
        );
    }
}
