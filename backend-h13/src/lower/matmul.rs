//! A matmul (or `linear`) with a constant weight, as Apple's current compiler runs it
//! (`docs/rationale/current-compiler/matmul.md`). The MIL lowering gives
//! `rows-as-channels x -> transpose C<->W -> 1x1 conv -> transpose C<->W`; Apple's recipe
//! for it, regime A (x^T fits L2):
//!
//! 1. **P** (preparation): an NE pass reads x (`Mc` rows as channels, `K` wide) and writes
//!    it transposed (Common.Cfg bit 28) into L2 as x^T: `K` channels of `Mc` values. The
//!    data stays in L2; the task stands for writing the BAR-3 scratch surface x^T (the
//!    dependency token: header DPC, TSR/TSE).
//! 2. **C** (compute): the 1x1 convolution (Cin = K) reads x^T in place (SourceCfg 0x160,
//!    the tile DMA idle with DependencyMode 1, standing for reading the token) and writes
//!    its result transposed back to memory as product rows (`conv::Output::transposed`).
//!
//! `plan` picks the transposes that become P, `prep` and `compute` build the two tasks;
//! a product over 64 KiB is folded (P C Y, [`fold`]), and a product the next matmul reads
//! stays in L2 (`matmul_chain`). Regime B (x^T does not fit L2: through memory, 8
//! channels interleaved) is `matmul_dram`.

use super::matmul_fold::{fold, FOLDED_SOURCE_CHANNEL, FOLDED_SOURCE_PAD, FOLD_ROWS};
use super::{conv, matmul_chain, matmul_fold, matmul_residual, matmul_serial, matmul_source};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2Region, L2_GRANULE};
use crate::task::{L2Form, L2Vector, SourceResidency, Surface, Task, Token};
use anec_ir::{Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;
use std::collections::BTreeMap;

// Apple's regime boundary: x^T and x together within the 1 MiB L2 (`matmul.md` §1).
use super::l2_chain::L2_BYTES;
/// A transposed channel read by a convolution gets one more granule when it is at least
/// this wide (`matmul.md` §3: `tch = r16(2Mc) + 0x10` from 0x40).
const CONV_READER_PAD_FROM: u64 = 0x40;

/// The transposes whose result the preparation task keeps in L2 for the convolution of the
/// next group (or for the scalar gain/offset before it, `matmul_source`), with the layout
/// they keep it in, and the values handed over around them: the product the next matmul
/// reads (`matmul_chain`), a layer_norm's result P reads (`matmul_source`).
pub fn plan(m: &Module, groups: &[Group]) -> BTreeMap<ValueId, L2Form> {
    let mut kept = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        let Some(prep) = m.ops.get(g.head) else { continue };
        let Some(&v) = prep.results.first() else { continue };
        if !(matmul_source::lone(g) && is_prep(m, prep) && fits(m, prep) && matmul_source::sole(m, v)) {
            continue;
        }
        let fold = fold(m, prep);
        let folded = fold.is_some();
        let chained = fold.is_some_and(|f| f.chained);
        let scaled = matmul_source::scale_of(m, groups.get(i + 1), v).filter(|_| !folded);
        let (x, c) = match scaled {
            Some(s) => (s, i + 2),
            None => (v, i + 1),
        };
        let Some((cg, conv)) = groups.get(c).and_then(|cg| Some((cg, m.ops.get(cg.head)?))) else { continue };
        // The compute writes its product transposed to memory, or keeps it in L2 for the
        // next matmul (`matmul_chain`, folded: `matmul_fold`).
        let handed = matmul_chain::product(m, cg, groups.get(c + 1))
            .filter(|&p| scaled.is_none() && (chained || (!folded && chain_fits(m, prep, p))));
        if chained && handed.is_none() {
            // (A folded chain the groups do not hand over: through memory.)
            continue;
        }
        // Or keeps it as rows for two readers, the next matmul and an elementwise op
        // (`matmul_serial`).
        let serial =
            (scaled.is_none() && handed.is_none() && !folded).then(|| serial_values(m, groups, c, prep)).flatten();
        let writes = cg.swap.is_some() || handed.is_some() || serial.is_some();
        if !(conv.opcode == OpCode::Conv && conv.operands.first() == Some(&x) && writes && pointwise(conv)) {
            continue;
        }
        let alone = scaled.is_none() && handed.is_none() && serial.is_none() && !folded;
        let source = alone.then(|| source_values(m, groups, i, prep)).flatten();
        kept.insert(v, L2Form::Transposed);
        kept.extend(scaled.map(|s| (s, L2Form::Transposed)));
        kept.extend(handed.map(|p| (p, L2Form::Standard)));
        if chained {
            let c2 = matmul_fold::second_conv(m, prep);
            let residual = c2.map(|c2| matmul_residual::kept_values(m, prep, c2)).unwrap_or_default();
            kept.extend(residual.into_iter().map(|v| (v, L2Form::Standard)));
        }
        kept.extend(source.into_iter().chain(serial).flatten().map(|s| (s, L2Form::Standard)));
    }
    kept
}

