//! Byte-level lexer of textual MIL.
//!
//! [`lex`] turns the whole text into a vector of [`Token`]s (kind and byte range; no
//! strings are copied). Problems (an unterminated string, a malformed number, a stray
//! character) become [`Tok::Error`] tokens so that the parser reports them in source order,
//! after any syntax error that comes first.

/// What went wrong in a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexError {
    /// A string whose closing quote is missing before the end of the line.
    UnterminatedString,
    /// A backslash escape other than `\" \\ \n \t \r \xNN`.
    BadEscape,
    /// A malformed number; the text says why.
    BadNumber(&'static str),
    /// A character that starts no token.
    BadChar,
}

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_]*` (keywords and type names too).
    Ident,
    /// Decimal digits.
    Int,
    /// `0x1.8p-3`.
    HexFloat,
    /// `1.5`, `1e-3`, `0.25E+2`.
    DecFloat,
    /// A string without escapes (the range includes the quotes).
    Str,
    /// A string with backslash escapes.
    StrEscaped,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `,`
    Comma,
    /// `=`
    Eq,
    /// `;`
    Semi,
    /// `?`
    Question,
    /// `->`
    Arrow,
    /// `-` (only before a number, `inf` or `nan`)
    Minus,
    /// A malformed token.
    Error(LexError),
    /// End of the text.
    Eof,
}

/// A token: its kind and byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The kind.
    pub kind: Tok,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

/// Lexes `text` (at most `u32::MAX` bytes; the caller checks). The last token is
/// [`Tok::Eof`].
pub fn lex(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 5 + 16);
    let mut pos = 0usize;
    loop {
        pos = skip_space(bytes, pos);
        let Some(&b) = bytes.get(pos) else { break };
        let (kind, end) = lex_one(text, bytes, pos, b);
        out.push(Token { kind, start: pos as u32, end: end as u32 });
        pos = end;
    }
    out.push(Token { kind: Tok::Eof, start: bytes.len() as u32, end: bytes.len() as u32 });
    out
}

fn skip_space(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// One token starting at `pos` (whose byte is `b`): its kind and end.
fn lex_one(text: &str, bytes: &[u8], pos: usize, b: u8) -> (Tok, usize) {
    let single = |k| (k, pos + 1);
    match b {
        b'(' => single(Tok::LParen),
        b')' => single(Tok::RParen),
        b'[' => single(Tok::LBracket),
        b']' => single(Tok::RBracket),
        b'{' => single(Tok::LBrace),
        b'}' => single(Tok::RBrace),
        b'<' => single(Tok::Lt),
        b'>' => single(Tok::Gt),
        b',' => single(Tok::Comma),
        b'=' => single(Tok::Eq),
        b';' => single(Tok::Semi),
        b'?' => single(Tok::Question),
        b'-' if bytes.get(pos + 1) == Some(&b'>') => (Tok::Arrow, pos + 2),
        b'-' => single(Tok::Minus),
        b'"' => lex_string(bytes, pos),
        b'0'..=b'9' => lex_number(bytes, pos),
        b if is_ident_start(b) => (Tok::Ident, ident_end(bytes, pos)),
        _ => (Tok::Error(LexError::BadChar), pos + char_len(text, pos)),
    }
}

/// Whether `b` may start an identifier.
pub fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn ident_end(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|&b| is_ident_byte(b)) {
        pos += 1;
    }
    pos
}

/// Length in bytes of the character at `pos` (1 when `pos` is not a boundary).
fn char_len(text: &str, pos: usize) -> usize {
    text.get(pos..).and_then(|s| s.chars().next()).map_or(1, char::len_utf8)
}

/// A string from the opening quote at `pos`. It ends at the closing quote; a newline or the
/// end of the text first makes it unterminated (the token then covers the opening quote).
fn lex_string(bytes: &[u8], pos: usize) -> (Tok, usize) {
    let mut i = pos + 1;
    let mut escaped = false;
    let mut bad_escape = false;
    loop {
        match bytes.get(i) {
            None | Some(b'\n') => return (Tok::Error(LexError::UnterminatedString), pos + 1),
            Some(b'"') => break,
            Some(b'\\') => {
                escaped = true;
                let len = escape_len(&bytes[i + 1..]);
                bad_escape |= len == 0;
                i += 1 + len.max(usize::from(bytes.get(i + 1).is_some_and(|&c| c != b'\n')));
            }
            Some(_) => i += 1,
        }
    }
    let end = i + 1;
    match (bad_escape, escaped) {
        (true, _) => (Tok::Error(LexError::BadEscape), end),
        (false, true) => (Tok::StrEscaped, end),
        (false, false) => (Tok::Str, end),
    }
}

/// Length of a valid escape body after a backslash (`"`, `\`, `n`, `t`, `r`, `xNN`), or 0.
pub fn escape_len(rest: &[u8]) -> usize {
    match rest.first() {
        Some(b'"' | b'\\' | b'n' | b't' | b'r' | b'\'' | b'0') => 1,
        Some(b'x') if rest.len() >= 3 && rest[1].is_ascii_hexdigit() && rest[2].is_ascii_hexdigit() => 3,
        _ => 0,
    }
}

