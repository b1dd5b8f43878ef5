//! Axes moved to where the engine has a plan, before grouping (as `attention` expands
//! sdpa). The H13 runs two kinds of transpose: a copy that keeps W in place and reads
//! its operand with permuted strides, and an NE pass exchanging C and W (a transposed
//! write). Softmax, layer_norm and the reductions have plans for some axis sets only
//! (each family's `planned`). This rewrite
//! - splits every other transpose into at most three of the two kinds ([`steps`]): the
//!   axis that must end on W is first brought onto C, the pass exchanges C and W, and a
//!   last copy puts the other axes in order;
//! - runs a softmax, layer_norm or reduction whose axes have no plan between a permutation
//!   that brings them where one exists and its inverse, choosing among the orders of C, H
//!   and W the one with the fewest transpose tasks (a layer_norm over the channels of a
//!   `C x H x W` tensor: C and W exchanged, the rows normalized, exchanged back);
//! - rewrites a reshape that moves rows in memory as views and transposes (`regroup`);
//! - runs slices, concatenations, pads and broadcasts along W that the tile DMA cannot
//!   address with C and W exchanged (`width_moves`).
//!
//! A permutation that only moves axes of extent 1 is a reshape (a view, no task).
//! Apple's own plans for these axis sets (`reduction.md` §3, `normalization.md` §1)
//! transpose through L2 inside the op's tasks; these run through memory, one task per
//! transpose (docs/conformance.md lists the records).

use super::{normalization, reduction, softmax, AXES};
use anec_ir::{Attr, Attrs, Module, Op, OpCode, TensorType, ValueId};

/// A permutation of the anec axes (N, C, D, H, W): result axis `i` is operand axis `p[i]`.
pub type Perm = [usize; 5];

const ID: Perm = [0, 1, 2, 3, 4];
const C: usize = 1;
const H: usize = 3;
const W: usize = 4;
/// The NE pass's transpose: C and W exchanged.
pub(super) const SWAP: Perm = [0, W, 2, 3, C];

/// The module with its axes moved; `None` when nothing needed moving.
pub fn expand(m: &Module) -> Option<Module> {
    if !m.ops.iter().any(|op| needs_move(m, op)) {
        return None;
    }
    let mut out = Module { ops: Vec::with_capacity(m.ops.len() + 8), ..m.clone() };
    for op in &m.ops {
        if !needs_move(m, op) {
            out.ops.push(op.clone());
            continue;
        }
        match op.opcode {
            OpCode::Transpose => split_transpose(&mut out, op),
            OpCode::Reshape => super::regroup::split(&mut out, op),
            OpCode::Softmax | OpCode::LayerNorm | OpCode::Reduction => around(&mut out, op),
            _ => super::width_moves::exchanged(&mut out, op),
        }
    }
    Some(out)
}

/// The transposes that run `p` on the engine, in order (empty for the identity).
pub fn steps(p: Perm) -> Vec<Perm> {
    if p == ID || p[W] == W || p == SWAP {
        return if p == ID { vec![] } else { vec![p] };
    }
    // The operand axis that must end on W goes onto C first.
    let a = p[W];
    let mut first = ID;
    first.swap(C, a);
    // The operand axis at each position after the first copy and the pass.
    let after: Perm = SWAP.map(|i| first[i]);
    let last: Perm = p.map(|axis| after.iter().position(|&x| x == axis).unwrap_or(axis));
    [first, SWAP, last].into_iter().filter(|&q| q != ID).collect()
}

/// The inverse permutation.
fn inverse(p: Perm) -> Perm {
    let mut inv = ID;
    for (i, &a) in p.iter().enumerate() {
        inv[a] = i;
    }
    inv
}

fn dims(t: &TensorType) -> [u32; 5] {
    [t.n, t.c, t.d, t.h, t.w]
}

pub(super) fn permuted(t: &TensorType, p: Perm) -> TensorType {
    let d = dims(t);
    let [n, c, dd, h, w] = p.map(|a| d[a]);
    TensorType { n, c, d: dd, h, w, dtype: t.dtype }
}

