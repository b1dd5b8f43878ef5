//! Arguments, typed values and literals: `x`, `(a, b)`, `tensor<int32, [2]>([1, 1])`,
//! `string("x")`, `T(BLOBFILE(path = ..., offset = ...))`, and the literal forms (numbers,
//! `true`/`false`, `inf`/`nan`, strings, `[..]`, `(..)`, `{{k, v}, ..}`).

use super::lexer::Tok;
use super::numbers::{parse_hex_float, unescape};
use super::parser::{error, PResult, Parser};
use anec_ir::mil::{Arg, Literal, NamedArg, Span, Value, ValueData};

impl Parser<'_> {
    /// `key = arg, ...` up to (not including) `close`.
    pub fn kwargs(&mut self, close: Tok) -> PResult<Vec<NamedArg>> {
        let mut out = Vec::new();
        if self.at(close) {
            return Ok(out);
        }
        loop {
            let name = self.ident("an argument name")?;
            self.expect(Tok::Eq, "`=`")?;
            let value = self.parse_arg()?;
            out.push(NamedArg { name, value });
            if !self.eat(Tok::Comma) {
                return Ok(out);
            }
        }
    }

    /// `[key = arg, ...]`.
    pub fn attrs(&mut self) -> PResult<Vec<NamedArg>> {
        self.open(Tok::LBracket, "`[`")?;
        let attrs = self.kwargs(Tok::RBracket)?;
        self.close(Tok::RBracket, "`,` or `]`")?;
        Ok(attrs)
    }

    /// An argument: a variable, a typed value or a tuple `(a, b)`.
    pub fn parse_arg(&mut self) -> PResult<Arg> {
        if self.at(Tok::LParen) {
            self.enter()?;
            let tuple = self.arg_tuple();
            self.leave();
            return tuple;
        }
        if self.at(Tok::Ident) && !self.at_type(Tok::LParen) {
            return Ok(Arg::Name(self.ident("a name")?));
        }
        if !self.at(Tok::Ident) {
            return Err(self.unexpected("a variable name, a typed value or `(`"));
        }
        Ok(Arg::Value(self.parse_value()?))
    }

    fn arg_tuple(&mut self) -> PResult<Arg> {
        let open = self.open(Tok::LParen, "`(`")?;
        let mut items = Vec::new();
        if !self.at(Tok::RParen) {
            loop {
                items.push(self.parse_arg()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        let close = self.close(Tok::RParen, "`,` or `)`")?;
        Ok(Arg::Tuple(items, Span { start: open.start, end: close.end }))
    }

    /// `type(literal)` or `type(BLOBFILE(path = value, offset = value))`.
    pub fn parse_value(&mut self) -> PResult<Value> {
        let start = self.peek().start;
        let ty = self.parse_type()?;
        self.open(Tok::LParen, "`(` (the value)")?;
        let data = if self.at_word("BLOBFILE") { self.blobfile()? } else { ValueData::Literal(self.parse_literal()?) };
        let close = self.close(Tok::RParen, "`)`")?;
        Ok(Value { ty, data, span: Span { start, end: close.end } })
    }

    fn blobfile(&mut self) -> PResult<ValueData> {
        self.bump();
        self.open(Tok::LParen, "`(`")?;
        self.expect_word("path")?;
        self.expect(Tok::Eq, "`=`")?;
        let path = self.nested_value()?;
        self.expect(Tok::Comma, "`,`")?;
        self.expect_word("offset")?;
        self.expect(Tok::Eq, "`=`")?;
        let offset = self.nested_value()?;
        self.close(Tok::RParen, "`)`")?;
        Ok(ValueData::BlobFile { path: Box::new(path), offset: Box::new(offset) })
    }

    fn nested_value(&mut self) -> PResult<Value> {
        if !self.at_type(Tok::LParen) {
            return Err(self.unexpected("a typed value"));
        }
        self.enter()?;
        let v = self.parse_value();
        self.leave();
        v
    }

    /// A literal.
    pub fn parse_literal(&mut self) -> PResult<Literal> {
        self.enter()?;
        let lit = self.literal_inner();
        self.leave();
        lit
    }

    fn literal_inner(&mut self) -> PResult<Literal> {
        let t = self.peek();
        match t.kind {
            Tok::LBracket => Ok(Literal::List(self.literal_seq(Tok::LBracket, Tok::RBracket)?)),
            Tok::LParen => Ok(Literal::Tuple(self.literal_seq(Tok::LParen, Tok::RParen)?)),
            Tok::LBrace => self.dict_literal(),
            Tok::Str | Tok::StrEscaped => {
                self.bump();
                Ok(Literal::Str(self.string_value(t)))
            }
            Tok::Minus => {
                self.bump();
                self.number(true)
            }
            Tok::Ident => self.word_literal(),
            _ => self.number(false),
        }
    }

    /// `true`, `false`, `inf`, `nan`.
    fn word_literal(&mut self) -> PResult<Literal> {
        let t = self.peek();
        let lit = match self.slice(t) {
            "true" => Literal::Bool(true),
            "false" => Literal::Bool(false),
            "inf" => Literal::Float(f64::INFINITY),
            "nan" => Literal::Float(f64::NAN),
            _ => return Err(self.unexpected("a literal")),
        };
        self.bump();
        Ok(lit)
    }

    /// A number (after a `-` when `negative`), or `inf`/`nan` after `-`.
    fn number(&mut self, negative: bool) -> PResult<Literal> {
        let t = self.peek();
        let text = self.slice(t);
        let sign = if negative { -1.0 } else { 1.0 };
        let lit = match t.kind {
            Tok::Int => {
                let v = text.parse::<i128>().map_err(|_| {
                    error(Self::span(t), format!("integer `{text}` is too large"), "does not fit in 128 bits")
                })?;
                Literal::Int(if negative { -v } else { v })
            }
            Tok::DecFloat => Literal::Float(sign * text.parse::<f64>().unwrap_or(f64::NAN)),
            Tok::HexFloat => Literal::Float(sign * parse_hex_float(text.get(2..).unwrap_or(""))),
            Tok::Ident if negative && matches!(text, "inf" | "nan") => {
                Literal::Float(sign * if text == "inf" { f64::INFINITY } else { f64::NAN })
            }
            _ if negative => return Err(self.unexpected("a number after `-`")),
            _ => return Err(self.unexpected("a literal")),
        };
        self.bump();
        Ok(lit)
    }

    /// The unescaped contents of a string token.
    pub fn string_value(&self, t: super::lexer::Token) -> String {
        let raw = self.text.get(t.start as usize + 1..t.end as usize - 1).unwrap_or("");
        if t.kind == Tok::StrEscaped {
            unescape(raw)
        } else {
            raw.to_string()
        }
    }

    /// `open lit, lit, ... close`.
    fn literal_seq(&mut self, open: Tok, close: Tok) -> PResult<Vec<Literal>> {
        self.open(open, "a bracket")?;
        let mut items = Vec::new();
        if !self.at(close) {
            loop {
                items.push(self.parse_literal()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        let what = if close == Tok::RBracket { "`,` or `]`" } else { "`,` or `)`" };
        self.close(close, what)?;
        Ok(items)
    }

    /// `{{k, v}, {k, v}}` (possibly `{}`).
    fn dict_literal(&mut self) -> PResult<Literal> {
        self.open(Tok::LBrace, "`{`")?;
        let mut entries = Vec::new();
        if !self.at(Tok::RBrace) {
            loop {
                self.open(Tok::LBrace, "`{` (a dictionary entry `{key, value}`)")?;
                let key = self.parse_literal()?;
                self.expect(Tok::Comma, "`,`")?;
                let value = self.parse_literal()?;
                self.close(Tok::RBrace, "`}`")?;
                entries.push((key, value));
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.close(Tok::RBrace, "`,` or `}`")?;
        Ok(Literal::Dict(entries))
    }
}
