//! A folded chain of two constant-weight matmuls whose product a residual add reads with
//! the chain's own input (Apple's `chain_resffn_d256_s64`: `add(x, ffn(x))`;
//! `docs/rationale/current-compiler/chains.md` §1.3, §2.4, §2.9b). x has two readers that
//! want it in different layouts (the folded P reads `8 x Mh x K`, the add reads rows), so
//! it is loaded once; the product is not copied out, the add reads it where C2 kept it:
//!
//! 1. **L**: an NE copy loads x into L2 at 0 as its rows (one channel of `M` rows of
//!    `2K` bytes), the staging after them;
//! 2. **P** from L2: x^T from those rows, no BAR-3 token (`matmul::has_token`);
//! 3. **C1**, **C2** as in the folded chain (`matmul_fold`), the block placed after x;
//! 4. the **add** reads x's rows and C2's product rows in place and writes memory.
//!
//! [`of`] finds the pattern, [`load`] builds L, [`x_read`] is P's source, [`add`] the last
//! task.

use super::l2_chain::{link, scratch, standard};
use super::matmul_source::{is_view, sole};
use crate::buffers::Buffers;
use crate::error::BackendError;
use crate::layout::{round_up, L2Region, L2_GRANULE};
use crate::task::{Engine, L2Form, L2Operand, L2Vector, SourceResidency, Task};
use anec_ir::{Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;
use std::collections::BTreeMap;

/// The residual around a folded chain.
pub(super) struct Residual {
    /// The input P reads (through views) and the add reads.
    pub x: ValueId,
    /// The values from C2's result to the add's operand (the swap back, views): kept.
    pub product: Vec<ValueId>,
}

/// The residual add of the chain P → C1 → `c2`, when there is one: `c2`'s result goes
/// through the swap back and views to an add whose other operand is P's x before its
/// views, x is `[1, 1, M, K]` and has no other reader.
pub(super) fn of(m: &Module, prep: &Op, c2: &Op) -> Option<Residual> {
    let x = source_before_views(m, *prep.operands.first()?)?;
    let xt = *m.ty(x)?;
    if (xt.n, xt.d, xt.c) != (1, 1, 1) || m.users(x).count() != 2 || m.outputs.iter().any(|o| o.value == x) {
        return None;
    }
    let mut v = *c2.results.first()?;
    let mut product = Vec::new();
    let mut swapped = false;
    let add = loop {
        let [user] = m.users(v).collect::<Vec<_>>()[..] else { return None };
        if !sole(m, v) {
            return None;
        }
        match user.opcode {
            OpCode::Transpose if !swapped && super::movement::is_channel_width_swap(m, user) => swapped = true,
            OpCode::Reshape if swapped && is_view(m, user) => {}
            OpCode::ScaledElementwise if swapped => break user,
            _ => return None,
        }
        v = *user.results.first()?;
        product.push(v);
    };
    let pair = add.operands == [x, v] || add.operands == [v, x];
    let same = m.ty(v) == Some(&xt) && add.results.first().and_then(|&r| m.ty(r)) == Some(&xt);
    let add_kind = add.attr("kind").and_then(anec_ir::Attr::as_str) == Some("add");
    (pair && same && add_kind).then_some(Residual { x, product })
}

/// The value `v` is a view of, back through reshapes that each only it reads.
fn source_before_views(m: &Module, mut v: ValueId) -> Option<ValueId> {
    while let Some(p) = m.producer(v).filter(|p| p.opcode == OpCode::Reshape && is_view(m, p)) {
        let from = *p.operands.first()?;
        if !sole(m, v) {
            return None;
        }
        v = from;
    }
    Some(v)
}

/// x's rows in L2 at 0: one channel of `M` rows (`x` is `[1, 1, M, K]`).
pub(super) fn x_rows(x: &TensorType) -> L2Region {
    let row = round_up(u64::from(x.w) * x.dtype.size() as u64, L2_GRANULE);
    let channel = row * u64::from(x.h);
    L2Region { base: 0, channel, row, plane: channel, size: channel }
}

/// The values kept in L2 for the residual of the chain after `prep`.
pub(super) fn kept_values(m: &Module, prep: &Op, c2: &Op) -> Vec<ValueId> {
    of(m, prep, c2).map(|r| r.product).unwrap_or_default()
}

/// Step L for the P `prep` of a residual chain, if it is one: an NE copy of x into its
/// rows at L2 0.
pub(super) fn load(m: &Module, prep: &Op, bufs: &Buffers) -> Result<Option<Task>, BackendError> {
    let Some(r) = super::matmul_fold::second_conv(m, prep).and_then(|c2| of(m, prep, c2)) else { return Ok(None) };
    let x = bufs.surface(r.x)?;
    let mut t = Task::new(&prep.name, Engine::NePass, vec![x], scratch(&x.ty));
    t.l2_result = Some(L2Vector { form: L2Form::Standard, region: x_rows(&x.ty) });
    Ok(Some(t))
}

/// P's source when L loaded x: the rows read as `8 x Mh x K` (`rows_per` rows of x per
/// row of the fold), in place after the copy (Dependent 0: L is the program's first task).
pub(super) fn x_read(m: &Module, prep: &Op, rows_per: u32) -> Option<(L2Region, crate::task::L2Link)> {
    let r = of(m, prep, super::matmul_fold::second_conv(m, prep)?)?;
    let rows = x_rows(m.ty(r.x)?);
    let row = rows.row * u64::from(rows_per);
    Some((L2Region { channel: rows.row, row, ..rows }, link(true, false, 0)))
}

/// The add heading group `g`, if it closes a residual chain: it reads x's rows and the
/// product's rows (C2 kept them at `product`, found through the chain) in place and
/// writes the group's result.
pub(super) fn add(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    kept: &BTreeMap<ValueId, L2Form>,
) -> Result<Option<Task>, BackendError> {
    let Some(op) = m.ops.get(g.head).filter(|op| op.opcode == OpCode::ScaledElementwise) else { return Ok(None) };
    let Some((prep, base)) = chain_of(m, op, kept) else { return Ok(None) };
    let Some(r) = super::matmul_fold::second_conv(m, prep).and_then(|c2| of(m, prep, c2)) else { return Ok(None) };
    let ty = *m.ty(r.x).ok_or_else(|| BackendError::Internal(format!("no type of '{}'s x", op.name)))?;
    let last = m.ops.get(g.last()).and_then(|l| l.results.first());
    let dest = bufs.surface(*last.ok_or_else(|| BackendError::Internal(format!("'{}' has no result", op.name)))?)?;
    let mut t = super::elementwise::lower_scaled_ew_from(op, vec![scratch(&ty)], dest)?;
    let rows = x_rows(&ty);
    let product = L2Region { base, ..rows };
    let (a, b) = if op.operands.first() == Some(&r.x) { (rows, product) } else { (product, rows) };
    t.residency = SourceResidency::Resident;
    t.l2_source = Some(standard(a));
    t.l2_operand = Some(L2Operand { vector: standard(b), broadcast: 0 });
    Ok(Some(t))
}

/// The P of the chain whose product `op` reads (one operand kept, back through views,
/// the swap and C2 to C1's kept result and x^T), and where C2 kept the product.
fn chain_of<'m>(m: &'m Module, op: &Op, kept: &BTreeMap<ValueId, L2Form>) -> Option<(&'m Op, u64)> {
    let mut v = *op.operands.iter().find(|v| kept.contains_key(v))?;
    let c2 = loop {
        let p = m.producer(v)?;
        if p.opcode == OpCode::Conv {
            break p;
        }
        v = *p.operands.first()?;
    };
    let mut c1 = m.producer(*c2.operands.first()?)?;
    while matches!(c1.opcode, OpCode::Neuron | OpCode::GainOffsetControl) {
        c1 = m.producer(*c1.operands.first()?)?;
    }
    let prep = m.producer(*c1.operands.first()?)?;
    let f = super::matmul_fold::fold(m, prep)?;
    let xt = super::matmul::xt_region(m, prep, kept).ok()?;
    Some((prep, f.product_base(&xt)))
}
