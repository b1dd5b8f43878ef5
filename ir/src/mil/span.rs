//! Source spans of MIL nodes.
//!
//! A span is a byte range into the text the node was parsed from. Spans are for
//! diagnostics only: they compare equal whatever their positions, so that two programs
//! with the same meaning but different layout (or one printed and re-parsed) are equal.

/// A byte range `start..end` in the source text.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span of nodes that have no text (protobuf input, built in code).
    pub const NONE: Span = Span { start: 0, end: 0 };

    /// A span from byte offsets (saturating at `u32::MAX`).
    pub fn new(start: usize, end: usize) -> Self {
        let c = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Span { start: c(start), end: c(end) }
    }

    /// True for [`Span::NONE`].
    pub fn is_none(self) -> bool {
        self.start == 0 && self.end == 0
    }

    /// The byte range.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// 1-based line and column of the start in `text` (a scan of the text: for many
    /// spans of one text, build a [`LineIndex`] once).
    pub fn line_col(self, text: &str) -> (usize, usize) {
        let start = (self.start as usize).min(text.len());
        let before = text.get(..start).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map_or(start, |nl| start - nl - 1) + 1;
        (line, col)
    }
}

/// The line starts of a text, found once: the line and column of any span in logarithmic
/// time, the same answer as [`Span::line_col`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the first byte of each line.
    starts: Vec<usize>,
    /// The text's length.
    len: usize,
}

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &str) -> Self {
        let newlines = text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1);
        LineIndex { starts: std::iter::once(0).chain(newlines).collect(), len: text.len() }
    }

    /// 1-based line and column (in bytes) of the start of `span`.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        let start = (span.start as usize).min(self.len);
        let line = self.starts.partition_point(|&s| s <= start);
        let line_start = self.starts.get(line.saturating_sub(1)).copied().unwrap_or(0);
        (line.max(1), start - line_start + 1)
    }
}

impl PartialEq for Span {
    /// Spans never distinguish nodes: see the module header.
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl std::hash::Hash for Span {
    /// Consistent with [`PartialEq`]: every span hashes alike.
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_agrees_with_the_scan() {
        let text = "ab\n\ncd\nefg\n";
        let index = LineIndex::new(text);
        for start in 0..=text.len() + 2 {
            let span = Span::new(start, start);
            assert_eq!(index.line_col(span), span.line_col(text), "offset {start}");
        }
    }
}
