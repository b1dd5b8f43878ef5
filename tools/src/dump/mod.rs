//! `dump_file`: a stable, human-readable listing of every field of an `.hwx`, `.anec` or
//! `.e5` file.
//!
//! The listing is built as a [`Node`] tree (shared with `diff`) and rendered by
//! [`render`]. One file per part: [`hwx`] (header and load-command order), [`commands`]
//! (segments, bindings, ident, symbols), [`thread`] (the `LC_THREAD` states), [`anec`]
//! (the `.anec` header), [`td`] (task descriptors by register-map field), [`consts`]
//! (weight chunks), [`e5`] (the E5 dispatch descriptor, field by field).

mod anec;
mod commands;
mod consts;
mod e5;
mod hwx;
mod render;
mod td;
mod thread;

use crate::program::Program;
use crate::tree::Node;
use crate::ToolError;

/// The full text listing of a program file (`.hwx` detected by its `0xBEEFFACE` magic,
/// otherwise `.anec` when its header reads, otherwise `.e5` when the E5 reader accepts it).
///
/// # Errors
/// [`ToolError::Hwx`] for a malformed `.hwx`, [`ToolError::Unrecognized`] when the bytes
/// read as none of the three formats.
pub fn dump_file(bytes: &[u8]) -> Result<String, ToolError> {
    let program = Program::read(bytes)?;
    Ok(render::render(&nodes(&program, bytes.len())))
}

/// The field tree of a program read from a `len`-byte file.
pub(crate) fn nodes(p: &Program, len: usize) -> Vec<Node> {
    let mut file = Node::new("file", format!("file: .{}, {len} bytes", p.format()));
    file.field("format", p.format());
    file.hex("size", len as u64);
    let mut out = vec![file];
    match p {
        Program::Hwx(f) => out.extend(hwx::nodes(f)),
        Program::Anec(a) => out.extend(anec::nodes(a)),
        Program::E5(f) => out.extend(e5::nodes(f, len)),
    }
    out
}
