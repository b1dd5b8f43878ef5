//! The lexer: a byte cursor over the text with MLIR's token shapes.
//!
//! The parser pulls tokens on demand (`eat`, `string`, `number`, ...), which lets it read
//! `tensor<1x3x8x8xf16>` whose dimensions MLIR lexes specially. Whitespace and `//`
//! comments between tokens are insignificant. Every method bounds-checks; nothing panics,
//! whatever the input.

use super::ParseError;
use crate::types::DType;

/// A numeric literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Number {
    /// A decimal integer, sign applied.
    Int(i128),
    /// A decimal float (has a `.`).
    Float(f64),
    /// A hexadecimal integer (`0x...`), the bit pattern.
    Hex(u64),
}

/// A position in the text with the methods that consume tokens.
pub(super) struct Cursor<'a> {
    text: &'a str,
    src: &'a [u8],
    /// Byte offset of the next unread byte.
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Cursor { text, src: text.as_bytes(), pos: 0 }
    }

    /// An error at byte offset `pos`, with its 1-based line and column (in characters).
    pub fn error_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        let pos = pos.min(self.src.len());
        let before = self.src.get(..pos).unwrap_or_default();
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let rest = before.get(line_start..).unwrap_or_default();
        let col = 1 + rest.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        ParseError { line, col, message: message.into() }
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.pos, message)
    }

    /// An "expected X" error naming what was found instead.
    pub fn expected(&mut self, what: &str) -> ParseError {
        self.skip_ws();
        let found = match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            None if self.pos >= self.src.len() => "end of input".to_string(),
            None => "a broken character".to_string(),
            Some(c) => format!("{c:?}"),
        };
        self.error(format!("expected {what}, found {found}"))
    }

    /// The byte at `pos + k`, if any.
    fn byte(&self, k: usize) -> Option<u8> {
        self.src.get(self.pos.checked_add(k)?).copied()
    }

    /// Skips whitespace and `//` comments.
    pub fn skip_ws(&mut self) {
        loop {
            match self.byte(0) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.byte(1) == Some(b'/') => {
                    while !matches!(self.byte(0), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// The next byte after whitespace.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.byte(0)
    }

    /// Whether only whitespace remains.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Whether the text continues with `lit` (after whitespace).
    pub fn at(&mut self, lit: &str) -> bool {
        self.skip_ws();
        self.src.get(self.pos..).is_some_and(|rest| rest.starts_with(lit.as_bytes()))
    }

    /// Consumes `lit` if it comes next.
    pub fn eat(&mut self, lit: &str) -> bool {
        let found = self.at(lit);
        if found {
            self.pos += lit.len();
        }
        found
    }

    /// Consumes `lit` or fails.
    pub fn expect(&mut self, lit: &str) -> Result<(), ParseError> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{lit}`")))
        }
    }

    /// Consumes the bytes while `pred` holds, returning them as text (ASCII only).
    fn take_while(&mut self, pred: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.byte(0).is_some_and(&pred) {
            self.pos += 1;
        }
        self.text.get(start..self.pos).unwrap_or_default()
    }

    /// A bare identifier `[A-Za-z_][A-Za-z0-9_$.]*`.
    pub fn ident(&mut self) -> Result<&'a str, ParseError> {
        self.skip_ws();
        if !self.byte(0).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
            return Err(self.expected("an identifier"));
        }
        Ok(self.take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.')))
    }

    /// A dictionary or resource key: a bare identifier or a string.
    pub fn key(&mut self) -> Result<String, ParseError> {
        if self.peek() == Some(b'"') {
            self.string()
        } else {
            self.ident().map(str::to_string).map_err(|_| self.expected("a key"))
        }
    }

    /// A string literal with MLIR escapes (`\"`, `\\`, `\n`, `\t`, `\XX`).
    pub fn string(&mut self) -> Result<String, ParseError> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a string"));
        }
        let start = self.pos;
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            match self.byte(0) {
                None | Some(b'\n') => return Err(self.error_at(start, "unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => bytes.push(self.escape()?),
                Some(b) => {
                    bytes.push(b);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        String::from_utf8(bytes).map_err(|_| self.error_at(start, "string is not valid UTF-8"))
    }

    /// One escape sequence, the cursor on its backslash.
    fn escape(&mut self) -> Result<u8, ParseError> {
        let at = self.pos;
        let simple = match self.byte(1) {
            Some(b'"') => Some(b'"'),
            Some(b'\\') => Some(b'\\'),
            Some(b'n') => Some(b'\n'),
            Some(b't') => Some(b'\t'),
            _ => None,
        };
        if let Some(b) = simple {
            self.pos += 2;
            return Ok(b);
        }
        let hex = |b: Option<u8>| b.and_then(|b| char::from(b).to_digit(16));
        match (hex(self.byte(1)), hex(self.byte(2))) {
            (Some(h), Some(l)) => {
                self.pos += 3;
                Ok((h * 16 + l) as u8)
            }
            _ => Err(self.error_at(at, "invalid escape in string")),
        }
    }

    /// A numeric literal: `-?[0-9]+`, `-?[0-9]+.[0-9]*([eE][+-]?[0-9]+)?` or `0x[0-9a-fA-F]+`.
    pub fn number(&mut self) -> Result<Number, ParseError> {
        self.skip_ws();
        let start = self.pos;
        if self.byte(0) == Some(b'0') && self.byte(1) == Some(b'x') {
            self.pos += 2;
            let digits = self.take_while(|b| b.is_ascii_hexdigit());
            return u64::from_str_radix(digits, 16)
                .map(Number::Hex)
                .map_err(|_| self.error_at(start, "invalid hexadecimal literal"));
        }
        let neg = self.byte(0) == Some(b'-');
        if neg {
            self.pos += 1;
        }
        if !self.byte(0).is_some_and(|b| b.is_ascii_digit()) {
            return Err(self.expected("a number"));
        }
        self.take_while(|b| b.is_ascii_digit());
        if self.byte(0) != Some(b'.') {
            let text = self.text.get(start..self.pos).unwrap_or_default();
            let v: Result<i128, _> = text.parse();
            return v.map(Number::Int).map_err(|_| self.error_at(start, "integer literal too large"));
        }
        self.pos += 1;
        self.take_while(|b| b.is_ascii_digit());
        self.exponent();
        let text = self.text.get(start..self.pos).unwrap_or_default();
        text.parse().map(Number::Float).map_err(|_| self.error_at(start, "invalid float literal"))
    }

    /// Consumes an exponent `[eE][+-]?[0-9]+` if one follows.
    fn exponent(&mut self) {
        if !matches!(self.byte(0), Some(b'e' | b'E')) {
            return;
        }
        let sign = usize::from(matches!(self.byte(1), Some(b'+' | b'-')));
        if self.byte(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1 + sign;
            self.take_while(|b| b.is_ascii_digit());
        }
    }

    /// An unsigned 32-bit decimal (dimensions, lines, columns, value ids).
    pub fn u32_lit(&mut self) -> Result<u32, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let digits = self.take_while(|b| b.is_ascii_digit());
        if digits.is_empty() {
            return Err(self.expected("an unsigned integer"));
        }
        digits.parse().map_err(|_| self.error_at(start, "number does not fit in 32 bits"))
    }

    /// A value name `%N`; returns the id and the name's position.
    pub fn value_id(&mut self) -> Result<(u32, usize), ParseError> {
        self.skip_ws();
        let at = self.pos;
        if !self.eat("%") || !self.byte(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos = at;
            return Err(self.expected("a value name like `%0`"));
        }
        Ok((self.u32_lit()?, at))
    }

    /// The body of a tensor type after `tensor<`: `NxCxHxWxT>` or `NxCxDxHxWxT>`; returns
    /// the dimensions and element type.
    pub fn tensor_body(&mut self) -> Result<(Vec<u32>, DType), ParseError> {
        let mut dims = Vec::new();
        self.skip_ws();
        while self.byte(0).is_some_and(|b| b.is_ascii_digit()) {
            if dims.len() == 5 {
                return Err(self.error("tensor rank must be 4 or 5"));
            }
            dims.push(self.u32_lit()?);
            if self.byte(0) != Some(b'x') {
                return Err(self.expected("`x` after a dimension"));
            }
            self.pos += 1;
        }
        let at = self.pos;
        let name = self.take_while(|b| b.is_ascii_alphanumeric());
        let dtype =
            DType::from_mlir_name(name).ok_or_else(|| self.error_at(at, format!("unknown element type `{name}`")))?;
        self.expect(">")?;
        Ok((dims, dtype))
    }
}
