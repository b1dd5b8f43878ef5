//! A user-facing error with a source position, shared by every front end and pass that
//! reads user files.
//!
//! Library crates build [`Diagnostic`]s; only the driver renders them (file, line, column,
//! the source line and a caret under the span). When the input has no text (a protobuf
//! `.mlpackage`), the span is [`Span::NONE`] and the message names the op instead.

use crate::mil::Span;
use std::fmt;
use std::sync::Arc;

/// One error about a user's input.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The file as the user named it.
    pub file: String,
    /// The file's text when it is a text file (spans index into it).
    pub text: Option<Arc<str>>,
    /// The offending text.
    pub span: Span,
    /// What is wrong, one line.
    pub message: String,
    /// A short label printed under the caret (may be empty).
    pub label: String,
    /// Extra lines (`help: ...`, `note: ...`).
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span` of `file`.
    pub fn new(file: impl Into<String>, text: Option<Arc<str>>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { file: file.into(), text, span, message: message.into(), label: String::new(), notes: Vec::new() }
    }

    /// With a label under the caret.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// With an extra note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// 1-based line and column of the span, when there is text.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        let text = self.text.as_deref()?;
        (!self.span.is_none()).then(|| self.span.line_col(text))
    }
}

impl fmt::Display for Diagnostic {
    /// One line: `file:line:col: message` (or `file: message` without a position).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_col() {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}
