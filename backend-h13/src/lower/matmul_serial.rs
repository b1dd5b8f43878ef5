//! A constant-weight matmul's product with two readers, the next matmul and a
//! planar-engine elementwise op (Apple's `chain_serial_d256_s64`: `m2 = x·W1ᵀ`,
//! `m4 = m2·W3ᵀ`, `add(m2, m4)`; `docs/rationale/current-compiler/chains.md` §1.4, §2.3).
//! The MIL lowering leaves the first product `p` (`N` channels of `M`) read by the second
//! convolution directly and by a channel<->width swap into rows for the add. Apple keeps
//! it as the rows the add reads and transposes it again in L2 for the second matmul:
//!
//! 1. **P**, as for one matmul (token), x^T placed after the rows (below);
//! 2. **C1** keeps `p` written transposed: `M` product rows of `2N` bytes (one granule
//!    more from 0x40, as a convolution reader's channels, `matmul::region`) at L2 0;
//! 3. **P2**, a preparation task from L2 (no token): the rows transposed back into x^T
//!    of the second matmul, where the first x^T was (dead);
//! 4. **C2** reads it and keeps its product rows right after it;
//! 5. the **elementwise op** reads both sets of rows in place, each as one channel of
//!    `M` rows, and writes memory.
//!
//! `plan` finds the pattern, `rows_below` places the first matmul's block, `second`
//! builds P2 and C2, `elementwise` the last task.

