//! Attribute values as written in the text, before they are given a meaning.
//!
//! [`Parser::attr`] reads any value the printer writes (numbers, booleans, strings,
//! arrays, dictionaries, `dense_resource`, `loc(...)`, element types, function types) into
//! a [`PAttr`] that remembers its position; the module builder then converts it to an
//! [`Attr`], a port, or a signature, reporting misplaced kinds where they stand.

use super::lexer::Number;
use super::{ParseError, Parser};
use crate::attr::Attr;
use crate::module::Location;
use crate::types::{DType, TensorType};
use std::collections::BTreeSet;

/// Deepest nesting of arrays and dictionaries accepted (guards the stack).
const MAX_DEPTH: usize = 64;

/// A parsed attribute value and where it started.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PAttr {
    /// Byte offset of the value.
    pub pos: usize,
    /// The value.
    pub kind: PKind,
}

/// The kinds of attribute value the text can hold.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PKind {
    /// An integer (`3 : i64`, or `3` in an array).
    Int(i128),
    /// A float (`1.5 : f64`, or hex bits with `: f64`).
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A string.
    Str(String),
    /// `[a, b]`.
    Array(Vec<PAttr>),
    /// `{k = v}`, keys unique, in text order.
    Dict(Vec<(String, PAttr)>),
    /// `dense_resource<key> : tensor<...>`.
    Resource(String, TensorType),
    /// `loc(...)`.
    Loc(Location),
    /// An element type (`f16`).
    DType(DType),
    /// `(inputs) -> results`.
    FnType(Vec<TensorType>, Vec<TensorType>),
}

impl PKind {
    /// What the value is, for messages.
    fn describe(&self) -> &'static str {
        match self {
            PKind::Int(_) => "an integer",
            PKind::Float(_) => "a float",
            PKind::Bool(_) => "a bool",
            PKind::Str(_) => "a string",
            PKind::Array(_) => "an array",
            PKind::Dict(_) => "a dictionary",
            PKind::Resource(..) => "a dense_resource",
            PKind::Loc(_) => "a location",
            PKind::DType(_) => "a type",
            PKind::FnType(..) => "a function type",
        }
    }
}

