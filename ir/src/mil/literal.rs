//! MIL literals: the text inside `type( ... )`.
//!
//! Numbers keep the kind they were written in (an integer stays [`Literal::Int`], a float
//! stays [`Literal::Float`]); the declared type decides what they mean. Floats hold the
//! exact value as `f64` (every fp16/fp32/bf16 value is exact in `f64`), so hex floats print
//! back digit for digit and decimal floats round-trip through the hex form.

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `true` / `false`.
    Bool(bool),
    /// An integer (any width up to 64 bits, signed or unsigned).
    Int(i128),
    /// A float: hex (`0x1.8p-3`), decimal (`0.001`), `inf`, `-inf` or `nan`.
    Float(f64),
    /// A double-quoted string, unescaped.
    Str(String),
    /// `[a, b, ...]`: the elements of a tensor, nested by rank.
    List(Vec<Literal>),
    /// `(a, b, ...)`: a tuple.
    Tuple(Vec<Literal>),
    /// `{{k, v}, ...}`: a dictionary, in written order.
    Dict(Vec<(Literal, Literal)>),
}

impl Literal {
    /// The elements in row-major order, flattening nested lists.
    pub fn flatten(&self) -> Vec<&Literal> {
        let mut out = Vec::new();
        self.flatten_into(&mut out);
        out
    }

    fn flatten_into<'a>(&'a self, out: &mut Vec<&'a Literal>) {
        match self {
            Literal::List(items) => items.iter().for_each(|i| i.flatten_into(out)),
            other => out.push(other),
        }
    }

    /// The value as a float (integers and bools convert).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Literal::Float(v) => Some(*v),
            Literal::Int(v) => Some(*v as f64),
            Literal::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// The value as an integer (floats only when integral).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Literal::Int(v) => i64::try_from(*v).ok(),
            Literal::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Some(*v as i64),
            Literal::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
}