/// The values a serial pair keeps in L2 after P (`matmul_serial::plan`, with x^T's
/// region and x's bytes).
fn serial_values(m: &Module, groups: &[Group], c: usize, prep: &Op) -> Option<Vec<ValueId>> {
    let (xt, x) = (xt_type(m, prep)?, *m.ty(*prep.operands.first()?)?);
    let x_bytes = super::l2_chain::x_region(0, &x, false).size;
    matmul_serial::plan(m, groups, c, &region(&xt), x_bytes)
}

/// The values a layer_norm keeps in L2 for P (group `i`) to read, if it does
/// (`matmul_source::layer_norm_x`, with x^T's and x's bytes).
fn source_values(m: &Module, groups: &[Group], i: usize, prep: &Op) -> Option<Vec<ValueId>> {
    let (xt, x) = (xt_type(m, prep)?, *m.ty(*prep.operands.first()?)?);
    let block = region(&xt).size + super::l2_chain::x_region(0, &x, false).size;
    matmul_source::layer_norm_x(m, groups, i, prep, block)
}

/// x^T of `prep` and the product `p` kept after it fit L2 together.
fn chain_fits(m: &Module, prep: &Op, p: ValueId) -> bool {
    let (Some(xt), Some(ty)) = (xt_type(m, prep), m.ty(p)) else { return false };
    matmul_chain::region(ty, region(&xt).end()).end() <= L2_BYTES
}

/// True for a channel<->width transpose of one `Mc x 1 x K` tensor.
pub(super) fn is_prep(m: &Module, op: &Op) -> bool {
    let x = op.operands.first().and_then(|&v| m.ty(v));
    super::movement::is_channel_width_swap(m, op) && x.is_some_and(|x| x.n == 1 && x.d == 1 && x.h == 1)
}

/// True for a 1x1 convolution of stride 1 without padding or groups.
pub(super) fn pointwise(op: &Op) -> bool {
    let ints = |name: &str| op.attr(name).and_then(anec_ir::Attr::as_int_array);
    let groups = op.attr("groups").and_then(anec_ir::Attr::as_int).unwrap_or(1);
    ints("kernel") == Some(vec![1, 1]) && ints("stride") == Some(vec![1, 1]) && groups == 1
}

/// Regime A: x^T and x fit L2 together.
pub(super) fn fits(m: &Module, prep: &Op) -> bool {
    let (Some(x), Some(xt)) =
        (prep.operands.first().and_then(|&v| m.ty(v)), prep.results.first().and_then(|&v| m.ty(v)))
    else {
        return false;
    };
    let x_bytes = u64::from(x.c) * round_up(u64::from(x.w) * x.dtype.size() as u64, L2_GRANULE).min(0x100);
    region(xt).size + x_bytes <= L2_BYTES
}

/// The scratch surface each preparation task stands for writing: x^T, by layer name.
pub fn scratch_types(m: &Module, kept: &BTreeMap<ValueId, L2Form>) -> BTreeMap<String, TensorType> {
    m.ops
        .iter()
        .filter_map(|op| {
            let &v = op.results.first()?;
            let prep = kept.get(&v) == Some(&L2Form::Transposed) && is_prep(m, op) && has_token(m, op, kept);
            prep.then(|| Some((op.name.clone(), xt_type(m, op)?)))?
        })
        .collect()
}

