//! Prints a MIL [`Program`] in coremlc's text layout (the `model.mil` of a compiled
//! `.mlmodelc`).
//!
//! Layout, as coremlc writes it:
//! ```text
//! program(1.0)
//! [buildInfo = dict<...>(...)]
//! {
//!     func main<ios16>(tensor<fp16, [1, 10]> x) [attrs] {
//!             tensor<fp16, [1, 10]> y = relu(x = x)[name = tensor<string, []>("y")];
//!         } -> (y);
//! }
//! ```
//! Keys keep their stored order, separators are `, `, `key = value`, floats print like C's
//! `printf("%a")` of the value (`0x1.8p-3`, `0x1p+0`, `0x0p+0`, `inf`, `-inf`, `nan`).
//! The text ends with the program's closing `}` and no newline, as coremlc writes it.

use super::{Arg, Function, Literal, NamedArg, Param, Program, Stmt, Value, ValueData};
use super::{Dim, Type};
use std::fmt::Write;

/// Indentation of a `func` line.
const FUNC_INDENT: &str = "    ";
/// Indentation of a statement.
const STMT_INDENT: &str = "            ";
/// Indentation of a function's closing `}`.
const CLOSE_INDENT: &str = "        ";

/// The program as `model.mil` text.
pub fn print_program(p: &Program) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("program(");
    out.push_str(&p.version);
    out.push_str(")\n");
    if !p.attrs.is_empty() {
        write_attrs(&mut out, &p.attrs);
        out.push('\n');
    }
    out.push_str("{\n");
    for f in &p.functions {
        write_function(&mut out, f);
    }
    out.push('}');
    out
}

fn write_function(out: &mut String, f: &Function) {
    out.push_str(FUNC_INDENT);
    out.push_str("func ");
    out.push_str(&f.name);
    out.push('<');
    out.push_str(&f.opset);
    out.push_str(">(");
    write_params(out, &f.inputs);
    out.push_str(") ");
    if !f.attrs.is_empty() {
        write_attrs(out, &f.attrs);
        out.push(' ');
    }
    out.push_str("{\n");
    for s in &f.body {
        write_stmt(out, s);
    }
    out.push_str(CLOSE_INDENT);
    out.push_str("} -> (");
    for (i, o) in f.outputs.iter().enumerate() {
        sep(out, i);
        out.push_str(&o.name);
    }
    out.push_str(");\n");
}

fn write_params(out: &mut String, params: &[Param]) {
    for (i, p) in params.iter().enumerate() {
        sep(out, i);
        write_type(out, &p.ty);
        out.push(' ');
        out.push_str(&p.name.name);
    }
}

fn write_stmt(out: &mut String, s: &Stmt) {
    out.push_str(STMT_INDENT);
    if !s.outputs.is_empty() {
        write_params(out, &s.outputs);
        out.push_str(" = ");
    }
    out.push_str(&s.op.name);
    out.push('(');
    write_kwargs(out, &s.inputs);
    out.push(')');
    if !s.attrs.is_empty() {
        write_attrs(out, &s.attrs);
    }
    out.push_str(";\n");
}

/// `[k = v, ...]`.
fn write_attrs(out: &mut String, attrs: &[NamedArg]) {
    out.push('[');
    write_kwargs(out, attrs);
    out.push(']');
}

fn write_kwargs(out: &mut String, args: &[NamedArg]) {
    for (i, a) in args.iter().enumerate() {
        sep(out, i);
        out.push_str(&a.name.name);
        out.push_str(" = ");
        write_arg(out, &a.value);
    }
}

fn write_arg(out: &mut String, a: &Arg) {
    match a {
        Arg::Name(id) => out.push_str(&id.name),
        Arg::Value(v) => write_value(out, v),
        Arg::Tuple(items, _) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                sep(out, i);
                write_arg(out, item);
            }
            out.push(')');
        }
    }
}

/// `type(literal)` or `type(BLOBFILE(path = ..., offset = ...))`.
pub fn write_value(out: &mut String, v: &Value) {
    write_type(out, &v.ty);
    out.push('(');
    match &v.data {
        ValueData::Literal(l) => write_literal(out, l),
        ValueData::BlobFile { path, offset } => {
            out.push_str("BLOBFILE(path = ");
            write_value(out, path);
            out.push_str(", offset = ");
            write_value(out, offset);
            out.push(')');
        }
    }
    out.push(')');
}

