//! The `.e5` listing: a header (size, root vtable, format version, counts), the build
//! info, the symbol names, then each function with its blocks and operations in order,
//! each operation followed by its argument frame (operand descriptors, ports) and its
//! attributes (every field of the attribute table; a CPU operation's arguments with a
//! SHA-256 of each constant). Sections no function or operation names come last.
//!
//! Keys follow names, not positions, so that a diff location reads as a path through the
//! program (`function main op Op1_AneInference attrs program_symbol`); a name seen twice
//! under one parent gets `[n]` appended. Strings are shown quoted (`""` is empty, `(none)`
//! absent); symbol references as `index name` (functions) or `name` (operations).

use std::collections::{HashMap, HashSet};

use anec_codegen::e5::{
    AliasSymbolT, ArgFrameT, BlockT, CpuArgumentT, CpuConstantT, CpuInferenceAttrsT, E5ProgramT, FunctionT, IOPortT,
    OpAttrsT, OperandT, OperationT, SectionT, TensorDescriptorT,
};
use sha2::{Digest, Sha256};

use super::consts::hex_bytes;
use crate::program::E5File;
use crate::tree::{Node, Role};

/// Bytes of a constant shown in hex.
const PREVIEW: usize = 16;

/// What every part of the listing looks up: symbol names and sections by name.
struct Ctx<'a> {
    symbols: &'a [String],
    sections: HashMap<&'a str, &'a SectionT>,
}

impl<'a> Ctx<'a> {
    fn new(p: &'a E5ProgramT) -> Self {
        let sections = p.sections.iter().flatten().map(|s| (s.name.as_deref().unwrap_or_default(), s)).collect();
        Self { symbols: p.symbol_names.as_deref().unwrap_or_default(), sections }
    }

    /// The name of symbol `i` (`?` when out of range).
    fn symbol(&self, i: u32) -> &str {
        self.symbols.get(i as usize).map_or("?", String::as_str)
    }

    /// `0 x, 3 y`: indices with their names.
    fn indexed(&self, indices: Option<&Vec<u32>>) -> String {
        join(indices.into_iter().flatten().map(|&i| format!("{i} {}", self.symbol(i))))
    }

    /// `x, y`: the names of symbols.
    fn names(&self, indices: Option<&Vec<u32>>) -> String {
        join(indices.into_iter().flatten().map(|&i| self.symbol(i).to_string()))
    }

    /// The section named `name`.
    fn section(&self, name: Option<&String>) -> Option<&'a SectionT> {
        self.sections.get(name.map_or("", String::as_str)).copied()
    }
}

/// The nodes of an `.e5` file of `len` bytes.
pub(super) fn nodes(f: &E5File, len: usize) -> Vec<Node> {
    let p = &f.program;
    let cx = Ctx::new(p);
    let mut out = vec![header(f, len), build_info(p), symbols(p)];
    let sections = p.sections.as_deref().unwrap_or_default();
    let mut used: HashSet<&str> = HashSet::new();
    let mut keys = Keys::default();
    for s in sections {
        if let Some(func) = s.function.as_deref() {
            used.insert(s.name.as_deref().unwrap_or_default());
            out.push(function(&cx, s, func, &mut keys, &mut used));
        }
    }
    out.push(unreferenced(&cx, sections, &used));
    out
}

/// Size, root vtable, format version, counts.
fn header(f: &E5File, len: usize) -> Node {
    let p = &f.program;
    let mut n = Node::new("header", "header");
    n.add("size", format!("{len} bytes"), Role::Derived);
    n.field("root_vtable", hex_bytes(&f.root_vtable));
    n.field("format_version", p.format_version.to_string());
    n.num("symbols", p.symbol_names.as_ref().map_or(0, Vec::len) as u64);
    n.num("sections", p.sections.as_ref().map_or(0, Vec::len) as u64);
    n
}

/// One field per build-info key.
fn build_info(p: &E5ProgramT) -> Node {
    let entries = p.build_info.as_ref().and_then(|b| b.entries.as_deref()).unwrap_or_default();
    let mut n = Node::new("build_info", format!("build_info: {}", count(entries.len(), "entry")));
    let mut keys = Keys::default();
    for e in entries {
        n.field(keys.unique(key(e.key.as_ref())), quoted(e.value.as_ref()));
    }
    if p.build_info.is_none() {
        n.notes.push("no build_info table".into());
    }
    n
}

/// `index = name` per symbol.
fn symbols(p: &E5ProgramT) -> Node {
    let names = p.symbol_names.as_deref().unwrap_or_default();
    let mut n = Node::new("symbols", format!("symbols: {}", names.len()));
    for (i, name) in names.iter().enumerate() {
        n.field(i.to_string(), format!("{name:?}"));
    }
    n
}

