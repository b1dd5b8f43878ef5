//! Rendering of a [`Report`]: the text `anec check` prints, its JSON form, the summary
//! (counts on the engine and rejected, by stage and by rule), and the one-line form of a
//! rejection that `anec compile` prints. The rule text is the same in all of them.

use super::{LayerVerdict, Report, Stage, Verdict};
use crate::target::Target;
use anec_ir::Location;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The counts of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Every layer.
    pub layers: usize,
    /// Layers that run on the engine.
    pub engine: usize,
    /// Layers rejected.
    pub rejected: usize,
    /// Rejected layers per stage.
    pub by_stage: BTreeMap<Stage, usize>,
    /// Rejected layers per rule.
    pub by_rule: BTreeMap<String, usize>,
}

impl Summary {
    /// The counts of `r`.
    pub fn of(r: &Report) -> Self {
        let mut by_stage = BTreeMap::new();
        let mut by_rule = BTreeMap::new();
        for rej in r.layers.iter().filter_map(|l| l.verdict.rejection()) {
            *by_stage.entry(rej.stage).or_insert(0) += 1;
            *by_rule.entry(rej.rule.clone()).or_insert(0) += 1;
        }
        let rejected = by_stage.values().sum();
        Summary { layers: r.layers.len(), engine: r.layers.len() - rejected, rejected, by_stage, by_rule }
    }
}

/// `file:line:col`, `file` without a line, `<unknown location>` without a file.
pub fn location_text(l: &Location) -> String {
    match (l.file.is_empty(), l.line) {
        (true, _) => "<unknown location>".to_string(),
        (false, 0) => l.file.clone(),
        (false, line) => format!("{}:{line}:{}", l.file, l.col),
    }
}

/// One line for a rejected layer, as `anec compile` prints it: location, layer, chip,
/// stage, rule, then the feature and the suggestion when there are.
pub fn rejection_line(l: &LayerVerdict, target: Target) -> String {
    let Some(r) = l.verdict.rejection() else {
        return format!("{}: layer '{}' ({}) runs on the engine", location_text(&l.location), l.name, l.op);
    };
    let mut line = format!(
        "{}: layer '{}' ({}) rejected on {} at {}: {}",
        location_text(&l.location),
        l.name,
        l.op,
        target.name(),
        r.stage.name(),
        r.rule
    );
    if let Some(f) = &r.feature {
        let _ = write!(line, " [{f}]");
    }
    if let Some(s) = &r.suggestion {
        let _ = write!(line, "; suggestion: {s}");
    }
    line
}

/// The text `anec check` prints: a header, one block per layer, the summary.
pub fn render_text(r: &Report) -> String {
    let t = r.target;
    let mut out = format!("target {} ({}), {} route\n", t.name(), t.marketing_name(), r.route.name());
    for l in &r.layers {
        layer_text(&mut out, l);
    }
    summary_text(&mut out, r);
    out
}

fn layer_text(out: &mut String, l: &LayerVerdict) {
    let head = format!("{} ({}) at {}", l.name, l.op, location_text(&l.location));
    match &l.verdict {
        Verdict::Engine => {
            let _ = writeln!(out, "  engine    {head}");
        }
        Verdict::Rejected(rej) => {
            let _ = writeln!(out, "  rejected  {head}");
            let _ = writeln!(out, "            rule ({}): {}", rej.stage.name(), rej.rule);
            if let Some(f) = &rej.feature {
                let _ = writeln!(out, "            {f}");
            }
            if let Some(s) = &rej.suggestion {
                let _ = writeln!(out, "            suggestion: {s}");
            }
        }
    }
}

fn summary_text(out: &mut String, r: &Report) {
    let s = Summary::of(r);
    let stages: Vec<String> = s.by_stage.iter().map(|(st, n)| format!("{n} at {}", st.name())).collect();
    let detail = if stages.is_empty() { String::new() } else { format!(" ({})", stages.join(", ")) };
    let noun = if s.layers == 1 { "layer" } else { "layers" };
    let _ = writeln!(out, "summary: {} {noun}, {} on the engine, {} rejected{detail}", s.layers, s.engine, s.rejected);
    for (rule, n) in &s.by_rule {
        let _ = writeln!(out, "  {n} x {rule}");
    }
    for e in &r.module_errors {
        let _ = writeln!(out, "  module error: {e}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    let verdict =
        if r.all_engine() { "every layer runs on the engine" } else { "the model does not run on the engine" };
    let _ = writeln!(out, "verdict: {verdict}");
}

/// The JSON document of `anec check --format json`.
pub fn render_json(r: &Report) -> String {
    let s = Summary::of(r);
    let layers: Vec<Value> = r.layers.iter().map(layer_json).collect();
    let by_stage: BTreeMap<&str, usize> = s.by_stage.iter().map(|(st, n)| (st.name(), *n)).collect();
    let doc = json!({
        "target": r.target.name(),
        "route": r.route.name(),
        "layers": layers,
        "summary": {
            "layers": s.layers,
            "engine": s.engine,
            "rejected": s.rejected,
            "by_stage": by_stage,
            "by_rule": s.by_rule,
            "module_errors": r.module_errors,
            "notes": r.notes,
            "runs_on_engine": r.all_engine(),
        },
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn layer_json(l: &LayerVerdict) -> Value {
    let rej = l.verdict.rejection();
    json!({
        "index": l.index,
        "name": l.name,
        "op": l.op,
        "location": location_text(&l.location),
        "verdict": if rej.is_some() { "rejected" } else { "engine" },
        "stage": rej.map(|r| r.stage.name()),
        "rule": rej.map(|r| r.rule.as_str()),
        "feature": rej.and_then(|r| r.feature.as_deref()),
        "suggestion": rej.and_then(|r| r.suggestion.as_deref()),
    })
}
