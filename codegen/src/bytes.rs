//! Checked little-endian byte access shared by the readers and writers.
//!
//! Readers go through [`Input`]: every access is bounds-checked and returns a
//! [`CodegenError::Truncated`] naming the structure and offset, never panics. Writers go
//! through [`Output`], which only appends or patches inside what it already holds, and
//! through [`fit_u32`] / [`fit_u16`] / [`fit_u8`], which turn a too-large value into
//! [`CodegenError::Overflow`] instead of truncating it.

use crate::CodegenError;

/// A bounds-checked view of an input file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// Wraps `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Input length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// `len` bytes at `offset`, or a `Truncated` error naming `what`.
    pub(crate) fn slice(&self, offset: u64, len: u64, what: &str) -> Result<&'a [u8], CodegenError> {
        let truncated = || CodegenError::Truncated { what: what.to_string(), offset, needed: len, len: self.len() };
        let start = usize::try_from(offset).map_err(|_| truncated())?;
        let size = usize::try_from(len).map_err(|_| truncated())?;
        let end = start.checked_add(size).ok_or_else(truncated)?;
        self.bytes.get(start..end).ok_or_else(truncated)
    }

    /// Fixed-size array at `offset`.
    fn array<const N: usize>(&self, offset: u64, what: &str) -> Result<[u8; N], CodegenError> {
        let s = self.slice(offset, N as u64, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    /// u8 at `offset`.
    pub(crate) fn u8(&self, offset: u64, what: &str) -> Result<u8, CodegenError> {
        Ok(self.array::<1>(offset, what)?[0])
    }

    /// Little-endian u16 at `offset`.
    pub(crate) fn u16(&self, offset: u64, what: &str) -> Result<u16, CodegenError> {
        Ok(u16::from_le_bytes(self.array(offset, what)?))
    }

    /// Little-endian u32 at `offset`.
    pub(crate) fn u32(&self, offset: u64, what: &str) -> Result<u32, CodegenError> {
        Ok(u32::from_le_bytes(self.array(offset, what)?))
    }

    /// Little-endian u64 at `offset`.
    pub(crate) fn u64(&self, offset: u64, what: &str) -> Result<u64, CodegenError> {
        Ok(u64::from_le_bytes(self.array(offset, what)?))
    }

    /// The NUL-terminated string starting at `offset` and ending before `limit`.
    pub(crate) fn cstr(&self, offset: u64, limit: u64, what: &str) -> Result<String, CodegenError> {
        let len = limit
            .checked_sub(offset)
            .ok_or_else(|| CodegenError::bad(what, offset, offset, format!("a string offset below {limit:#x}")))?;
        let field = self.slice(offset, len, what)?;
        let end = field
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| CodegenError::Malformed(format!("{what} at {offset:#x} has no NUL terminator")))?;
        utf8(field.get(..end).unwrap_or_default(), offset, what)
    }

    /// A fixed-width, NUL-padded name field (segment and section names).
    pub(crate) fn name16(&self, offset: u64, what: &str) -> Result<String, CodegenError> {
        let field = self.slice(offset, 16, what)?;
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        utf8(field.get(..end).unwrap_or_default(), offset, what)
    }
}

/// Bytes read from `offset` as UTF-8 text.
fn utf8(bytes: &[u8], offset: u64, what: &str) -> Result<String, CodegenError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| CodegenError::Malformed(format!("{what} at {offset:#x} is not UTF-8")))
}

/// A string as the bytes to write (UTF-8), rejecting an embedded NUL.
pub(crate) fn string_bytes(s: &str, what: &str) -> Result<Vec<u8>, CodegenError> {
    if s.as_bytes().contains(&0) {
        return Err(CodegenError::Invalid(format!("{what} {s:?} contains a NUL byte")));
    }
    Ok(s.as_bytes().to_vec())
}

/// `value` as a u32 field, or an overflow error naming `what`.
pub(crate) fn fit_u32(value: u64, what: &str) -> Result<u32, CodegenError> {
    u32::try_from(value).map_err(|_| CodegenError::overflow(what, value, u64::from(u32::MAX)))
}

/// `value` as a u16 field, or an overflow error naming `what`.
pub(crate) fn fit_u16(value: u64, what: &str) -> Result<u16, CodegenError> {
    u16::try_from(value).map_err(|_| CodegenError::overflow(what, value, u64::from(u16::MAX)))
}

/// `value` as a u8 field, or an overflow error naming `what`.
pub(crate) fn fit_u8(value: u64, what: &str) -> Result<u8, CodegenError> {
    u8::try_from(value).map_err(|_| CodegenError::overflow(what, value, u64::from(u8::MAX)))
}