/// A function: its fields, intermediates, then its blocks of operations.
fn function<'a>(cx: &Ctx<'a>, s: &SectionT, f: &'a FunctionT, keys: &mut Keys, used: &mut HashSet<&'a str>) -> Node {
    let name = key(f.name.as_ref());
    let mut n = Node::new(keys.unique(format!("function {name}")), format!("function {}", quoted(f.name.as_ref())));
    n.field("section", quoted(s.name.as_ref()));
    n.field("anehash_path", quoted(f.anehash_path.as_ref()));
    n.field("inputs", cx.indexed(f.inputs.as_ref()));
    n.field("outputs", cx.indexed(f.outputs.as_ref()));
    n.field("intermediate_size", f.intermediate_size.to_string());
    let blocks = f.blocks.as_deref().unwrap_or_default();
    n.field("blocks", join(blocks.iter().map(|b| quoted(b.name.as_ref()))));
    n.children.push(intermediates(cx, f.intermediates.as_deref().unwrap_or_default()));
    let mut op_keys = Keys::default();
    for b in blocks {
        n.children.push(block(cx, b, &mut op_keys, used));
    }
    n
}

/// The tensors placed in the function's intermediate buffer, one line each.
fn intermediates(cx: &Ctx<'_>, list: &[AliasSymbolT]) -> Node {
    let mut n = Node::new("", format!("intermediates: {}", list.len()));
    let mut keys = Keys::default();
    for a in list {
        let name = key(a.name.as_ref());
        let mut c = Node::new(keys.unique(format!("intermediate {name}")), format!("intermediate {name}")).compact();
        c.field("symbol", format!("{} {}", a.symbol_index, cx.symbol(a.symbol_index)));
        c.hex("offset", a.addr_offset);
        n.children.push(c);
    }
    n
}

/// A block: a heading over its operations (the block's name is a field of each).
fn block<'a>(cx: &Ctx<'a>, b: &'a BlockT, keys: &mut Keys, used: &mut HashSet<&'a str>) -> Node {
    let ops = b.operations.as_deref().unwrap_or_default();
    let mut n = Node::new("", format!("block {}: {}", quoted(b.name.as_ref()), count(ops.len(), "operation")));
    for (i, op) in ops.iter().enumerate() {
        used.extend(op.arg_frame.as_deref());
        used.extend(op.attrs_section.as_deref());
        n.children.push(operation(cx, op, b, i, keys));
    }
    n
}

/// An operation: its fields, then its argument frame and attributes.
fn operation(cx: &Ctx<'_>, op: &OperationT, b: &BlockT, position: usize, keys: &mut Keys) -> Node {
    let ty = op.op_type.variant_name().map_or_else(|| format!("unknown ({})", op.op_type.0), str::to_string);
    let name = key(op.name.as_ref());
    let mut n = Node::new(keys.unique(format!("op {name}")), format!("op {name}: {ty}"));
    n.add("block", quoted(b.name.as_ref()), Role::Hidden);
    n.add("position", position.to_string(), Role::Hidden);
    n.field("op_type", ty);
    n.field("inputs", cx.names(op.inputs.as_ref()));
    n.field("outputs", cx.names(op.outputs.as_ref()));
    n.field("arg_frame", quoted(op.arg_frame.as_ref()));
    n.field("attrs_section", quoted(op.attrs_section.as_ref()));
    n.children.push(frame_of(cx, op));
    n.children.push(attrs_of(cx, op));
    n
}

/// The argument frame an operation names, its operands titled by the op's symbols.
fn frame_of(cx: &Ctx<'_>, op: &OperationT) -> Node {
    let section = cx.section(op.arg_frame.as_ref());
    match section.and_then(|s| s.arg_frame.as_deref()) {
        Some(f) => frame(cx, section.and_then(|s| s.name.as_ref()), f, Some(op)),
        None => missing("frame", "argument frame", op.arg_frame.as_ref()),
    }
}

/// The attributes an operation names.
fn attrs_of(cx: &Ctx<'_>, op: &OperationT) -> Node {
    match cx.section(op.attrs_section.as_ref()) {
        Some(s) => attrs(cx, s.name.as_ref(), &s.attrs, Some(op)),
        None => missing("attrs", "attributes", op.attrs_section.as_ref()),
    }
}

/// A node for a section an operation names but the file lacks.
fn missing(k: &str, what: &str, name: Option<&String>) -> Node {
    let mut n = Node::new(k, format!("{what} {}: missing", quoted(name)));
    n.field("section", "(missing)");
    n
}

