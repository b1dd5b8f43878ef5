//! Source lines of netplist entries, found by a plain text search of the XML.
//!
//! The plist reader does not report positions, so the line of an entry (unit, input,
//! output, network) is the line of the first `<key>NAME</key>` that is followed, after
//! white space and comments, by `<dict`. Entries without a key of their own (the procedures
//! of a `ProcedureList` and the entries of their lists) are found by their byte range in the
//! array ([`Locator::array_dicts`]) and a `<key>K</key><string>V</string>` pair inside it
//! ([`Locator::find_value`]). Binary plists have no lines: every lookup gives line 0,
//! column 0.

use std::ops::Range;

/// Finds entry keys in the XML text of a plist.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locator<'a> {
    text: Option<&'a str>,
}

impl<'a> Locator<'a> {
    /// A locator over the raw file bytes (only XML text is searched).
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let text = if bytes.starts_with(b"bplist") { None } else { std::str::from_utf8(bytes).ok() };
        Locator { text }
    }

    /// The 1-based (line, column) of the entry `name`, or (0, 0) when not found.
    pub(crate) fn find(&self, name: &str) -> (u32, u32) {
        let Some(text) = self.text else { return (0, 0) };
        let needle = format!("<key>{}</key>", escape(name));
        let mut from = 0;
        let mut first = None;
        while let Some(rel) = text.get(from..).and_then(|t| t.find(&needle)) {
            let at = from + rel;
            first.get_or_insert(at);
            let after = at + needle.len();
            if text.get(after..).is_some_and(starts_with_dict) {
                return position(text, at);
            }
            from = after;
        }
        first.map_or((0, 0), |at| position(text, at))
    }

    /// The byte ranges of the `<dict>` items of the array under the first
    /// `<key>KEY</key>` (the procedures of `ProcedureList`), in order; empty for binary
    /// plists or when the array is not found.
    pub(crate) fn array_dicts(&self, key: &str) -> Vec<Range<usize>> {
        let Some(text) = self.text else { return Vec::new() };
        let needle = format!("<key>{}</key>", escape(key));
        let Some(after) = text.find(&needle).map(|at| at + needle.len()) else { return Vec::new() };
        let Some(rest) = text.get(after..).and_then(skip_blank) else { return Vec::new() };
        if !rest.starts_with("<array>") {
            return Vec::new();
        }
        let start = text.len() - rest.len() + "<array>".len();
        dict_items(text, start)
    }

    /// The (line, column) of the first `<key>KEY</key>` inside `range` whose value is
    /// `<string>VALUE</string>`; (0, 0) when there is no range or no such pair.
    pub(crate) fn find_value(&self, range: Option<&Range<usize>>, key: &str, value: &str) -> (u32, u32) {
        let (Some(text), Some(range)) = (self.text, range) else { return (0, 0) };
        let Some(area) = text.get(range.clone()) else { return (0, 0) };
        let needle = format!("<key>{}</key>", escape(key));
        let want = format!("<string>{}</string>", escape(value));
        let mut from = 0;
        while let Some(rel) = area.get(from..).and_then(|t| t.find(&needle)) {
            let at = from + rel;
            from = at + needle.len();
            if area.get(from..).and_then(skip_blank).is_some_and(|r| r.starts_with(&want)) {
                return position(text, range.start + at);
            }
        }
        (0, 0)
    }

    /// The (line, column) where `range` starts; (0, 0) when there is no range.
    pub(crate) fn start_of(&self, range: Option<&Range<usize>>) -> (u32, u32) {
        match (self.text, range) {
            (Some(text), Some(range)) => position(text, range.start),
            _ => (0, 0),
        }
    }
}

