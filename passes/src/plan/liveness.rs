//! How long each value lives: from the group that writes it to the last group that reads
//! it, as positions in the [`Schedule`]'s order.
//!
//! A reshape's result may be a view of its operand's bytes (the backend decides), so a
//! value and every reshape of it count as one: the interval of their first writer runs to
//! the last reader of any of them. A module output lives to the end (the caller reads
//! it); a module input from the start. Values no group writes and no group reads
//! (constants the backend places elsewhere) have no interval.

use super::schedule::{writers, Schedule};
use crate::fuse::Group;
use anec_ir::{Module, OpCode, ValueId};
use std::collections::BTreeMap;

/// Positions in the schedule's order, both inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Interval {
    /// The position of the group that writes the value.
    pub first: usize,
    /// The position of the last group that reads it.
    pub last: usize,
}

impl Interval {
    /// Whether two values are alive at one position (they cannot share bytes).
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}

/// The interval of every value, reshapes merged with what they reshape.
#[derive(Debug, Clone, Default)]
pub struct Liveness {
    intervals: BTreeMap<ValueId, Interval>,
    /// The value whose bytes a reshape result may share (the start of its reshape chain).
    root: BTreeMap<ValueId, ValueId>,
}

impl Liveness {
    /// The lifetimes of the values of `m` grouped as `groups` and run in `schedule`'s order.
    pub fn of(m: &Module, groups: &[Group], schedule: &Schedule) -> Liveness {
        let root = reshape_roots(m);
        let key = |v: ValueId| root.get(&v).copied().unwrap_or(v);
        let pos = |g: usize| schedule.position(g).unwrap_or(g);
        let end = schedule.order.len().saturating_sub(1);
        let mut intervals: BTreeMap<ValueId, Interval> = BTreeMap::new();
        let mut touch = |v: ValueId, at: usize| {
            let i = intervals.entry(key(v)).or_insert(Interval { first: at, last: at });
            i.first = i.first.min(at);
            i.last = i.last.max(at);
        };
        for (v, g) in writers(m, groups) {
            touch(v, pos(g));
        }
        for (gi, g) in groups.iter().enumerate() {
            for op in g.ops().into_iter().filter_map(|i| m.ops.get(i)) {
                op.operands.iter().for_each(|&v| touch(v, pos(gi)));
            }
        }
        for p in &m.inputs {
            touch(p.value, 0);
        }
        for p in &m.outputs {
            touch(p.value, end);
        }
        Liveness { intervals, root }
    }

    /// The interval of `v` (that of the value it reshapes, for a reshape result).
    pub fn of_value(&self, v: ValueId) -> Option<Interval> {
        self.intervals.get(&self.root.get(&v).copied().unwrap_or(v)).copied()
    }
}

/// For every reshape result, the value at the start of its chain of reshapes.
fn reshape_roots(m: &Module) -> BTreeMap<ValueId, ValueId> {
    let mut root = BTreeMap::new();
    for op in m.ops.iter().filter(|op| op.opcode == OpCode::Reshape) {
        let (Some(&x), Some(&r)) = (op.operands.first(), op.results.first()) else { continue };
        let start = root.get(&x).copied().unwrap_or(x);
        root.insert(r, start);
    }
    root
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Attr, DType, Location, Op, Port, TensorType};

    fn port(name: &str, value: ValueId) -> Port {
        Port { name: name.into(), value, layout: Default::default(), loc: Location::default() }
    }

    fn op(m: &mut Module, name: &str, opcode: OpCode, operands: Vec<ValueId>, attrs: Vec<(&str, Attr)>) -> ValueId {
        let r = m.add_value(TensorType::nchw(1, 4, 2, 2, DType::F16));
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        m.ops.push(Op { opcode, name: name.into(), operands, results: vec![r], attrs, loc: Location::default() });
        r
    }

    fn relu() -> Vec<(&'static str, Attr)> {
        vec![("mode", Attr::Str("relu".into()))]
    }

    /// `x -> stem -> (left, right) -> join -> y`, each a neuron or an elementwise add.
    pub(crate) fn diamond() -> Module {
        let mut m = Module::new("diamond");
        let x = m.add_value(TensorType::nchw(1, 4, 2, 2, DType::F16));
        m.inputs.push(port("x", x));
        let stem = op(&mut m, "stem", OpCode::Neuron, vec![x], relu());
        let left = op(&mut m, "left", OpCode::Neuron, vec![stem], relu());
        let right = op(&mut m, "right", OpCode::Neuron, vec![stem], relu());
        let add = vec![("mode", Attr::Str("add".into()))];
        let join = op(&mut m, "join", OpCode::ScaledElementwise, vec![left, right], add);
        m.outputs.push(port("y@output", join));
        m
    }

    #[test]
    fn each_value_lives_from_its_writer_to_its_last_reader() {
        let m = diamond();
        let groups = crate::fuse::groups(&m);
        let l = Liveness::of(&m, &groups, &Schedule::of(&m, &groups).unwrap());
        let at = |i: usize| l.of_value(m.ops[i].results[0]).unwrap();
        // stem is read by left (1) and right (2); left lives until join (3).
        assert_eq!(at(0), Interval { first: 0, last: 2 });
        assert_eq!(at(1), Interval { first: 1, last: 3 });
        assert_eq!(at(2), Interval { first: 2, last: 3 });
        assert_eq!(at(3), Interval { first: 3, last: 3 });
        assert!(at(0).overlaps(&at(2)));
        assert!(!at(0).overlaps(&at(3)));
    }

    #[test]
    fn a_reshape_keeps_its_operand_alive_until_the_reshape_is_last_read() {
        let mut m = diamond();
        let stem = m.ops[0].results[0];
        let r = op(&mut m, "flat", OpCode::Reshape, vec![stem], vec![]);
        m.ops.insert(1, m.ops.last().cloned().unwrap());
        m.ops.pop();
        let last = op(&mut m, "tail", OpCode::Neuron, vec![r], relu());
        m.outputs.push(port("z@output", last));
        let groups = crate::fuse::groups(&m);
        let l = Liveness::of(&m, &groups, &Schedule::of(&m, &groups).unwrap());
        assert_eq!(l.of_value(stem), l.of_value(r));
        assert_eq!(l.of_value(stem).unwrap().last, groups.len() - 1);
    }
}
