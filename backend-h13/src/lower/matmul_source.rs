//! Where a constant-weight matmul's x^T comes from when the preparation task P is not
//! alone between memory and the convolution C (`docs/rationale/current-compiler/chains.md`
//! §2.3, §2.6):
//!
//! - **x kept in L2 by a layer_norm** (`chain_lnproj_d256_s64`): the layer_norm's last
//!   task keeps its result where P's source would be staged, and P reads it in place
//!   (Dependent 2: the planar-engine task just before wrote it in the shape P reads).
//!   The L2 is the two recipes' own layouts put together: the layer_norm's statistics
//!   (alive until its last task) at 0, the matmul's block after them (x^T, then x), the
//!   layer_norm's staging of its input after the block;
//! - **a scalar gain/offset of x^T** (`chain_pair_mul_mm_d256_s64`, the scale moved after
//!   the transpose by the MIL peephole): P, the planar-engine scale in place on x^T, C
//!   reading its result (Dependent 2).
//!
//! No BAR-3 token in either (a P from L2, or a P read by the planar engine): the token
//! rule of `matmul::has_token`.

use super::l2_chain::{link, read_in_place, scratch, x_region};
use super::normalization;
use crate::affine::gain_offset;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::L2Region;
use crate::task::{Engine, L2Form, L2Vector, PeOp, Task};
use anec_ir::{Module, Op, OpCode, ValueId};
use anec_passes::Group;
use std::collections::BTreeMap;

/// SourceCfg.Dependent of a task reading what the planar engine wrote just before it.
const AFTER_PLANAR: u8 = 2;

/// True when `v` has one reader and is no output.
pub(super) fn sole(m: &Module, v: ValueId) -> bool {
    m.users(v).count() == 1 && !m.outputs.iter().any(|o| o.value == v)
}

/// True for a group of one op.
pub(super) fn lone(g: &Group) -> bool {
    g.goc.is_none() && g.neuron.is_none() && g.swap.is_none()
}

/// True for a gain/offset of one scale and one bias.
fn scalar_goc(op: &Op) -> bool {
    op.opcode == OpCode::GainOffsetControl && op.attr("scale_data").is_none() && op.attr("bias_data").is_none()
}

/// The result of the group `g` when it is a lone scalar gain/offset of x^T (`xt`, P's
/// result) whose only reader follows.
pub(super) fn scale_of(m: &Module, g: Option<&Group>, xt: ValueId) -> Option<ValueId> {
    let g = g.filter(|g| lone(g))?;
    let op = m.ops.get(g.head).filter(|op| scalar_goc(op) && op.operands.first() == Some(&xt))?;
    let r = *op.results.first()?;
    (sole(m, r) && m.ty(r) == m.ty(xt)).then_some(r)
}

/// The values from a layer_norm's result to P's x (the reshapes between are views) that
/// stay in L2, when P (the op of group `i`) reads a layer_norm's result through them: the
/// groups right before P are the reshapes and the layer_norm, each value's only reader is
/// the next op, the layer_norm runs its row plan on P's x as it is (`normalization`) and
/// its regions and the matmul's block fit the L2 (`xt_bytes`: x^T's).
pub(super) fn layer_norm_x(m: &Module, groups: &[Group], i: usize, prep: &Op, xt_bytes: u64) -> Option<Vec<ValueId>> {
    let mut values = Vec::new();
    let mut v = *prep.operands.first()?;
    for g in groups.get(..i)?.iter().rev() {
        let op = m.ops.get(g.head)?;
        if !lone(g) || op.results.first() != Some(&v) || !sole(m, v) {
            return None;
        }
        values.push(v);
        match op.opcode {
            OpCode::Reshape if is_view(m, op) => v = *op.operands.first()?,
            OpCode::LayerNorm => {
                let x = *m.ty(*prep.operands.first()?)?;
                let fits = normalization::keeps_rows_for(m, op, &x)?;
                return (fits + xt_bytes <= super::l2_chain::L2_BYTES).then_some(values);
            }
            _ => return None,
        }
    }
    None
}

/// True for a reshape that is a view (no task).
pub(super) fn is_view(m: &Module, op: &Op) -> bool {
    let tys = op.operands.first().and_then(|&x| m.ty(x)).zip(op.results.first().and_then(|&r| m.ty(r)));
    tys.is_some_and(|(from, to)| !crate::buffers::reshape_is_swap(from, to))
}

/// The layer_norm whose result P's x is, through views, when it is kept in L2.
fn layer_norm_of<'m>(m: &'m Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>) -> Option<&'m Op> {
    let mut v = *prep.operands.first()?;
    loop {
        kept.get(&v)?;
        let p = m.producer(v)?;
        match p.opcode {
            OpCode::LayerNorm => return Some(p),
            OpCode::Reshape if is_view(m, p) => v = *p.operands.first()?,
            _ => return None,
        }
    }
}

/// Where x^T starts: after the statistics of the layer_norm that keeps P's x in L2 (they
/// stay alive until its last task), else at 0.
pub(super) fn xt_base(m: &Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>) -> u64 {
    layer_norm_of(m, prep, kept).and_then(|ln| normalization::statistics_bytes(m, ln)).unwrap_or(0)
}