/// Transpose tasks `p` costs on a tensor of type `t` (moves of unit axes are views).
fn cost(t: &TensorType, p: Perm) -> usize {
    let mut cur = *t;
    let mut tasks = 0;
    for q in steps(p) {
        tasks += usize::from(!only_unit_axes_move(&cur, q));
        cur = permuted(&cur, q);
    }
    tasks
}

/// True when `p` keeps the order of the axes of `t` with more than one element.
fn only_unit_axes_move(t: &TensorType, p: Perm) -> bool {
    let d = dims(t);
    let moved: Vec<usize> = p.iter().copied().filter(|&a| d[a] > 1).collect();
    moved.windows(2).all(|w| w[0] < w[1])
}

/// True when `op` is a transpose the engine cannot run in one task, a reshape that moves
/// rows (`regroup`), movement along W the tile DMA cannot address (`width_moves`), or a
/// softmax, layer_norm or reduction over axes without a plan.
fn needs_move(m: &Module, op: &Op) -> bool {
    let Some(t) = op.operands.first().and_then(|&v| m.ty(v)) else { return false };
    match op.opcode {
        OpCode::Transpose => perm(op).is_some_and(|p| steps(p).len() > 1),
        OpCode::Reshape => super::regroup::needed(m, op),
        OpCode::Softmax | OpCode::LayerNorm | OpCode::Reduction => {
            !planned(op, t, &ID) && best(op, t).is_some_and(|p| p != ID)
        }
        _ => super::width_moves::needed(m, op),
    }
}

/// True when `op` over operand type `t`, with its axes permuted by `p`, has a plan.
fn planned(op: &Op, t: &TensorType, p: &Perm) -> bool {
    let ty = permuted(t, *p);
    let inv = inverse(*p);
    let axes: Option<Vec<usize>> = axis_names(op).map(|names| {
        let mut v: Vec<usize> = names.iter().filter_map(|n| AXES.iter().position(|a| a == n)).map(|a| inv[a]).collect();
        v.sort_unstable();
        v
    });
    let Some(axes) = axes else { return false };
    match op.opcode {
        OpCode::Softmax => axes.first().is_some_and(|&a| softmax::planned(&ty, AXES[a])),
        OpCode::LayerNorm => normalization::planned(&ty, &axes),
        OpCode::Reduction => {
            let kind = op.attr("kind").and_then(Attr::as_str).unwrap_or_default();
            reduction::planned(&ty, kind, &axes)
        }
        _ => false,
    }
}

/// The cheapest order of C, H and W (N and D stay) under which `op` has a plan.
fn best(op: &Op, t: &TensorType) -> Option<Perm> {
    let orders = [[C, H, W], [C, W, H], [H, C, W], [H, W, C], [W, C, H], [W, H, C]];
    orders
        .iter()
        .map(|&[c, h, w]| [0, c, 2, h, w])
        .filter(|p| planned(op, t, p))
        .min_by_key(|&p| cost(t, p) + cost(&permuted(t, p), inverse(p)))
}

/// The op's axis names (`axis` or `axes`).
fn axis_names(op: &Op) -> Option<Vec<&str>> {
    match (op.attr("axis"), op.attr("axes")) {
        (Some(Attr::Str(a)), _) => Some(vec![a.as_str()]),
        (_, Some(Attr::Array(items))) => Some(items.iter().filter_map(Attr::as_str).collect()),
        _ => None,
    }
}

/// A transpose's permutation.
fn perm(op: &Op) -> Option<Perm> {
    let Some(Attr::Array(items)) = op.attr("perm") else { return None };
    let v: Vec<usize> =
        items.iter().filter_map(Attr::as_str).filter_map(|n| AXES.iter().position(|a| *a == n)).collect();
    v.try_into().ok()
}

/// Appends `op`'s transpose as its steps, the last one defining its result.
fn split_transpose(m: &mut Module, op: &Op) {
    let (Some(p), Some(&x), Some(&r)) = (perm(op), op.operands.first(), op.results.first()) else {
        m.ops.push(op.clone());
        return;
    };
    chain(m, op, "", x, p, Some(r));
}