/// A number from its first digit at `pos`: decimal integer, decimal float or hex float.
fn lex_number(bytes: &[u8], pos: usize) -> (Tok, usize) {
    let hex = bytes.get(pos) == Some(&b'0') && matches!(bytes.get(pos + 1), Some(b'x' | b'X'));
    let (kind, end) = if hex { lex_hex(bytes, pos + 2) } else { lex_decimal(bytes, pos) };
    if bytes.get(end).is_some_and(|&b| is_ident_byte(b) || b == b'.') {
        let bad_end = ident_end(bytes, end + 1);
        return (Tok::Error(LexError::BadNumber("unexpected character in a number")), bad_end);
    }
    (kind, end)
}

fn digits_end(bytes: &[u8], mut pos: usize, pred: fn(&u8) -> bool) -> usize {
    while bytes.get(pos).is_some_and(pred) {
        pos += 1;
    }
    pos
}

/// `HEX* [. HEX*] p [+-] DIGITS` after `0x`.
fn lex_hex(bytes: &[u8], pos: usize) -> (Tok, usize) {
    let int_end = digits_end(bytes, pos, u8::is_ascii_hexdigit);
    let mut end = int_end;
    let mut frac_digits = 0;
    if bytes.get(end) == Some(&b'.') {
        let frac_end = digits_end(bytes, end + 1, u8::is_ascii_hexdigit);
        frac_digits = frac_end - end - 1;
        end = frac_end;
    }
    if int_end == pos && frac_digits == 0 {
        return (Tok::Error(LexError::BadNumber("hex float without digits")), end);
    }
    if !matches!(bytes.get(end), Some(b'p' | b'P')) {
        return (Tok::Error(LexError::BadNumber("hex float without a `p` exponent")), ident_end(bytes, end));
    }
    exponent(bytes, end + 1, Tok::HexFloat)
}

/// `DIGITS [. DIGITS*] [e [+-] DIGITS]`.
fn lex_decimal(bytes: &[u8], pos: usize) -> (Tok, usize) {
    let mut end = digits_end(bytes, pos, u8::is_ascii_digit);
    let mut kind = Tok::Int;
    if bytes.get(end) == Some(&b'.') {
        end = digits_end(bytes, end + 1, u8::is_ascii_digit);
        kind = Tok::DecFloat;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        return exponent(bytes, end + 1, Tok::DecFloat);
    }
    (kind, end)
}

/// `[+-] DIGITS` of an exponent starting at `pos`.
fn exponent(bytes: &[u8], pos: usize, kind: Tok) -> (Tok, usize) {
    let sign = usize::from(matches!(bytes.get(pos), Some(b'+' | b'-')));
    let end = digits_end(bytes, pos + sign, u8::is_ascii_digit);
    if end == pos + sign {
        return (Tok::Error(LexError::BadNumber("exponent without digits")), end);
    }
    (kind, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok> {
        lex(text).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_punctuation_numbers_and_strings() {
        use Tok::*;
        assert_eq!(
            kinds("f(x = -0x1.8p-3, y = 1.5e3) -> [7, \"a\\\"b\", \"c\"];"),
            vec![
                Ident, LParen, Ident, Eq, Minus, HexFloat, Comma, Ident, Eq, DecFloat, RParen, Arrow, LBracket, Int,
                Comma, StrEscaped, Comma, Str, RBracket, Semi, Eof
            ]
        );
    }

    #[test]
    fn reports_malformed_tokens() {
        assert_eq!(kinds("\"abc")[0], Tok::Error(LexError::UnterminatedString));
        assert_eq!(kinds("\"a\\qb\"")[0], Tok::Error(LexError::BadEscape));
        assert!(matches!(kinds("0x1.8")[0], Tok::Error(LexError::BadNumber(_))));
        assert!(matches!(kinds("12ab")[0], Tok::Error(LexError::BadNumber(_))));
        assert!(matches!(kinds("1e+")[0], Tok::Error(LexError::BadNumber(_))));
        assert_eq!(kinds("é")[0], Tok::Error(LexError::BadChar));
        assert_eq!(lex("é")[0].end, 2);
    }
}
