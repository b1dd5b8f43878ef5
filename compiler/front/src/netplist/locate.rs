//! Source lines of netplist entries, found by a plain text search of the XML.
//!
//! The plist reader does not report positions, so the line of an entry (unit, input,
//! output, network) is the line of the first `<key>NAME</key>` that is followed, after
//! white space and comments, by `<dict`. Binary plists have no lines: every lookup gives
//! line 0, column 0.

/// Finds entry keys in the XML text of a plist.
#[derive(Debug)]
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
}

/// Whether `rest` begins, after white space and XML comments, with `<dict`.
fn starts_with_dict(mut rest: &str) -> bool {
    loop {
        rest = rest.trim_start();
        if let Some(comment) = rest.strip_prefix("<!--") {
            match comment.find("-->") {
                Some(end) => rest = comment.get(end + 3..).unwrap_or(""),
                None => return false,
            }
        } else {
            return rest.starts_with("<dict");
        }
    }
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
        assert_eq!(Locator::new(b"bplist00<key>a</key><dict>").find("a"), (0, 0));
    }
}