/// The byte ranges of the `<dict>` items of the array whose content starts at `start`,
/// up to the array's closing tag. Nested dictionaries and arrays are skipped whole.
fn dict_items(text: &str, start: usize) -> Vec<Range<usize>> {
    let mut items = Vec::new();
    let (mut depth, mut item_start, mut at) = (0usize, start, start);
    while let Some(rel) = text.get(at..).and_then(|t| t.find('<')) {
        let open = at + rel;
        let tag = text.get(open..).unwrap_or("");
        let Some(len) = tag_len(tag) else { break };
        at = open + len;
        if tag.starts_with("<dict>") || tag.starts_with("<array>") {
            if depth == 0 {
                item_start = open;
            }
            depth += 1;
        } else if tag.starts_with("</dict>") || tag.starts_with("</array>") {
            let Some(d) = depth.checked_sub(1) else { break };
            depth = d;
            if depth == 0 && tag.starts_with("</dict>") {
                items.push(item_start..at);
            }
        } else if depth == 0 && tag.starts_with("<dict/>") {
            items.push(open..at);
        }
    }
    items
}

/// The length of the tag or comment `tag` starts with, or `None` when it is not closed.
fn tag_len(tag: &str) -> Option<usize> {
    match tag.strip_prefix("<!--") {
        Some(comment) => comment.find("-->").map(|end| end + "<!---->".len()),
        None => tag.find('>').map(|end| end + 1),
    }
}

/// `rest` after white space and XML comments, or `None` for an unclosed comment.
fn skip_blank(mut rest: &str) -> Option<&str> {
    loop {
        rest = rest.trim_start();
        match rest.strip_prefix("<!--") {
            Some(comment) => rest = comment.get(comment.find("-->")? + 3..)?,
            None => return Some(rest),
        }
    }
}

/// Whether `rest` begins, after white space and XML comments, with `<dict`.
fn starts_with_dict(rest: &str) -> bool {
    skip_blank(rest).is_some_and(|r| r.starts_with("<dict"))
}

/// Escapes a key the way XML plist writers do.
fn escape(name: &str) -> String {
    name.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The 1-based line and column of byte offset `at`.
fn position(text: &str, at: usize) -> (u32, u32) {
    let before = text.get(..at).unwrap_or("");
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_dict_entry_not_a_string_reference() {
        let xml = "<dict>\n<key>Bottom</key>\n<string>a</string>\n  <key>a</key> <!-- c -->\n  <dict>";
        let loc = Locator::new(xml.as_bytes());
        assert_eq!(loc.find("a"), (4, 3));
        assert_eq!(loc.find("Bottom"), (2, 1));
        assert_eq!(loc.find("nope"), (0, 0));
    }

    #[test]
    fn binary_has_no_lines() {
        let loc = Locator::new(b"bplist00<key>a</key><dict>");
        assert_eq!(loc.find("a"), (0, 0));
        assert!(loc.array_dicts("a").is_empty());
        assert_eq!(loc.find_value(Some(&(0..5)), "a", "b"), (0, 0));
    }

    #[test]
    fn array_items_and_values_inside_them() {
        let xml = concat!(
            "<key>P</key>\n<array>\n <dict>\n  <key>L</key><array><dict/></array>\n",
            "  <key>Name</key> <string>f</string>\n </dict>\n <!-- <dict> -->\n <dict/>\n",
            " <dict><key>Name</key>\n<string>g</string></dict>\n</array>\n<dict></dict>",
        );
        let loc = Locator::new(xml.as_bytes());
        let items = loc.array_dicts("P");
        assert_eq!(items.len(), 3);
        assert_eq!(loc.start_of(items.first()), (3, 2));
        assert_eq!(loc.find_value(items.first(), "Name", "f"), (5, 3));
        assert_eq!(loc.find_value(items.get(2), "Name", "f"), (0, 0));
        assert_eq!(loc.find_value(items.get(2), "Name", "g"), (9, 8));
        assert_eq!(loc.start_of(items.get(1)), (8, 2));
        assert_eq!(loc.start_of(None), (0, 0));
        assert!(loc.array_dicts("Name").is_empty());
    }
}