/// P's x kept in L2, right after x^T (`xt`): where P from memory stages it.
pub(super) fn kept_x(m: &Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>, xt: &L2Region) -> Option<L2Region> {
    layer_norm_of(m, prep, kept)?;
    let x = m.ty(*prep.operands.first()?)?;
    Some(x_region(xt.end(), x, false))
}

/// The P reading the result of `ln` (a layer_norm) kept in L2, through views.
fn prep_after<'m>(m: &'m Module, ln: &Op, kept: &BTreeMap<ValueId, L2Form>) -> Option<&'m Op> {
    let mut v = *ln.results.first()?;
    loop {
        kept.get(&v)?;
        let u = m.users(v).next()?;
        if super::matmul::is_prep(m, u) {
            return Some(u);
        }
        match u.opcode {
            OpCode::Reshape if is_view(m, u) => v = *u.results.first()?,
            _ => return None,
        }
    }
}

/// The tasks of a group writing a value kept for a matmul (P, the scale on x^T, the
/// layer_norm keeping P's x, a reshape between them: no task), if it is one.
pub(super) fn lower_writer(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Option<Vec<Task>>, BackendError> {
    let Some(op) = m.ops.get(g.head) else { return Ok(None) };
    let Some(&r) = op.results.first().filter(|r| bufs.kept.contains_key(r)) else { return Ok(None) };
    match op.opcode {
        OpCode::Reshape if is_view(m, op) => Ok(Some(Vec::new())),
        OpCode::LayerNorm => {
            let Some(prep) = prep_after(m, op, &bufs.kept) else { return Ok(None) };
            let xt = super::matmul::xt_region(m, prep, &bufs.kept)?;
            let at = kept_x(m, prep, &bufs.kept, &xt)
                .ok_or_else(|| BackendError::Internal(format!("'{}': no region for its kept result", op.name)))?;
            normalization::lower_layer_norm_kept(op, bufs, at).map(Some)
        }
        OpCode::GainOffsetControl if scalar_goc(op) => {
            let prep = op.operands.first().and_then(|&x| m.producer(x));
            let Some(prep) = prep.filter(|p| super::matmul::is_prep(m, p)) else { return Ok(None) };
            let xt = super::matmul::xt_region(m, prep, &bufs.kept)?;
            scale(m, op, r, xt, consts, gen).map(|t| Some(vec![t]))
        }
        // The swap of a product kept as rows (`matmul_serial`): the compute wrote them.
        _ if super::movement::is_channel_width_swap(m, op)
            && op.operands.first().is_some_and(|&p| super::matmul_serial::keeps_rows(m, p, &bufs.kept)) =>
        {
            Ok(Some(Vec::new()))
        }
        _ if bufs.kept.get(&r) == Some(&L2Form::Transposed) && super::matmul::is_prep(m, op) => {
            // (x loaded once for P and a residual add first.)
            let load = super::matmul_residual::load(m, op, bufs)?;
            Ok(Some(load.into_iter().chain([super::matmul::prep(m, op, bufs)?]).collect()))
        }
        _ => Ok(None),
    }
}

/// The scalar gain/offset `op` on x^T (`xt`), in place on the planar engine (Cfg 0x21,
/// the scale and bias in BiasScale), its result `r` kept for C.
fn scale(
    m: &Module,
    op: &Op,
    r: ValueId,
    xt: L2Region,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Task, BackendError> {
    let ty = *m.ty(r).ok_or_else(|| BackendError::Internal(format!("no type of '{}'", op.name)))?;
    let (affine, vectors) = gain_offset(m, op, ty.c, consts)?;
    if vectors.any() || !gen.scalar_affine_on_pe {
        return Err(BackendError::Internal(format!("'{}': a scale on x^T runs on the planar engine", op.name)));
    }
    let mut t = Task::new(&op.name, Engine::Pe, vec![scratch(&ty)], scratch(&ty));
    let mode = super::elementwise::PE_ADD;
    t.pe = Some(PeOp { mode, negate: false, bias: affine.bias, scale: affine.scale, abs: false, relu: false });
    read_in_place(&mut t, xt, link(true, false, 0));
    t.l2_result = Some(L2Vector { form: L2Form::Standard, region: xt });
    Ok(t)
}

/// The link of C reading x^T: the scale's result (Dependent 2), P's from L2 (0x120: C's
/// result, staged after x^T, overlaps P's source, so no Dependent, `chains.md` §3), or
/// the token's (0x160).
pub(super) fn compute_link(m: &Module, prep: &Op, token: bool) -> crate::task::L2Link {
    let scaled = prep.results.first().and_then(|&v| m.users(v).next()).is_some_and(scalar_goc);
    match (scaled, token) {
        (true, _) => link(false, false, AFTER_PLANAR),
        (false, false) => link(true, false, 0),
        (false, true) => crate::task::L2Link { conv_result: true, dma_fmt: true, ..Default::default() },
    }
}

/// The link of P reading a layer_norm's result in place (Dependent 2).
pub(super) fn prep_link() -> crate::task::L2Link {
    link(false, false, AFTER_PLANAR)
}