/// True when P stands for writing x^T to the BAR-3 scratch (the token, `matmul.md` §1):
/// when it reads x from memory and the convolution reads x^T. A P that the planar engine
/// reads (`chain_pair_mul_mm`) has none; a P from L2 has none either, as in
/// `chain_lnproj`, `chain_resffn` and `chain_serial` (`chains.md` §2.3: not derived;
/// `chain_pair_softmax_mm` and `rrmm_r2rb_m16_k2048_n2048_tx1_ty1` keep one).
fn has_token(m: &Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>) -> bool {
    let loaded = fold(m, prep).is_some_and(|f| f.residual());
    let from_memory = prep.operands.first().is_some_and(|x| !kept.contains_key(x)) && !loaded;
    let conv = prep.results.first().and_then(|&v| m.users(v).next()).is_some_and(|u| u.opcode == OpCode::Conv);
    from_memory && conv
}

/// x^T as the preparation task writes it: `K x 1 x M`, or folded `K x Mh x 8`.
fn xt_type(m: &Module, prep: &Op) -> Option<TensorType> {
    let xt = *m.ty(*prep.results.first()?)?;
    Some(match fold(m, prep) {
        Some(f) => TensorType { h: f.mh, w: FOLD_ROWS, ..xt },
        None => xt,
    })
}

/// x^T (`K` channels, `Mh` rows of `Mc`) in L2 at 0, laid out for a convolution reader:
/// channels of `r16(2Mc)` (one granule more from 0x40), `K` of them per row, 0x30 more
/// per row when there are several rows.
pub fn region(xt: &TensorType) -> L2Region {
    region_for(xt, true)
}

/// x^T laid out for its first reader: a convolution's channels get the granule of pad,
/// the planar engine's none (`chain_pair_mul_mm`: 0x80).
fn region_for(xt: &TensorType, conv_reader: bool) -> L2Region {
    let channel = round_up(u64::from(xt.w) * xt.dtype.size() as u64, L2_GRANULE);
    let pad = conv_reader && channel >= CONV_READER_PAD_FROM;
    let channel = if pad { channel + L2_GRANULE } else { channel };
    let plane = channel * u64::from(xt.c);
    let row = if xt.h > 1 { plane + 3 * L2_GRANULE } else { plane };
    L2Region { base: 0, channel, row, plane, size: row * u64::from(xt.h) }
}

/// Where P leaves x^T: laid out for its first reader, at 0, after a folded product, or
/// after the regions of the op keeping P's x in L2 (`matmul_source::xt_base`).
pub(super) fn xt_region(m: &Module, prep: &Op, kept: &BTreeMap<ValueId, L2Form>) -> Result<L2Region, BackendError> {
    let ty = xt_type(m, prep).ok_or_else(|| BackendError::Internal(format!("'{}' has no x^T type", prep.name)))?;
    let conv = prep.results.first().and_then(|&v| m.users(v).next()).is_some_and(|u| u.opcode == OpCode::Conv);
    let mut xt = region_for(&ty, conv);
    xt.base = match fold(m, prep) {
        Some(f) => f.xt_base(&xt),
        None => {
            let rows = matmul_serial::rows_below(m, prep, kept).map_or(0, |r| r.size);
            matmul_source::xt_base(m, prep, kept) + rows
        }
    };
    Ok(xt)
}

/// The surface C reads x^T through: the scratch surface standing for it (the token), or
/// one without a buffer.
fn xt_surface(m: &Module, prep: &Op, bufs: &Buffers) -> Result<Surface, BackendError> {
    if let Some(&s) = bufs.scratch.get(&prep.name) {
        return Ok(s);
    }
    let ty = xt_type(m, prep).ok_or_else(|| BackendError::Internal(format!("'{}' has no x^T type", prep.name)))?;
    Ok(super::l2_chain::scratch(&ty))
}

