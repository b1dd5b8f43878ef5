//! Malformed programs give errors, never panics: every attribute of every op of the
//! lowered MNIST module removed in turn, every resource truncated, every argument of every
//! MIL statement removed or pointed at the wrong variable.

use crate::common::*;
use anec_ir::mil::{Arg, Ident, MilModel};
use anec_tools::reference::{mil_to_program, run_mil, run_module};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn mnist() -> MilModel {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil");
    anec_front::load_mil(&path).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn broken_modules_are_errors() {
    let m = mnist();
    let module = lower(&m);
    let ins: BTreeMap<_, _> =
        inputs(&m, 0.0, 1.0, 1).into_iter().map(|(k, t)| (k, mil_to_program(&t).expect("layout"))).collect();
    assert!(run_module(&module, &ins).is_ok());
    let mut failures = 0;
    for (i, op) in module.ops.iter().enumerate() {
        for key in op.attrs.keys() {
            let mut broken = module.clone();
            broken.ops[i].attrs.remove(key);
            failures += usize::from(run_module(&broken, &ins).is_err());
        }
    }
    for key in module.resources.keys() {
        let mut broken = module.clone();
        if let Some(b) = broken.resources.get_mut(key) {
            b.bytes = b.bytes[..b.bytes.len() / 2].to_vec().into();
        }
        assert!(run_module(&broken, &ins).is_err(), "truncated `{key}` was accepted");
    }
    let mut reordered = module.clone();
    reordered.ops.reverse();
    assert!(run_module(&reordered, &ins).is_err());
    assert!(failures > 0);
}

#[test]
fn broken_mil_statements_are_errors() {
    let m = mnist();
    let ins = inputs(&m, 0.0, 1.0, 1);
    assert!(run_mil(&m, "main", &ins).is_ok());
    let body_len = m.program.functions[0].body.len();
    for s in 0..body_len {
        let n_args = m.program.functions[0].body[s].inputs.len();
        for a in 0..n_args {
            let mut broken = m.clone();
            let removed = broken.program.functions[0].body[s].inputs.remove(a);
            let result = run_mil(&broken, "main", &ins);
            // Optional inputs (dilations, groups, ...) have defaults; these do not.
            if ["x", "y", "weight", "shape", "kernel_sizes"].contains(&removed.name.name.as_str()) {
                assert!(result.is_err(), "statement {s} without `{}` was accepted", removed.name.name);
            }
            let mut wrong = m.clone();
            wrong.program.functions[0].body[s].inputs[a].value = Arg::Name(Ident::new("Input3"));
            let _ = run_mil(&wrong, "main", &ins);
        }
    }
    let mut truncated = m.clone();
    truncated.program.functions[0].body.truncate(3);
    let e = run_mil(&truncated, "main", &ins).unwrap_err().to_string();
    assert!(e.contains("output `Plus214_Output_0` is not defined"), "{e}");
}
