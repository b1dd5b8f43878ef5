//! `anec check`: does each layer of a model run on the engine of a chip, and if not, why?
//!
//! The answer comes from the same places a compile's does, so it cannot drift from it:
//!
//! 1. for a MIL model, the lowering (`lower_mil_partial`): a statement with no anec lowering
//!    is a layer rejected at lowering, with the compile's diagnostic as its rule;
//! 2. the chip's per-layer validators ([`anec_passes::legalize::check`], the legalizer a
//!    compile runs);
//! 3. for a chip with a code generator in anec (h13g), that code generator: an op kind it
//!    does not place ([`anec_backend_h13::lower::unplaceable`]) and each remaining layer
//!    compiled on its own (kernel, stride, padding, activation tables, ...) are rejections
//!    at code generation with the backend's own reason; when every layer passes, the whole
//!    model is compiled once more, so "every layer runs on the engine" means `anec compile`
//!    succeeds. For a chip without a code generator the summary says so.

use crate::Error;
use crate::{code_generator, load_function, load_mil, route_of, InputKind, Target};
use anec_backend_h13::BackendError;
use anec_ir::mil::MilModel;
use anec_ir::{Attr, Module, Op, Port};
use anec_passes::legalize::{self, LayerVerdict, Rejection, Report, Stage, Verdict};
use anec_passes::lower::{lower_mil_partial, Unlowered};
use anec_passes::target::Target as Chip;
use anec_passes::Route;
use std::collections::HashMap;
use std::path::Path;

/// Checks function `function` of the model at `path` (MIL function; netplists and `.mlir`
/// files hold one network) on `chip`.
pub fn check_file(path: &Path, function: &str, chip: Chip) -> Result<Report, Error> {
    let kind = InputKind::of(path)?;
    if kind != InputKind::Mil {
        return Ok(check_module(&load_function(path, function)?, chip, route_of(kind)));
    }
    check_mil(&load_mil(path)?, function, chip)
}

/// Checks function `function` of a MIL model (conversion route): the statements that do
/// not lower are layers rejected at lowering, in source order with the others.
pub fn check_mil(model: &MilModel, function: &str, chip: Chip) -> Result<Report, Error> {
    let (module, unlowered) = lower_mil_partial(model, function).map_err(|_| Error::NoFunction {
        file: model.file.clone(),
        function: function.to_string(),
        functions: model.program.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "),
    })?;
    let mut report = checked(&module, chip, Route::Conversion, unlowered.is_empty());
    add_unlowered(&mut report, unlowered);
    Ok(report)
}

/// Adds the MIL statements that did not lower and puts every layer in source order.
fn add_unlowered(r: &mut Report, unlowered: Vec<Unlowered>) {
    for u in unlowered {
        let rejection = Rejection { rule: u.reason, feature: None, suggestion: None, stage: Stage::Lowering };
        let verdict = Verdict::Rejected(rejection);
        r.layers.push(LayerVerdict { index: None, name: u.name, op: u.op, location: u.location, verdict });
    }
    r.layers.sort_by_key(|l| (l.location.line, l.location.col));
}

/// Checks a module on `chip`: the validators, then the chip's code generator if anec has
/// one.
pub fn check_module(m: &Module, chip: Chip, route: Route) -> Report {
    checked(m, chip, route, true)
}

/// [`check_module`]; `whole` compiles the whole module at the end (not for the part of a
/// MIL model that lowered: its compile stops at the lowering).
fn checked(m: &Module, chip: Chip, route: Route, whole: bool) -> Report {
    // The layers the pipeline rewrites into several are judged as rewritten.
    let tiled = anec_passes::tile::run(m, chip);
    let m = tiled.as_ref();
    let mut r = legalize::check(m, chip, route);
    match code_generator(chip) {
        Some(Target::H13g) => h13(m, &mut r, chip, route, whole),
        None => r.notes.push(format!(
            "no code generator for {0} in anec yet: the verdicts are {0}'s validators; `anec compile -t {0}` \
             stops after validation",
            chip.name()
        )),
    }
    r
}

