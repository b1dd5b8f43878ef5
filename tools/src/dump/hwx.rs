//! The `.hwx` listing: the Mach-O header, the load commands in file order, the TDs of
//! `__text` and the weight chunks of `__const`.

use std::collections::HashMap;

use anec_codegen::hwx::file::{LoadCommand, LC_IDENT, LC_LOADFVMLIB, LC_SEGMENT_64, LC_SYMTAB, LC_THREAD};
use anec_codegen::hwx::thread::{decode_program, FLAVOR_PROGRAM};
use anec_codegen::HwxFile;

use super::{commands, consts, td, thread};
use crate::tree::{Node, Role};

/// Header, load commands, TDs, weights.
pub(super) fn nodes(f: &HwxFile) -> Vec<Node> {
    let mut out = vec![header(f)];
    out.extend(load_commands(f));
    let (count, first_words) = program_tasks(f).unwrap_or((0, 0));
    out.extend(td::text_nodes(&f.text, count, first_words, "program state"));
    out.push(consts::hwx_weights(f));
    out
}

/// The Mach-O header fields.
fn header(f: &HwxFile) -> Node {
    let mut n = Node::new("header", "header");
    n.hex("magic", f.magic);
    n.hex("cputype", f.cpu_type);
    n.hex("cpusubtype", f.cpu_subtype);
    n.hex("filetype", f.file_type);
    n.num("ncmds", f.ncmds);
    n.add("sizeofcmds", format!("{:#x}", f.sizeofcmds), Role::Layout);
    n.hex("flags", f.flags);
    n.hex("reserved", f.reserved);
    n
}

/// `td_count` and the first task's size in words (`td_words` + 1) of the first
/// program-state thread that decodes.
fn program_tasks(f: &HwxFile) -> Option<(u32, u64)> {
    let p = f.threads().filter(|t| t.flavor == FLAVOR_PROGRAM).find_map(|t| decode_program(t).ok())?;
    Some((p.td_count, u64::from(p.td_words) + 1))
}

/// The name of a command kind (`LC_SEGMENT_64`, or `LC_0x1b` for one not named here).
fn kind_name(cmd: u32) -> String {
    match cmd {
        LC_SEGMENT_64 => "LC_SEGMENT_64".into(),
        LC_LOADFVMLIB => "LC_LOADFVMLIB".into(),
        LC_THREAD => "LC_THREAD".into(),
        LC_IDENT => "LC_IDENT".into(),
        LC_SYMTAB => "LC_SYMTAB".into(),
        other => format!("LC_{other:#x}"),
    }
}

/// One node per load command, keyed by kind and ordinal within the kind
/// (`LC_THREAD[2]`), so that diffs align commands of the same kind. Its index and file
/// offset are in the heading, and compared as fields.
fn load_commands(f: &HwxFile) -> Vec<Node> {
    let mut seen: HashMap<u32, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, c) in f.load_commands.iter().enumerate() {
        let h = c.header();
        let ordinal = seen.entry(h.cmd).or_insert(0);
        let key = format!("{}[{ordinal}]", kind_name(h.cmd));
        *ordinal += 1;
        let mut n = Node::new(key.clone(), format!("{key}: load command {i} at {:#x}", h.offset));
        n.add("index", i.to_string(), Role::Hidden);
        n.add("offset", format!("{:#x}", h.offset), Role::Layout);
        n.hex("cmd", h.cmd);
        let role = if h.cmd == LC_IDENT { Role::Ident } else { Role::Plain };
        n.add("cmdsize", format!("{:#x}", h.cmdsize), role);
        match c {
            LoadCommand::Thread(t) => thread::fill(&mut n, t),
            _ => commands::fill(&mut n, c),
        }
        out.push(n);
    }
    out
}
