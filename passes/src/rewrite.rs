//! Rewrites that replace some ops of a module by sequences of other ops (tiling's patch
//! embeddings; H13's nearest upsampling and matmuls over heads): the walk over the module
//! and the emitter of the replacing ops, which they share.

use anec_ir::{Attr, Attrs, Module, Op, OpCode, TensorType, ValueId};

/// The anec axis names, in N, C, D, H, W order.
const AXES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

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

    /// `size` elements of `x` along `axis` (an anec axis name) from `offset`, as a value of
    /// type `ty` (`anec.input_view`, step 1).
    pub fn input_view(&mut self, x: ValueId, axis: &str, offset: u32, size: u32, ty: TensorType) -> ValueId {
        let attrs = [
            ("axis".to_string(), Attr::Str(axis.into())),
            ("offset".to_string(), Attr::Int(i64::from(offset))),
            ("size".to_string(), Attr::Int(i64::from(size))),
            ("step".to_string(), Attr::Int(1)),
        ];
        self.push(OpCode::InputView, attrs.into_iter().collect(), vec![x], ty, None)
    }

    /// `x` with its axes permuted (result axis `i` is axis `p[i]` of `x`, in N, C, D, H, W
    /// order) into a value of type `ty`, or into `out`.
    pub fn transpose(&mut self, x: ValueId, p: [usize; 5], ty: TensorType, out: Option<ValueId>) -> ValueId {
        let perm = Attr::Array(p.iter().filter_map(|&i| AXES.get(i)).map(|a| Attr::Str((*a).into())).collect());
        self.push(OpCode::Transpose, [("perm".to_string(), perm)].into_iter().collect(), vec![x], ty, out)
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
