//! The task descriptors of `__text`, one every 0x300 bytes, listed through the H13
//! register map: the 0x28-byte header and the seven blocks in TD order, and in each
//! every data word in offset order: its named fields (`Name = value (0xvalue)`, zeros
//! included), the bits no field names (when non-zero), or, for a word with no named
//! field, the word itself (`word 0x148 = 0x00002041`; zero words are counted, not
//! shown, and still compared by diff).

use anec_backend_h13::regmap::{Block, Field, BLOCKS, FIELDS, HEADER_SIZE, TD_SIZE, TD_STRIDE};
use anec_backend_h13::td::TdImage;

use crate::tree::{dec_hex, Node, Role};

/// A summary node for `__text`, then one node per TD. `count` is the TD count the
/// program declares (its `source` names where); without one, every 0x300-byte slot of
/// `text` is a TD.
pub(super) fn text_nodes(text: &[u8], count: Option<u32>, source: &str) -> Vec<Node> {
    let slots = text.len().div_ceil(TD_STRIDE);
    let declared = count.map_or(slots, |c| usize::try_from(c).unwrap_or(usize::MAX));
    let present = declared.min(slots);
    let origin = if count.is_some() { source } else { "__text length" };
    let mut summary = Node::new("__text", format!("__text: {:#x} bytes, TDs: {declared} (from {origin})", text.len()));
    summary.hex("size", text.len() as u64);
    summary.num("TDs", present as u64);
    if declared > slots {
        summary.field("missing TDs", format!("{declared} declared, __text holds {slots}"));
    }
    summary.field("nonzero padding", padding(text, present));
    let mut out = vec![summary];
    for i in 0..present {
        let at = i * TD_STRIDE;
        let end = text.len().min(at + TD_SIZE);
        out.push(td_node(i, at, text.get(at..end).unwrap_or_default()));
    }
    out
}

/// Non-zero bytes of `text` outside the first `tds` TDs.
fn padding(text: &[u8], tds: usize) -> String {
    let in_td = |o: usize| o / TD_STRIDE < tds && o % TD_STRIDE < TD_SIZE;
    let stray: Vec<usize> = text.iter().enumerate().filter(|&(o, &b)| b != 0 && !in_td(o)).map(|(o, _)| o).collect();
    match stray.first() {
        None => "none".into(),
        Some(first) => format!("{} bytes, first at {first:#x}", stray.len()),
    }
}

/// One TD: the header and the seven blocks.
fn td_node(i: usize, at: usize, bytes: &[u8]) -> Node {
    let mut n = Node::new(format!("TD {i}"), format!("TD {i} at __text+{at:#x}"));
    let mut full = bytes.to_vec();
    if full.len() < TD_SIZE {
        n.field("length", format!("{:#x} of {TD_SIZE:#x} bytes (truncated; the rest read as zero)", bytes.len()));
        full.resize(TD_SIZE, 0);
    }
    let Some(img) = TdImage::from_bytes(&full) else {
        return n;
    };
    let mut header = Node::new("", format!("Header (0x0..{HEADER_SIZE:#x})"));
    words(&mut header, &img, 0..HEADER_SIZE as u16);
    n.children.push(header);
    n.children.extend(BLOCKS.iter().map(|b| block(b, &img)));
    n
}

/// One register block: its header word, then its data words.
fn block(b: &Block, img: &TdImage) -> Node {
    let title = format!("{} (0x{:03x}, register {:#x}, {} words)", b.name, b.offset, b.register, b.words);
    let mut n = Node::new("", title);
    let (found, expected) = (img.word(b.offset), b.header_word());
    let value = match found == expected {
        true => format!("{found:#010x}"),
        false => format!("{found:#010x} (expected {expected:#010x})"),
    };
    n.field(format!("{} header", b.name), value);
    words(&mut n, img, b.data_range());
    n
}

/// The data words at TD offsets `range`, each as named fields or as a raw word.
fn words(n: &mut Node, img: &TdImage, range: std::ops::Range<u16>) {
    let mut zeros = 0;
    for off in range.step_by(4) {
        let w = img.word(off);
        let mut named = 0u32;
        for f in fields_of(off) {
            let mask = f.max() as u32;
            named |= mask << f.shift;
            n.field(f.short_name(), dec_hex(u64::from((w >> f.shift) & mask)));
        }
        if named == 0 {
            zeros += usize::from(w == 0);
            n.add(format!("word {off:#05x}"), format!("{w:#010x}"), hidden_if(w == 0));
        } else if named != u32::MAX {
            let rest = w & !named;
            n.add(format!("word {off:#05x} other bits"), format!("{rest:#010x}"), hidden_if(rest == 0));
        }
    }
    if zeros > 0 {
        n.notes.push(format!("{zeros} zero unnamed words not shown"));
    }
}

/// The named fields of the word at `off`, in register-map order (`FIELDS` is sorted
/// by word offset).
fn fields_of(off: u16) -> &'static [Field] {
    let start = FIELDS.partition_point(|f| f.word < off);
    let len = FIELDS.get(start..).unwrap_or_default().iter().take_while(|f| f.word == off).count();
    FIELDS.get(start..start + len).unwrap_or_default()
}

/// `Hidden` when `zero`, else `Plain`.
fn hidden_if(zero: bool) -> Role {
    if zero {
        Role::Hidden
    } else {
        Role::Plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_map_is_sorted_by_word_so_lookup_finds_every_field() {
        assert!(FIELDS.windows(2).all(|w| w[0].word <= w[1].word));
        let found: usize = (0..TD_SIZE as u16).step_by(4).map(|off| fields_of(off).len()).sum();
        assert_eq!(found, FIELDS.len());
    }
}