/// An argument frame: one node per input and output operand, one line per port.
fn frame(cx: &Ctx<'_>, name: Option<&String>, f: &ArgFrameT, op: Option<&OperationT>) -> Node {
    let (inputs, outputs) = (f.inputs.as_deref().unwrap_or_default(), f.outputs.as_deref().unwrap_or_default());
    let ports = f.ports.as_deref().unwrap_or_default();
    let counts = [(inputs.len(), "input"), (outputs.len(), "output"), (ports.len(), "port")].map(|(k, w)| count(k, w));
    let counts = counts.join(", ");
    let mut n = Node::new("frame", format!("argument frame {}: {counts}", quoted(name)));
    let symbols = |list: Option<&Vec<u32>>| list.cloned().unwrap_or_default();
    let (in_syms, out_syms) =
        (symbols(op.and_then(|o| o.inputs.as_ref())), symbols(op.and_then(|o| o.outputs.as_ref())));
    for (i, o) in inputs.iter().enumerate() {
        n.children.push(operand(cx, "input", i, o, in_syms.get(i)));
    }
    for (i, o) in outputs.iter().enumerate() {
        n.children.push(operand(cx, "output", i, o, out_syms.get(i)));
    }
    let mut keys = Keys::default();
    for p in ports {
        n.children.push(port(p, &mut keys));
    }
    n
}

/// Operand `i` of a frame, titled by the symbol it describes when known.
fn operand(cx: &Ctx<'_>, side: &str, i: usize, o: &OperandT, symbol: Option<&u32>) -> Node {
    let of = symbol.map(|&s| format!(": {}", cx.symbol(s))).unwrap_or_default();
    let mut n = Node::new(format!("{side} {i}"), format!("{side} {i}{of}"));
    match o.descriptor.as_deref() {
        Some(d) => descriptor(&mut n, d),
        None => n.field("descriptor", "(none)"),
    }
    n
}

/// Every field of a tensor descriptor: the source shape, the engine's view, the storage.
fn descriptor(n: &mut Node, d: &TensorDescriptorT) {
    n.field("dim", list(d.dim.as_deref()));
    n.field("stride", list(d.stride.as_deref()));
    let view = [
        ("width", d.width, d.stride_width),
        ("height", d.height, d.stride_height),
        ("channels", d.channels, d.stride_channels),
        ("batch_number", d.batch_number, d.stride_batch_number),
        ("sequence_length", d.sequence_length, d.stride_sequence_length),
    ];
    for (name, size, _) in view {
        n.num(name, size);
    }
    for (name, _, stride) in view {
        n.num(format!("stride_{name}"), stride);
    }
    let ty = d.storage_type;
    n.field("storage_type", ty.variant_name().map_or_else(|| format!("unknown ({})", ty.0), str::to_string));
    n.field("component_pack", d.component_pack.to_string());
}

/// A port: name, byte size, aperture address.
fn port(p: &IOPortT, keys: &mut Keys) -> Node {
    let name = key(p.name.as_ref());
    let mut n = Node::new(keys.unique(format!("port {name}")), format!("port {}", quoted(p.name.as_ref()))).compact();
    n.num("byte_size", p.byte_size);
    n.hex("aperture_va", p.aperture_va);
    n
}

/// An attribute table: its type, then every field.
fn attrs(cx: &Ctx<'_>, name: Option<&String>, a: &OpAttrsT, op: Option<&OperationT>) -> Node {
    let table = a.op_attrs_type().variant_name().unwrap_or("NONE");
    let mut n = Node::new("attrs", format!("attributes {}: {table}", quoted(name)));
    n.field("table", table);
    match a {
        OpAttrsT::CastAttrs(c) => {
            n.field("src_dtype", c.src_dtype.variant_name().unwrap_or("unknown").to_string());
            n.field("dst_dtype", c.dst_dtype.variant_name().unwrap_or("unknown").to_string());
            n.field("component_pack", c.component_pack.to_string());
        }
        OpAttrsT::AneInferenceAttrs(a) => {
            n.field("procedure_name", quoted(a.procedure_name.as_ref()));
            n.field("anehash", quoted(a.anehash.as_ref()));
            n.field("program_symbol", quoted(a.program_symbol.as_ref()));
            n.num("intermediate_buffer_handle", a.intermediate_buffer_handle);
            n.field("compiler_options", quoted(a.compiler_options.as_ref()));
        }
        OpAttrsT::CpuInferenceAttrs(c) => cpu(cx, &mut n, c, op),
        _ => n.notes.push("no fields".into()),
    }
    n
}

