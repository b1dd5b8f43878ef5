//! The tasks of `__text`, followed along their chain (`anec_backend_h13::chain`) and
//! listed through the H13 register map: the header words, the register records as the
//! stream holds them (one per block in the dense v4.2.1 form; the current compiler's
//! sparse form splits blocks and leaves words out), then the seven blocks in TD order,
//! and in each every data word in offset order: its named fields (`Name = value
//! (0xvalue)`, zeros included), the bits no field names (when non-zero), or, for a word
//! with no named field, the word itself (`word 0x148 = 0x00002041`; zero words are
//! counted, not shown, and still compared by diff). A word the stream does not write
//! reads as zero.

use anec_backend_h13::chain::{self, ChainTask};
use anec_backend_h13::regmap::{Block, Field, BLOCKS, FIELDS, HEADER_SIZE};
use anec_backend_h13::td::TdImage;

use crate::tree::{dec_hex, Node, Role};

/// A summary node for `__text`, then one node per task. `count` is the task count the
/// program declares and `first_words` the first task's size in words (its `source` names
/// where both come from).
pub(super) fn text_nodes(text: &[u8], count: u32, first_words: u64, source: &str) -> Vec<Node> {
    let declared = usize::try_from(count).unwrap_or(usize::MAX);
    let mut summary =
        Node::new("__text", format!("__text: {:#x} bytes, tasks: {declared} (from {source})", text.len()));
    summary.hex("size", text.len() as u64);
    let (tasks, error) = match chain::read(text, first_words, declared) {
        Ok(t) => (t, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    summary.num("tasks", tasks.len() as u64);
    if let Some(e) = error {
        summary.field("chain", e);
    }
    summary.field("nonzero padding", padding(text, &tasks));
    let mut out = vec![summary];
    out.extend(tasks.iter().enumerate().map(|(i, t)| task_node(i, t)));
    out
}

/// Non-zero bytes of `text` outside the tasks.
fn padding(text: &[u8], tasks: &[ChainTask]) -> String {
    let in_task = |o: usize| tasks.iter().any(|t| (t.offset..t.offset + 4 * t.words).contains(&o));
    let stray: Vec<usize> = text.iter().enumerate().filter(|&(o, &b)| b != 0 && !in_task(o)).map(|(o, _)| o).collect();
    match stray.first() {
        None => "none".into(),
        Some(first) => format!("{} bytes, first at {first:#x}", stray.len()),
    }
}

/// One task: the header, the record list, and the seven blocks.
fn task_node(i: usize, t: &ChainTask) -> Node {
    let title = format!("TD {i} at __text+{:#x}, {} words", t.offset, t.words);
    let mut n = Node::new(format!("TD {i}"), title);
    let img = &t.task.image;
    let mut header = Node::new("", format!("Header (0x0..{HEADER_SIZE:#x})"));
    words(&mut header, img, 0..HEADER_SIZE as u16);
    if let Some(w) = img.extra_header() {
        header.field("extra header word", format!("{w:#010x}"));
    }
    n.children.push(header);
    let mut recs = Node::new("records", "register records").compact();
    let list: Vec<String> = t.task.records.iter().map(|r| format!("{:#07x}+{}", r.address, r.count)).collect();
    recs.field("records", list.join(" "));
    n.children.push(recs);
    n.children.extend(BLOCKS.iter().map(|b| block(b, img)));
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
        let found: usize =
            (0..anec_backend_h13::regmap::TD_SIZE as u16).step_by(4).map(|off| fields_of(off).len()).sum();
        assert_eq!(found, FIELDS.len());
    }
}
