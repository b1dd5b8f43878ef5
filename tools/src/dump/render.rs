//! Renders a [`Node`] tree as indented text: a heading line per node, `name = value`
//! per shown field two spaces deeper, notes in parentheses, then the children.

use std::fmt::Write;

use crate::tree::{Node, Role};

/// The text of `nodes`, one line per heading, field and note.
pub(crate) fn render(nodes: &[Node]) -> String {
    let mut out = String::new();
    for n in nodes {
        node(&mut out, n, 0);
    }
    out
}

/// Appends `n` at indentation `depth`.
fn node(out: &mut String, n: &Node, depth: usize) {
    if n.hidden {
        return;
    }
    let pad = "  ".repeat(depth);
    let shown = n.fields.iter().filter(|f| f.role != Role::Hidden);
    if n.compact {
        let fields: Vec<String> = shown.map(|f| format!("{}={}", f.name, f.value)).collect();
        let _ = writeln!(out, "{pad}{}: {}", n.title, fields.join(" "));
    } else {
        let _ = writeln!(out, "{pad}{}", n.title);
        for f in shown {
            let _ = writeln!(out, "{pad}  {} = {}", f.name, f.value);
        }
    }
    for note in &n.notes {
        let _ = writeln!(out, "{pad}  ({note})");
    }
    for c in &n.children {
        node(out, c, depth + 1);
    }
}
