//! Rewrites that replace some ops of a module by sequences of other ops (tiling's patch
//! embeddings; H13's nearest upsampling and matmuls over heads): the walk over the module
//! and the emitter of the replacing ops, which they share.

use anec_ir::{Attrs, Module, Op, OpCode, TensorType, ValueId};

/// Emits the ops replacing one op.
pub struct Emitter<'a> {
    /// The module being built (every op before the replaced one is in it).
    pub m: &'a mut Module,
    /// The op being replaced.
    pub op: &'a Op,
    tag: &'static str,
    n: usize,
}

impl Emitter<'_> {
    /// Appends one op reading `xs` to a new value of type `ty` (or to `out`), named
    /// `<replaced op>_<tag>_<n>`, at the replaced op's location.
    pub fn push(
        &mut self,
        opcode: OpCode,
        attrs: Attrs,
        xs: Vec<ValueId>,
        ty: TensorType,
        out: Option<ValueId>,
    ) -> ValueId {
        let r = out.unwrap_or_else(|| self.m.add_value(ty));
        let name = format!("{}_{}_{}", self.op.name, self.tag, self.n);
        self.n += 1;
        self.m.ops.push(Op { opcode, name, operands: xs, results: vec![r], attrs, loc: self.op.loc.clone() });
        r
    }
}

/// `m` with every op that `plan` gives a plan for replaced by what `emit` writes for it
/// (ops named after it with `tag`), or `None` when `plan` picks no op.
pub fn each<P>(
    m: &Module,
    tag: &'static str,
    plan: impl Fn(&Module, &Op) -> Option<P>,
    mut emit: impl FnMut(&mut Emitter<'_>, P),
) -> Option<Module> {
    if !m.ops.iter().any(|op| plan(m, op).is_some()) {
        return None;
    }
    let mut out = Module { ops: Vec::with_capacity(m.ops.len() + 8), ..m.clone() };
    for op in &m.ops {
        match plan(m, op) {
            Some(p) => emit(&mut Emitter { m: &mut out, op, tag, n: 0 }, p),
            None => out.ops.push(op.clone()),
        }
    }
    Some(out)
}
