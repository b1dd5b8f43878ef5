//! A reshape that moves rows in memory, rewritten before grouping as views and engine
//! transposes (as `axis_moves` splits transposes). A tensor's rows start on 64-byte units,
//! so a reshape that changes the row width of rows that are not whole units moves every
//! row; no task copies a row to an address inside a unit (the tile DMA reads and writes
//! from 64-byte units). The rewrite passes through the **column** form `[E, 1, 1]` (one
//! element per channel, every element on a unit of its own), which views of any grouping
//! of rows of one element reach:
//!
//! 1. `x` (`N x C x H x W`) to the column: with `W = 1` a view; with rows of whole units
//!    a view as one row `[1, 1, E]` and the NE's C <-> W pass; otherwise the rows of all
//!    batches and channels viewed as one channel (`1 x R x W`, `R = NCH`), the C <-> W
//!    pass (`W x R x 1`: each element a row of its own), a copy exchanging C and H
//!    (`R x W x 1`), and a view;
//! 2. the column to the result (`C' x H' x W'`): the same steps in reverse.
//!
//! At most four tasks, each of a kind the engine runs (`movement`): the C <-> W pass and
//! the copy that keeps W in place; the values in between take 64 bytes per element (32
//! times the tensor in fp16), split into bands beyond the L2 like any copy. No program of
//! Apple's shows this case (neither corpus compiles a reshape that moves rows), so this is
//! our plan, checked by the simulator against the reference (`reshape` property family).

use anec_ir::{Attr, Attrs, Module, Op, OpCode, TensorType, ValueId};

/// The NE pass's transpose (C and W exchanged), and the copy exchanging C and H.
const SWAP_C_W: [&str; 5] = ["batch", "width", "depth", "height", "channel"];
const SWAP_C_H: [&str; 5] = ["batch", "height", "depth", "channel", "width"];

/// True when `op` is a reshape of one depth slice that is not a view of its operand in
/// the default layout (nor the one-task vector swap).
pub fn needed(m: &Module, op: &Op) -> bool {
    let (Some(x), Some(r)) = (operand_type(m, op), result_type(m, op)) else { return false };
    op.opcode == OpCode::Reshape
        && x.d == 1
        && r.d == 1
        && x.dtype == r.dtype
        && !crate::buffers::reshape_is_swap(&x, &r)
        && crate::buffers::reshape_is_view(m, op).is_err()
}

/// What `anec check` reports for a reshape, judged with both sides in the default layout:
/// `Ok` when it is a view or runs as this rewrite, else why not.
pub fn runs(m: &Module, op: &Op) -> Result<(), crate::error::BackendError> {
    match crate::buffers::reshape_is_view(m, op) {
        Err(_) if needed(m, op) => Ok(()),
        other => other,
    }
}

/// Appends `op` as views and transposes through the column form.
pub fn split(m: &mut Module, op: &Op) {
    let (Some(x), Some(r), Some(&xv), Some(&rv)) =
        (operand_type(m, op), result_type(m, op), op.operands.first(), op.results.first())
    else {
        m.ops.push(op.clone());
        return;
    };
    let mut b = Steps { m, op, n: 0 };
    let column = b.flatten(xv, &x);
    b.unflatten(column, &r, rv);
}

fn operand_type(m: &Module, op: &Op) -> Option<TensorType> {
    op.operands.first().and_then(|&v| m.ty(v)).copied()
}

fn result_type(m: &Module, op: &Op) -> Option<TensorType> {
    op.results.first().and_then(|&v| m.ty(v)).copied()
}

/// Rows of `t` are whole 64-byte units (a view may regroup them).
fn dense_rows(t: &TensorType) -> bool {
    (u64::from(t.w) * t.dtype.size() as u64).is_multiple_of(64)
}

fn shaped(t: &TensorType, c: u32, h: u32, w: u32) -> TensorType {
    TensorType { n: 1, c, d: 1, h, w, dtype: t.dtype }
}

fn elements(t: &TensorType) -> u32 {
    rows(t) * t.w
}

/// The rows of all batches and channels of `t`, one after the other in memory.
fn rows(t: &TensorType) -> u32 {
    t.n * t.c * t.h
}

/// The ops appended for one reshape, named after it.
struct Steps<'a> {
    m: &'a mut Module,
    op: &'a Op,
    n: usize,
}

