//! The printer: a [`Module`] as MLIR generic op syntax that [`crate::parse`] reads back to
//! an equal module.
//!
//! Layout of the text (see `print_module` for an example):
//!
//! - A `builtin.module` holding one `func.func` whose `sym_name` is the module name. Its
//!   entry block arguments are the module inputs in order; `func.return` lists the output
//!   values in output order. `function_type` repeats the signature.
//! - Every value prints as `%<ValueId>` (block arguments too), so value ids survive the
//!   round trip exactly.
//! - Ports: the func attributes `anec.inputs` and `anec.outputs` are arrays of dictionaries,
//!   one per port in order: `name`, the set [`crate::Layout`] fields (`row_stride`,
//!   `plane_stride`, `depth_stride`, `batch_stride`, `interleave` as `N : i64`) and `loc`
//!   when known.
//! - Ops: `%r = "anec.conv"(%x) {attrs} : (operand types) -> result type loc(...)`. The op
//!   name is the attribute `name`; unknown locations print `loc(unknown)`.
//! - Attributes: `N : i64` (bare `N` inside arrays), floats in Rust's shortest round-trip
//!   form with a `.` and `: f64` (non-finite values as the bit pattern `0x7FF0000000000000
//!   : f64`), `true`/`false`, strings escaped as MLIR does (`\"`, `\\`, other bytes outside
//!   printable ASCII as `\XX`), arrays `[a, b]`, `dense_resource<key> : tensor<...>`.
//!   Dictionary keys and resource keys print bare when they are MLIR bare identifiers,
//!   quoted otherwise. Dictionaries print sorted, so the text is deterministic.
//! - Resources: a `{-# dialect_resources: { builtin: { "key": "0x..." } } #-}` trailer,
//!   blobs as `0x` + the alignment (the element size) as 4 little-endian bytes + the bytes,
//!   in upper-case hex. A blob's element type is that of its first reference (ops in order,
//!   attributes by name, arrays in order); when there is none or it differs, the func
//!   attribute `anec.resource_types = {key = f16}` states it.

use crate::attr::Attr;
use crate::module::{Location, Module, Op, Port, ValueId};
use crate::types::DType;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Prints a module in MLIR generic op syntax, e.g.
///
/// ```text
/// "builtin.module"() ({
///   "func.func"() ({
///   ^bb0(%0: tensor<1x3x1x1xf16>):
///     %1 = "anec.conv"(%0) {groups = 1 : i64, kernel = [1, 1], ..., name = "my_layer", ...} : (tensor<1x3x1x1xf16>) -> tensor<1x3x1x1xf16> loc("conv.plist":60:7)
///     "func.return"(%1) : (tensor<1x3x1x1xf16>) -> ()
///   }) {anec.inputs = [{name = "image"}], anec.outputs = [{name = "out"}], function_type = (tensor<1x3x1x1xf16>) -> tensor<1x3x1x1xf16>, sym_name = "net"} : () -> ()
/// }) : () -> ()
/// ```
///
/// followed by the resource trailer when the module holds blobs.
pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    out.push_str("\"builtin.module\"() ({\n  \"func.func\"() ({\n");
    write_block_label(&mut out, m);
    for op in &m.ops {
        write_op(&mut out, m, op);
    }
    let outs: Vec<ValueId> = m.outputs.iter().map(|p| p.value).collect();
    let _ = writeln!(out, "    \"func.return\"({}) : ({}) -> ()", names(&outs), types(m, &outs));
    let _ = writeln!(out, "  }}) {} : () -> ()", func_attrs(m));
    out.push_str("}) : () -> ()\n");
    write_resources(&mut out, m);
    out
}

/// `^bb0(%0: tensor<...>, ...):`.
fn write_block_label(out: &mut String, m: &Module) {
    let args: Vec<String> = m.inputs.iter().map(|p| format!("{}: {}", name(p.value), value_type(m, p.value))).collect();
    let _ = writeln!(out, "  ^bb0({}):", args.join(", "));
}

