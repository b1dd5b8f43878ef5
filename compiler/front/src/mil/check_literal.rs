//! Whether a literal fits its declared type: nesting and element counts against the
//! tensor shape, the literal kind against the element type, integer ranges, and the
//! structure of list, dict and tuple values.

use anec_ir::mil::{Dim, Literal, ScalarType, Type};
use std::fmt::Write;

/// What is wrong with a literal: a message about the element at `path` (indices from the
/// outside in; empty for the whole value).
#[derive(Debug, Clone, PartialEq)]
pub struct LiteralError {
    /// Indices of the offending element.
    pub path: Vec<usize>,
    /// One line.
    pub message: String,
    /// Under the caret.
    pub label: String,
}

impl LiteralError {
    fn new(path: &[usize], message: String, label: &str) -> Self {
        LiteralError { path: path.to_vec(), message, label: label.into() }
    }

    /// `element [1][2]: ` or nothing for the whole value.
    pub fn location(&self) -> String {
        if self.path.is_empty() {
            return String::new();
        }
        let mut s = String::from("element ");
        for i in &self.path {
            let _ = write!(s, "[{i}]");
        }
        s.push_str(": ");
        s
    }
}

type Check = Result<(), LiteralError>;

/// Checks `lit` against `ty`; the first problem found.
pub fn check_literal(ty: &Type, lit: &Literal) -> Check {
    let mut path = Vec::new();
    check(ty, lit, &mut path)
}

fn check(ty: &Type, lit: &Literal, path: &mut Vec<usize>) -> Check {
    match ty {
        Type::Tensor { dtype, shape } => check_tensor(*dtype, shape, lit, path),
        Type::Scalar(dtype) => check_tensor(*dtype, &[], lit, path),
        Type::State(inner) => check(inner, lit, path),
        Type::List(inner, len) => match lit {
            Literal::List(items) => {
                check_count(items.len(), *len, path, "list")?;
                each(items.iter().map(|l| (inner.as_ref(), l)), path)
            }
            other => Err(kind_error(path, "a list `[...]`", other)),
        },
        Type::Dict(k, v) => match lit {
            Literal::Dict(entries) => {
                let pairs = entries.iter().flat_map(|(lk, lv)| [(k.as_ref(), lk), (v.as_ref(), lv)]);
                each(pairs, path)
            }
            other => Err(kind_error(path, "a dictionary `{{key, value}, ...}`", other)),
        },
        Type::Tuple(types) => match lit {
            Literal::Tuple(items) => {
                check_count(items.len(), Dim::Known(types.len() as u64), path, "tuple")?;
                each(types.iter().zip(items), path)
            }
            other => Err(kind_error(path, "a tuple `(...)`", other)),
        },
    }
}

/// Checks each `(type, literal)`, extending the path with the index. Dict entries count
/// two per entry (key, value).
fn each<'a>(pairs: impl Iterator<Item = (&'a Type, &'a Literal)>, path: &mut Vec<usize>) -> Check {
    for (i, (ty, lit)) in pairs.enumerate() {
        path.push(i);
        check(ty, lit, path)?;
        path.pop();
    }
    Ok(())
}

fn check_count(found: usize, want: Dim, path: &[usize], what: &str) -> Check {
    match want {
        Dim::Known(n) if n != found as u64 => Err(LiteralError::new(
            path,
            format!("{what} literal has {found} elements, the type says {n}"),
            "wrong number of elements",
        )),
        _ => Ok(()),
    }
}

/// A tensor literal: lists nested once per dimension, scalars of `dtype` inside. A `?`
/// dimension takes the length of its first list, so that ragged literals are rejected.
fn check_tensor(dtype: ScalarType, shape: &[Dim], lit: &Literal, path: &mut Vec<usize>) -> Check {
    let mut dims: Vec<(Dim, bool)> = shape.iter().map(|d| (*d, false)).collect();
    tensor_level(dtype, &mut dims, 0, lit, path)
}