/// Appends `op` run between the permutation [`best`] chooses and its inverse.
fn around(m: &mut Module, op: &Op) {
    let (Some(&x), Some(&r)) = (op.operands.first(), op.results.first()) else {
        m.ops.push(op.clone());
        return;
    };
    let (Some(&xt), Some(&rt)) = (m.ty(x), m.ty(r)) else { return };
    let Some(p) = best(op, &xt) else {
        m.ops.push(op.clone());
        return;
    };
    let inv = inverse(p);
    let moved_x = chain(m, op, "_in", x, p, None);
    let moved_r = m.add_value(permuted(&rt, p));
    let mut moved = op.clone();
    (moved.operands, moved.results) = (vec![moved_x], vec![moved_r]);
    moved.attrs = moved_axes(&op.attrs, inv);
    m.ops.push(moved);
    chain(m, op, "_out", moved_r, inv, Some(r));
}

/// `op`'s attributes with its axis names permuted (axis `a` of the operand is axis
/// `inv[a]` of the permuted tensor).
pub(super) fn moved_axes(attrs: &Attrs, inv: Perm) -> Attrs {
    let rename = |a: &Attr| match a.as_str().and_then(|n| AXES.iter().position(|x| *x == n)) {
        Some(i) => Attr::Str(AXES[inv[i]].into()),
        None => a.clone(),
    };
    attrs
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("axis", a) => rename(a),
                ("axes", Attr::Array(items)) => {
                    let mut names: Vec<Attr> = items.iter().map(rename).collect();
                    names.sort_by_key(|a| a.as_str().and_then(|n| AXES.iter().position(|x| *x == n)));
                    Attr::Array(names)
                }
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// Appends the steps of `p` applied to `x` (named after `op` and `tag`); the last step
/// defines `out` when given. Returns the permuted value.
pub(super) fn chain(m: &mut Module, op: &Op, tag: &str, x: ValueId, p: Perm, out: Option<ValueId>) -> ValueId {
    let all = steps(p);
    let mut cur = x;
    for (i, q) in all.iter().enumerate() {
        let Some(&t) = m.ty(cur) else { return cur };
        let ty = permuted(&t, *q);
        let last = i + 1 == all.len();
        let r = match (last, out) {
            (true, Some(r)) => r,
            _ => m.add_value(ty),
        };
        let (opcode, attrs) = if only_unit_axes_move(&t, *q) {
            (OpCode::Reshape, Attrs::new())
        } else {
            let names = Attr::Array(q.iter().map(|&a| Attr::Str(AXES[a].into())).collect());
            (OpCode::Transpose, [("perm".to_string(), names)].into_iter().collect())
        };
        let name = if all.len() == 1 && tag.is_empty() { op.name.clone() } else { format!("{}{tag}_{i}", op.name) };
        let step = Op { opcode, name, operands: vec![cur], results: vec![r], attrs, loc: op.loc.clone() };
        // (A move of unit axes that changes the row width moves rows: `regroup`.)
        match super::regroup::needed(m, &step) {
            true => super::regroup::split(m, &step),
            false => m.ops.push(step),
        }
        cur = r;
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `p` to a list of axis labels.
    fn apply(p: Perm, x: Perm) -> Perm {
        p.map(|i| x[i])
    }

    #[test]
    fn every_permutation_of_c_h_w_runs_as_at_most_three_engine_transposes() {
        let orders = [[C, H, W], [C, W, H], [H, C, W], [H, W, C], [W, C, H], [W, H, C]];
        for [c, h, w] in orders {
            let p = [0, c, 2, h, w];
            let s = steps(p);
            assert!(s.len() <= 3, "{p:?}: {s:?}");
            assert!(s.iter().all(|&q| q[W] == W || q == SWAP), "{p:?}: {s:?}");
            let composed = s.iter().fold(ID, |acc, &q| apply(q, acc));
            assert_eq!(composed, p, "{p:?} = {s:?}");
        }
    }

    #[test]
    fn height_width_exchange_is_a_copy_the_pass_and_a_copy() {
        let s = steps([0, 1, 2, 4, 3]);
        assert_eq!(s.len(), 3);
        assert_eq!(s[1], SWAP);
    }

    #[test]
    fn inverse_undoes() {
        let p = [0, 4, 2, 1, 3];
        assert_eq!(apply(inverse(p), apply(p, ID)), ID);
    }
}