/// Step P: the NE pass writing x transposed into L2, standing for writing the token when
/// it has one; folded, it reads x as `8 x Mh x K` (row stride 8 rows) in 0x40-byte
/// pieces; from L2, it reads x where a layer_norm kept it (`matmul_source`).
pub fn prep(m: &Module, op: &Op, bufs: &Buffers) -> Result<Task, BackendError> {
    let xt = xt_region(m, op, &bufs.kept)?;
    let kept_x = matmul_source::kept_x(m, op, &bufs.kept, &xt);
    let mut x = match kept_x {
        Some(_) => {
            let ty = op.operands.first().and_then(|&v| m.ty(v)).copied();
            super::l2_chain::scratch(&ty.ok_or_else(|| BackendError::Internal(format!("'{}': no x", op.name)))?)
        }
        None => super::first_operand(op, bufs)?,
    };
    let fold = fold(m, op);
    let loaded = fold.filter(|f| f.residual()).and_then(|_| matmul_residual::x_read(m, op, FOLD_ROWS));
    if let Some(f) = fold {
        let s = x.strides;
        x.ty = TensorType { c: FOLD_ROWS, h: f.mh, ..x.ty };
        x.strides = crate::layout::Strides { row: s.plane * u64::from(FOLD_ROWS), ..s };
    }
    // The Common block states x; the result is x^T in L2 (nothing goes to memory).
    let mut t = Task::new(&op.name, crate::task::Engine::NePass, vec![x], Surface { bar: 0, offset: 0, ..x });
    t.l2_result = Some(L2Vector { form: L2Form::Transposed, region: xt });
    t.token = bufs.scratch.get(&op.name).copied().map(Token::Writes);
    if let Some(r) = kept_x {
        super::l2_chain::read_in_place(&mut t, r, matmul_source::prep_link());
    }
    if let Some((region, link)) = loaded {
        // x's rows, loaded by the NE copy before P (`matmul_residual`).
        super::l2_chain::read_in_place(&mut t, region, link);
    } else if let Some(f) = fold {
        let row = u64::from(FOLD_ROWS) * FOLDED_SOURCE_CHANNEL;
        let region = L2Region {
            base: xt.end(),
            channel: FOLDED_SOURCE_CHANNEL,
            row: row + FOLDED_SOURCE_PAD,
            plane: row,
            size: (row + FOLDED_SOURCE_PAD) * u64::from(f.mh),
        };
        t.l2_source = Some(L2Vector { form: L2Form::Standard, region });
    }
    Ok(t)
}

/// The convolution of group `g` and the gain/offset fused into it.
pub(super) fn conv_and_goc<'m>(m: &'m Module, g: &Group) -> Result<(&'m Op, Option<&'m Op>), BackendError> {
    let op = |i: usize| m.ops.get(i).ok_or_else(|| BackendError::Internal(format!("no op {i}")));
    Ok((op(g.head)?, g.goc.map(op).transpose()?))
}