/// Dimension `level` of [`check_tensor`]; the flag marks a length taken from an earlier
/// list at a `?` dimension.
fn tensor_level(
    dtype: ScalarType,
    dims: &mut [(Dim, bool)],
    level: usize,
    lit: &Literal,
    path: &mut Vec<usize>,
) -> Check {
    let Some(&(dim, inferred)) = dims.get(level) else {
        return check_element(dtype, lit, path);
    };
    let Literal::List(items) = lit else {
        let msg = format!("expected a list for dimension {level} of a rank-{} tensor, found {}", dims.len(), kind(lit));
        return Err(LiteralError::new(path, msg, "literal nesting does not match the shape"));
    };
    match dim {
        Dim::Known(n) if n != items.len() as u64 => {
            let said = if inferred { "earlier lists have" } else { "the shape says" };
            let msg = format!("dimension {level} has {} elements, {said} {n}", items.len());
            return Err(LiteralError::new(path, msg, "element count does not match the shape"));
        }
        Dim::Known(_) => {}
        Dim::Unknown => dims[level] = (Dim::Known(items.len() as u64), true),
    }
    for (i, item) in items.iter().enumerate() {
        path.push(i);
        tensor_level(dtype, dims, level + 1, item, path)?;
        path.pop();
    }
    Ok(())
}

/// One scalar of element type `dtype`.
fn check_element(dtype: ScalarType, lit: &Literal, path: &[usize]) -> Check {
    let fits = match (dtype, lit) {
        (ScalarType::String, Literal::Str(_)) | (ScalarType::Bool, Literal::Bool(_)) => true,
        (t, Literal::Float(_) | Literal::Int(_)) if t.is_float() => true,
        (t, Literal::Int(v)) if int_range(t).is_some() => return check_range(t, *v, path),
        _ => false,
    };
    if fits {
        return Ok(());
    }
    let msg = match lit {
        Literal::List(_) => format!("a list where a {dtype} scalar is expected (more nesting than the shape)"),
        _ => format!("{} does not fit element type {dtype}", kind(lit)),
    };
    Err(LiteralError::new(path, msg, &format!("expected {}", expected(dtype))))
}

fn check_range(t: ScalarType, v: i128, path: &[usize]) -> Check {
    let (lo, hi) = int_range(t).unwrap_or((0, 0));
    if (lo..=hi).contains(&v) {
        return Ok(());
    }
    let msg = format!("integer {v} is out of range for {t}");
    Err(LiteralError::new(path, msg, &format!("{t} holds {lo} to {hi}")))
}

/// The value range of an integer element type.
pub fn int_range(t: ScalarType) -> Option<(i128, i128)> {
    use ScalarType::*;
    let signed = |bits: u32| (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    let unsigned = |bits: u32| (0, (1i128 << bits) - 1);
    Some(match t {
        Int4 => signed(4),
        Int8 => signed(8),
        Int16 => signed(16),
        Int32 => signed(32),
        Int64 => signed(64),
        Uint1 | Uint2 | Uint3 | Uint4 | Uint6 | Uint8 | Uint16 | Uint32 | Uint64 => unsigned(t.bits()),
        _ => return None,
    })
}

/// What an element type takes, for labels.
fn expected(t: ScalarType) -> &'static str {
    match t {
        ScalarType::String => "a string",
        ScalarType::Bool => "`true` or `false`",
        t if t.is_float() => "a number",
        _ => "an integer",
    }
}

fn kind_error(path: &[usize], want: &str, lit: &Literal) -> LiteralError {
    LiteralError::new(path, format!("expected {want}, found {}", kind(lit)), "literal does not match the type")
}

/// A literal's kind for messages, with short values.
pub fn kind(lit: &Literal) -> String {
    match lit {
        Literal::Bool(b) => format!("the bool `{b}`"),
        Literal::Int(v) => format!("the integer `{v}`"),
        Literal::Float(v) => format!("the float `{v}`"),
        Literal::Str(s) if s.len() <= 32 => format!("the string {s:?}"),
        Literal::Str(_) => "a string".into(),
        Literal::List(items) => format!("a list of {} elements", items.len()),
        Literal::Tuple(items) => format!("a tuple of {} elements", items.len()),
        Literal::Dict(entries) => format!("a dictionary of {} entries", entries.len()),
    }
}
