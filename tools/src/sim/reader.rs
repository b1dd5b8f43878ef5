//! Reading one TD's fields by name through the H13 register map, with a record of which
//! bits were looked at.
//!
//! The TD is read through `anec dump`'s machinery ([`TdImage`] and the register map of
//! `anec_backend_h13::regmap`). Every accessor marks the field's bits as covered; once a
//! TD is decoded, [`Reader::finish`] fails on any set bit no accessor covered, so a value
//! in a field (or in an unnamed word) the simulator does not interpret is an error, never
//! silently ignored.

use super::error::SimError;
use anec_backend_h13::regmap::{self, Field, BLOCKS, FIELDS};
use anec_backend_h13::td::{TdImage, TD_WORDS};

/// Reads the fields of one TD.
#[derive(Debug)]
pub struct Reader {
    img: TdImage,
    td: usize,
    covered: [u32; TD_WORDS],
}

impl Reader {
    /// A reader of a TD's register image (index `td` in the chain), as the chain reader
    /// rebuilt it from either serialization.
    pub fn new(img: TdImage, td: usize) -> Result<Reader, SimError> {
        let mut r = Reader { img, td, covered: [0; TD_WORDS] };
        for b in BLOCKS {
            let found = r.word(b.offset, u32::MAX);
            if found != b.header_word() {
                let reason = format!(
                    "the {} block header must be {:#010x} (only the seven-block v4.2.1 TD form is modelled)",
                    b.name,
                    b.header_word()
                );
                return Err(r.err(format!("word {:#05x}", b.offset), found.into(), reason));
            }
        }
        Ok(r)
    }

    /// Index of the TD in the chain.
    pub fn extra_header(&self) -> Option<u32> {
        self.img.extra_header()
    }

    /// The TD's index.
    pub fn td(&self) -> usize {
        self.td
    }

    /// An error about `field` holding `value`.
    pub fn err(&self, field: impl Into<String>, value: u64, reason: impl Into<String>) -> SimError {
        SimError::field(self.td, field, value, reason)
    }

    fn lookup(&self, name: &str) -> Result<&'static Field, SimError> {
        regmap::lookup(name).ok_or_else(|| SimError::Program(format!("internal: the register map has no field {name}")))
    }

    /// The value of the named field.
    pub fn get(&mut self, name: &str) -> Result<u64, SimError> {
        let f = self.lookup(name)?;
        let mask = f.max() as u32;
        let i = usize::from(f.word) / 4;
        if let Some(c) = self.covered.get_mut(i) {
            *c |= mask << f.shift;
        }
        Ok(u64::from((self.img.word(f.word) >> f.shift) & mask))
    }

    /// The named field read as a two's-complement number of its width.
    pub fn signed(&mut self, name: &str) -> Result<i64, SimError> {
        let width = self.lookup(name)?.width;
        Ok(sign_extend(self.get(name)?, width))
    }

    /// The named field, which must hold one of `allowed`.
    pub fn fixed(&mut self, name: &str, allowed: &[u64]) -> Result<u64, SimError> {
        let v = self.get(name)?;
        if allowed.contains(&v) {
            return Ok(v);
        }
        Err(self.err(name, v, format!("only {} is modelled", list(allowed))))
    }

    /// Looks at a field whose value does not change the results (cache hints, event
    /// logging, scheduling): any value is accepted.
    pub fn ignore(&mut self, name: &str) -> Result<(), SimError> {
        self.get(name).map(|_| ())
    }

    /// The bits `mask` of the word at TD offset `offset`.
    pub fn word(&mut self, offset: u16, mask: u32) -> u32 {
        if let Some(c) = self.covered.get_mut(usize::from(offset) / 4) {
            *c |= mask;
        }
        self.img.word(offset) & mask
    }

    /// The bits `mask` of an unnamed word, which must equal one of `allowed`.
    pub fn fixed_word(&mut self, offset: u16, mask: u32, allowed: &[u32], meaning: &str) -> Result<u32, SimError> {
        let v = self.word(offset, mask);
        if allowed.contains(&v) {
            return Ok(v);
        }
        let shown: Vec<u64> = allowed.iter().map(|&a| u64::from(a)).collect();
        Err(self.err(word_name(offset), v.into(), format!("{meaning}: only {} is modelled", list(&shown))))
    }

    /// The bits of the word at `offset` that no named field covers.
    pub fn other_bits(&mut self, offset: u16) -> u32 {
        let named = FIELDS.iter().filter(|f| f.word == offset).fold(0u32, |m, f| m | ((f.max() as u32) << f.shift));
        self.word(offset, !named)
    }

    /// Fails on the first set bit that no accessor looked at.
    pub fn finish(&self) -> Result<(), SimError> {
        for (i, &covered) in self.covered.iter().enumerate() {
            let offset = u16::try_from(4 * i).unwrap_or(u16::MAX);
            let rest = self.img.word(offset) & !covered;
            if rest != 0 {
                return Err(self.err(
                    word_name(offset),
                    rest.into(),
                    "bits set that no modelled field covers (their meaning is unknown)",
                ));
            }
        }
        Ok(())
    }
}

/// `word 0x22c`.
pub fn word_name(offset: u16) -> String {
    format!("word {offset:#05x}")
}

/// `value` as a two's-complement number of `width` bits.
pub fn sign_extend(value: u64, width: u8) -> i64 {
    let shift = 64 - u32::from(width.clamp(1, 64));
    ((value << shift) as i64) >> shift
}

/// `0x1`, `0x0 or 0x1`.
fn list(values: &[u64]) -> String {
    let v: Vec<String> = values.iter().map(|x| format!("{x:#x}")).collect();
    v.join(" or ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn image() -> TdImage {
        let mut td = TdImage::new("t");
        td.set("Common.InDim.Win", 77).unwrap();
        td.set("TileDMASrc.RowStride.Stride", (1 << 26) - 3).unwrap();
        td.set_unnamed(0x148, 0x2041).unwrap();
        td
    }

    #[test]
    fn fields_read_by_name_and_signed() {
        let mut r = Reader::new(image(), 2).unwrap();
        assert_eq!(r.get("Common.InDim.Win").unwrap(), 77);
        assert_eq!(r.signed("TileDMASrc.RowStride.Stride").unwrap(), -3);
        let e = r.fixed("Common.InDim.Win", &[1]).unwrap_err().to_string();
        assert_eq!(e, "TD 2: Common.InDim.Win = 0x4d: only 0x1 is modelled");
    }

    #[test]
    fn uncovered_bits_are_an_error_naming_the_word() {
        let mut r = Reader::new(image(), 0).unwrap();
        r.get("Common.InDim.Win").unwrap();
        r.get("TileDMASrc.RowStride.Stride").unwrap();
        let e = r.finish().unwrap_err().to_string();
        assert!(e.starts_with("TD 0: word 0x148 = 0x2041: bits set"), "{e}");
        r.fixed_word(0x148, u32::MAX, &[0x2041], "kernel-common record").unwrap();
        assert!(r.finish().is_ok());
    }

    #[test]
    fn a_compact_td_is_refused() {
        let mut bytes = image().to_bytes();
        bytes[0x28..0x2c].copy_from_slice(&0x4401_F800u32.to_le_bytes());
        let e = Reader::new(TdImage::from_bytes(&bytes).unwrap(), 0).unwrap_err().to_string();
        assert!(e.contains("word 0x028 = 0x4401f800") && e.contains("seven-block"), "{e}");
    }
}
