//! The weight chunks: each `__const` symbol of an `.hwx` with its offset, its size (to
//! the next symbol or the section end) and its first bytes as hex and as fp16 values;
//! the weights of an `.anec` as one chunk. These fields are derived from the symbols and
//! the bytes, which diff compares directly, so diff skips them.

use anec_codegen::hwx::symtab::{CONST_SECTION, N_SECT_EXT};
use anec_codegen::HwxFile;
use half::f16;

use crate::tree::{Node, Role};

/// Bytes shown per chunk.
const PREVIEW: usize = 16;

/// The chunks of `__TEXT,__const`, split at its symbols.
pub(super) fn hwx_weights(f: &HwxFile) -> Node {
    let addr = f.section("__TEXT", "__const").map_or(0, |s| s.addr);
    let mut starts: Vec<(u64, String)> = f
        .symtab()
        .into_iter()
        .flat_map(|s| &s.symbols)
        .filter(|s| s.n_type == N_SECT_EXT && s.sect == CONST_SECTION)
        .map(|s| (s.value.wrapping_sub(addr), format!("{:?}", s.name)))
        .collect();
    starts.sort_by_key(|(offset, _)| *offset);
    if starts.first().is_none_or(|(o, _)| *o > 0) {
        starts.insert(0, (0, "(no symbol)".into()));
    }
    weights("__TEXT,__const", &f.consts, &starts)
}

/// The weights of an `.anec`: one chunk.
pub(super) fn anec_weights(consts: &[u8]) -> Node {
    weights("data after the TDs", consts, &[(0, "(no symbols in .anec)".into())])
}

/// A node for `bytes` cut at `starts` (sorted offsets with their names).
fn weights(what: &str, bytes: &[u8], starts: &[(u64, String)]) -> Node {
    let len = bytes.len() as u64;
    let mut n = Node::new("weights", format!("weights: {what}, {len:#x} bytes, chunks: {}", starts.len()));
    for (i, (offset, name)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(len, |(next, _)| *next).max(*offset);
        let mut c = Node::new(format!("chunk[{i}]"), format!("chunk[{i}] {name}"));
        c.add("offset", format!("{offset:#x}"), Role::Derived);
        c.add("size", format!("{:#x}", end.min(len).saturating_sub(*offset)), Role::Derived);
        let first = usize::try_from(*offset).ok().and_then(|o| bytes.get(o..)).unwrap_or_default();
        let first = first.get(..PREVIEW).unwrap_or(first);
        c.add("bytes", hex_bytes(first), Role::Derived);
        c.add("fp16", fp16(first), Role::Derived);
        n.children.push(c);
    }
    n
}

/// Bytes as space-separated hex pairs (`empty` for none).
pub(super) fn hex_bytes(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "empty".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// Little-endian fp16 values of the whole pairs of `bytes`.
fn fp16(bytes: &[u8]) -> String {
    let values: Vec<String> =
        bytes.chunks_exact(2).map(|p| f16::from_le_bytes([p[0], p[1]]).to_f32().to_string()).collect();
    if values.is_empty() {
        return "none".into();
    }
    values.join(" ")
}
