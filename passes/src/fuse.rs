//! Fusion: groups a producer with the gain/offset and activation that follow it, the way
//! Apple's compiler runs Conv + GOC + Neuron as one task.
//!
//! A group is a head op (any op) followed by at most one `anec.gain_offset_control` and
//! then at most one `anec.neuron`, each reading the previous op's result as its only
//! operand, where that result has no other user and is not a module output. The order
//! matters: the engine applies the affine stage before the nonlinear stage, so a neuron
//! followed by a GOC is not fused. Whether a backend can run a given group is the
//! backend's decision; it may split a group back into single ops.

use anec_ir::{Module, OpCode, ValueId};

/// Indices into `Module::ops` of one fused group, in execution order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The op that reads the group's inputs.
    pub head: usize,
    /// A fused gain/offset, if any.
    pub goc: Option<usize>,
    /// A fused activation, if any.
    pub neuron: Option<usize>,
    /// A channel<->width transpose of the result that the head's engine applies as it
    /// writes (H13: Common.Cfg bit 28). The generic fusion never sets it; a backend
    /// that can write transposed does.
    pub swap: Option<usize>,
}

impl Group {
    /// Every op index of the group, in order.
    pub fn ops(&self) -> Vec<usize> {
        std::iter::once(self.head).chain(self.goc).chain(self.neuron).chain(self.swap).collect()
    }

    /// The op whose result the group produces: the last of its ops in the module (a
    /// backend may fuse an activation after the swap it writes through).
    pub fn last(&self) -> usize {
        self.ops().into_iter().max().unwrap_or(self.head)
    }
}

/// The op at `next` can join a group whose current result is `value`.
fn joins(m: &Module, value: ValueId, next: usize, opcode: OpCode) -> bool {
    let Some(op) = m.ops.get(next) else { return false };
    let sole_user = m.users(value).count() == 1;
    let is_output = m.outputs.iter().any(|p| p.value == value);
    op.opcode == opcode && op.operands == [value] && sole_user && !is_output
}

fn result(m: &Module, i: usize) -> Option<ValueId> {
    m.ops.get(i).and_then(|op| op.results.first().copied())
}

/// Groups the ops of `m` in execution order.
pub fn groups(m: &Module) -> Vec<Group> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < m.ops.len() {
        let mut g = Group { head: i, goc: None, neuron: None, swap: None };
        let mut next = i + 1;
        if m.ops[i].opcode == OpCode::Conv {
            if result(m, g.last()).is_some_and(|v| joins(m, v, next, OpCode::GainOffsetControl)) {
                g.goc = Some(next);
                next += 1;
            }
            if result(m, g.last()).is_some_and(|v| joins(m, v, next, OpCode::Neuron)) {
                g.neuron = Some(next);
                next += 1;
            }
        }
        out.push(g);
        i = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anec_ir::{Attr, DType, Location, Op, Port, TensorType};

    fn op(opcode: OpCode, name: &str, a: ValueId, r: ValueId) -> Op {
        Op {
            opcode,
            name: name.into(),
            operands: vec![a],
            results: vec![r],
            attrs: Default::default(),
            loc: Location::default(),
        }
    }

    fn chain(opcodes: &[OpCode], output_after: usize) -> Module {
        let mut m = Module::new("net");
        let ty = TensorType::nchw(1, 3, 1, 1, DType::F16);
        let mut v = m.add_value(ty);
        m.inputs.push(Port { name: "x".into(), value: v, layout: Default::default(), loc: Location::default() });
        for (i, &oc) in opcodes.iter().enumerate() {
            let r = m.add_value(ty);
            let mut o = op(oc, &format!("l{i}"), v, r);
            o.attrs.insert("mode".into(), Attr::Str("relu".into()));
            m.ops.push(o);
            if i == output_after {
                m.outputs.push(Port {
                    name: format!("o{i}@output"),
                    value: r,
                    layout: Default::default(),
                    loc: Location::default(),
                });
            }
            v = r;
        }
        m
    }

    #[test]
    fn conv_goc_neuron_fuse_into_one_group() {
        let m = chain(&[OpCode::Conv, OpCode::GainOffsetControl, OpCode::Neuron], 2);
        assert_eq!(groups(&m), vec![Group { head: 0, goc: Some(1), neuron: Some(2), swap: None }]);
    }

    #[test]
    fn neuron_then_goc_does_not_fuse() {
        let m = chain(&[OpCode::Conv, OpCode::Neuron, OpCode::GainOffsetControl], 2);
        let g = groups(&m);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].ops(), vec![0, 1]);
    }

    #[test]
    fn an_output_in_the_middle_stops_fusion() {
        let m = chain(&[OpCode::Conv, OpCode::Neuron], 0);
        assert_eq!(groups(&m).len(), 2);
    }
}