impl Steps<'_> {
    /// `x` of type `t` as the column `[E, 1, 1]`.
    fn flatten(&mut self, x: ValueId, t: &TensorType) -> ValueId {
        let column = shaped(t, elements(t), 1, 1);
        if t.w == 1 {
            return self.reshape(x, column, None);
        }
        if dense_rows(t) {
            let row = self.reshape(x, shaped(t, 1, 1, elements(t)), None);
            return self.reshape(row, column, None);
        }
        let all = self.reshape(x, shaped(t, 1, rows(t), t.w), None);
        let swapped = self.transpose(all, SWAP_C_W, shaped(t, t.w, rows(t), 1), None);
        let ordered = self.transpose(swapped, SWAP_C_H, shaped(t, rows(t), t.w, 1), None);
        self.reshape(ordered, column, None)
    }

    /// The column `col` as `r` of type `t`.
    fn unflatten(&mut self, col: ValueId, t: &TensorType, r: ValueId) {
        if t.w == 1 {
            self.reshape(col, *t, Some(r));
            return;
        }
        if dense_rows(t) {
            let row = self.reshape(col, shaped(t, 1, 1, elements(t)), None);
            self.reshape(row, *t, Some(r));
            return;
        }
        let grouped = self.reshape(col, shaped(t, rows(t), t.w, 1), None);
        let swapped = self.transpose(grouped, SWAP_C_H, shaped(t, t.w, rows(t), 1), None);
        let all = self.transpose(swapped, SWAP_C_W, shaped(t, 1, rows(t), t.w), None);
        self.reshape(all, *t, Some(r));
    }

    fn reshape(&mut self, x: ValueId, ty: TensorType, out: Option<ValueId>) -> ValueId {
        self.push(OpCode::Reshape, Attrs::new(), x, ty, out)
    }

    fn transpose(&mut self, x: ValueId, perm: [&str; 5], ty: TensorType, out: Option<ValueId>) -> ValueId {
        let names = Attr::Array(perm.iter().map(|&a| Attr::Str(a.into())).collect());
        self.push(OpCode::Transpose, [("perm".to_string(), names)].into_iter().collect(), x, ty, out)
    }

    /// Appends one op from `x` to a new value of type `ty` (or to `out`).
    fn push(&mut self, opcode: OpCode, attrs: Attrs, x: ValueId, ty: TensorType, out: Option<ValueId>) -> ValueId {
        let r = out.unwrap_or_else(|| self.m.add_value(ty));
        let name = format!("{}_regroup_{}", self.op.name, self.n);
        self.n += 1;
        self.m.ops.push(Op { opcode, name, operands: vec![x], results: vec![r], attrs, loc: self.op.loc.clone() });
        r
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{DType, Location, Port};

    /// `x -> reshape -> y`.
    fn reshape(from: TensorType, to: TensorType) -> Module {
        let mut m = Module::new("net");
        let x = m.add_value(from);
        let y = m.add_value(to);
        m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: Location::default() });
        let op = Op {
            opcode: OpCode::Reshape,
            name: "r".into(),
            operands: vec![x],
            results: vec![y],
            attrs: Attrs::new(),
            loc: Location::default(),
        };
        m.ops.push(op);
        m.outputs.push(Port { name: "y".into(), value: y, layout: Default::default(), loc: Location::default() });
        m
    }

    fn f16(c: u32, h: u32, w: u32) -> TensorType {
        TensorType::nchw(1, c, h, w, DType::F16)
    }

    /// The rewritten ops: opcodes, and every reshape a view or the one-task vector swap.
    fn rewritten(m: &Module) -> Vec<OpCode> {
        let out = crate::lower::axis_moves::expand(m).unwrap();
        for op in out.ops.iter().filter(|op| op.opcode == OpCode::Reshape) {
            let (x, r) = (out.ty(op.operands[0]).unwrap(), out.ty(op.results[0]).unwrap());
            let swap = crate::buffers::reshape_is_swap(x, r);
            assert!(swap || crate::buffers::reshape_is_view(&out, op).is_ok(), "{x} -> {r}");
        }
        let last = out.ops.last().unwrap();
        assert_eq!(last.results, m.ops[0].results, "the last step defines the result");
        out.ops.iter().map(|op| op.opcode).collect()
    }

    #[test]
    fn padded_rows_to_padded_rows_pass_through_the_column_in_four_transposes() {
        let m = reshape(f16(4, 3, 5), f16(6, 5, 2));
        assert!(needed(&m, &m.ops[0]));
        let ops = rewritten(&m);
        assert_eq!(ops.iter().filter(|&&o| o == OpCode::Transpose).count(), 4, "{ops:?}");
    }

    #[test]
    fn dense_rows_take_the_vector_swap_and_vectors_take_views() {
        // 32 fp16 = one 64-byte unit per row, to rows of 3.
        let ops = rewritten(&reshape(f16(3, 1, 32), f16(1, 32, 3)));
        assert_eq!(ops.iter().filter(|&&o| o == OpCode::Transpose).count(), 2, "{ops:?}");
        // A column to rows of 3: two transposes.
        let ops = rewritten(&reshape(f16(12, 1, 1), f16(1, 4, 3)));
        assert_eq!(ops.iter().filter(|&&o| o == OpCode::Transpose).count(), 2, "{ops:?}");
    }

    #[test]
    fn views_are_left_alone_and_batches_regroup_too() {
        let m = reshape(f16(4, 2, 32), f16(1, 8, 32));
        assert!(!needed(&m, &m.ops[0]));
        let batch = reshape(TensorType::nchw(2, 3, 1, 5, DType::F16), TensorType::nchw(2, 1, 3, 5, DType::F16));
        assert!(!needed(&batch, &batch.ops[0]), "rows of all batches stay in order: a view");
        let into_batches = reshape(f16(4, 3, 32), TensorType::nchw(4, 3, 32, 1, DType::F16));
        assert!(needed(&into_batches, &into_batches.ops[0]));
        rewritten(&into_batches);
    }
}