use super::conv;
use super::l2_chain::{link, read_in_place, scratch, standard, L2_BYTES};
use super::matmul_fold::DIRECT_PRODUCT_MAX;
use super::matmul_source::sole;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::L2Region;
use crate::task::{Engine, L2Form, L2Operand, L2Vector, Nonlinear, SourceResidency, Task};
use anec_ir::{Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;
use std::collections::BTreeMap;

/// The values kept in L2 when the compute group `c` (after P) is the first of two
/// matmuls whose first product the next matmul and an elementwise op read: the product,
/// its rows (the swap's result and its views), the second product's rows (the second
/// compute's swap and its views). `xt` is the first matmul's x^T region (at 0), `x` its
/// source's bytes.
pub(super) fn plan(m: &Module, groups: &[Group], c: usize, xt: &L2Region, x: u64) -> Option<Vec<ValueId>> {
    let cg = groups.get(c)?;
    let p = *m.ops.get(cg.last())?.results.first()?;
    let product = *m.ty(p)?;
    if cg.swap.is_some() || m.ops.get(cg.head)?.opcode != OpCode::Conv || m.outputs.iter().any(|o| o.value == p) {
        return None;
    }
    let users: Vec<&Op> = m.users(p).collect();
    let [swap, conv] = users.as_slice() else { return None };
    let (swap, conv) = if swap.opcode == OpCode::Conv { (*conv, *swap) } else { (*swap, *conv) };
    // The groups after C1: the swap and its views, the second compute and its views, the
    // elementwise op, in this order.
    let (rows, next) = views_from(m, groups, c + 1, swap)?;
    let same = |a: &Op, b: &Op| a.results.first() == b.results.first();
    let g2 = groups.get(next).filter(|g| g.swap.is_some() && m.ops.get(g.head).is_some_and(|h| same(h, conv)))?;
    let pointwise = conv.operands.first() == Some(&p) && super::matmul::pointwise(conv);
    let swap_ok = super::movement::is_channel_width_swap(m, swap) && groups.get(c + 1).is_some_and(lone_of(m, swap));
    let first = m.ops.get(g2.head)?;
    let (second, at) = views_from(m, groups, next, m.ops.get(g2.last())?)?;
    let ew = m.ops.get(groups.get(at)?.head)?;
    let (a, b) = (*rows.last()?, *second.last()?);
    let pair = ew.opcode == OpCode::ScaledElementwise
        && (ew.operands == [a, b] || ew.operands == [b, a])
        && m.ty(a) == m.ty(b)
        && m.ty(a) == ew.results.first().and_then(|&r| m.ty(r));
    let n2 = m.ty(*first.results.first()?)?.c;
    let r2 = rows_region(&product, product.c, 0);
    let xt2 = super::matmul::region(&product);
    let r4 = rows_region(&product, n2, r2.end() + xt2.size);
    let fits = r2.size + (xt.size + x).max(xt2.size + 2 * r4.size) <= L2_BYTES;
    // Larger products take the folded plans (`matmul::fold`).
    let small = [product.c, n2].iter().all(|&n| u64::from(n) * u64::from(product.w) * 2 <= DIRECT_PRODUCT_MAX);
    (pointwise && swap_ok && pair && fits && small).then(|| [vec![p], rows, second].concat())
}

/// True for the group of `op` alone.
fn lone_of<'a>(m: &'a Module, op: &'a Op) -> impl Fn(&Group) -> bool + 'a {
    move |g| super::matmul_source::lone(g) && m.ops.get(g.head).is_some_and(|h| h.results.first() == op.results.first())
}

/// The result of group `i` (its last op must be `op`) and of the lone view reshapes in
/// the groups after it, each the only reader of the value before; the index of the group
/// after them.
fn views_from(m: &Module, groups: &[Group], i: usize, op: &Op) -> Option<(Vec<ValueId>, usize)> {
    let mut v = *op.results.first()?;
    let last = m.ops.get(groups.get(i)?.last())?;
    if last.results.first() != Some(&v) {
        return None;
    }
    let (mut out, mut at) = (vec![v], i + 1);
    while let Some(r) = groups.get(at).and_then(|g| m.ops.get(g.head)) {
        if r.opcode != OpCode::Reshape || r.operands != [v] {
            break;
        }
        if !sole(m, v) || super::movement::is_channel_width_swap(m, r) {
            return None;
        }
        v = *r.results.first()?;
        out.push(v);
        at += 1;
    }
    sole(m, v).then_some((out, at))
}

/// The rows of a product of `n` columns over the `M = ty.w` rows of `ty`, at `base`: one
/// channel of `2n` bytes per row (a granule more from 0x40, as x^T's channels for a
/// convolution reader), all rows in one L2 row.
fn rows_region(ty: &TensorType, n: u32, base: u64) -> L2Region {
    L2Region { base, ..super::matmul::region(&TensorType { c: ty.w, h: 1, w: n, ..*ty }) }
}

/// True when `p`, a compute group's result, is the first product of a serial pair: kept,
/// with two readers, the next matmul among them.
pub(super) fn keeps_rows(m: &Module, p: ValueId, kept: &BTreeMap<ValueId, L2Form>) -> bool {
    kept.contains_key(&p) && m.users(p).count() == 2 && m.users(p).any(|u| u.opcode == OpCode::Conv)
}

/// The rows the first compute keeps below the first matmul's block, when P's x^T feeds
/// the first matmul of a serial pair.
pub(super) fn rows_below(m: &Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>) -> Option<L2Region> {
    let xt = *prep.results.first()?;
    let mut c1 = m.users(xt).next().filter(|u| u.opcode == OpCode::Conv)?;
    while let Some(next) = single_fused(m, c1) {
        c1 = next;
    }
    let p = *c1.results.first()?;
    keeps_rows(m, p, kept).then_some(())?;
    let ty = m.ty(p)?;
    Some(rows_region(ty, ty.c, 0))
}

/// The gain/offset or ReLU fused after `op` in its group, if its only reader is one.
fn single_fused<'m>(m: &'m Module, op: &Op) -> Option<&'m Op> {
    let r = *op.results.first()?;
    let u = m.users(r).next().filter(|u| matches!(u.opcode, OpCode::GainOffsetControl | OpCode::Neuron))?;
    (m.users(r).count() == 1).then_some(u)
}

/// The first product's rows (C1's kept result) of type `p_ty`.
pub(super) fn first_rows(p_ty: &TensorType) -> L2Region {
    rows_region(p_ty, p_ty.c, 0)
}

