//! Shared helpers of the netplist front-end tests: fixture paths, a plist builder for small
//! networks written to a temporary directory, and a stable text summary of a module.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec_front::{parse_netplist_bytes, FrontError};
use anec_ir::{Attr, Module, Op, TensorType};
use plist::{Dictionary, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The directory of the recorded Apple netplists.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/apple-h13/netplist")
}

/// A fixture path relative to the netplist fixture directory.
pub fn fixture(rel: &str) -> PathBuf {
    fixtures().join(rel)
}

/// A plist integer.
pub fn int(v: i64) -> Value {
    Value::Integer(v.into())
}

/// A plist string.
pub fn s(v: &str) -> Value {
    Value::String(v.into())
}

/// A plist array of strings.
pub fn strs(v: &[&str]) -> Value {
    Value::Array(v.iter().map(|x| s(x)).collect())
}

/// A plist dictionary.
pub fn dict(entries: &[(&str, Value)]) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in entries {
        d.insert((*k).to_string(), v.clone());
    }
    d
}

/// A small network: input `image` (1x3x1x1 Float16), one unit `layer` (a 1x1 conv
/// 3->3 reading fp16 weights from `w.bin`), output `probs@output`.
pub fn conv_net() -> Dictionary {
    let params = dict(&[
        ("KernelHeight", int(1)),
        ("KernelWidth", int(1)),
        ("KernelIndex", int(0)),
        ("KernelOffset", int(0)),
        ("KernelType", s("Float16")),
        ("Step", Value::Array(vec![int(1), int(1)])),
        ("Type", s("Conv")),
    ]);
    let unit = dict(&[
        ("Bottom", s("image")),
        ("Name", s("layer")),
        ("OutputChannels", int(3)),
        ("OutputType", s("Float16")),
        ("Params", Value::Dictionary(params)),
        ("Type", s("Conv")),
    ]);
    net_with(unit, &["w.bin"])
}

/// A network around one unit named `layer` reading `image`.
pub fn net_with(unit: Dictionary, weights: &[&str]) -> Dictionary {
    let input = dict(&[
        ("InputChannels", int(3)),
        ("InputHeight", int(1)),
        ("InputWidth", int(1)),
        ("InputType", s("Float16")),
    ]);
    dict(&[
        ("Inputs", strs(&["image"])),
        ("Outputs", strs(&["probs@output"])),
        ("Units", strs(&["layer"])),
        ("Weights", strs(weights)),
        ("image", Value::Dictionary(input)),
        ("layer", Value::Dictionary(unit)),
        ("probs@output", Value::Dictionary(dict(&[("Bottom", s("layer"))]))),
    ])
}

/// Wraps a network dictionary as the top level of a version 1.0.9 netplist.
pub fn top(net: Dictionary) -> Dictionary {
    dict(&[("Networks", strs(&["net"])), ("Version", s("1.0.9")), ("net", Value::Dictionary(net))])
}

/// XML bytes of a plist dictionary.
pub fn xml(d: &Dictionary) -> Vec<u8> {
    let mut out = Vec::new();
    Value::Dictionary(d.clone()).to_writer_xml(&mut out).expect("xml");
    out
}

/// Mutable access to a nested dictionary by path.
pub fn at<'a>(d: &'a mut Dictionary, path: &[&str]) -> &'a mut Dictionary {
    path.iter().fold(d, |d, k| d.get_mut(k).and_then(Value::as_dictionary_mut).expect("path exists"))
}

/// A temporary directory holding `w.bin` with `n` fp16 2.0 values.
pub fn weights_dir(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = [0x00u8, 0x40].repeat(n);
    std::fs::write(dir.path().join("w.bin"), bytes).expect("write weights");
    dir
}

/// Parses a top-level dictionary as `t.plist` in `dir`.
pub fn parse_in(dir: &Path, top: &Dictionary) -> Result<Module, FrontError> {
    parse_netplist_bytes(&xml(top), "t.plist", dir)
}

/// The type of an op's result.
pub fn result_ty(m: &Module, op: &Op) -> TensorType {
    let id = op.results.first().copied().expect("one result");
    *m.ty(id).expect("typed")
}

/// The op named `name`.
pub fn op<'a>(m: &'a Module, name: &str) -> &'a Op {
    m.ops.iter().find(|o| o.name == name).expect("op exists")
}

/// fp16 little-endian bytes to values.
pub fn f16s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect()
}

/// fp32 little-endian bytes to values.
pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// A stable, path-free text summary of a module (for snapshots).
pub fn summary(m: &Module) -> String {
    let mut out = format!("module {}\n", m.name);
    let ty = |id| m.ty(id).map_or("?".to_string(), |t| t.to_string());
    for p in &m.inputs {
        let _ = writeln!(out, "  input {} : {} {:?} @{}", p.name, ty(p.value), p.layout, p.loc.line);
    }
    for op in &m.ops {
        let operands: Vec<String> = op.operands.iter().map(|&v| format!("%{}", v.0)).collect();
        let results: Vec<String> = op.results.iter().map(|&v| format!("%{} : {}", v.0, ty(v))).collect();
        let attrs: Vec<String> = op.attrs.iter().map(|(k, a)| format!("{k} = {}", attr(a))).collect();
        let _ = writeln!(
            out,
            "  {} = {} '{}' ({}) {{{}}} @{}:{}",
            results.join(", "),
            op.opcode,
            op.name,
            operands.join(", "),
            attrs.join(", "),
            op.loc.line,
            op.loc.col
        );
    }
    for p in &m.outputs {
        let _ = writeln!(out, "  output {} = %{} {:?} @{}", p.name, p.value.0, p.layout, p.loc.line);
    }
    for (k, b) in &m.resources {
        let _ = writeln!(out, "  resource {k} : {} x {} bytes", b.dtype, b.bytes.len());
    }
    out
}

fn attr(a: &Attr) -> String {
    match a {
        Attr::Int(v) => v.to_string(),
        Attr::Float(v) => format!("{v:?}"),
        Attr::Bool(v) => v.to_string(),
        Attr::Str(v) => format!("{v:?}"),
        Attr::Array(v) => format!("[{}]", v.iter().map(attr).collect::<Vec<_>>().join(", ")),
        Attr::Resource { name, ty } => format!("dense_resource<{name}> : {ty}"),
    }
}