/// `value` rounded up to a multiple of `align` (a power of two), checked.
pub(crate) fn round_up(value: u64, align: u64, what: &str) -> Result<u64, CodegenError> {
    let mask = align.saturating_sub(1);
    value.checked_add(mask).map(|v| v & !mask).ok_or_else(|| CodegenError::overflow(what, value, u64::MAX - mask))
}

/// Checked `a + b` for sizes and addresses.
pub(crate) fn add(a: u64, b: u64, what: &str) -> Result<u64, CodegenError> {
    a.checked_add(b).ok_or_else(|| CodegenError::overflow(what, a, u64::MAX - b))
}

/// Checked `a * b` for sizes.
pub(crate) fn mul(a: u64, b: u64, what: &str) -> Result<u64, CodegenError> {
    a.checked_mul(b).ok_or_else(|| CodegenError::overflow(what, a, u64::MAX / b.max(1)))
}

/// `len` of an in-memory buffer as u64.
pub(crate) fn len64(bytes: &[u8]) -> u64 {
    bytes.len() as u64
}

/// An output buffer written front to back.
#[derive(Debug, Default)]
pub(crate) struct Output {
    bytes: Vec<u8>,
}

impl Output {
    /// An empty buffer.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// An empty buffer with room for `n` bytes.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self { bytes: Vec::with_capacity(n) }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> u64 {
        len64(&self.bytes)
    }

    /// Appends raw bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }

    /// Appends a u8.
    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// Appends a little-endian u16.
    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }

    /// Appends a little-endian u32.
    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Appends a little-endian u64.
    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// Appends a 16-byte NUL-padded name, rejecting longer names.
    pub(crate) fn name16(&mut self, name: &str) -> Result<(), CodegenError> {
        let b = string_bytes(name, "segment/section name")?;
        if b.len() > 16 {
            return Err(CodegenError::overflow(format!("length of name {name:?}"), len64(&b), 16));
        }
        self.bytes(&b);
        self.zeros(16 - len64(&b))
    }

    /// Appends `n` zero bytes.
    pub(crate) fn zeros(&mut self, n: u64) -> Result<(), CodegenError> {
        let n = usize::try_from(n).map_err(|_| CodegenError::overflow("padding", n, usize::MAX as u64))?;
        self.bytes.resize(self.bytes.len().saturating_add(n), 0);
        Ok(())
    }

    /// Pads with zeros up to absolute length `to`; an error if already past it.
    pub(crate) fn pad_to(&mut self, to: u64, what: &str) -> Result<(), CodegenError> {
        let n = to.checked_sub(self.len()).ok_or_else(|| {
            CodegenError::Invalid(format!("{what}: {:#x} bytes already written, past {to:#x}", self.len()))
        })?;
        self.zeros(n)
    }

    /// Pads with zeros up to the next multiple of `align`.
    pub(crate) fn align(&mut self, align: u64) -> Result<(), CodegenError> {
        let to = round_up(self.len(), align, "output length")?;
        self.pad_to(to, "alignment")
    }

    /// The finished bytes.
    pub(crate) fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn input_access_is_checked() {
        let inp = Input::new(&[1, 2, 3, 4, 5]);
        assert_eq!(inp.u32(0, "x").unwrap(), 0x0403_0201);
        assert!(inp.u32(2, "x").is_err());
        assert!(inp.slice(u64::MAX, 2, "x").is_err());
        assert!(inp.slice(6, 0, "x").is_err());
        assert_eq!(inp.slice(5, 0, "x").unwrap(), &[] as &[u8]);
    }

    #[test]
    fn strings_need_their_nul() {
        let inp = Input::new(b"net\0abc");
        assert_eq!(inp.cstr(0, 7, "s").unwrap(), "net");
        assert!(inp.cstr(4, 7, "s").is_err());
        assert!(inp.cstr(5, 4, "s").is_err());
    }

    #[test]
    fn fits_and_rounding_never_truncate() {
        assert_eq!(fit_u32(u64::from(u32::MAX), "f").unwrap(), u32::MAX);
        assert!(matches!(fit_u32(1 << 32, "f"), Err(CodegenError::Overflow { value: 0x1_0000_0000, .. })));
        assert!(fit_u16(0x1_0000, "f").is_err());
        assert!(fit_u8(256, "f").is_err());
        assert_eq!(round_up(0x274, 0x40, "r").unwrap(), 0x280);
        assert_eq!(round_up(0x4000, 0x4000, "r").unwrap(), 0x4000);
        assert!(round_up(u64::MAX - 3, 0x40, "r").is_err());
    }

    #[test]
    fn output_pads_only_forward() {
        let mut out = Output::new();
        out.u16(0xBEEF);
        out.align(8).unwrap();
        assert_eq!(out.len(), 8);
        assert!(out.pad_to(4, "p").is_err());
        assert!(out.name16("a_name_of_17_char").is_err());
    }
}
