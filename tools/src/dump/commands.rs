//! The fields of the load commands other than `LC_THREAD`: segments with their sections
//! and relocation entries, `LC_LOADFVMLIB`, `LC_IDENT` (line by line), `LC_SYMTAB` with
//! every symbol, and unknown commands as raw bytes.

use anec_codegen::hwx::file::{Ident, LoadCommand, LoadFvmlib, Section, Segment, Symtab};
use anec_codegen::Relocation;

use super::consts::hex_bytes;
use crate::names::symbol_label;
use crate::tree::{Node, Role};

/// Adds the fields (and sub-structures) of `c` to its node.
pub(super) fn fill(n: &mut Node, c: &LoadCommand) {
    match c {
        LoadCommand::Segment(s) => segment(n, s),
        LoadCommand::LoadFvmlib(l) => fvmlib(n, l),
        LoadCommand::Ident(i) => ident(n, i),
        LoadCommand::Symtab(s) => symtab(n, s),
        LoadCommand::Thread(_) => {}
        LoadCommand::Other { data, .. } => n.field("data", hex_bytes(data)),
    }
}

/// `LC_SEGMENT_64` and its sections.
fn segment(n: &mut Node, s: &Segment) {
    n.field("segname", s.name.as_str());
    n.hex("vmaddr", s.vmaddr);
    n.hex("vmsize", s.vmsize);
    n.hex("fileoff", s.fileoff);
    n.hex("filesize", s.filesize);
    n.hex("maxprot", s.maxprot);
    n.hex("initprot", s.initprot);
    n.num("nsects", s.nsects);
    n.hex("flags", s.flags);
    n.children.extend(s.sections.iter().enumerate().map(|(i, sect)| section(i, sect)));
}

/// One `section_64` with its relocation entries.
fn section(i: usize, s: &Section) -> Node {
    let key = format!("section[{i}]");
    let mut n = Node::new(key.clone(), format!("{key}: {},{}", s.segment, s.name));
    n.field("sectname", s.name.as_str());
    n.field("segname", s.segment.as_str());
    n.hex("addr", s.addr);
    n.hex("size", s.size);
    n.hex("offset", s.offset);
    n.num("align", s.align);
    n.add("reloff", format!("{:#x}", s.reloff), Role::Layout);
    n.num("nreloc", s.nreloc);
    n.hex("flags", s.flags);
    for (k, r) in (1..).zip(s.reserved) {
        n.hex(format!("reserved{k}"), r);
    }
    n.children.extend(s.relocations.iter().enumerate().map(|(k, r)| relocation(k, r)));
    n
}

/// One `relocation_info`, on one line.
fn relocation(k: usize, r: &Relocation) -> Node {
    let key = format!("reloc[{k}]");
    let mut n = Node::new(key.clone(), key).compact();
    n.hex("address", r.address);
    n.num("symbolnum", r.symbol_num);
    n.num("pcrel", u8::from(r.pc_rel));
    n.num("length", r.length);
    n.num("extern", u8::from(r.external));
    n.num("type", r.kind);
    n
}

/// `LC_LOADFVMLIB`.
fn fvmlib(n: &mut Node, l: &LoadFvmlib) {
    n.hex("name_offset", l.name_offset);
    n.field("name", format!("{:?}", l.name));
    n.hex("minor_version", l.minor_version);
    n.hex("header_addr", l.header_addr);
}

/// `LC_IDENT`: its length and each line, quoted.
fn ident(n: &mut Node, i: &Ident) {
    n.add("length", format!("{:#x}", i.text.len()), Role::Ident);
    let lines: Vec<&str> = i.text.split('\n').collect();
    n.add("lines", lines.len().to_string(), Role::Ident);
    for (k, line) in lines.iter().enumerate() {
        n.add(format!("line {k}"), format!("{line:?}"), Role::Ident);
    }
}

/// `LC_SYMTAB` and one line per symbol. Symbols are keyed for diff by their label
/// (name without hash, up to `:`), so that an inserted symbol does not shift the others.
fn symtab(n: &mut Node, s: &Symtab) {
    n.add("symoff", format!("{:#x}", s.symoff), Role::Layout);
    n.num("nsyms", s.nsyms);
    n.add("stroff", format!("{:#x}", s.stroff), Role::Layout);
    n.hex("strsize", s.strsize);
    let mut seen = Vec::new();
    for (i, sym) in s.symbols.iter().enumerate() {
        let key = format!("symbol {:?}", symbol_label(&sym.name, &mut seen));
        let mut c = Node::new(key, format!("symbol[{i}]")).compact();
        c.add("index", i.to_string(), Role::Hidden);
        c.add("name", format!("{:?}", sym.name), Role::SymbolName);
        c.hex("strx", sym.strx);
        c.hex("type", sym.n_type);
        c.num("sect", sym.sect);
        c.hex("desc", sym.desc);
        c.hex("value", sym.value);
        n.children.push(c);
    }
}
