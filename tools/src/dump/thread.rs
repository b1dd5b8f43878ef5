//! The `LC_THREAD` states, named through `decode_program` (flavor 1) and
//! `decode_tensor` (flavor 3). BAR table entries are listed by index; state words no
//! decoder names are listed raw. A state that does not decode is listed raw with the
//! reason.

use anec_codegen::hwx::file::Thread;
use anec_codegen::hwx::thread::{decode_program, decode_tensor, ProgramState, TensorState};
use anec_codegen::hwx::thread::{FLAVOR_PROGRAM, FLAVOR_TENSOR};

use crate::tree::{dec_hex, Node, Role};

/// Adds the fields of thread `t` to its node.
pub(super) fn fill(n: &mut Node, t: &Thread) {
    n.num("flavor", t.flavor);
    n.hex("count", t.count);
    n.hex("tail bytes", t.tail.len() as u64);
    let decoded = match t.flavor {
        FLAVOR_PROGRAM => decode_program(t).map(|p| program(n, &p)),
        FLAVOR_TENSOR => decode_tensor(t).map(|s| tensor(n, &s)),
        _ => {
            raw(n, t);
            Ok(())
        }
    };
    if let Err(e) = decoded {
        n.field("decode error", e.to_string());
        raw(n, t);
    }
}

/// The flavor-1 program state.
fn program(n: &mut Node, p: &ProgramState) {
    for (i, &bar) in p.bars.iter().enumerate() {
        let role = if bar == 0 { Role::Hidden } else { Role::Plain };
        n.add(format!("bar[{i}]"), format!("{bar:#x}"), role);
    }
    let zeros = p.bars.iter().filter(|&&b| b == 0).count();
    if zeros > 0 {
        n.notes.push(format!("{zeros} zero BAR entries not shown"));
    }
    n.hex("first_td", p.first_td);
    n.field("td_words", dec_hex(p.td_words.into()));
    n.field("td_count", dec_hex(p.td_count.into()));
    n.hex("word 0x824", p.word_824);
    n.hex("name_offset", p.name_offset);
    n.hex("word 0x850", p.word_850);
    n.hex("word 0x858", p.word_858);
    n.field("name", format!("{:?}", p.name));
    n.field("other words", words(&p.other_words));
}

/// A flavor-3 tensor state.
fn tensor(n: &mut Node, s: &TensorState) {
    let role = match s.role {
        1 => "1 (input)".to_string(),
        2 => "2 (output)".to_string(),
        r => format!("{r:#x} (unknown)"),
    };
    n.hex("word 0x10", s.word_10);
    n.field("role", role);
    n.hex("network_offset", s.network_offset);
    n.hex("name_offset", s.name_offset);
    n.num("dtype", s.dtype);
    for (axis, (d, st)) in ["N", "C", "H", "W", "D"].iter().zip(s.dims.iter().zip(&s.strides)) {
        n.num(format!("dim {axis}"), *d);
        n.num(format!("stride {axis}"), *st);
    }
    n.hex("word 0x78", s.word_78);
    n.hex("name2_offset", s.name2_offset);
    n.hex("state_size", s.state_size);
    n.field("network", format!("{:?}", s.network));
    n.field("name", format!("{:?}", s.name));
    n.field("name2", format!("{:?}", s.name2));
    n.field("other words", words(&s.other_words));
}

/// Every non-zero state word, raw.
fn raw(n: &mut Node, t: &Thread) {
    let nonzero: Vec<(u32, u32)> =
        (0x10u32..).step_by(4).zip(&t.words).filter(|&(_, &w)| w != 0).map(|(off, &w)| (off, w)).collect();
    n.field("nonzero words", words(&nonzero));
}

/// `+0x900=0x00000001 +0x904=...`, or `none`.
fn words(list: &[(u32, u32)]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter().map(|(off, w)| format!("+{off:#x}={w:#010x}")).collect::<Vec<_>>().join(" ")
}
