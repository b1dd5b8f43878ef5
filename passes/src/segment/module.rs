//! An anec module cut so that some layers run as segments of their own: seed 003 says the
//! hidden layers a netplist author reaches (fused attention, ranking, spatial
//! rearrangement, geometry) each cut their own dispatch segment. The layers between two
//! such layers form one segment; constants belong to no segment (each segment gets a copy
//! of the ones it reads). A segment's inputs are the values it reads that the module or an
//! earlier segment defines; its outputs the values a later segment reads or the module
//! returns. Values keep their names across segments: a module port's name, else the name
//! of the op that writes it (`<op>_<k>` for its result k > 0).

use anec_ir::{Attr, Layout, Module, Op, OpCode, Port, ValueId};
use std::collections::{BTreeSet, HashMap};

/// Whether a layer runs as a dispatch segment of its own when a netplist author reaches
/// it: the hidden-layer ops of seed 002 and fused attention.
pub fn cuts_own_segment(op: &Op) -> bool {
    op.opcode == OpCode::Sdpa || anec_ir::verify::spec(op.opcode).is_some()
}

/// Cuts `m` so that every op `alone` picks is a segment by itself. Segment k is named
/// `<module>_<k>`; a module with nothing to cut comes back whole, as its one segment. A
/// value without a type (an unverified module) is an error.
pub fn cut(m: &Module, alone: impl Fn(&Op) -> bool) -> Result<Vec<Module>, String> {
    let runs = runs(m, &alone);
    if runs.len() <= 1 {
        return Ok(vec![m.clone()]);
    }
    let names = value_names(m);
    let later = later_reads(m, &runs);
    runs.iter().enumerate().map(|(k, run)| segment(m, run, &later[k], &names, format!("{}_{k}", m.name))).collect()
}

/// The non-constant ops grouped into runs: each `alone` op by itself, the others in
/// maximal runs, in module order.
fn runs(m: &Module, alone: &impl Fn(&Op) -> bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut open = false;
    for (i, op) in m.ops.iter().enumerate() {
        if op.opcode == OpCode::Constant {
            continue;
        }
        if alone(op) {
            out.push(vec![i]);
            open = false;
        } else if open {
            out.last_mut().into_iter().for_each(|r| r.push(i));
        } else {
            out.push(vec![i]);
            open = true;
        }
    }
    out
}

/// The name of every value: the module port's, else the writing op's.
fn value_names(m: &Module) -> HashMap<ValueId, String> {
    let mut names = HashMap::new();
    for op in &m.ops {
        for (k, &v) in op.results.iter().enumerate() {
            names.insert(v, if k == 0 { op.name.clone() } else { format!("{}_{k}", op.name) });
        }
    }
    for p in &m.inputs {
        names.insert(p.value, p.name.clone());
    }
    names
}

/// For each run, the values read after it: by later runs or as module outputs.
fn later_reads(m: &Module, runs: &[Vec<usize>]) -> Vec<BTreeSet<ValueId>> {
    let mut acc: BTreeSet<ValueId> = m.outputs.iter().map(|p| p.value).collect();
    let mut out = vec![BTreeSet::new(); runs.len()];
    for (k, run) in runs.iter().enumerate().rev() {
        out[k] = acc.clone();
        acc.extend(run.iter().flat_map(|&i| m.ops[i].operands.iter().copied()));
    }
    out
}

/// The module of run `run`.
fn segment(
    m: &Module,
    run: &[usize],
    later: &BTreeSet<ValueId>,
    names: &HashMap<ValueId, String>,
    name: String,
) -> Result<Module, String> {
    let mut sub = Module::new(name);
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let defined: BTreeSet<ValueId> = run.iter().flat_map(|&i| m.ops[i].results.iter().copied()).collect();
    let constants: HashMap<ValueId, usize> = m
        .ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.opcode == OpCode::Constant)
        .flat_map(|(i, op)| op.results.iter().map(move |&v| (v, i)))
        .collect();
    let mut copied = BTreeSet::new();
    for &i in run {
        for &v in &m.ops[i].operands {
            if let Some(&c) = constants.get(&v) {
                copied.insert(c);
            } else if !defined.contains(&v) && !map.contains_key(&v) {
                let new = add_value(&mut sub, m, v, &mut map)?;
                sub.inputs.push(port(m, v, new, names, true));
            }
        }
    }
    for i in copied.into_iter().chain(run.iter().copied()) {
        copy_op(&mut sub, m, &m.ops[i], &mut map)?;
    }
    for &v in run.iter().flat_map(|&i| m.ops[i].results.iter()).filter(|v| later.contains(v)) {
        let Some(&new) = map.get(&v) else { continue };
        let module_ports: Vec<&Port> = m.outputs.iter().filter(|p| p.value == v).collect();
        if module_ports.is_empty() {
            sub.outputs.push(port(m, v, new, names, false));
        }
        for p in module_ports {
            sub.outputs.push(Port { value: new, ..p.clone() });
        }
    }
    Ok(sub)
}

/// A new value of `v`'s type in `sub`.
fn add_value(sub: &mut Module, m: &Module, v: ValueId, map: &mut HashMap<ValueId, ValueId>) -> Result<ValueId, String> {
    let ty = *m.ty(v).ok_or_else(|| format!("value {} of module `{}` has no type", v.0, m.name))?;
    let new = sub.add_value(ty);
    map.insert(v, new);
    Ok(new)
}

/// The port of value `v`: the module input's own (name, layout) if it is one, else a port
/// named after the value.
fn port(m: &Module, v: ValueId, new: ValueId, names: &HashMap<ValueId, String>, input: bool) -> Port {
    if input {
        if let Some(p) = m.inputs.iter().find(|p| p.value == v) {
            return Port { value: new, ..p.clone() };
        }
    }
    let name = names.get(&v).cloned().unwrap_or_else(|| format!("v{}", v.0));
    Port { name, value: new, layout: Layout::default(), loc: Default::default() }
}

/// Copies `op` into `sub` with its operands and results renamed, and the weights its
/// attributes name.
fn copy_op(sub: &mut Module, m: &Module, op: &Op, map: &mut HashMap<ValueId, ValueId>) -> Result<(), String> {
    let operands = op.operands.iter().map(|v| map.get(v).copied().unwrap_or(*v)).collect();
    let results = op.results.iter().map(|&v| add_value(sub, m, v, map)).collect::<Result<_, _>>()?;
    for attr in op.attrs.values() {
        if let Attr::Resource { name, .. } = attr {
            if let Some(blob) = m.resources.get(name) {
                sub.resources.insert(name.clone(), blob.clone());
            }
        }
    }
    sub.ops.push(Op { operands, results, ..op.clone() });
    Ok(())
}
