//! Types: `tensor<DT, [d, ?, ...]>`, the rank-0 short form `DT`, `state<T>`, `list<T, N>`,
//! `dict<K, V>` and `tuple<T, ...>`.

use super::lexer::Tok;
use super::parser::{error, PResult, Parser};
use anec_ir::mil::{Dim, ScalarType, Type};

/// The type constructors written `name<...>`.
const CONSTRUCTORS: [&str; 5] = ["tensor", "state", "list", "dict", "tuple"];

impl Parser<'_> {
    /// Whether a type starts here: a constructor followed by `<`, or an element type name
    /// followed by `next` (`(` for a short-form value, an identifier for a declaration).
    pub fn at_type(&self, next: Tok) -> bool {
        let t = self.peek();
        if t.kind != Tok::Ident {
            return false;
        }
        let word = self.slice(t);
        let after = self.nth(1).kind;
        (after == Tok::Lt && CONSTRUCTORS.contains(&word)) || (after == next && ScalarType::from_name(word).is_some())
    }

    /// A type.
    pub fn parse_type(&mut self) -> PResult<Type> {
        self.enter()?;
        let ty = self.parse_type_inner();
        self.leave();
        ty
    }

    fn parse_type_inner(&mut self) -> PResult<Type> {
        let t = self.peek();
        if t.kind != Tok::Ident {
            return Err(self.unexpected("a type"));
        }
        match self.slice(t) {
            "tensor" => self.tensor_type(),
            "state" => self.state_type(),
            "list" => self.list_type(),
            "dict" => self.dict_type(),
            "tuple" => self.tuple_type(),
            word => {
                let dtype = self.dtype_named(word, t)?;
                self.bump();
                Ok(Type::Scalar(dtype))
            }
        }
    }

    /// The element type named `word` (token `t`), or an error.
    fn dtype_named(&self, word: &str, t: super::lexer::Token) -> PResult<ScalarType> {
        ScalarType::from_name(word).ok_or_else(|| {
            let mut e = error(Self::span(t), format!("unknown type `{word}`"), "not a MIL type");
            e.note = Some(known_types_note());
            e
        })
    }

    /// `tensor<DT, [dims]>`.
    fn tensor_type(&mut self) -> PResult<Type> {
        self.bump();
        self.open(Tok::Lt, "`<`")?;
        let t = self.peek();
        if t.kind != Tok::Ident {
            return Err(self.unexpected("an element type"));
        }
        let word = self.slice(t);
        let dtype = ScalarType::from_name(word).ok_or_else(|| {
            let mut e = error(Self::span(t), format!("unknown element type `{word}`"), "not an element type");
            e.note = Some(known_types_note());
            e
        })?;
        self.bump();
        self.expect(Tok::Comma, "`,`")?;
        let shape = self.shape()?;
        self.close(Tok::Gt, "`>`")?;
        Ok(Type::Tensor { dtype, shape })
    }

    /// `[d0, d1, ...]`.
    fn shape(&mut self) -> PResult<Vec<Dim>> {
        self.open(Tok::LBracket, "`[` (a shape)")?;
        let mut dims = Vec::new();
        if !self.at(Tok::RBracket) {
            loop {
                dims.push(self.dim()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.close(Tok::RBracket, "`,` or `]`")?;
        Ok(dims)
    }

    /// A dimension: an integer or `?`.
    fn dim(&mut self) -> PResult<Dim> {
        let t = self.peek();
        match t.kind {
            Tok::Question => {
                self.bump();
                Ok(Dim::Unknown)
            }
            Tok::Int => {
                self.bump();
                self.slice(t).parse::<u64>().map(Dim::Known).map_err(|_| {
                    error(Self::span(t), format!("dimension `{}` is too large", self.slice(t)), "larger than 2^64 - 1")
                })
            }
            _ => Err(self.unexpected("a dimension (an integer or `?`)")),
        }
    }

    /// `list<T, N>`.
    fn list_type(&mut self) -> PResult<Type> {
        self.bump();
        self.open(Tok::Lt, "`<`")?;
        let inner = self.parse_type()?;
        self.expect(Tok::Comma, "`,`")?;
        let len = self.dim()?;
        self.close(Tok::Gt, "`>`")?;
        Ok(Type::List(Box::new(inner), len))
    }

    /// `tuple<T, ...>` (possibly empty).
    fn tuple_type(&mut self) -> PResult<Type> {
        self.bump();
        self.open(Tok::Lt, "`<`")?;
        let mut items = Vec::new();
        if !self.at(Tok::Gt) {
            loop {
                items.push(self.parse_type()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.close(Tok::Gt, "`,` or `>`")?;
        Ok(Type::Tuple(items))
    }

    /// `state<T>`.
    fn state_type(&mut self) -> PResult<Type> {
        self.bump();
        self.open(Tok::Lt, "`<`")?;
        let inner = self.parse_type()?;
        self.close(Tok::Gt, "`>`")?;
        Ok(Type::State(Box::new(inner)))
    }

    /// `dict<K, V>`.
    fn dict_type(&mut self) -> PResult<Type> {
        self.bump();
        self.open(Tok::Lt, "`<`")?;
        let key = self.parse_type()?;
        self.expect(Tok::Comma, "`,`")?;
        let value = self.parse_type()?;
        self.close(Tok::Gt, "`>`")?;
        Ok(Type::Dict(Box::new(key), Box::new(value)))
    }
}

fn known_types_note() -> String {
    "element types: fp16 fp32 fp64 bf16 fp8e4m3fn fp8e5m2 bool string int4 int8 int16 int32 int64 \
     uint1 uint2 uint3 uint4 uint6 uint8 uint16 uint32 uint64"
        .into()
}
