//! The parser's state and token helpers, shared by the grammar files
//! ([`super::parse_program`], [`super::parse_types`], [`super::parse_values`]).
//!
//! The parser is a recursive descent over the token vector of [`super::lexer`]. It stops at
//! the first error ([`SyntaxError`]). Brackets are tracked on a stack so that an error at
//! the end of the text names the bracket that was never closed, and nesting is limited
//! ([`MAX_DEPTH`]) so that hostile input cannot overflow the stack.

use super::lexer::{LexError, Tok, Token};
use anec_ir::mil::{Ident, Span};

/// Deepest nesting of types, literals and argument tuples accepted.
pub const MAX_DEPTH: usize = 64;

/// A syntax error: where, what, and an optional label and note.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// The offending text.
    pub span: Span,
    /// One line.
    pub message: String,
    /// Under the caret.
    pub label: String,
    /// An extra line.
    pub note: Option<String>,
}

/// A parse result.
pub type PResult<T> = Result<T, Box<SyntaxError>>;

/// Builds an error.
pub fn error(span: Span, message: impl Into<String>, label: impl Into<String>) -> Box<SyntaxError> {
    Box::new(SyntaxError { span, message: message.into(), label: label.into(), note: None })
}

/// The parser: text, tokens, position, open brackets and nesting depth.
pub struct Parser<'t> {
    /// The source text.
    pub text: &'t str,
    toks: Vec<Token>,
    pos: usize,
    open: Vec<(Tok, Span)>,
    depth: usize,
}

impl<'t> Parser<'t> {
    /// A parser over `text` and its tokens (the last one [`Tok::Eof`]).
    pub fn new(text: &'t str, toks: Vec<Token>) -> Self {
        Parser { text, toks, pos: 0, open: Vec::new(), depth: 0 }
    }

    /// The current token.
    pub fn peek(&self) -> Token {
        self.nth(0)
    }

    /// The token `n` ahead of the current one (the end token past the end).
    pub fn nth(&self, n: usize) -> Token {
        let eof = Token { kind: Tok::Eof, start: self.text.len() as u32, end: self.text.len() as u32 };
        self.toks.get(self.pos + n).copied().unwrap_or(eof)
    }

    /// The current token's kind.
    pub fn kind(&self) -> Tok {
        self.peek().kind
    }

    /// The text of a token.
    pub fn slice(&self, t: Token) -> &'t str {
        self.text.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    /// Span of a token.
    pub fn span(t: Token) -> Span {
        Span { start: t.start, end: t.end }
    }

    /// Moves past the current token and returns it.
    pub fn bump(&mut self) -> Token {
        let t = self.peek();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    /// End offset of the previous token.
    pub fn prev_end(&self) -> u32 {
        self.pos.checked_sub(1).and_then(|i| self.toks.get(i)).map_or(0, |t| t.end)
    }

    /// Whether the current token is `kind`.
    pub fn at(&self, kind: Tok) -> bool {
        self.kind() == kind
    }

    /// Whether the current token is the identifier `word`.
    pub fn at_word(&self, word: &str) -> bool {
        let t = self.peek();
        t.kind == Tok::Ident && self.slice(t) == word
    }

    /// Consumes `kind` if it is next.
    pub fn eat(&mut self, kind: Tok) -> bool {
        let hit = self.at(kind);
        if hit {
            self.bump();
        }
        hit
    }

    /// Consumes `kind` or fails with "expected `what`".
    pub fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        if self.at(kind) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(what))
        }
    }

    /// Consumes the identifier `word` or fails.
    pub fn expect_word(&mut self, word: &str) -> PResult<Token> {
        if self.at_word(word) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    /// An identifier, as a tree [`Ident`].
    pub fn ident(&mut self, what: &str) -> PResult<Ident> {
        let t = self.expect(Tok::Ident, what)?;
        Ok(Ident { name: self.slice(t).to_string(), span: Self::span(t) })
    }

    /// Consumes an opening bracket and records it.
    pub fn open(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        let t = self.expect(kind, what)?;
        self.open.push((kind, Self::span(t)));
        Ok(t)
    }

    /// Consumes the closing bracket of the innermost open one.
    pub fn close(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        let t = self.expect(kind, what)?;
        self.open.pop();
        Ok(t)
    }

    /// Enters one level of nesting; fails past [`MAX_DEPTH`].
    pub fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = Self::span(self.peek());
            let mut e = error(span, format!("nesting deeper than {MAX_DEPTH} levels"), "too deeply nested");
            e.note = Some("types, literals and argument tuples nest at most this deep".into());
            return Err(e);
        }
        Ok(())
    }

    /// Leaves one level of nesting.
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The error for the current token when `what` was expected. A malformed token reports
    /// its own problem; the end of the text names the innermost unclosed bracket.
    pub fn unexpected(&self, what: &str) -> Box<SyntaxError> {
        let t = self.peek();
        match t.kind {
            Tok::Error(e) => self.lex_error(t, e),
            Tok::Eof => self.at_eof(what),
            _ => {
                error(Self::span(t), format!("expected {what}, found {}", self.describe(t)), format!("expected {what}"))
            }
        }
    }

    fn at_eof(&self, what: &str) -> Box<SyntaxError> {
        match self.open.last() {
            Some(&(kind, span)) => {
                let b = bracket_text(kind);
                let mut e = error(span, format!("unclosed `{b}`"), format!("this `{b}` is never closed"));
                e.note = Some(format!("the file ends where {what} was expected"));
                e
            }
            None => {
                let end = self.text.len();
                error(Span::new(end, end), format!("unexpected end of file, expected {what}"), "the file ends here")
            }
        }
    }

    /// The error for a malformed token.
    pub fn lex_error(&self, t: Token, e: LexError) -> Box<SyntaxError> {
        let span = Self::span(t);
        match e {
            LexError::UnterminatedString => {
                let mut err = error(span, "unterminated string", "this string has no closing `\"`");
                err.note = Some("strings end on the same line with `\"`".into());
                err
            }
            LexError::BadEscape => {
                error(span, "invalid escape in string", "valid escapes: \\\" \\\\ \\n \\t \\r \\xNN")
            }
            LexError::BadNumber(why) => error(span, format!("invalid number `{}`", self.slice(t)), why),
            LexError::BadChar => error(span, format!("unexpected character `{}`", self.slice(t)), "not part of MIL"),
        }
    }

    /// How a token is named in messages.
    pub fn describe(&self, t: Token) -> String {
        match t.kind {
            Tok::Eof => "end of file".into(),
            Tok::Ident => format!("identifier `{}`", self.slice(t)),
            Tok::Int | Tok::HexFloat | Tok::DecFloat => format!("number `{}`", self.slice(t)),
            Tok::Str | Tok::StrEscaped => "a string".into(),
            _ => format!("`{}`", self.slice(t)),
        }
    }
}

/// The text of a bracket token kind.
fn bracket_text(kind: Tok) -> &'static str {
    match kind {
        Tok::LParen => "(",
        Tok::LBracket => "[",
        Tok::LBrace => "{",
        Tok::Lt => "<",
        _ => "?",
    }
}
