//! Where each value's producer op was last seen: the index behind
//! [`Module::producer`](crate::module::Module::producer).
//!
//! A module's ops are public and change under any index, so an entry is only a hint: the
//! producer checks that the op it names still defines the value (a value has one producer)
//! and searches when it does not. A stale hint costs a search, never a wrong answer. When a
//! search would have to go far, every op's results are noted in one pass, so a pass asking
//! about every op costs one scan of the module instead of one per question.

use crate::module::{Op, ValueId};
use std::sync::Mutex;

/// No op noted for the value.
const NONE: u32 = u32::MAX;

/// Value index to op index, behind a lock (modules are shared between threads).
#[derive(Default)]
pub struct ProducerHints(Mutex<Vec<u32>>);

impl ProducerHints {
    /// The op index noted for value `v`.
    pub(crate) fn get(&self, v: ValueId) -> Option<usize> {
        let hints = self.0.lock().ok()?;
        hints.get(v.index()).copied().filter(|&i| i != NONE).map(|i| i as usize)
    }

    /// Notes op `i` as the producer of `v`.
    pub(crate) fn set(&self, v: ValueId, i: usize) {
        if let (Ok(mut hints), Ok(i)) = (self.0.lock(), u32::try_from(i)) {
            if hints.len() <= v.index() {
                hints.resize(v.index() + 1, NONE);
            }
            if let Some(h) = hints.get_mut(v.index()) {
                *h = i;
            }
        }
    }

    /// Notes the producer of every result of `ops`, forgetting the rest.
    pub(crate) fn rebuild(&self, ops: &[Op], values: usize) {
        let Ok(mut hints) = self.0.lock() else { return };
        hints.clear();
        hints.resize(values, NONE);
        for (i, op) in ops.iter().enumerate() {
            for r in &op.results {
                if let (Some(h), Ok(i)) = (hints.get_mut(r.index()), u32::try_from(i)) {
                    *h = i;
                }
            }
        }
    }
}

/// A copy starts with no hints.
impl Clone for ProducerHints {
    fn clone(&self) -> Self {
        ProducerHints::default()
    }
}

/// Hints are not part of what a module is.
impl PartialEq for ProducerHints {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ProducerHints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProducerHints")
    }
}

#[cfg(test)]
mod tests {
    use crate::module::{Module, Op, ValueId};
    use crate::opcode::OpCode;
    use crate::types::{DType, TensorType};

    fn op(name: &str, operands: Vec<ValueId>, results: Vec<ValueId>) -> Op {
        Op {
            opcode: OpCode::Neuron,
            name: name.into(),
            operands,
            results,
            attrs: Default::default(),
            loc: Default::default(),
        }
    }

    /// A chain of `n` ops on an input; returns the module and its values.
    fn chain(n: usize) -> (Module, Vec<ValueId>) {
        let mut m = Module::new("net");
        let ty = TensorType { n: 1, c: 1, h: 1, w: 1, d: 1, dtype: DType::F16 };
        let vals: Vec<ValueId> = (0..=n).map(|_| m.add_value(ty)).collect();
        for i in 0..n {
            m.ops.push(op(&format!("op{i}"), vec![vals[i]], vec![vals[i + 1]]));
        }
        (m, vals)
    }

    /// The producer a plain search gives.
    fn searched(m: &Module, v: ValueId) -> Option<String> {
        m.ops.iter().find(|o| o.results.contains(&v)).map(|o| o.name.clone())
    }

    #[test]
    fn producers_stay_right_as_the_ops_change_under_the_hints() {
        let (mut m, vals) = chain(100);
        let check = |m: &Module| {
            for &v in &vals {
                assert_eq!(m.producer(v).map(|o| o.name.clone()), searched(m, v), "value {v:?}");
            }
        };
        check(&m);
        // An op inserted in the middle moves every later op's index.
        let extra = m.add_value(TensorType { n: 1, c: 1, h: 1, w: 1, d: 1, dtype: DType::F16 });
        m.ops.insert(10, op("inserted", vec![vals[3]], vec![extra]));
        check(&m);
        assert_eq!(m.producer(extra).map(|o| o.name.as_str()), Some("inserted"));
        // Ops removed and one replaced in place by an op defining another value.
        m.ops.drain(20..30);
        m.ops[5] = op("replaced", vec![vals[0]], vec![extra]);
        m.ops.retain(|o| o.name != "inserted");
        check(&m);
        assert_eq!(m.producer(vals[0]), None, "the input has no producer");
        let copy = m.clone();
        check(&copy);
        assert_eq!(copy, m, "hints are not part of the module");
    }
}
