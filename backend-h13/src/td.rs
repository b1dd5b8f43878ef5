//! The register image of one H13 task descriptor ("ZinAneTdHw_v10").
//!
//! [`TdImage`] holds the header words and every register of the seven blocks, laid out as
//! the dense v4.2.1 TD (157 words with the block headers in place), plus the optional
//! eleventh header word. How an image is written into `__text` (dense or sparse records)
//! is `crate::stream`'s concern. Named fields are written by name through the register
//! map, unnamed words by offset; every write is range-checked against the field width, so
//! a value that does not fit is an error, never a silent truncation.

use crate::error::BackendError;
use crate::regmap::{self, BLOCKS, TD_SIZE};

/// Number of 32-bit words in a TD.
pub const TD_WORDS: usize = TD_SIZE / 4;

/// One task descriptor's register image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TdImage {
    words: [u32; TD_WORDS],
    extra: Option<u32>,
    layer: String,
}

impl TdImage {
    /// An all-zero image with the block headers written; `layer` names the layer in errors.
    pub fn new(layer: &str) -> Self {
        let mut words = [0u32; TD_WORDS];
        for b in BLOCKS {
            words[usize::from(b.offset) / 4] = b.header_word();
        }
        TdImage { words, extra: None, layer: layer.to_string() }
    }

    /// Reads an image from TD bytes (at least 0x274 bytes).
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let bytes = bytes.get(..TD_SIZE)?;
        let mut words = [0u32; TD_WORDS];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Some(TdImage { words, extra: None, layer: String::new() })
    }

    /// Writes a named field, checking the value fits.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), BackendError> {
        let f = regmap::lookup(name).ok_or_else(|| BackendError::UnknownField(name.to_string()))?;
        if value > f.max() {
            return Err(BackendError::FieldOverflow {
                layer: self.layer.clone(),
                field: f.short_name().to_string(),
                value,
                width: f.width,
                max: f.max(),
            });
        }
        let idx = usize::from(f.word) / 4;
        let mask = (f.max() as u32) << f.shift;
        self.words[idx] = (self.words[idx] & !mask) | ((value as u32) << f.shift);
        Ok(())
    }

    /// Writes a signed value into a named field as two's complement of its width,
    /// checking it is representable.
    pub fn set_signed(&mut self, name: &str, value: i64) -> Result<(), BackendError> {
        let f = regmap::lookup(name).ok_or_else(|| BackendError::UnknownField(name.to_string()))?;
        let half = 1i64 << (f.width - 1);
        if value < -half || value >= half {
            return Err(BackendError::FieldOverflow {
                layer: self.layer.clone(),
                field: f.short_name().to_string(),
                value: value as u64,
                width: f.width,
                max: (half - 1) as u64,
            });
        }
        self.set(name, (value as u64) & f.max())
    }

    /// Reads a named field.
    pub fn get(&self, name: &str) -> Option<u64> {
        let f = regmap::lookup(name)?;
        Some(u64::from(self.words[usize::from(f.word) / 4] >> f.shift) & f.max())
    }

    /// Writes a whole data word that carries no named field (one of the 49 unnamed words).
    pub fn set_unnamed(&mut self, offset: u16, value: u32) -> Result<(), BackendError> {
        let in_block = regmap::block_of(offset).is_some();
        if !offset.is_multiple_of(4) || !in_block || !regmap::is_unnamed_word(offset) {
            return Err(BackendError::NotAnUnnamedWord(offset));
        }
        self.words[usize::from(offset) / 4] = value;
        Ok(())
    }

    /// Sets unnamed bits inside a word that also holds named fields (e.g. MACCfg bit 20,
    /// which has no name but must be set). `bits` must not overlap a named field.
    pub fn set_unnamed_bits(&mut self, offset: u16, bits: u32) -> Result<(), BackendError> {
        let named: u32 = regmap::FIELDS
            .iter()
            .filter(|f| f.word == offset)
            .map(|f| (f.max() as u32) << f.shift)
            .fold(0, |a, m| a | m);
        if !offset.is_multiple_of(4) || usize::from(offset) >= TD_SIZE || named & bits != 0 {
            return Err(BackendError::NotAnUnnamedWord(offset));
        }
        self.words[usize::from(offset) / 4] |= bits;
        Ok(())
    }

    /// The eleventh header word, written after the ten header words when
    /// `Header[6].TDE` is set (every task of Apple's corpus with TDE has 11 header words,
    /// every task without it 10).
    pub fn extra_header(&self) -> Option<u32> {
        self.extra
    }

    /// Sets the eleventh header word and `Header[6].TDE` with it.
    pub fn set_extra_header(&mut self, word: Option<u32>) {
        const TDE: u32 = 1 << 24;
        self.extra = word;
        match word {
            Some(_) => self.words[6] |= TDE,
            None => self.words[6] &= !TDE,
        }
    }

    /// True when the header says an eleventh header word follows (`Header[6].TDE`).
    pub fn needs_extra_header(&self) -> bool {
        self.words[6] & (1 << 24) != 0
    }

    /// Writes header word `index` (0..10) as read from a stream.
    pub fn set_header_word(&mut self, index: usize, word: u32) {
        if index < crate::regmap::HEADER_SIZE / 4 {
            self.words[index] = word;
        }
    }

    /// Writes a whole register word at a TD byte offset as read from a stream (no field
    /// check: the reader reproduces whatever the program holds).
    pub fn set_raw(&mut self, offset: u16, word: u32) {
        if let Some(w) = self.words.get_mut(usize::from(offset) / 4) {
            *w = word;
        }
    }

    /// The layer the image encodes (for errors).
    pub fn layer(&self) -> &str {
        &self.layer
    }

    /// The word at a TD byte offset.
    pub fn word(&self, offset: u16) -> u32 {
        self.words.get(usize::from(offset) / 4).copied().unwrap_or(0)
    }

    /// The 0x274 bytes of the TD.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn set_and_get_named_field() {
        let mut td = TdImage::new("t");
        td.set("Common.InDim.Win", 77).unwrap();
        td.set("Common.InDim.Hin", 1).unwrap();
        assert_eq!(td.word(0x128), 0x1004d);
        assert_eq!(td.get("aneRegs.Common.InDim.Win"), Some(77));
    }

    #[test]
    fn overflow_is_an_error_not_a_truncation() {
        let mut td = TdImage::new("big");
        let err = td.set("Common.InDim.Win", 40000).unwrap_err();
        assert!(err.to_string().contains("Common.InDim.Win"), "{err}");
        assert_eq!(td.word(0x128), 0);
    }

    #[test]
    fn unnamed_words_only() {
        let mut td = TdImage::new("t");
        assert!(td.set_unnamed(0x148, 0x2041).is_ok());
        assert!(td.set_unnamed(0x128, 1).is_err());
        assert!(td.set_unnamed_bits(0x244, 1 << 20).is_ok());
        assert!(td.set_unnamed_bits(0x244, 1).is_err());
    }

    #[test]
    fn block_headers_in_place() {
        let td = TdImage::new("t");
        assert_eq!(td.word(0x28), 0xF401_F800);
        assert_eq!(td.word(0x124), 0x3C00_0000);
        assert_eq!(td.to_bytes().len(), TD_SIZE);
    }
}