/// The H13 code generator's verdicts, added to `r`.
fn h13(m: &Module, r: &mut Report, chip: Chip, route: Route, whole_module: bool) {
    r.notes.push(format!("code generation checked with anec's H13 code generator ({})", chip.name()));
    let pairs = anec_backend_h13::lower::l2_pair::plan_ops(m);
    let unplaceable: HashMap<String, String> =
        anec_backend_h13::lower::unplaceable(m, &pairs).into_iter().filter_map(named_reason).collect();
    for layer in r.layers.iter_mut().filter(|l| l.verdict == Verdict::Engine) {
        let Some(op) = layer.index.and_then(|i| m.ops.get(i)) else { continue };
        // An op that only runs as the first task of an L2 pair is not probed alone; the
        // whole-module compile below judges it with its consumer.
        let paired = op.results.iter().any(|v| pairs.kept.contains_key(v));
        let reason = match unplaceable.get(&op.name) {
            Some(reason) => Some(reason.clone()),
            None if paired => None,
            // A reshape is a view of its operand's buffer in a network, or views and
            // transposes when it moves rows; alone (input to output) it would need a
            // copy, so only its layout is judged here.
            None if op.opcode == anec_ir::OpCode::Reshape => {
                anec_backend_h13::lower::regroup::runs(m, op).err().map(reason)
            }
            None => probe(m, op).err(),
        };
        if let Some(rule) = reason {
            layer.verdict = codegen(rule);
        }
    }
    if whole_module && r.all_engine() {
        whole(m, r, chip, route);
    }
}

/// A code-generation rejection with the backend's reason.
fn codegen(rule: String) -> Verdict {
    Verdict::Rejected(Rejection { rule, feature: None, suggestion: None, stage: Stage::CodeGeneration })
}

/// The layer and reason of a backend error that names one.
fn named_reason(e: BackendError) -> Option<(String, String)> {
    match e {
        BackendError::Unsupported { layer, reason, .. } => Some((layer, reason)),
        _ => None,
    }
}

/// The backend's reason for an error: the `reason` of a per-layer error, the field of an
/// overflow, else the message.
fn reason(e: BackendError) -> String {
    match e {
        BackendError::Unsupported { reason, .. } => reason,
        BackendError::FieldOverflow { field, value, width, max, .. } => {
            format!("value {value} does not fit register field {field} ({width} bits, max {max})")
        }
        BackendError::Several(mut v) if !v.is_empty() => reason(v.remove(0)),
        other => other.to_string(),
    }
}

/// Compiles `op` alone (its operands as inputs, its results as outputs). The layer passed
/// the chip's validators in its module already; out of context (a constant operand is an
/// input here) only the verifier runs again.
/// The weights are placed, not packed (`compile_deferred`): packing decides nothing a
/// layer could be refused for.
fn probe(m: &Module, op: &Op) -> Result<(), String> {
    let v = anec_passes::validate(isolate(m, op)).map_err(|e| e.to_string())?;
    anec_backend_h13::compile_deferred(
        &v,
        &anec_backend_h13::Options { ident: String::new(), compat: Default::default() },
    )
    .map(drop)
    .map_err(reason)
}

/// Compiles the whole module; a failure goes to the layer it names, or to the report.
fn whole(m: &Module, r: &mut Report, chip: Chip, route: Route) {
    let v = match anec_passes::run(m.clone(), chip, route) {
        Ok(v) => v,
        Err(e) => return r.module_errors.push(e.to_string()),
    };
    let Err(e) = anec_backend_h13::compile_deferred(
        &v,
        &anec_backend_h13::Options { ident: String::new(), compat: Default::default() },
    ) else {
        return;
    };
    let errors = match e {
        BackendError::Several(v) => v,
        other => vec![other],
    };
    for e in errors {
        let layer = match &e {
            BackendError::Unsupported { layer, .. } => r.layers.iter_mut().find(|l| &l.name == layer),
            _ => None,
        };
        match layer {
            Some(l) => l.verdict = codegen(reason(e)),
            None => r.module_errors.push(e.to_string()),
        }
    }
}

/// A module holding `op` alone: its operands are inputs, its results outputs, and the
/// weight blobs its attributes name are copied.
fn isolate(m: &Module, op: &Op) -> Module {
    let mut sub = Module::new(m.name.clone());
    let mut map = HashMap::new();
    let mut port = |sub: &mut Module, id, name: String, input: bool| {
        let Some(ty) = m.ty(id) else { return id };
        let new = *map.entry(id).or_insert_with(|| sub.add_value(*ty));
        let p = Port { name, value: new, layout: Default::default(), loc: op.loc.clone() };
        if input {
            if !sub.inputs.iter().any(|q| q.value == new) {
                sub.inputs.push(p);
            }
        } else {
            sub.outputs.push(p);
        }
        new
    };
    let operands =
        op.operands.iter().enumerate().map(|(k, &id)| port(&mut sub, id, format!("{}@in{k}", op.name), true));
    let operands: Vec<_> = operands.collect();
    let results =
        op.results.iter().enumerate().map(|(k, &id)| port(&mut sub, id, format!("{}@out{k}", op.name), false));
    let results: Vec<_> = results.collect();
    for attr in op.attrs.values() {
        if let Attr::Resource { name, .. } = attr {
            if let Some(blob) = m.resources.get(name) {
                sub.resources.insert(name.clone(), blob.clone());
            }
        }
    }
    sub.ops.push(Op { operands, results, ..op.clone() });
    sub
}
