//! The dependency graph of the fused groups and the order they run in.
//!
//! One node per group; an edge from the group that writes a value to every group that
//! reads it (a value read twice by one group is one edge). The order is the groups'
//! order in the module, which is the source model's order: Apple's current compiler runs
//! a network's branches in the order the MIL lists them (the attention records
//! `chain_attn_*`, `env_chain_attention_*` run q, k, v as written), and so do we. The
//! graph checks that this order is a topological one (every writer before its readers)
//! and answers, per group, which groups it waits for.

use crate::fuse::Group;
use anec_ir::{Module, ValueId};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::BTreeMap;

/// Why no schedule exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A group reads a value a later group writes (a malformed module or grouping).
    #[error("layer '{reader}' reads the result of layer '{writer}', which runs after it")]
    ReadBeforeWrite {
        /// The reading group's first layer.
        reader: String,
        /// The writing group's first layer.
        writer: String,
    },
    /// The groups depend on each other in a cycle.
    #[error("the layers depend on each other in a cycle (through layer '{0}')")]
    Cycle(String),
}

/// The groups' dependency graph and the order they run in.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Node `i` is group `i`; an edge carries the value handed over.
    pub graph: DiGraph<usize, ValueId>,
    /// Group indices in the order they run.
    pub order: Vec<usize>,
    /// The position of each group in `order`.
    positions: Vec<usize>,
}

/// The group (index into `groups`) whose ops write each value.
pub fn writers(m: &Module, groups: &[Group]) -> BTreeMap<ValueId, usize> {
    let mut out = BTreeMap::new();
    for (gi, g) in groups.iter().enumerate() {
        for op in g.ops().into_iter().filter_map(|i| m.ops.get(i)) {
            out.extend(op.results.iter().map(|&r| (r, gi)));
        }
    }
    out
}

impl Schedule {
    /// The schedule of `groups` of `m`: the module's order, checked against the graph.
    pub fn of(m: &Module, groups: &[Group]) -> Result<Schedule, ScheduleError> {
        let written_by = writers(m, groups);
        let mut graph = DiGraph::with_capacity(groups.len(), groups.len());
        for gi in 0..groups.len() {
            graph.add_node(gi);
        }
        let name = |gi: usize| groups.get(gi).and_then(|g| m.ops.get(g.head)).map(|op| op.name.clone());
        for (gi, g) in groups.iter().enumerate() {
            for op in g.ops().into_iter().filter_map(|i| m.ops.get(i)) {
                for &v in &op.operands {
                    let Some(&w) = written_by.get(&v) else { continue };
                    if w == gi {
                        continue;
                    }
                    if w > gi {
                        let (reader, writer) = (name(gi).unwrap_or_default(), name(w).unwrap_or_default());
                        return Err(ScheduleError::ReadBeforeWrite { reader, writer });
                    }
                    let (a, b) = (NodeIndex::new(w), NodeIndex::new(gi));
                    if graph.find_edge(a, b).is_none() {
                        graph.add_edge(a, b, v);
                    }
                }
            }
        }
        petgraph::algo::toposort(&graph, None)
            .map_err(|c| ScheduleError::Cycle(name(c.node_id().index()).unwrap_or_default()))?;
        let order: Vec<usize> = (0..groups.len()).collect();
        let mut positions = vec![0; order.len()];
        for (at, &g) in order.iter().enumerate() {
            positions[g] = at;
        }
        Ok(Schedule { graph, order, positions })
    }

    /// The position of group `g` in the order.
    pub fn position(&self, g: usize) -> Option<usize> {
        self.positions.get(g).copied()
    }

    /// The groups `g` reads a value from, in order.
    pub fn waits_for(&self, g: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .graph
            .neighbors_directed(NodeIndex::new(g), petgraph::Direction::Incoming)
            .map(NodeIndex::index)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::plan::liveness::tests::diamond;

    #[test]
    fn a_diamond_runs_in_the_module_order_and_its_join_waits_for_both_branches() {
        let m = diamond();
        let groups = crate::fuse::groups(&m);
        let s = Schedule::of(&m, &groups).unwrap();
        assert_eq!(s.order, vec![0, 1, 2, 3]);
        assert_eq!(s.waits_for(3), vec![1, 2]);
        assert_eq!(s.waits_for(1), vec![0]);
        assert_eq!(s.graph.edge_count(), 4);
    }

    #[test]
    fn a_reader_listed_before_its_writer_is_refused_with_both_layers() {
        let mut m = diamond();
        m.ops.swap(1, 3);
        let groups = crate::fuse::groups(&m);
        let e = Schedule::of(&m, &groups).unwrap_err();
        assert_eq!(e, ScheduleError::ReadBeforeWrite { reader: "join".into(), writer: "left".into() });
    }
}
