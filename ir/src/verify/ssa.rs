//! Module-wide structure: SSA definitions and uses, and name uniqueness.
//!
//! Every value is defined exactly once, by a module input or by one op result; ops read
//! only values defined by an input or an earlier op; outputs read defined values. Op names
//! are unique in the module, port names unique among the inputs and among the outputs.

use super::VerifyError;
use crate::module::{Module, Port, ValueId};
use std::collections::BTreeMap;

/// Runs the structural checks.
pub(super) fn check(m: &Module, errs: &mut Vec<VerifyError>) {
    let definers = definitions(m, errs);
    check_uses(m, &definers, errs);
    check_outputs(m, &definers, errs);
    check_op_names(m, errs);
    check_port_names(&m.inputs, "input", errs);
    check_port_names(&m.outputs, "output", errs);
    check_value_shapes(m, errs);
}

/// Who defines a value.
#[derive(Clone, Copy, PartialEq)]
enum Def {
    /// Not defined.
    None,
    /// Module input number i.
    Input(usize),
    /// Result of op number i.
    Op(usize),
}

/// An error about a port.
fn port_error(port: &Port, kind: &str, message: String) -> VerifyError {
    VerifyError { subject: format!("{kind} '{}'", port.name), loc: port.loc.clone(), message, op: None }
}

/// Records every definition, reporting out-of-range ids, double definitions and values
/// nobody defines.
fn definitions(m: &Module, errs: &mut Vec<VerifyError>) -> Vec<Def> {
    let mut defs = vec![Def::None; m.values.len()];
    for (i, port) in m.inputs.iter().enumerate() {
        if let Some(msg) = define(&mut defs, port.value, Def::Input(i)) {
            errs.push(port_error(port, "input", msg));
        }
    }
    for (i, op) in m.ops.iter().enumerate() {
        for &id in &op.results {
            if let Some(msg) = define(&mut defs, id, Def::Op(i)) {
                errs.push(VerifyError::for_op(i, op, format!("result {msg}")));
            }
        }
    }
    for (i, d) in defs.iter().enumerate() {
        if *d == Def::None {
            errs.push(VerifyError::for_module(m, format!("value %{i} is never defined")));
        }
    }
    defs
}

/// Marks `id` as defined by `by`; returns a message if that is not allowed.
fn define(defs: &mut [Def], id: ValueId, by: Def) -> Option<String> {
    let Some(slot) = defs.get_mut(id.index()) else {
        return Some(format!("%{} is out of range ({} values)", id.0, defs.len()));
    };
    if *slot != Def::None {
        return Some(format!("%{} is already defined by {}", id.0, def_name(*slot)));
    }
    *slot = by;
    None
}

/// `input #0` / `op #3`.
fn def_name(d: Def) -> String {
    match d {
        Def::None => "nothing".to_string(),
        Def::Input(i) => format!("input #{i}"),
        Def::Op(i) => format!("op #{i}"),
    }
}

/// Checks each operand is defined by an input or an earlier op.
fn check_uses(m: &Module, defs: &[Def], errs: &mut Vec<VerifyError>) {
    for (i, op) in m.ops.iter().enumerate() {
        for (k, &id) in op.operands.iter().enumerate() {
            let problem = match defs.get(id.index()) {
                None => Some(format!("is out of range ({} values)", defs.len())),
                Some(Def::None) => Some("is never defined".to_string()),
                Some(Def::Op(j)) if *j >= i => Some(format!("is used before its definition by op #{j}")),
                Some(_) => None,
            };
            if let Some(p) = problem {
                errs.push(VerifyError::for_op(i, op, format!("operand {k} (%{}) {p}", id.0)));
            }
        }
    }
}

/// Checks each output reads a defined value.
fn check_outputs(m: &Module, defs: &[Def], errs: &mut Vec<VerifyError>) {
    for port in &m.outputs {
        let problem = match defs.get(port.value.index()) {
            None => Some(format!("is out of range ({} values)", defs.len())),
            Some(Def::None) => Some("is never defined".to_string()),
            Some(_) => None,
        };
        if let Some(p) = problem {
            errs.push(port_error(port, "output", format!("value %{} {p}", port.value.0)));
        }
    }
}