/// A CPU operation's fields, then one node per argument.
fn cpu(cx: &Ctx<'_>, n: &mut Node, c: &CpuInferenceAttrsT, op: Option<&OperationT>) {
    n.field("op", quoted(c.op.as_ref()));
    n.field("layer", quoted(c.layer.as_ref()));
    n.field("opset", quoted(c.opset.as_ref()));
    n.field("location", quoted(c.location.as_ref()));
    let inputs = op.and_then(|o| o.inputs.as_deref()).unwrap_or_default();
    let mut keys = Keys::default();
    for a in c.arguments.iter().flatten() {
        n.children.push(argument(cx, a, inputs, &mut keys));
    }
}

/// One argument: its kind, the operation inputs it names, its constant.
fn argument(cx: &Ctx<'_>, a: &CpuArgumentT, inputs: &[u32], keys: &mut Keys) -> Node {
    let name = key(a.name.as_ref());
    let kind = a.kind.variant_name().map_or_else(|| format!("unknown ({})", a.kind.0), str::to_string);
    let mut n = Node::new(keys.unique(format!("arg {name}")), format!("argument {}: {kind}", quoted(a.name.as_ref())));
    n.field("kind", kind);
    let operand = |&i: &u32| match inputs.get(i as usize) {
        Some(&s) => format!("{i} {}", cx.symbol(s)),
        None => i.to_string(),
    };
    n.field("operands", join(a.operands.iter().flatten().map(operand)));
    match a.constant.as_deref() {
        Some(k) => constant(&mut n, k),
        None => n.field("constant", "(none)"),
    }
    n
}

/// A constant: element type, shape, byte count, SHA-256 (compared), first bytes (shown).
fn constant(n: &mut Node, k: &CpuConstantT) {
    let data = k.data.as_deref().unwrap_or_default();
    n.field("dtype", quoted(k.dtype.as_ref()));
    n.field("shape", list(k.shape.as_deref()));
    n.num("bytes", data.len() as u64);
    n.field("sha256", format!("{:x}", Sha256::digest(data)));
    n.add("head", hex_bytes(data.get(..PREVIEW).unwrap_or(data)), Role::Derived);
}

/// The sections no function or operation names, each with its contents.
fn unreferenced(cx: &Ctx<'_>, sections: &[SectionT], used: &HashSet<&str>) -> Node {
    let rest: Vec<&SectionT> =
        sections.iter().filter(|s| !used.contains(s.name.as_deref().unwrap_or_default())).collect();
    let mut n = Node::new("unreferenced", format!("unreferenced sections: {}", rest.len()));
    n.num("count", rest.len() as u64);
    let mut keys = Keys::default();
    for s in rest {
        n.children.push(section(cx, s, &mut keys));
    }
    n
}

/// An unreferenced section: its kind and its payload.
fn section(cx: &Ctx<'_>, s: &SectionT, keys: &mut Keys) -> Node {
    let kind = s.kind.variant_name().map_or_else(|| format!("unknown ({})", s.kind.0), str::to_string);
    let name = key(s.name.as_ref());
    let mut n =
        Node::new(keys.unique(format!("section {name}")), format!("section {}: {kind}", quoted(s.name.as_ref())));
    n.field("kind", kind);
    if let Some(f) = s.arg_frame.as_deref() {
        n.children.push(frame(cx, s.name.as_ref(), f, None));
    }
    if !matches!(s.attrs, OpAttrsT::NONE) {
        n.children.push(attrs(cx, s.name.as_ref(), &s.attrs, None));
    }
    n
}

/// Keys made unique under one parent: the second `k` is `k[2]`, the third `k[3]`.
#[derive(Default)]
struct Keys(HashMap<String, usize>);

impl Keys {
    fn unique(&mut self, k: String) -> String {
        let seen = self.0.entry(k.clone()).or_insert(0);
        *seen += 1;
        if *seen == 1 {
            k
        } else {
            format!("{k}[{seen}]")
        }
    }
}

/// A name as a location component: as is, `""` when empty or absent.
fn key(s: Option<&String>) -> String {
    match s.map(String::as_str) {
        None | Some("") => "\"\"".into(),
        Some(s) => s.to_string(),
    }
}

/// A string value quoted, `(none)` when absent.
fn quoted(s: Option<&String>) -> String {
    s.map_or_else(|| "(none)".into(), |s| format!("{s:?}"))
}

/// `[1, 3, 8]`, or `(none)`.
fn list(v: Option<&[u64]>) -> String {
    v.map_or_else(|| "(none)".into(), |v| format!("[{}]", join(v.iter().map(u64::to_string))))
}

/// `1 input`, `2 inputs` (`entry`: `entries`).
fn count(n: usize, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
}

/// Items joined by `, ` (`(empty)` for none).
fn join(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    if v.is_empty() {
        "(empty)".into()
    } else {
        v.join(", ")
    }
}