/// Steps P2 and C2 of the convolution group `g` reading the first product `p` (C1 kept
/// its rows at 0): P2 transposes the rows into x^T after them, C2 keeps its product rows
/// after that.
pub(super) fn second(
    m: &Module,
    g: &Group,
    p: ValueId,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    let (conv_op, goc) = super::matmul::conv_and_goc(m, g)?;
    let ty = *m.ty(p).ok_or_else(|| BackendError::Internal(format!("no type of '{}'", conv_op.name)))?;
    let rows = first_rows(&ty);
    let mut xt = super::matmul::region(&ty);
    xt.base = rows.end();
    let x = scratch(&TensorType { c: ty.w, w: ty.c, ..ty });
    let mut prep = Task::new(&conv_op.name, Engine::NePass, vec![x], x);
    read_in_place(&mut prep, rows, link(true, false, 0));
    prep.l2_result = Some(L2Vector { form: L2Form::Transposed, region: xt });
    let n2 = m.ty(*conv_op.results.first().ok_or_else(|| BackendError::Internal("no result".into()))?);
    let n2 = n2.ok_or_else(|| BackendError::Internal(format!("no type of '{}'", conv_op.name)))?.c;
    let out_ty = TensorType { c: n2, ..ty };
    let out =
        conv::Output { dest: scratch(&out_ty), transposed: false, source: Some(scratch(&ty)), kept_transposed: true };
    let mut tasks = conv::lower_conv(m, conv_op, goc, bufs, out, consts, gen)?;
    let [c2] = tasks.as_mut_slice() else {
        return Err(crate::window::unsupported(conv_op, "a second matmul of a serial pair in slices"));
    };
    if super::fuses_relu(m, g) {
        c2.nonlinear = Nonlinear::Relu;
    }
    c2.residency = SourceResidency::Resident;
    c2.l2_source = Some(L2Vector { form: L2Form::Transposed, region: xt });
    c2.l2_link = Some(link(true, false, 0));
    c2.l2_result = Some(L2Vector { form: L2Form::Transposed, region: rows_region(&ty, n2, xt.end()) });
    tasks.insert(0, prep);
    Ok(tasks)
}

/// Where the serial pair's values lie for the elementwise op: the first product's rows
/// and the second's, by the value the op reads (the last view of each).
fn rows_of(m: &Module, v: ValueId, kept: &BTreeMap<ValueId, L2Form>) -> Option<L2Region> {
    // Back through the views and the swap to the product the compute kept.
    let mut cur = v;
    while kept.contains_key(&cur) && !keeps_rows(m, cur, kept) {
        let p = m.producer(cur).filter(|p| matches!(p.opcode, OpCode::Reshape | OpCode::Transpose))?;
        cur = *p.operands.first()?;
    }
    if keeps_rows(m, cur, kept) {
        return Some(first_rows(m.ty(cur)?));
    }
    // The second product (before its swap): its convolution read the first product.
    let mut op = m.producer(cur)?;
    while matches!(op.opcode, OpCode::GainOffsetControl | OpCode::Neuron) {
        op = m.producer(*op.operands.first()?)?;
    }
    let first = *op.operands.first().filter(|&&f| op.opcode == OpCode::Conv && keeps_rows(m, f, kept))?;
    let first_ty = m.ty(first)?;
    let xt = super::matmul::region(first_ty);
    Some(rows_region(first_ty, m.ty(cur)?.c, first_rows(first_ty).end() + xt.size))
}

/// The elementwise op heading group `g`, if it is the last of a serial pair: it reads
/// both products' rows in place, each as one channel of `M` rows (a fused ReLU is the
/// caller's), and writes the group's result.
pub(super) fn elementwise(m: &Module, g: &Group, bufs: &Buffers) -> Result<Option<Task>, BackendError> {
    let Some(op) = m.ops.get(g.head).filter(|op| op.opcode == OpCode::ScaledElementwise) else { return Ok(None) };
    let regions: Option<Vec<L2Region>> = op.operands.iter().map(|&v| rows_of(m, v, &bufs.kept)).collect();
    let (Some([a, b]), Some(&x)) = (regions.as_deref(), op.operands.first()) else { return Ok(None) };
    let ty = *m.ty(x).ok_or_else(|| BackendError::Internal(format!("no type of '{}'", op.name)))?;
    let last = m.ops.get(g.last()).and_then(|l| l.results.first());
    let dest = bufs.surface(*last.ok_or_else(|| BackendError::Internal(format!("'{}' has no result", op.name)))?)?;
    let mut t = super::elementwise::lower_scaled_ew_from(op, vec![scratch(&ty)], dest)?;
    let as_rows = |r: &L2Region| L2Region { channel: r.row, row: r.channel, ..*r };
    t.residency = SourceResidency::Resident;
    t.l2_source = Some(standard(as_rows(a)));
    t.l2_operand = Some(L2Operand { vector: standard(as_rows(b)), broadcast: 0 });
    Ok(Some(t))
}