/// A type: `tensor<fp16, [1, ?]>`, `int32`, `state<...>`, `list<T, N>`, `dict<K, V>`,
/// `tuple<...>`.
pub fn write_type(out: &mut String, t: &Type) {
    match t {
        Type::Tensor { dtype, shape } => {
            out.push_str("tensor<");
            out.push_str(dtype.name());
            out.push_str(", [");
            for (i, d) in shape.iter().enumerate() {
                sep(out, i);
                write_dim(out, *d);
            }
            out.push_str("]>");
        }
        Type::Scalar(dtype) => out.push_str(dtype.name()),
        Type::State(inner) => {
            out.push_str("state<");
            write_type(out, inner);
            out.push('>');
        }
        Type::List(inner, len) => {
            out.push_str("list<");
            write_type(out, inner);
            out.push_str(", ");
            write_dim(out, *len);
            out.push('>');
        }
        Type::Dict(k, v) => {
            out.push_str("dict<");
            write_type(out, k);
            out.push_str(", ");
            write_type(out, v);
            out.push('>');
        }
        Type::Tuple(items) => {
            out.push_str("tuple<");
            for (i, item) in items.iter().enumerate() {
                sep(out, i);
                write_type(out, item);
            }
            out.push('>');
        }
    }
}

fn write_dim(out: &mut String, d: Dim) {
    match d {
        Dim::Known(v) => {
            let _ = write!(out, "{v}");
        }
        Dim::Unknown => out.push('?'),
    }
}

/// A literal: numbers, strings, `[..]` lists, `(..)` tuples, `{{k, v}, ..}` dicts.
pub fn write_literal(out: &mut String, l: &Literal) {
    match l {
        Literal::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Literal::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Literal::Float(v) => write_hex_float(out, *v),
        Literal::Str(s) => write_string(out, s),
        Literal::List(items) => write_seq(out, '[', items, ']'),
        Literal::Tuple(items) => write_seq(out, '(', items, ')'),
        Literal::Dict(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                sep(out, i);
                out.push('{');
                write_literal(out, k);
                out.push_str(", ");
                write_literal(out, v);
                out.push('}');
            }
            out.push('}');
        }
    }
}

fn write_seq(out: &mut String, open: char, items: &[Literal], close: char) {
    out.push(open);
    for (i, item) in items.iter().enumerate() {
        sep(out, i);
        write_literal(out, item);
    }
    out.push(close);
}

/// A double-quoted string; `"`, `\` and control characters are escaped.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `v` as C's `printf("%a")` prints a double: `0x1.77540ap-4`, `0x1p+0`, `0x0p+0`,
/// `-0x1.8p-3`, subnormals as `0x0.8p-1022`, and `inf`, `-inf`, `nan`.
pub fn write_hex_float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("nan");
        return;
    }
    if v.is_sign_negative() {
        out.push('-');
    }
    if v.is_infinite() {
        out.push_str("inf");
        return;
    }
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = bits & ((1u64 << 52) - 1);
    let (lead, exp) = match (biased, mantissa) {
        (0, 0) => (0, 0),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    let _ = write!(out, "0x{lead}");
    if mantissa != 0 {
        let digits = format!("{mantissa:013x}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    let _ = write!(out, "p{exp:+}");
}

/// The hex form of a float as a new string (see [`write_hex_float`]).
pub fn hex_float(v: f64) -> String {
    let mut s = String::new();
    write_hex_float(&mut s, v);
    s
}

fn sep(out: &mut String, i: usize) {
    if i > 0 {
        out.push_str(", ");
    }
}

#[cfg(test)]
mod tests {
    use super::hex_float;

    #[test]
    fn hex_floats_match_printf_a() {
        assert_eq!(hex_float(0.0), "0x0p+0");
        assert_eq!(hex_float(-0.0), "-0x0p+0");
        assert_eq!(hex_float(1.0), "0x1p+0");
        assert_eq!(hex_float(2.0), "0x1p+1");
        assert_eq!(hex_float(-0.1875), "-0x1.8p-3");
        assert_eq!(hex_float(10000.0), "0x1.388p+13");
        assert_eq!(hex_float(f64::from(f32::from_bits(1))), "0x1p-149");
        assert_eq!(hex_float(f64::from_bits(1)), "0x0.0000000000001p-1022");
        assert_eq!(hex_float(f64::INFINITY), "inf");
        assert_eq!(hex_float(f64::NEG_INFINITY), "-inf");
        assert_eq!(hex_float(f64::NAN), "nan");
        assert_eq!(hex_float(f64::from(f32::from_bits((123 << 23) | 0x3b_aa05))), "0x1.77540ap-4");
    }
}
