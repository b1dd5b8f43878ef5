//! Fusion: which ops run in one task with the op before them, decided by named rules.
//!
//! A group is a head op followed by ops that each read the previous op's result as their
//! only operand, where that result has no other user and is not a module output (so it
//! never needs to exist in memory). Each follower fills one stage of the group: a
//! gain/offset (the engine's affine stage), an activation (its nonlinear stage) or a
//! channel<->width swap of the result (a transposed write). A [`Rule`] says whether an op
//! joins a group and in which stage; [`group_with`] walks the module in order and asks the
//! rules, first match wins, and records which rule fused each op ([`Fused::rule_of`],
//! printed by [`describe`]).
//!
//! The rules are data. [`groups`] applies the chip-independent ones of
//! [`conv_affine`]: a convolution with the gain/offset and the activation after it, the
//! way Apple's compiler runs Conv + GOC + Neuron as one task. A backend passes its own
//! list, one rule per file (H13: `backend-h13/src/fuse/`), for what its engines run in
//! one task.

pub mod conv_affine;

use anec_ir::{Module, Op, ValueId};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub use conv_affine::{ConvActivation, ConvGainOffset};

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

/// The stage of a group an op fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The affine stage (`anec.gain_offset_control`).
    GainOffset,
    /// The nonlinear stage (`anec.neuron`).
    Activation,
    /// A channel<->width transpose of the result, written as such.
    Swap,
}

/// A fusion rule: whether `next`, reading the result of group `g` as its only operand
/// (its only user, not an output), runs in `g`'s task, and in which stage.
pub trait Rule: Sync {
    /// The rule's name (in `describe`'s listing and the docs).
    fn name(&self) -> &'static str;
    /// The stage `next` fills in `g`, or `None` when it does not join.
    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage>;
}

/// The groups of a module and the rule that put each follower in its group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fused {
    /// Groups in execution order; every op in exactly one.
    pub groups: Vec<Group>,
    /// For every op that joined a group after its head, the rule's name.
    pub rule_of: BTreeMap<usize, &'static str>,
}

/// The value `next` would take from the group: the result of its last op, when `next`
/// reads it alone and nothing else needs it.
fn handed_over(m: &Module, uses: &[u32], g: &Group, next: &Op) -> bool {
    let Some(value) = result(m, g.last()) else { return false };
    let sole_user = uses.get(value.index()) == Some(&1);
    let is_output = m.outputs.iter().any(|p| p.value == value);
    next.operands == [value] && sole_user && !is_output
}

fn result(m: &Module, i: usize) -> Option<ValueId> {
    m.ops.get(i).and_then(|op| op.results.first().copied())
}

/// Puts op `i` in stage `stage` of `g`, unless that stage is taken.
fn fill(g: &mut Group, stage: Stage, i: usize) -> bool {
    let slot = match stage {
        Stage::GainOffset => &mut g.goc,
        Stage::Activation => &mut g.neuron,
        Stage::Swap => &mut g.swap,
    };
    slot.is_none() && slot.replace(i).is_none()
}

/// Groups the ops of `m` in execution order with `rules`: each op after a group's last
/// joins it when it is handed the group's result and a rule takes it.
pub fn group_with(m: &Module, rules: &[&dyn Rule]) -> Fused {
    let mut fused = Fused::default();
    let uses = m.use_counts();
    let mut i = 0;
    while i < m.ops.len() {
        let mut g = Group { head: i, goc: None, neuron: None, swap: None };
        let mut next = i + 1;
        while let Some(op) = m.ops.get(next).filter(|op| handed_over(m, &uses, &g, op)) {
            let Some((name, stage)) = rules.iter().find_map(|r| r.joins(m, &g, op).map(|s| (r.name(), s))) else {
                break;
            };
            if !fill(&mut g, stage, next) {
                break;
            }
            fused.rule_of.insert(next, name);
            next += 1;
        }
        fused.groups.push(g);
        i = next;
    }
    fused
}

/// Groups the ops of `m` with the chip-independent rules ([`conv_affine`]).
pub fn groups(m: &Module) -> Vec<Group> {
    group_with(m, &[&ConvGainOffset, &ConvActivation]).groups
}

/// The grouping as text, one line per op in module order: a group's head at the margin, each follower
/// indented after a `+` with the rule that fused it.
pub fn describe(m: &Module, fused: &Fused) -> String {
    let mut out = String::new();
    for g in &fused.groups {
        let mut ops = g.ops();
        ops.sort_unstable();
        for i in ops {
            let Some(op) = m.ops.get(i) else { continue };
            let _ = match fused.rule_of.get(&i) {
                Some(rule) => writeln!(out, "  + {} ({}) [{rule}]", op.name, op.opcode),
                None => writeln!(out, "{} ({})", op.name, op.opcode),
            };
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use anec_ir::{Attr, DType, Location, OpCode, Port, TensorType};

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

    /// `x -> l0 -> l1 -> ...`, one op per opcode (ReLU mode), `l{output_after}` an output.
    pub(crate) fn chain(opcodes: &[OpCode], output_after: usize) -> Module {
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