impl Parser<'_> {
    /// An error saying `a` should have been `want`.
    pub(super) fn wrong_kind(&self, a: &PAttr, want: &str) -> ParseError {
        self.cur.error_at(a.pos, format!("expected {want}, found {}", a.kind.describe()))
    }

    /// Converts a parsed value to an op attribute.
    pub(super) fn to_attr(&self, a: PAttr) -> Result<Attr, ParseError> {
        Ok(match a.kind {
            PKind::Int(v) => {
                Attr::Int(i64::try_from(v).map_err(|_| self.cur.error_at(a.pos, "integer out of i64 range"))?)
            }
            PKind::Float(v) => Attr::Float(v),
            PKind::Bool(v) => Attr::Bool(v),
            PKind::Str(v) => Attr::Str(v),
            PKind::Array(items) => Attr::Array(items.into_iter().map(|x| self.to_attr(x)).collect::<Result<_, _>>()?),
            PKind::Resource(name, ty) => Attr::Resource { name, ty },
            _ => return Err(self.wrong_kind(&a, "an op attribute value")),
        })
    }

    /// Any attribute value.
    pub(super) fn attr(&mut self, depth: usize) -> Result<PAttr, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.cur.error("attributes nested too deeply"));
        }
        self.cur.skip_ws();
        let pos = self.cur.pos;
        let kind = match self.cur.peek() {
            Some(b'[') => PKind::Array(self.array(depth)?),
            Some(b'{') => PKind::Dict(self.dict(depth)?),
            Some(b'"') => PKind::Str(self.cur.string()?),
            Some(b'(') => {
                let (ins, outs) = self.fn_type()?;
                PKind::FnType(ins, outs)
            }
            Some(b'-' | b'0'..=b'9') => self.number()?,
            _ => self.word()?,
        };
        Ok(PAttr { pos, kind })
    }

    /// `[a, b, ...]`.
    fn array(&mut self, depth: usize) -> Result<Vec<PAttr>, ParseError> {
        self.cur.expect("[")?;
        let mut items = Vec::new();
        if self.cur.eat("]") {
            return Ok(items);
        }
        loop {
            items.push(self.attr(depth + 1)?);
            if self.cur.eat("]") {
                return Ok(items);
            }
            if !self.cur.eat(",") {
                return Err(self.cur.expected("`,` or `]`"));
            }
        }
    }

    /// `{key = value, ...}` with unique keys.
    pub(super) fn dict(&mut self, depth: usize) -> Result<Vec<(String, PAttr)>, ParseError> {
        self.cur.expect("{")?;
        let mut items: Vec<(String, PAttr)> = Vec::new();
        let mut seen = BTreeSet::new();
        if self.cur.eat("}") {
            return Ok(items);
        }
        loop {
            self.cur.skip_ws();
            let at = self.cur.pos;
            let key = self.cur.key()?;
            if !seen.insert(key.clone()) {
                return Err(self.cur.error_at(at, format!("duplicate key `{key}`")));
            }
            self.cur.expect("=")?;
            items.push((key, self.attr(depth + 1)?));
            if self.cur.eat("}") {
                return Ok(items);
            }
            if !self.cur.eat(",") {
                return Err(self.cur.expected("`,` or `}`"));
            }
        }
    }

    /// A number with its optional `: i64` / `: f64` suffix.
    fn number(&mut self) -> Result<PKind, ParseError> {
        let n = self.cur.number()?;
        let suffix = if self.cur.eat(":") { Some(self.cur.ident()?) } else { None };
        match (n, suffix) {
            (Number::Int(v), None | Some("i64")) => Ok(PKind::Int(v)),
            (Number::Hex(v), None | Some("i64")) => Ok(PKind::Int(i128::from(v))),
            (Number::Float(v), None | Some("f64")) => Ok(PKind::Float(v)),
            (Number::Hex(bits), Some("f64")) => Ok(PKind::Float(f64::from_bits(bits))),
            (_, Some(t)) => Err(self.cur.error(format!("unsupported literal type `{t}`"))),
        }
    }

    /// A keyword-led value: `true`, `false`, `dense_resource<...>`, `loc(...)`,
    /// `tensor<...>` (not an attribute, rejected) or an element type.
    fn word(&mut self) -> Result<PKind, ParseError> {
        let at = self.cur.pos;
        let word = self.cur.ident().map_err(|_| self.cur.expected("an attribute value"))?;
        match word {
            "true" => Ok(PKind::Bool(true)),
            "false" => Ok(PKind::Bool(false)),
            "dense_resource" => self.resource(),
            "loc" => {
                self.cur.pos = at;
                Ok(PKind::Loc(self.loc()?))
            }
            _ => DType::from_mlir_name(word)
                .map(PKind::DType)
                .ok_or_else(|| self.cur.error_at(at, format!("unexpected `{word}`"))),
        }
    }

    /// `<key> : tensor<...>` after `dense_resource`.
    fn resource(&mut self) -> Result<PKind, ParseError> {
        self.cur.expect("<")?;
        let key = self.cur.key()?;
        self.cur.expect(">")?;
        self.cur.expect(":")?;
        Ok(PKind::Resource(key, self.tensor_type()?))
    }

    /// `loc(unknown)` or `loc("file":line:col)`.
    pub(super) fn loc(&mut self) -> Result<Location, ParseError> {
        self.cur.expect("loc")?;
        self.cur.expect("(")?;
        if self.cur.eat("unknown") {
            self.cur.expect(")")?;
            return Ok(Location::default());
        }
        let file = self.cur.string()?;
        self.cur.expect(":")?;
        let line = self.cur.u32_lit()?;
        self.cur.expect(":")?;
        let col = self.cur.u32_lit()?;
        self.cur.expect(")")?;
        Ok(Location { file, line, col })
    }

    /// `tensor<NxCxHxWxT>` or `tensor<NxCxDxHxWxT>`.
    pub(super) fn tensor_type(&mut self) -> Result<TensorType, ParseError> {
        self.cur.skip_ws();
        let at = self.cur.pos;
        self.cur.expect("tensor<")?;
        let (dims, dtype) = self.cur.tensor_body()?;
        TensorType::from_dims(&dims, dtype)
            .ok_or_else(|| self.cur.error_at(at, format!("tensor rank must be 4 or 5, got {}", dims.len())))
    }

    /// `(t, ...)`: a parenthesized, possibly empty list of tensor types.
    fn type_list(&mut self) -> Result<Vec<TensorType>, ParseError> {
        self.cur.expect("(")?;
        let mut tys = Vec::new();
        if self.cur.eat(")") {
            return Ok(tys);
        }
        loop {
            tys.push(self.tensor_type()?);
            if self.cur.eat(")") {
                return Ok(tys);
            }
            if !self.cur.eat(",") {
                return Err(self.cur.expected("`,` or `)`"));
            }
        }
    }

    /// `(inputs) -> result` or `(inputs) -> (results)`.
    pub(super) fn fn_type(&mut self) -> Result<(Vec<TensorType>, Vec<TensorType>), ParseError> {
        let ins = self.type_list()?;
        self.cur.expect("->")?;
        let outs = if self.cur.peek() == Some(b'(') { self.type_list()? } else { vec![self.tensor_type()?] };
        Ok((ins, outs))
    }
}
