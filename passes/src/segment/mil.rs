//! A MIL function cut into steps that run one after the other: engine segments (each a MIL
//! function of its own, compiled to its own program) and statements left to the CPU.
//!
//! The cut keeps source order: the statements between two CPU statements form one engine
//! segment, so every step reads only what earlier steps (or the function's inputs) wrote.
//! Constants (`const`, `constexpr_*`) belong to no step: each segment gets a copy of the
//! ones it reads, and a CPU statement records them as values. A segment's inputs are the
//! variables it reads that an earlier step or the function defines; its outputs are the
//! variables it defines that a later step reads or the function returns.

use anec_ir::mil::{Arg, Function, Ident, Param, Stmt, Type};
use std::collections::{BTreeSet, HashMap, HashSet};

/// One step of a cut function.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Statements the engine runs, as a function of their own.
    Engine(Function),
    /// One statement the CPU runs: its index in the function's body, the variables it
    /// reads (in argument order, once each) and the ones it defines.
    Cpu {
        /// Index of the statement in the body.
        stmt: usize,
        /// Variables read.
        inputs: Vec<String>,
        /// Variables defined.
        outputs: Vec<String>,
    },
}

/// Whether a statement is a constant (it belongs to no step).
pub fn is_constant(stmt: &Stmt) -> bool {
    stmt.op.name == "const" || stmt.op.name.starts_with("constexpr_")
}

/// The variables a statement reads, in argument order, once each.
pub fn reads(stmt: &Stmt) -> Vec<String> {
    fn walk(a: &Arg, out: &mut Vec<String>) {
        match a {
            Arg::Name(id) if !out.contains(&id.name) => out.push(id.name.clone()),
            Arg::Tuple(items, _) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    stmt.inputs.iter().chain(&stmt.attrs).for_each(|a| walk(&a.value, &mut out));
    out
}

/// Cuts `func` so that the statements at the indices in `cpu` run on the CPU. Segments are
/// named `<function>_<k>` (k counts the engine segments from 0). An index that is a
/// constant or out of range is an error.
pub fn cut(func: &Function, cpu: &BTreeSet<usize>) -> Result<Vec<Step>, String> {
    for &i in cpu {
        match func.body.get(i) {
            Some(s) if is_constant(s) => return Err(format!("statement {i} is a constant, not a layer")),
            Some(_) => {}
            None => return Err(format!("statement {i} is not in function `{}`", func.name)),
        }
    }
    let runs = runs(func, cpu);
    let later = later_reads(func, &runs);
    let mut steps = Vec::new();
    for (k, run) in runs.iter().enumerate() {
        match run {
            Run::Cpu(i) => {
                let stmt = &func.body[*i];
                let inputs = reads(stmt).into_iter().filter(|v| !constants(func).contains(v.as_str())).collect();
                let outputs = stmt.outputs.iter().map(|o| o.name.name.clone()).collect();
                steps.push(Step::Cpu { stmt: *i, inputs, outputs });
            }
            Run::Engine(stmts) => {
                let name = format!("{}_{}", func.name, engine_index(&runs, k));
                steps.push(Step::Engine(segment(func, stmts, &later[k], name)));
            }
        }
    }
    Ok(steps)
}

/// A maximal run of engine statements, or one CPU statement.
enum Run {
    Engine(Vec<usize>),
    Cpu(usize),
}

/// The function's non-constant statements grouped into runs, in source order.
fn runs(func: &Function, cpu: &BTreeSet<usize>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for (i, stmt) in func.body.iter().enumerate() {
        if is_constant(stmt) {
            continue;
        }
        if cpu.contains(&i) {
            out.push(Run::Cpu(i));
        } else if let Some(Run::Engine(v)) = out.last_mut() {
            v.push(i);
        } else {
            out.push(Run::Engine(vec![i]));
        }
    }
    out
}

/// How many engine runs come before run `k`.
fn engine_index(runs: &[Run], k: usize) -> usize {
    runs[..k].iter().filter(|r| matches!(r, Run::Engine(_))).count()
}

/// For each run, the variables read after it (by later runs or as function outputs).
fn later_reads(func: &Function, runs: &[Run]) -> Vec<HashSet<String>> {
    let mut acc: HashSet<String> = func.outputs.iter().map(|o| o.name.clone()).collect();
    let mut out = vec![HashSet::new(); runs.len()];
    for (k, run) in runs.iter().enumerate().rev() {
        out[k] = acc.clone();
        let stmts = match run {
            Run::Engine(v) => v.clone(),
            Run::Cpu(i) => vec![*i],
        };
        for i in stmts {
            acc.extend(reads(&func.body[i]));
        }
    }
    out
}

/// The names the function's constant statements define.
fn constants(func: &Function) -> HashSet<&str> {
    func.body.iter().filter(|s| is_constant(s)).flat_map(|s| s.outputs.iter().map(|o| o.name.name.as_str())).collect()
}

/// The engine segment of statements `stmts`: the constants it reads (and theirs), its
/// statements, its inputs and outputs.
fn segment(func: &Function, stmts: &[usize], later: &HashSet<String>, name: String) -> Function {
    let types = declared_types(func);
    let defined: HashSet<&str> =
        stmts.iter().flat_map(|&i| func.body[i].outputs.iter().map(|o| o.name.name.as_str())).collect();
    let consts = constants(func);
    let mut inputs = Vec::new();
    let mut needed_consts = HashSet::new();
    for &i in stmts {
        for v in reads(&func.body[i]) {
            if consts.contains(v.as_str()) {
                needed_consts.insert(v);
            } else if !defined.contains(v.as_str()) && !inputs.contains(&v) {
                inputs.push(v);
            }
        }
    }
    let const_stmts = constant_closure(func, needed_consts);
    let mut body: Vec<Stmt> = const_stmts.into_iter().map(|i| func.body[i].clone()).collect();
    body.extend(stmts.iter().map(|&i| func.body[i].clone()));
    let outputs = stmts
        .iter()
        .flat_map(|&i| func.body[i].outputs.iter())
        .filter(|o| later.contains(&o.name.name))
        .map(|o| Ident::new(o.name.name.clone()))
        .collect();
    let inputs = inputs
        .into_iter()
        .filter_map(|v| types.get(v.as_str()).map(|ty| Param { ty: (*ty).clone(), name: Ident::new(v) }))
        .collect();
    Function { name, opset: func.opset.clone(), inputs, attrs: Vec::new(), body, outputs, span: func.span }
}

/// The indices of the constant statements defining `names` and the constants they read,
/// in source order.
fn constant_closure(func: &Function, mut names: HashSet<String>) -> Vec<usize> {
    let mut picked = BTreeSet::new();
    for (i, stmt) in func.body.iter().enumerate().rev() {
        if is_constant(stmt) && stmt.outputs.iter().any(|o| names.contains(&o.name.name)) {
            picked.insert(i);
            names.extend(reads(stmt));
        }
    }
    picked.into_iter().collect()
}

/// The declared type of every variable: function inputs and statement results.
fn declared_types(func: &Function) -> HashMap<&str, &Type> {
    let inputs = func.inputs.iter().map(|p| (p.name.name.as_str(), &p.ty));
    let results = func.body.iter().flat_map(|s| s.outputs.iter().map(|o| (o.name.name.as_str(), &o.ty)));
    inputs.chain(results).collect()
}
