//! Renders an [`anec_ir::Diagnostic`] as plain text with codespan-reporting:
//!
//! ```text
//! error: use of undefined variable `z`
//!   --> model.mil:5:57
//!   |
//! 5 |             tensor<fp16, [1]> y = relu(x = z)[name = string("y")];
//!   |                                            ^ not defined before
//!   |
//!   = note ...
//! ```
//!
//! No colors and ASCII frame characters, so the text is the same on every terminal. Only
//! the first line of a span is shown, and long lines are cut to a window around the span
//! (with `...`), so an error inside a 100 KB weight literal stays readable; line and column
//! numbers are those of the whole file (columns count bytes, as [`anec_ir::Diagnostic`]'s
//! one-line form does). A diagnostic without text or span prints as
//! `error: file: message` followed by its notes.

use anec_ir::Diagnostic;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term::{self, termcolor::NoColor, Chars, Config};
use std::ops::Range;

/// Bytes of context shown on each side of the span on a long line.
const CONTEXT: usize = 60;
/// Longest part of a span shown.
const MAX_SPAN: usize = 160;
/// What marks cut text.
const ELLIPSIS: &str = "...";

/// The diagnostic as text, ending with a newline.
pub fn render(d: &Diagnostic) -> String {
    match d.text.as_deref() {
        Some(text) if !d.span.is_none() => render_with_source(d, text).unwrap_or_else(|| render_plain(d)),
        _ => render_plain(d),
    }
}

/// Several diagnostics, one after the other.
pub fn render_all(ds: &[Diagnostic]) -> String {
    ds.iter().map(render).collect()
}

/// `error: file: message` and the notes.
fn render_plain(d: &Diagnostic) -> String {
    let mut s = format!("error: {}: {}\n", d.file, d.message);
    for n in &d.notes {
        s.push_str("  = ");
        s.push_str(n);
        s.push('\n');
    }
    s
}

fn render_with_source(d: &Diagnostic, text: &str) -> Option<String> {
    let excerpt = Excerpt::new(&d.file, text, d.span.range());
    let label = Label::primary((), excerpt.label.clone()).with_message(d.label.clone());
    let diag =
        CsDiagnostic::error().with_message(d.message.clone()).with_labels(vec![label]).with_notes(d.notes.clone());
    let config = Config { chars: Chars::ascii(), ..Config::default() };
    let mut out = NoColor::new(Vec::new());
    term::emit(&mut out, &config, &excerpt, &diag).ok()?;
    String::from_utf8(out.into_inner()).ok()
}

/// One line of the file (or a window of it), with the true line and column numbers.
struct Excerpt<'a> {
    name: &'a str,
    /// The shown text (no newline).
    source: String,
    /// The span inside `source`.
    label: Range<usize>,
    /// 1-based line number of the shown line.
    line: usize,
    /// Byte column (0-based) in the file line of `source[prefix..]`.
    column_base: usize,
    /// Length of a leading ellipsis.
    prefix: usize,
}

impl<'a> Excerpt<'a> {
    fn new(name: &'a str, text: &str, span: Range<usize>) -> Self {
        let start = floor_boundary(text, span.start.min(text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let end = floor_boundary(text, span.end.clamp(start, line_end).min(start + MAX_SPAN));
        let shown_start = floor_boundary(text, start.saturating_sub(CONTEXT).max(line_start));
        let shown_end = floor_boundary(text, (end + CONTEXT).min(line_end));
        let mut source = String::new();
        if shown_start > line_start {
            source.push_str(ELLIPSIS);
        }
        let prefix = source.len();
        source.push_str(text[shown_start..shown_end].trim_end_matches('\r'));
        if shown_end < line_end {
            source.push_str(ELLIPSIS);
        }
        let label = prefix + start - shown_start..prefix + end - shown_start;
        let line = text[..start].bytes().filter(|&b| b == b'\n').count() + 1;
        Excerpt { name, source, label, line, column_base: shown_start - line_start, prefix }
    }
}

/// The largest char boundary at or before `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, _id: ()) -> Result<&'a str, FilesError> {
        Ok(self.name)
    }

    fn source(&'a self, _id: ()) -> Result<&'a str, FilesError> {
        Ok(&self.source)
    }

    fn line_index(&'a self, _id: (), _byte_index: usize) -> Result<usize, FilesError> {
        Ok(0)
    }

    fn line_number(&'a self, _id: (), line_index: usize) -> Result<usize, FilesError> {
        Ok(self.line + line_index)
    }

    fn column_number(&'a self, _id: (), _line_index: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.column_base + byte_index.saturating_sub(self.prefix) + 1)
    }

    fn line_range(&'a self, _id: (), line_index: usize) -> Result<Range<usize>, FilesError> {
        match line_index {
            0 => Ok(0..self.source.len()),
            _ => Err(FilesError::LineTooLarge { given: line_index, max: 0 }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anec_ir::mil::Span;
    use std::sync::Arc;

    fn diag(text: &str, span: Span) -> Diagnostic {
        Diagnostic::new("m.mil", Some(Arc::from(text)), span, "bad thing").with_label("here")
    }

    #[test]
    fn renders_file_line_column_and_caret() {
        let out = render(&diag("ab\ncd efg\n", Span::new(6, 9)));
        assert_eq!(out, "error: bad thing\n  --> m.mil:2:4\n  |\n2 | cd efg\n  |    ^^^ here\n\n");
    }

    #[test]
    fn cuts_long_lines_around_the_span() {
        let text = format!("{}XYZ{}\n", "a".repeat(500), "b".repeat(500));
        let out = render(&diag(&text, Span::new(500, 503)));
        assert!(out.contains("--> m.mil:1:501"), "{out}");
        let shown = format!("...{}XYZ{}...", "a".repeat(CONTEXT), "b".repeat(CONTEXT));
        assert!(out.contains(&shown), "{out}");
        assert!(out.contains(&format!("{}^^^ here", " ".repeat(CONTEXT + 3))), "{out}");
    }

    #[test]
    fn without_text_prints_one_line_and_notes() {
        let d = Diagnostic::new("m.mlpackage", None, Span::NONE, "op `conv`: bad").with_note("note: why");
        assert_eq!(render(&d), "error: m.mlpackage: op `conv`: bad\n  = note: why\n");
    }
}