/// One op line.
fn write_op(out: &mut String, m: &Module, op: &Op) {
    out.push_str("    ");
    if !op.results.is_empty() {
        let _ = write!(out, "{} = ", names(&op.results));
    }
    let mut attrs: Vec<(String, String)> = op.attrs.iter().map(|(k, a)| (key_text(k), attr_text(a, false))).collect();
    attrs.push(("name".to_string(), quote(&op.name)));
    attrs.sort_by(|a, b| a.0.cmp(&b.0));
    let _ = writeln!(
        out,
        "{}({}) {} : ({}) -> {} {}",
        quote(op.opcode.name()),
        names(&op.operands),
        dict(&attrs),
        types(m, &op.operands),
        result_types(m, &op.results),
        loc_text(&op.loc)
    );
}

/// `%3`.
fn name(id: ValueId) -> String {
    format!("%{}", id.0)
}

/// `%1, %2`.
fn names(ids: &[ValueId]) -> String {
    ids.iter().map(|&id| name(id)).collect::<Vec<_>>().join(", ")
}

/// The type of a value, or `tensor<invalid>` for a foreign id (which the parser rejects).
fn value_type(m: &Module, id: ValueId) -> String {
    m.ty(id).map_or_else(|| "tensor<invalid>".to_string(), ToString::to_string)
}

/// `t1, t2`.
fn types(m: &Module, ids: &[ValueId]) -> String {
    ids.iter().map(|&id| value_type(m, id)).collect::<Vec<_>>().join(", ")
}

/// `t` for one result, `(t1, t2)` or `()` otherwise.
fn result_types(m: &Module, ids: &[ValueId]) -> String {
    match ids {
        [one] => value_type(m, *one),
        _ => format!("({})", types(m, ids)),
    }
}

/// `{k = v, ...}` from sorted pairs.
fn dict(pairs: &[(String, String)]) -> String {
    let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{{}}}", items.join(", "))
}

