//! `diff_files`: compares two programs field by field.
//!
//! Both inputs are read into the same field tree `dump` prints, flattened to
//! `(location, value)` pairs and matched by location: the header, load commands by kind
//! and ordinal (`LC_THREAD[1]`), `LC_IDENT` line by line, every symbol, every TD field by
//! name and every unnamed TD word by offset. A location only one side has is reported
//! against `(absent)`, a structure only one side has (a symbol, a TD) once as a whole
//! (see `compare`). The weights are compared byte by byte and reported as ranges.
//! [`DiffOptions`] relaxes the two things that legitimately differ from Apple's files:
//! the `LC_IDENT` banner and the content hashes in symbol names.
//!
//! An `.e5` is compared with another `.e5` only, by the locations of its listing
//! (`function main op Op1_AneInference attrs anehash`; docs/formats/e5-dump.md). An
//! `.hwx` and an `.anec` compare with each other (the same TDs and weights).

use std::fmt;

use crate::compare::{compare, diff};
use crate::dump::nodes;
use crate::program::Program;
use crate::tree::flatten;
use crate::ToolError;

/// Differing bytes closer than this are reported as one range.
const MERGE_GAP: usize = 16;
/// At most this many `__const` ranges are reported one by one.
const MAX_RANGES: usize = 64;
/// Bytes of each side shown for a differing range.
const SHOWN_BYTES: usize = 8;

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Where: `TD 0 Common.InDim.Win`, `LC_SYMTAB[0] symbol "image" value`, `__const 0x40..0x80`.
    pub location: String,
    /// The left value, or `(absent)`.
    pub left: String,
    /// The right value, or `(absent)`.
    pub right: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} -> {}", self.location, self.left, self.right)
    }
}

/// What to leave out of a comparison. The default compares everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffOptions {
    /// Skip the `LC_IDENT` text and its `cmdsize`.
    pub ignore_ident: bool,
    /// Treat symbol names `K<64 hex>_ne_<i>` and `K<64 hex>` as equal when only the hash
    /// differs (the conformance rule: our weight hashes differ from Apple's).
    pub ignore_symbol_hashes: bool,
}

/// Every difference between two program files, comparing everything.
///
/// # Errors
/// [`ToolError::Input`] naming the side that does not read as `.hwx`, `.anec` or `.e5`;
/// [`ToolError::KindsDiffer`] for an `.e5` against an `.hwx` or `.anec`.
pub fn diff_files(a: &[u8], b: &[u8]) -> Result<Vec<Difference>, ToolError> {
    diff_files_with(a, b, &DiffOptions::default())
}

/// Every difference between two program files under `opts`.
///
/// # Errors
/// [`ToolError::Input`] naming the side that does not read as `.hwx`, `.anec` or `.e5`;
/// [`ToolError::KindsDiffer`] for an `.e5` against an `.hwx` or `.anec`.
pub fn diff_files_with(a: &[u8], b: &[u8], opts: &DiffOptions) -> Result<Vec<Difference>, ToolError> {
    let left = Program::read(a).map_err(|e| e.on("left"))?;
    let right = Program::read(b).map_err(|e| e.on("right"))?;
    if matches!(left, Program::E5(_)) != matches!(right, Program::E5(_)) {
        return Err(ToolError::KindsDiffer { left: left.format(), right: right.format() });
    }
    let (ln, rn) = (nodes(&left, a.len()), nodes(&right, b.len()));
    let mut out = compare(&flatten(&ln), &flatten(&rn), opts);
    out.extend(compare_bytes("__const", left.consts(), right.consts()));
    Ok(out)
}

/// Differing byte ranges of two blobs (merged across gaps under [`MERGE_GAP`]), then a
/// size difference.
fn compare_bytes(what: &str, a: &[u8], b: &[u8]) -> Vec<Difference> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let common = a.len().min(b.len());
    let same = a.get(..common) == b.get(..common);
    let differing = a.iter().zip(b).enumerate().take(if same { 0 } else { common });
    let differing = differing.filter(|(_, (x, y))| x != y).map(|(i, _)| i);
    for i in differing {
        match ranges.last_mut() {
            Some((_, end)) if i - *end < MERGE_GAP => *end = i + 1,
            _ => ranges.push((i, i + 1)),
        }
    }
    let mut out: Vec<Difference> = ranges
        .iter()
        .take(MAX_RANGES)
        .map(|&(s, e)| diff(&format!("{what} {s:#x}..{e:#x}"), &preview(a, s, e), &preview(b, s, e)))
        .collect();
    if ranges.len() > MAX_RANGES {
        let rest = ranges.len() - MAX_RANGES;
        out.push(diff(&format!("{what} more ranges"), &format!("{rest} more differing ranges"), "not listed"));
    }
    if a.len() != b.len() {
        out.push(diff(&format!("{what} size"), &format!("{:#x}", a.len()), &format!("{:#x}", b.len())));
    }
    out
}

/// The first bytes of `bytes[s..e]` in hex, with the range length.
fn preview(bytes: &[u8], s: usize, e: usize) -> String {
    let shown = bytes.get(s..e.min(s + SHOWN_BYTES)).unwrap_or_default();
    let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
    let more = if e - s > SHOWN_BYTES { " ..." } else { "" };
    format!("{}{more} ({} bytes)", hex.join(" "), e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_merge_small_gaps() {
        let a = vec![0u8; 100];
        let mut b = a.clone();
        b[10] = 1;
        b[20] = 1;
        b[80] = 1;
        let d = compare_bytes("__const", &a, &b[..90]);
        let locs: Vec<&str> = d.iter().map(|d| d.location.as_str()).collect();
        assert_eq!(locs, ["__const 0xa..0x15", "__const 0x50..0x51", "__const size"]);
    }
}
