//! A matmul over several rows of H (the heads of a multi-head attention as coremltools
//! writes it: `[1, heads, s, dh]` x `[1, heads, dh, s]`, H the batch axis of
//! `anec.matmul`), rewritten before grouping as one matmul per head: Apple's plan runs
//! one matrix per task (`matmul-runtime.md` §6), so each head's operands are taken as
//! their own tensors (`anec.input_view` along H), multiplied, and the products
//! concatenated along H into the result. No record of Apple's shows a batched matmul;
//! the plan is anec's, checked by the simulator against the reference (the `bert_layer`
//! and `llama_layer` models of `tests/models/`).

use anec_ir::{Attr, Module, Op, OpCode, TensorType, ValueId};
use anec_passes::rewrite::{self, Emitter};

/// Whether `op` is a matmul over several heads of one batch.
fn over_heads(m: &Module, op: &Op) -> bool {
    let ty = |i: usize| op.operands.get(i).and_then(|&v| m.ty(v)).copied();
    let (Some(x), Some(y)) = (ty(0), ty(1)) else { return false };
    op.opcode == OpCode::Matmul && x.h > 1 && x.h == y.h && x.n == 1 && y.n == 1
}

/// `m` with every matmul over heads split per head, or `None` when it has none.
pub fn expand(m: &Module) -> Option<Module> {
    rewrite::each(m, "head", |m, op| over_heads(m, op).then_some(()), |e, ()| Steps(e).per_head())
}

/// The ops replacing one matmul.
struct Steps<'e, 'a>(&'e mut Emitter<'a>);

impl Steps<'_, '_> {
    fn per_head(&mut self) {
        let (Some(&r), [x, y]) = (self.0.op.results.first(), self.0.op.operands.as_slice()) else { return };
        let (Some(&rt), Some(&xt), Some(&yt)) = (self.0.m.ty(r), self.0.m.ty(*x), self.0.m.ty(*y)) else { return };
        let products: Vec<ValueId> = (0..xt.h)
            .map(|h| {
                let xh = self.head(*x, xt, h);
                let yh = self.head(*y, yt, h);
                self.0.push(OpCode::Matmul, self.0.op.attrs.clone(), vec![xh, yh], TensorType { h: 1, ..rt }, None)
            })
            .collect();
        let axis = [("axis".to_string(), Attr::Str("height".into()))].into_iter().collect();
        self.0.push(OpCode::Concat, axis, products, rt, Some(r));
    }

    /// Row `h` of `v` (of type `t`) along H, as a tensor of its own.
    fn head(&mut self, v: ValueId, t: TensorType, h: u32) -> ValueId {
        self.0.input_view(v, "height", h, 1, TensorType { h: 1, ..t })
    }
}
