//! The H13 register map: named fields, the seven register-write blocks of a v4.2.1 TD, and
//! which data words have no name.
//!
//! A TD is a 0x28-byte header followed by seven blocks; each block starts with a word whose
//! bits [31:26] hold the word count minus one and bits [25:0] the register address of the
//! first word. Field offsets here are TD byte offsets (header and block words included).

mod fields;

pub use fields::FIELDS;

/// One named register field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Apple's register-printer name (`aneRegs.Common.InDim.Win`, `aneTD.Header[8].ENE`).
    pub name: &'static str,
    /// TD byte offset of the 32-bit word holding the field.
    pub word: u16,
    /// Lowest bit of the field in the word.
    pub shift: u8,
    /// Width in bits.
    pub width: u8,
}

impl Field {
    /// The largest value the field holds.
    pub fn max(&self) -> u64 {
        (1u64 << self.width) - 1
    }

    /// The name without Apple's `aneRegs.` prefix (`Common.InDim.Win`).
    pub fn short_name(&self) -> &'static str {
        self.name.strip_prefix("aneRegs.").unwrap_or(self.name)
    }
}

/// Looks a field up by its full or short name (the first field of [`FIELDS`] that has it).
pub fn lookup(name: &str) -> Option<&'static Field> {
    static BY_NAME: std::sync::OnceLock<std::collections::HashMap<&'static str, &'static Field>> =
        std::sync::OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| {
        let mut map = std::collections::HashMap::new();
        for f in FIELDS.iter() {
            map.entry(f.name).or_insert(f);
            map.entry(f.short_name()).or_insert(f);
        }
        map
    });
    by_name.get(name).copied()
}

/// One register-write block of the v4.2.1 TD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Block name.
    pub name: &'static str,
    /// TD byte offset of the block's header word.
    pub offset: u16,
    /// Register byte address of the first word.
    pub register: u32,
    /// Number of data words.
    pub words: u16,
}

impl Block {
    /// The block header word: (words - 1) << 26 | register.
    pub fn header_word(&self) -> u32 {
        ((u32::from(self.words) - 1) << 26) | self.register
    }

    /// TD byte offsets covered by the block's data words.
    pub fn data_range(&self) -> std::ops::Range<u16> {
        self.offset + 4..self.offset + 4 + 4 * self.words
    }
}

/// The seven blocks v4.2.1 always writes, in TD order.
pub const BLOCKS: [Block; 7] = [
    Block { name: "KernelDMASrc", offset: 0x028, register: 0x1F800, words: 62 },
    Block { name: "Common", offset: 0x124, register: 0x00000, words: 16 },
    Block { name: "TileDMASrc", offset: 0x168, register: 0x13800, words: 28 },
    Block { name: "L2", offset: 0x1DC, register: 0x04800, words: 18 },
    Block { name: "PE", offset: 0x228, register: 0x08800, words: 4 },
    Block { name: "NE", offset: 0x23C, register: 0x0C800, words: 5 },
    Block { name: "TileDMADst", offset: 0x254, register: 0x17800, words: 7 },
];

/// Size of one TD in bytes.
pub const TD_SIZE: usize = 0x274;
/// Size of the TD header in bytes.
pub const HEADER_SIZE: usize = 0x28;
/// Distance between consecutive TDs in `__text`.
pub const TD_STRIDE: usize = 0x300;

/// The block containing a TD byte offset, if it is a block data word.
pub fn block_of(offset: u16) -> Option<&'static Block> {
    BLOCKS.iter().find(|b| b.data_range().contains(&offset))
}

/// The TD byte offset of the register at byte address `address`, if a block holds it.
pub fn td_offset_of_register(address: u32) -> Option<u16> {
    BLOCKS.iter().find_map(|b| {
        let rel = address.checked_sub(b.register)?;
        (rel % 4 == 0 && rel / 4 < u32::from(b.words)).then(|| b.offset + 4 + rel as u16)
    })
}

/// The register byte address of the block data word at TD offset `offset`.
pub fn register_of_td_offset(offset: u16) -> Option<u32> {
    let b = block_of(offset)?;
    Some(b.register + u32::from(offset - b.offset - 4))
}

/// The named fields of the word at TD offset `offset`, in register-map order.
pub fn fields_at(offset: u16) -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(move |f| f.word == offset)
}

/// True when no named field lives in the data word at `offset`.
pub fn is_unnamed_word(offset: u16) -> bool {
    !FIELDS.iter().any(|f| f.word == offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_descriptor() {
        let mut end = HEADER_SIZE as u16;
        for b in BLOCKS {
            assert_eq!(b.offset, end, "{} starts where the previous ends", b.name);
            end = b.data_range().end;
        }
        assert_eq!(usize::from(end), TD_SIZE);
        assert_eq!(BLOCKS[0].header_word(), 0xF401_F800);
        assert_eq!(BLOCKS[6].header_word(), 0x1801_7800);
    }

    #[test]
    fn every_field_fits_its_word_and_lies_in_header_or_a_block() {
        for f in FIELDS {
            assert!(u32::from(f.shift) + u32::from(f.width) <= 32, "{}", f.name);
            let in_header = usize::from(f.word) < HEADER_SIZE;
            assert!(in_header || block_of(f.word).is_some(), "{} at {:#x}", f.name, f.word);
        }
    }

    #[test]
    fn distinct_fields_count_is_165() {
        // Arrays (16 kernel-DMA channels, 4 pixel offsets) count once; header words are distinct.
        let mut names: Vec<String> = FIELDS
            .iter()
            .map(|f| {
                let n = f.name;
                match (n.find('['), n.find(']')) {
                    (Some(a), Some(b)) if !n.starts_with("aneTD.Header") => format!("{}{}", &n[..a], &n[b + 1..]),
                    _ => n.to_string(),
                }
            })
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(FIELDS.len(), 258);
        assert_eq!(names.len(), 165);
    }
}
