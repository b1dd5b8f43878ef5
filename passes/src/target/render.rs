//! Plain-text and Markdown renderings of the target tables: `anec --print target-list`,
//! `anec --print target-features -t TARGET`, and the generated part of `docs/targets.md`.
//! All output is deterministic (table order, no maps).

use super::hw_features::{self, SetterStatus, COLUMNS, HW_FEATURES};
use super::{FeatureByte, Target};
use std::fmt::Write;

/// Width at which listed setter names wrap.
const WRAP: usize = 100;

/// One line per target: name, products, generation, family, cpusubtype, ISA version.
pub fn target_list_text() -> String {
    let mut out = format!(
        "{:<6}  {:<9}  {:<10}  {:<6}  {:<10}  {}\n",
        "target", "chip", "generation", "family", "cpusubtype", "isa"
    );
    for t in Target::all() {
        let _ = writeln!(
            out,
            "{:<6}  {:<9}  {:<10}  {:<6}  {:<10}  {}",
            t.name(),
            t.marketing_name(),
            t.generation().name(),
            t.family().name(),
            t.cpusubtype(),
            t.isa_version()
        );
    }
    out
}

/// A chip's identity, every feature byte, every limit and its generation's setter features,
/// each value with its source.
pub fn target_features_text(t: Target) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "target {} ({})", t.name(), t.marketing_name());
    let _ = writeln!(
        out,
        "  generation {}, family {}, Mach-O cpusubtype {}, ANE ISA version {} [reference] chip-features.md §1",
        t.generation().name(),
        t.family().name(),
        t.cpusubtype(),
        t.isa_version()
    );
    out.push_str("\nfeature bytes (offset, value, name: source):\n");
    for (byte, v) in t.features().iter() {
        let _ = writeln!(out, "  {:#05x}  {}  {:<18}  {}", byte.offset(), v.value, byte.name(), v.source);
    }
    out.push_str("\nlimits (key, value: source):\n");
    for row in t.limits().rows() {
        let _ = writeln!(out, "  {:<29}  {:<9}  {}", row.key, row.value, row.source);
    }
    let _ = writeln!(
        out,
        "\nhardware features (ZinAneTd<{}>::Set* on {}, chip-features.md §4):",
        t.isa_version(),
        t.generation().name()
    );
    for status in SetterStatus::ALL {
        let names: Vec<&str> = hw_features::with_status(t.generation(), status).map(|f| f.name).collect();
        let head = format!("  {} ({}): ", status.label(), names.len());
        out.push_str(&wrap(&head, &names));
    }
    out
}

/// `head` followed by `names` joined with ", ", wrapped under the head's indent.
fn wrap(head: &str, names: &[&str]) -> String {
    let indent = " ".repeat(head.len());
    let mut out = head.to_owned();
    let mut col = head.len();
    for (i, name) in names.iter().enumerate() {
        let piece = if i + 1 < names.len() { format!("{name},") } else { (*name).to_owned() };
        if col > head.len() && col + 1 + piece.len() > WRAP {
            out.push('\n');
            out.push_str(&indent);
            col = indent.len();
        } else if col > head.len() {
            out.push(' ');
            col += 1;
        }
        out.push_str(&piece);
        col += piece.len();
    }
    out.push('\n');
    out
}

/// The generated part of `docs/targets.md`: the chip table, the feature-byte and limit
/// matrices, each value's source, and the setter table.
pub fn targets_markdown() -> String {
    let mut out = String::new();
    chips_md(&mut out);
    features_md(&mut out);
    limits_md(&mut out);
    setters_md(&mut out);
    out
}

/// A Markdown table header: the `first` columns, then one column per target.
fn header(out: &mut String, first: &[&str]) {
    let names = Target::names();
    let _ = writeln!(out, "| {} | {} |", first.join(" | "), names.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(first.len() + names.len()));
}

fn chips_md(out: &mut String) {
    out.push_str("## Chips\n\nSource: `chip-features.md` §1; family: ANEForge `_targets.py`.\n\n");
    out.push_str("| target | chip | generation | family | cpusubtype | ISA version |\n|---|---|---|---|---|---|\n");
    for t in Target::all() {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            t.name(),
            t.marketing_name(),
            t.generation().name(),
            t.family().name(),
            t.cpusubtype(),
            t.isa_version()
        );
    }
}

fn features_md(out: &mut String) {
    out.push_str("\n## Feature bytes\n\nValues (seed 002, Table B.2 offsets):\n\n");
    header(out, &["offset", "name"]);
    for byte in FeatureByte::ALL {
        let values: Vec<String> = Target::all().map(|t| t.feature(byte).to_string()).collect();
        let _ = writeln!(out, "| `{:#05x}` | {} | {} |", byte.offset(), byte.name(), values.join(" | "));
    }
    out.push_str("\nWhat each byte gates and the source of each value:\n");
    for byte in FeatureByte::ALL {
        let _ = writeln!(out, "\n### `{:#05x}` {}\n\nGates: {}.\n", byte.offset(), byte.name(), byte.gates());
        out.push_str("| target | value | source |\n|---|---|---|\n");
        for t in Target::all() {
            let v = t.features().get(byte);
            let _ = writeln!(out, "| `{}` | {} | {}: {} |", t.name(), v.value, v.source.kind(), v.source.text());
        }
    }
}

fn limits_md(out: &mut String) {
    out.push_str("\n## Limits\n\n");
    let first = Target::all().next().map(|t| t.limits().rows()).unwrap_or_default();
    header(out, &["limit"]);
    let all: Vec<_> = Target::all().map(|t| t.limits().rows()).collect();
    for (i, row) in first.iter().enumerate() {
        let values: Vec<String> =
            all.iter().map(|rows| rows.get(i).map_or_else(String::new, |r| r.value.clone())).collect();
        let _ = writeln!(out, "| `{}` | {} |", row.key, values.join(" | "));
    }
    out.push_str("\nThe source of each value:\n");
    for (i, row) in first.iter().enumerate() {
        let _ = writeln!(out, "\n### `{}`\n\n{}.\n", row.key, row.what);
        out.push_str("| target | value | source |\n|---|---|---|\n");
        for (t, rows) in Target::all().zip(&all) {
            if let Some(r) = rows.get(i) {
                let _ = writeln!(out, "| `{}` | {} | {}: {} |", t.name(), r.value, r.source.kind(), r.source.text());
            }
        }
    }
}

fn setters_md(out: &mut String) {
    out.push_str("\n## Hardware (setter) features\n\n");
    out.push_str("Source: `chip-features.md` §4 (freedomtan `hwx_dump/feature_support.csv`).\n\n");
    let _ = writeln!(out, "| setter | {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(1 + COLUMNS.len()));
    for f in HW_FEATURES.iter() {
        let cells: Vec<&str> = f.statuses.iter().map(|s| s.label()).collect();
        let _ = writeln!(out, "| `{}` | {} |", f.name, cells.join(" | "));
    }
}