/// The tasks of a convolution group whose input is kept in L2, if it is one: step C
/// reading x^T ([`compute`]), or C2 reading the product of the matmul before it
/// (`matmul_chain`).
pub fn lower_reader(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Option<Vec<Task>>, BackendError> {
    let Some(op) = m.ops.get(g.head).filter(|op| op.opcode == OpCode::Conv) else { return Ok(None) };
    let Some((&x, form)) = op.operands.first().and_then(|v| Some((v, *bufs.kept.get(v)?))) else {
        return Ok(None);
    };
    let Some(producer) = m.producer(x) else { return Ok(None) };
    match form {
        L2Form::Transposed => {
            // x^T from P, or from the scale on it (`matmul_source`).
            let prep = match producer.opcode {
                OpCode::GainOffsetControl => producer.operands.first().and_then(|&v| m.producer(v)),
                _ => Some(producer),
            };
            let prep = prep.ok_or_else(|| BackendError::Internal(format!("'{}' reads no x^T", op.name)))?;
            compute(m, g, prep, bufs, consts, gen).map(Some)
        }
        _ => {
            // The first matmul's convolution (before its fused gain/offset or ReLU) read x^T.
            let mut c1 = producer;
            while matches!(c1.opcode, OpCode::GainOffsetControl | OpCode::Neuron) {
                let Some(p) = c1.operands.first().and_then(|&v| m.producer(v)) else { break };
                c1 = p;
            }
            let prep = c1.operands.first().and_then(|&v| m.producer(v));
            let prep = prep.ok_or_else(|| BackendError::Internal(format!("'{}' reads no x^T", c1.name)))?;
            if matmul_serial::keeps_rows(m, x, &bufs.kept) {
                return matmul_serial::second(m, g, x, bufs, consts, gen).map(Some);
            }
            let xt = xt_region(m, prep, &bufs.kept)?;
            if let Some(f) = fold(m, prep) {
                return matmul_fold::second(m, g, x, (f, &xt), bufs, consts, gen).map(Some);
            }
            matmul_chain::read_product(m, g, x, &xt, bufs, consts, gen).map(Some)
        }
    }
}

/// Step C: the convolution (with its fused gain/offset) reading x^T where P left it and
/// writing the product rows transposed to memory, or keeping them in L2 for the next
/// matmul (`matmul_chain`).
fn compute(
    m: &Module,
    g: &Group,
    prep: &Op,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    let op = |i: usize| m.ops.get(i).ok_or_else(|| BackendError::Internal(format!("no op {i}")));
    let (conv_op, goc) = conv_and_goc(m, g)?;
    let token = bufs.scratch.get(&prep.name).copied();
    let scratch = xt_surface(m, prep, bufs)?;
    let fold = fold(m, prep);
    let xt = xt_region(m, prep, &bufs.kept)?;
    let last = op(g.last())?;
    let result =
        *last.results.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no result", last.name)))?;
    let rows = matmul_serial::keeps_rows(m, result, &bufs.kept);
    let handed = !rows && bufs.kept.get(&result) == Some(&L2Form::Standard);
    let Some(&result_ty) = m.ty(result) else {
        return Err(BackendError::Internal(format!("no type of '{}'", last.name)));
    };
    let dest = match handed || rows {
        true => matmul_chain::surface(result_ty),
        false => super::movement::as_channels(bufs.surface(result)?),
    };
    let out = match fold {
        // C1 of a folded chain: its result (N1 x Mh x 8), untransposed, for C2.
        Some(f) if handed => {
            let dest = matmul_fold::computed_surface(f.computed(result_ty, result_ty.c));
            conv::Output { dest, transposed: false, source: Some(scratch), kept_transposed: false }
        }
        // The product as the convolution computes it (N x Mh x 8), kept in L2.
        Some(f) => {
            let dest = matmul_fold::computed_surface(f.computed(dest.ty, dest.ty.w));
            conv::Output { dest, transposed: false, source: Some(scratch), kept_transposed: true }
        }
        // The product rows kept for the next matmul and an elementwise op.
        None if rows => conv::Output { dest, transposed: false, source: Some(scratch), kept_transposed: true },
        None => conv::Output { dest, transposed: !handed, source: Some(scratch), kept_transposed: false },
    };
    let mut tasks = conv::lower_conv(m, conv_op, goc, bufs, out, consts, gen)?;
    if rows {
        let [c1] = tasks.as_mut_slice() else {
            return Err(crate::window::unsupported(conv_op, "a first matmul of a serial pair in slices"));
        };
        c1.l2_result = Some(L2Vector { form: L2Form::Transposed, region: matmul_serial::first_rows(&result_ty) });
    }
    match fold {
        Some(f) if handed => matmul_fold::keep_untransposed(conv_op, &mut tasks, f, &xt)?,
        Some(f) => tasks = matmul_fold::keep_product(conv_op, tasks, f, &xt, dest)?,
        None if handed => matmul_chain::keep(&mut tasks, matmul_chain::region(&result_ty, xt.end())),
        None => {}
    }
    let vector = L2Vector { form: L2Form::Transposed, region: xt };
    for t in tasks.iter_mut().filter(|t| t.engine == crate::task::Engine::NeConv) {
        if super::fuses_relu(m, g) {
            t.nonlinear = crate::task::Nonlinear::Relu;
        }
        t.residency = SourceResidency::Resident;
        t.l2_source = Some(vector);
        t.l2_link = Some(matmul_source::compute_link(m, prep, token.is_some()));
        t.token = token.map(Token::Reads);
    }
    Ok(tasks)
}
