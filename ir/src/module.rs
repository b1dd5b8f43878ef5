//! The module: one network as a list of ops over SSA tensor values.
//!
//! Values are indexed by [`ValueId`]; every value is defined exactly once, either as a
//! module input or as the result of an op. Ops are kept in a valid execution order
//! (definitions before uses). Weight bytes live in [`Module::resources`] and are referenced
//! from attributes by name, so the op list stays small.

use crate::attr::{Attr, Attrs};
use crate::opcode::OpCode;
use crate::types::{DType, TensorType};
use std::collections::BTreeMap;

/// Index of a value in [`Module::values`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub u32);

impl ValueId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A tensor value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The value's type.
    pub ty: TensorType,
}

/// Where an op or port came from in the source file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// Source file path as given by the user.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// 1-based column (0 when unknown).
    pub col: u32,
}

/// Memory layout of a bound tensor, in bytes, as the source description states it.
/// `None` means "the compiler's default for this shape".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Bytes between rows (H).
    pub row_stride: Option<u64>,
    /// Bytes between planes (C).
    pub plane_stride: Option<u64>,
    /// Bytes between depth slices (D).
    pub depth_stride: Option<u64>,
    /// Bytes between batches (N).
    pub batch_stride: Option<u64>,
    /// Channel interleave factor.
    pub interleave: Option<u32>,
}

/// A named module input or output.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// The name the runtime binds (`image`, `probs@output`).
    pub name: String,
    /// The value this port defines (input) or reads (output).
    pub value: ValueId,
    /// Layout stated by the source.
    pub layout: Layout,
    /// Source location of the port's declaration.
    pub loc: Location,
}

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// What the op does.
    pub opcode: OpCode,
    /// The layer name from the source (unique in a module).
    pub name: String,
    /// Input values.
    pub operands: Vec<ValueId>,
    /// Output values (defined here).
    pub results: Vec<ValueId>,
    /// Attributes, sorted by name.
    pub attrs: Attrs,
    /// Source location.
    pub loc: Location,
}

impl Op {
    /// An attribute by name.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.get(name)
    }
}

/// Constant bytes referenced by `dense_resource` attributes, little-endian, in the element
/// type of the referring attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Element type of the bytes.
    pub dtype: DType,
    /// Raw little-endian bytes: a window of the weight file (memory-mapped when large) or
    /// of a buffer the front end built; cloning a blob never copies them.
    pub bytes: crate::mil::SharedBytes,
}

/// One network.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Module {
    /// Network name (`net`).
    pub name: String,
    /// All values, indexed by [`ValueId`].
    pub values: Vec<Value>,
    /// Inputs, in the order the source lists them.
    pub inputs: Vec<Port>,
    /// Outputs, in the order the source lists them.
    pub outputs: Vec<Port>,
    /// Ops in execution order.
    pub ops: Vec<Op>,
    /// Weight blobs by name.
    pub resources: BTreeMap<String, Blob>,
    /// Where each value's producer was last seen ([`Module::producer`]; not part of the
    /// module's content: a clone starts without, and modules compare equal without).
    pub hints: crate::hints::ProducerHints,
}

/// Ops [`Module::producer`] looks back through before it notes every op's results.
const RECENT: usize = 16;

impl Module {
    /// An empty module with a name.
    pub fn new(name: impl Into<String>) -> Self {
        Module { name: name.into(), ..Module::default() }
    }

    /// Adds a value and returns its id.
    pub fn add_value(&mut self, ty: TensorType) -> ValueId {
        let id = ValueId(self.values.len() as u32);
        self.values.push(Value { ty });
        id
    }

    /// The type of a value. Ids come from this module, so indexing is in range by
    /// construction; a foreign id yields `None`.
    pub fn ty(&self, id: ValueId) -> Option<&TensorType> {
        self.values.get(id.index()).map(|v| &v.ty)
    }

    /// The op defining a value, if it is not a module input: where [`Module::hints`] last
    /// saw it when that op still defines it (a value has one producer), else among the
    /// last ops (a lowering asks about what it just emitted), else after noting every op's
    /// results once (`hints.rs`), so that a pass asking about every value stays linear.
    pub fn producer(&self, id: ValueId) -> Option<&Op> {
        let defines = |i: usize| self.ops.get(i).filter(|op| op.results.contains(&id));
        if let Some(op) = self.hints.get(id).and_then(defines) {
            return Some(op);
        }
        let n = self.ops.len();
        if let Some(i) = (n.saturating_sub(RECENT)..n).rev().find(|&i| defines(i).is_some()) {
            self.hints.set(id, i);
            return defines(i);
        }
        self.hints.rebuild(&self.ops, self.values.len());
        self.hints.get(id).and_then(defines)
    }

    /// How many times each value is read, by value index (one pass over the ops: for a
    /// pass that asks of every value, where [`Module::users`] would search each time).
    pub fn use_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.values.len()];
        for v in self.ops.iter().flat_map(|op| &op.operands) {
            if let Some(c) = counts.get_mut(v.index()) {
                *c += 1;
            }
        }
        counts
    }

    /// The ops reading a value.
    pub fn users(&self, id: ValueId) -> impl Iterator<Item = &Op> {
        self.ops.iter().filter(move |op| op.operands.contains(&id))
    }

    /// Keeps the ops for which `keep(index)` holds and renumbers the values densely (ids
    /// stay in their order); the removed ops' results must be unused.
    pub fn retain_ops(&mut self, keep: impl Fn(usize) -> bool) {
        let mut i = 0;
        self.ops.retain(|_| {
            i += 1;
            keep(i - 1)
        });
        let mut defined = vec![false; self.values.len()];
        for v in self.inputs.iter().map(|p| p.value).chain(self.ops.iter().flat_map(|op| op.results.iter().copied())) {
            if let Some(d) = defined.get_mut(v.index()) {
                *d = true;
            }
        }
        let mut new_id = vec![ValueId(0); self.values.len()];
        let mut next = 0u32;
        for (old, d) in defined.iter().enumerate() {
            if *d {
                new_id[old] = ValueId(next);
                next += 1;
            }
        }
        let old_values = std::mem::take(&mut self.values);
        self.values = old_values.into_iter().zip(&defined).filter(|(_, d)| **d).map(|(v, _)| v).collect();
        let map = |v: &mut ValueId| *v = new_id.get(v.index()).copied().unwrap_or(*v);
        self.inputs.iter_mut().chain(self.outputs.iter_mut()).for_each(|p| map(&mut p.value));
        for op in &mut self.ops {
            op.operands.iter_mut().chain(op.results.iter_mut()).for_each(map);
        }
    }
}