/// Checks op names are non-empty and unique.
fn check_op_names(m: &Module, errs: &mut Vec<VerifyError>) {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, op) in m.ops.iter().enumerate() {
        if op.name.is_empty() {
            errs.push(VerifyError::for_op(i, op, "op has an empty name"));
        } else if let Some(first) = seen.get(op.name.as_str()) {
            let msg = format!("name is also used by op #{first}");
            errs.push(VerifyError::for_op(i, op, msg));
        } else {
            seen.insert(&op.name, i);
        }
    }
}

/// Checks port names are non-empty and unique within one list.
fn check_port_names(ports: &[Port], kind: &str, errs: &mut Vec<VerifyError>) {
    for (i, port) in ports.iter().enumerate() {
        if port.name.is_empty() {
            errs.push(port_error(port, kind, format!("{kind} #{i} has an empty name")));
        } else if ports[..i].iter().any(|p| p.name == port.name) {
            errs.push(port_error(port, kind, format!("name is used by two {kind}s")));
        }
    }
}

/// Checks every value has all dimensions at least 1.
fn check_value_shapes(m: &Module, errs: &mut Vec<VerifyError>) {
    for (i, v) in m.values.iter().enumerate() {
        if v.ty.elements() == 0 {
            let msg = format!("value %{i} has a zero dimension: {}", v.ty);
            errs.push(VerifyError::for_module(m, msg));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::Attr;
    use crate::module::ValueId;
    use crate::opcode::OpCode;
    use crate::testutil::*;

    #[test]
    fn accepts_chain() {
        let mut m = sample(OpCode::Conv);
        let r = m.ops[0].results[0];
        let attrs = vec![("mode", s("relu"))];
        let r2 = add_op(&mut m, OpCode::Neuron, "act", &[r], &[f16(1, 4, 8, 8)], attrs);
        m.outputs[0].value = r2[0];
        assert_valid(&m);
    }

    #[test]
    fn rejects_double_definition_and_undefined_value() {
        let mut m = sample(OpCode::Neuron);
        let x = m.inputs[0].value;
        op0(&mut m).results = vec![x];
        assert_rejects(&m, "anec.neuron 'layer' at net.plist:10:7: result %0 is already defined by input #0");
        assert_rejects(&m, "module 'net' at <unknown location>: value %1 is never defined");
    }

    #[test]
    fn rejects_use_before_definition_and_out_of_range() {
        let mut m = sample(OpCode::Neuron);
        let r = m.ops[0].results[0];
        op0(&mut m).operands = vec![r];
        assert_rejects(&m, "operand 0 (%1) is used before its definition by op #0");
        op0(&mut m).operands = vec![ValueId(99)];
        assert_rejects(&m, "operand 0 (%99) is out of range (2 values)");
    }

    #[test]
    fn rejects_bad_output_and_duplicate_names() {
        let mut m = sample(OpCode::Neuron);
        m.outputs[0].value = ValueId(5);
        assert_rejects(&m, "output 'out0@output' at net.plist:90:7: value %5 is out of range");
        let mut m = sample(OpCode::Neuron);
        let r = m.ops[0].results[0];
        let attrs = vec![("mode", s("relu"))];
        add_op(&mut m, OpCode::Neuron, "layer", &[r], &[f16(1, 4, 8, 8)], attrs);
        assert_rejects(&m, "name is also used by op #0");
        let dup = m.inputs[0].clone();
        m.inputs.push(dup);
        assert_rejects(&m, "input 'in0' at net.plist:1:7: name is used by two inputs");
    }

    #[test]
    fn rejects_reserved_name_attribute() {
        let mut m = sample(OpCode::Neuron);
        op0(&mut m).attrs.insert("name".into(), Attr::Str("x".into()));
        assert_rejects(&m, "attribute `name` is reserved for the op name");
    }

    #[test]
    fn collects_every_error() {
        let mut m = sample(OpCode::Conv);
        op0(&mut m).attrs.clear();
        let errs = crate::verify::verify_module(&m).err().unwrap_or_default();
        assert_eq!(errs.len(), 6, "{errs:#?}");
        assert!(errs.iter().all(|e| e.op == Some(0)));
    }
}