/// The func's attribute dictionary.
fn func_attrs(m: &Module) -> String {
    let ins: Vec<ValueId> = m.inputs.iter().map(|p| p.value).collect();
    let outs: Vec<ValueId> = m.outputs.iter().map(|p| p.value).collect();
    let fn_type = format!("({}) -> {}", types(m, &ins), result_types(m, &outs));
    let mut pairs = vec![
        ("anec.inputs".to_string(), ports(&m.inputs)),
        ("anec.outputs".to_string(), ports(&m.outputs)),
        ("function_type".to_string(), fn_type),
        ("sym_name".to_string(), quote(&m.name)),
    ];
    if let Some(rt) = resource_types(m) {
        pairs.push(("anec.resource_types".to_string(), rt));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    dict(&pairs)
}

/// `[{name = "image", row_stride = 64 : i64}, ...]`.
fn ports(ports: &[Port]) -> String {
    let items: Vec<String> = ports.iter().map(port_dict).collect();
    format!("[{}]", items.join(", "))
}

/// One port's dictionary: name, the layout fields that are set, and the location if known.
fn port_dict(p: &Port) -> String {
    let l = &p.layout;
    let fields = [
        ("batch_stride", l.batch_stride),
        ("depth_stride", l.depth_stride),
        ("interleave", l.interleave.map(u64::from)),
        ("plane_stride", l.plane_stride),
        ("row_stride", l.row_stride),
    ];
    let mut pairs: Vec<(String, String)> =
        fields.iter().filter_map(|(k, v)| v.map(|v| (k.to_string(), format!("{v} : i64")))).collect();
    pairs.push(("name".to_string(), quote(&p.name)));
    if p.loc != Location::default() {
        pairs.push(("loc".to_string(), loc_text(&p.loc)));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    dict(&pairs)
}

/// `loc("file":line:col)`, or `loc(unknown)` for the default location.
fn loc_text(l: &Location) -> String {
    if *l == Location::default() {
        "loc(unknown)".to_string()
    } else {
        format!("loc({}:{}:{})", quote(&l.file), l.line, l.col)
    }
}

/// An attribute value; integers inside arrays print without their `: i64`.
pub(crate) fn attr_text(a: &Attr, in_array: bool) -> String {
    match a {
        Attr::Int(v) if in_array => v.to_string(),
        Attr::Int(v) => format!("{v} : i64"),
        Attr::Float(v) => format!("{} : f64", float_text(*v)),
        Attr::Bool(v) => v.to_string(),
        Attr::Str(s) => quote(s),
        Attr::Array(items) => {
            let items: Vec<String> = items.iter().map(|x| attr_text(x, true)).collect();
            format!("[{}]", items.join(", "))
        }
        Attr::Resource { name, ty } => format!("dense_resource<{}> : {ty}", key_text(name)),
    }
}

/// A float literal that parses back to the same bits: shortest round-trip digits with a
/// `.` before any exponent (`1.0`, `1.5e-7`, `1.0e16`); non-finite values as hex bits.
pub(crate) fn float_text(v: f64) -> String {
    if !v.is_finite() {
        return format!("0x{:016X}", v.to_bits());
    }
    let s = format!("{v:?}");
    match s.find('e') {
        Some(e) if !s[..e].contains('.') => format!("{}.0{}", &s[..e], &s[e..]),
        _ => s,
    }
}

/// A string literal, escaped as MLIR does.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out.push('"');
    out
}

/// Whether `s` is an MLIR bare identifier: `[A-Za-z_][A-Za-z0-9_$.]*`.
pub(crate) fn is_bare_id(s: &str) -> bool {
    let mut bytes = s.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    first_ok && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
}

/// A dictionary or resource key: bare when possible, quoted otherwise.
pub(crate) fn key_text(s: &str) -> String {
    if is_bare_id(s) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// The element type of each blob's first reference: ops in order, attributes by name,
/// arrays in order. The parser uses the same rule.
pub(crate) fn referenced_dtypes(ops: &[Op]) -> BTreeMap<String, DType> {
    fn visit(a: &Attr, found: &mut BTreeMap<String, DType>) {
        match a {
            Attr::Resource { name, ty } => {
                found.entry(name.clone()).or_insert(ty.dtype);
            }
            Attr::Array(items) => items.iter().for_each(|x| visit(x, found)),
            _ => {}
        }
    }
    let mut found = BTreeMap::new();
    for op in ops {
        op.attrs.values().for_each(|a| visit(a, &mut found));
    }
    found
}

/// `{key = f16, ...}` for blobs whose element type the references do not give.
fn resource_types(m: &Module) -> Option<String> {
    let inferred = referenced_dtypes(&m.ops);
    let pairs: Vec<(String, String)> = m
        .resources
        .iter()
        .filter(|(k, b)| inferred.get(k.as_str()) != Some(&b.dtype))
        .map(|(k, b)| (key_text(k), b.dtype.mlir_name().to_string()))
        .collect();
    (!pairs.is_empty()).then(|| dict(&pairs))
}

/// The `{-# dialect_resources ... #-}` trailer, if there are blobs.
fn write_resources(out: &mut String, m: &Module) {
    if m.resources.is_empty() {
        return;
    }
    out.push_str("\n{-#\n  dialect_resources: {\n    builtin: {\n");
    let entries: Vec<String> =
        m.resources.iter().map(|(k, b)| format!("      {}: \"{}\"", quote(k), blob_hex(b.dtype, &b.bytes))).collect();
    out.push_str(&entries.join(",\n"));
    out.push_str("\n    }\n  }\n#-}\n");
}

/// `0x` + alignment (element size, 4 bytes little-endian) + bytes, upper-case hex.
fn blob_hex(dtype: DType, bytes: &[u8]) -> String {
    let align = (dtype.size() as u32).to_le_bytes();
    let mut s = String::with_capacity(2 + 2 * (4 + bytes.len()));
    s.push_str("0x");
    for b in align.iter().chain(bytes) {
        let _ = write!(s, "{b:02X}");
    }
    s
}
