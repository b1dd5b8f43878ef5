//! An NE task that leaves a vector in L2 and the planar-engine task that reads it, as
//! Apple's current compiler pairs them (`docs/rationale/current-compiler/elementwise.md`
//! §1 and §6): the planar engine reads a second operand from memory only when it has the
//! output's shape, so an operand that must first be computed, broadcast or loaded goes
//! through L2. The three recipes:
//! - `real_div(x, z)` of `[1, C, 1, 1]` tensors: the reciprocal table writes `1/z` as one
//!   packed row (8 NEs), the PE multiplies `x` by it; likewise any table activation of a
//!   `[1, C, 1, 1]` value read by a PE op (`x + gelu(x)`: the PE reads x where the table
//!   task staged it, `chains.md` §2.10);
//! - `op(x, broadcast(z))`: an NE copy of `z` into L2, read by the PE with broadcast flags;
//! - a per-channel gain/offset: an NE task loads `[bias; scale]` rows from the constant
//!   section, a three-operand PE task computes `(x + bias) * scale`.
//!
//! The producer's result sits at L2 offset 0 and its source after it; the consumer's
//! memory operand takes the same place, its result follows.

use super::base_task;
use super::elementwise::PE_ADD;
use super::neuron::with_table;
use crate::affine::channel_affine;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::encode::{CONST_BAR, PACKED_VECTOR_NES};
use crate::error::BackendError;
use crate::layout::{round_up, L2Region, Strides, L2_GRANULE};
use crate::task::{Engine, L2Form, L2Link, L2Operand, L2Vector, PeOp, SourceResidency, Surface, Task};
use anec_ir::{Attr, DType, Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;
use half::f16;
use std::collections::BTreeMap;

/// Broadcast flags of Common word 0x158 by axis (batch is the PE's group loop: none).
const BROADCAST_W: u32 = 0x10;
const BROADCAST_H: u32 = 0x20;
const BROADCAST_C: u32 = 0x80;
/// A packed vector of one value per channel, broadcast over H and W.
const PER_CHANNEL: u32 = 0x200;
/// Rows of a `[bias; scale]` vector get 0x20 of padding when a multiple of 0x400 bytes,
/// 0x10 when a multiple of 0x200 (512 channels: 0x420, 768: 0x610; two records).
const ROWS_PAD: [(u64, u64); 2] = [(0x400, 0x20), (0x200, 0x10)];

/// The values an NE producer keeps in L2 for the next task, with their layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Kept value -> layout.
    pub kept: BTreeMap<ValueId, L2Form>,
}

/// Finds the producer/consumer pairs of `groups`: a one-op group whose only reader is the
/// next group's planar-engine op, as its second operand.
pub fn plan(m: &Module, groups: &[Group]) -> Plan {
    let mut p = Plan::default();
    let uses = m.use_counts();
    for pair in groups.windows(2) {
        let (Some(prod), Some(cons)) = (m.ops.get(pair[0].head), m.ops.get(pair[1].head)) else { continue };
        // (The consumer may carry a fused ReLU: the planar engine's ReLU bit.)
        let alone = |g: &Group| g.goc.is_none() && g.neuron.is_none();
        let consumer_alone = pair[1].goc.is_none();
        let Some(&v) = prod.results.first() else { continue };
        let only_reader = uses.get(v.index()) == Some(&1) && !m.outputs.iter().any(|o| o.value == v);
        let second = cons.opcode == OpCode::ScaledElementwise && cons.operands.get(1) == Some(&v);
        if !(alone(&pair[0]) && consumer_alone && only_reader && second) {
            continue;
        }
        if let Some(form) = producer_form(m, prod, v) {
            p.kept.insert(v, form);
        }
    }
    p
}

/// [`plan`] with every op its own group (what `anec check` sees before fusion).
pub fn plan_ops(m: &Module) -> Plan {
    let groups: Vec<Group> = (0..m.ops.len()).map(|head| Group { head, goc: None, neuron: None, swap: None }).collect();
    plan(m, &groups)
}

/// Drops from `plan` the L2 pairs whose consumer cannot run in one task (the kept operand,
/// the consumer's first source and its result beyond the L2 a task addresses): those run
/// through memory, the producer alone and the consumer in bands (`movement::in_bands`).
pub fn keep_those_that_fit(m: &Module, plan: &mut Plan) {
    plan.kept.retain(|&v, &mut form| {
        let Some(consumer) = m.users(v).next() else { return true };
        let (Some(kept), Some(out)) = (m.ty(v), consumer.results.first().and_then(|&r| m.ty(r))) else {
            return true;
        };
        let rows = |t: &anec_ir::TensorType| {
            let row = crate::layout::round_up(u64::from(t.w) * t.dtype.size() as u64, crate::layout::L2_GRANULE);
            u64::from(t.n) * u64::from(t.c) * u64::from(t.d) * u64::from(t.h) * row
        };
        region(form, kept).size + 2 * rows(out) <= crate::encode::l2::L2_ADDRESSABLE
    });
}

/// The layout a producer op leaves its result in, if it is one of the recipes.
fn producer_form(m: &Module, prod: &Op, v: ValueId) -> Option<L2Form> {
    let ty = m.ty(v)?;
    match prod.opcode {
        OpCode::Neuron if table_neuron(prod) => ((ty.n, ty.d, ty.h, ty.w) == (1, 1, 1, 1)).then_some(L2Form::Packed),
        OpCode::Broadcast => {
            let src = prod.operands.first().and_then(|&s| m.ty(s))?;
            (src.n == 1 && src.d == 1 && broadcast_flags(prod).is_some()).then_some(L2Form::Standard)
        }
        _ => None,
    }
}

/// An activation the NE computes through a table (`real_div`'s reciprocal, a gelu, ...).
fn table_neuron(op: &Op) -> bool {
    let mode = op.attr("mode").and_then(Attr::as_str).unwrap_or_default();
    let number = |name: &str| op.attr(name).and_then(Attr::as_float);
    super::neuron::table_fn(mode, number("alpha"), number("beta")).is_some()
}

/// Word 0x158 of a broadcast's axes; `None` for an axis the PE cannot broadcast.
fn broadcast_flags(op: &Op) -> Option<u32> {
    let axes = op.attr("axes").and_then(Attr::as_array)?;
    axes.iter().try_fold(0, |f, a| match a.as_str()? {
        "width" => Some(f | BROADCAST_W),
        "height" => Some(f | BROADCAST_H),
        "channel" => Some(f | BROADCAST_C),
        "batch" => Some(f),
        _ => None,
    })
}

/// The L2 region of a kept `ty` in `form`, at offset 0.
pub fn region(form: L2Form, ty: &TensorType) -> L2Region {
    let elem = ty.dtype.size() as u64;
    match form {
        L2Form::Standard => L2Region::new(0, ty.c, ty.h, ty.w, ty.dtype, u64::MAX, 0),
        L2Form::Packed => {
            let row = round_up(u64::from(ty.c) * elem, L2_GRANULE);
            L2Region { base: 0, channel: row, row, plane: row, size: row }
        }
        L2Form::Rows => {
            let ch = round_up(u64::from(ty.w) * elem, L2_GRANULE);
            let pad = ROWS_PAD.iter().find(|(m, _)| ch.is_multiple_of(*m)).map_or(0, |p| p.1);
            L2Region { base: 0, channel: ch, row: ch + pad, plane: ch, size: 2 * (ch + pad) }
        }
        L2Form::Transposed => {
            // W channels of C values per row; a row that fills whole 0x400 banks gets the
            // planar engine's 0x20 of padding (the reader is a PE reduction).
            let plane = L2Region::unpadded_row(ty.w, ty.c, ty.dtype, u64::MAX);
            let pad = if plane.is_multiple_of(TRANSPOSED_PAD_EVERY) { TRANSPOSED_PAD } else { 0 };
            L2Region::new(0, ty.w, ty.h, ty.c, ty.dtype, u64::MAX, pad)
        }
    }
}

/// Padding of a transposed result's rows (`reduce_sum_axes_1`: 0x400 -> 0x420).
const TRANSPOSED_PAD_EVERY: u64 = 0x400;
const TRANSPOSED_PAD: u64 = 0x20;

/// The producer task of a kept value `v` (the op's result), `form` its layout.
pub fn producer(
    m: &Module,
    op: &Op,
    v: ValueId,
    form: L2Form,
    bufs: &Buffers,
    consts: &mut ConstSection,
) -> Result<Task, BackendError> {
    let kept = *m.ty(v).ok_or_else(|| BackendError::Internal(format!("no type for %{}", v.0)))?;
    let src = super::first_operand(op, bufs)?;
    // A broadcast's producer copies its operand; the reciprocal writes its own shape.
    let ty = if op.opcode == OpCode::Broadcast { src.ty } else { kept };
    let dest = Surface { bar: 0, ty, strides: Strides::of(&ty, &Default::default()), offset: 0 };
    let mut t = base_task(op, bufs, dest, Engine::NePass)?;
    t.l2_result = Some(L2Vector { form, region: region(form, &ty) });
    if let Some(staged) = shared_source(m, op, v, form) {
        (t.residency, t.l2_source) = (SourceResidency::LoadAndKeep, Some(staged));
    }
    match op.opcode {
        OpCode::Broadcast => Ok(t),
        _ => with_table(op, t, PACKED_VECTOR_NES, consts),
    }
}

/// Where a packed producer keeps its own source for the consumer, when the consumer's
/// first operand is that source (`y = x + gelu(x)`: Apple's `env_chain_residual_gelu`
/// loads x once, `chains.md` §2.9a): the standard layout after the packed result.
fn shared_source(m: &Module, prod: &Op, v: ValueId, form: L2Form) -> Option<L2Vector> {
    let x = *prod.operands.first()?;
    let reader = m.users(v).next()?;
    if form != L2Form::Packed || reader.operands.first() != Some(&x) {
        return None;
    }
    let ty = m.ty(x)?;
    let base = region(form, ty).end();
    let r = region(L2Form::Standard, ty);
    Some(L2Vector { form: L2Form::Standard, region: L2Region { base, ..r } })
}

/// The consumer task of `op` (a planar-engine elementwise op) whose second operand,
/// produced by `prod`, is kept in L2; its first operand, when it is the producer's
/// source, read where the producer staged it (L2 SourceCfg AliasConvSrc, AliasConvRslt).
pub fn consumer(
    m: &Module,
    op: &Op,
    prod: &Op,
    form: L2Form,
    bufs: &Buffers,
    dest: Surface,
) -> Result<Task, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let mut t = super::elementwise::lower_scaled_ew_from(op, vec![x], dest)?;
    let staged = prod.results.first().and_then(|&v| shared_source(m, prod, v, form));
    if let Some(staged) = staged {
        (t.residency, t.l2_source) = (SourceResidency::Resident, Some(staged));
        t.l2_link = Some(L2Link { conv_src: true, conv_result: true, ..L2Link::default() });
    }
    let src = bufs.surface(*prod.operands.first().ok_or_else(|| BackendError::Internal("no operand".into()))?)?;
    let broadcast = match form {
        L2Form::Standard => broadcast_flags(prod).unwrap_or(0),
        _ => PER_CHANNEL,
    };
    t.l2_operand = Some(L2Operand { vector: L2Vector { form, region: region(form, &src.ty) }, broadcast });
    Ok(t)
}

/// A per-channel gain/offset `x * S[c] + B[c]` as two tasks: the `[B/S; S]` rows loaded
/// from the constant section into L2, then `(x + row 0) * row 1` on the planar engine.
pub fn channel_affine_tasks(
    m: &Module,
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let c = dest.ty.c;
    let a = channel_affine(m, op, c)?;
    let scales = a.scales();
    let biases = a.pre_scale_biases(op, &scales)?;
    let rows_ty = TensorType::nchw(1, 1, 2, c, DType::F16);
    let strides = Strides::of(&rows_ty, &Default::default());
    let chunk = consts.add_vector(&rows_bytes(&biases, &scales, strides.row as usize), "rows");
    let src = Surface { bar: CONST_BAR as u8, ty: rows_ty, strides, offset: chunk.offset };
    let kept = Surface { bar: 0, ..src };
    let vector = L2Vector { form: L2Form::Rows, region: region(L2Form::Rows, &rows_ty) };
    let mut load = Task::new(&op.name, Engine::NePass, vec![src], Surface { offset: 0, ..kept });
    load.l2_result = Some(vector);
    let mut apply = Task::new(&op.name, Engine::Pe, vec![x], dest);
    apply.pe = Some(PeOp { mode: PE_ADD, negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    apply.l2_operand = Some(L2Operand { vector, broadcast: PER_CHANNEL });
    Ok(vec![load, apply])
}

/// fp16 1.0.
const ONE_F16: u16 = 0x3C00;

/// The two rows, each padded to `row` bytes.
fn rows_bytes(biases: &[f64], scales: &[f64], row: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * row);
    for values in [biases, scales] {
        let start = out.len();
        out.extend(values.iter().flat_map(|&v| f16::from_f64(v).to_le_bytes()));
        out.resize(start + row, 0);
    }
    out
}

/// True when `op` (an unfused gain/offset) has per-channel data.
pub fn per_channel(op: &Op) -> bool {
    op.opcode == OpCode::GainOffsetControl && (op.attr("scale_data").is_some() || op.attr("bias_data").is_some())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Location, Port};

    fn f16(c: u32, h: u32, w: u32) -> TensorType {
        TensorType::nchw(1, c, h, w, DType::F16)
    }

    fn op(m: &mut Module, opcode: OpCode, operands: Vec<ValueId>, ty: TensorType, attrs: &[(&str, Attr)]) -> ValueId {
        let r = m.add_value(ty);
        let attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        m.ops.push(Op {
            opcode,
            name: format!("op{}", m.ops.len()),
            operands,
            results: vec![r],
            attrs,
            loc: Location::default(),
        });
        r
    }

    fn port(name: &str, value: ValueId) -> Port {
        Port { name: name.into(), value, layout: Default::default(), loc: Location::default() }
    }

    /// `y = x * inv(z)` (real_div) with `z` of `shape`.
    fn real_div(shape: TensorType) -> Module {
        let mut m = Module::new("net");
        let (x, z) = (m.add_value(shape), m.add_value(shape));
        m.inputs = vec![port("x", x), port("z", z)];
        let r = op(&mut m, OpCode::Neuron, vec![z], shape, &[("mode", Attr::Str("inv".into()))]);
        let y = op(&mut m, OpCode::ScaledElementwise, vec![x, r], shape, &[("kind", Attr::Str("mul".into()))]);
        m.outputs = vec![port("y@output", y)];
        m
    }

    /// `binary_real_div_1x64x1x1`: the reciprocal of a `[1, C, 1, 1]` stays in L2 packed;
    /// of a spatial tensor (no record) it goes through memory.
    #[test]
    fn only_a_channel_vector_reciprocal_is_kept() {
        let m = real_div(f16(64, 1, 1));
        let p = plan_ops(&m);
        assert_eq!(p.kept.values().collect::<Vec<_>>(), vec![&L2Form::Packed]);
        assert!(plan_ops(&real_div(f16(64, 8, 8))).kept.is_empty());
    }

    /// `env_chain_residual_gelu_1x768x1x1`: `x + gelu(x)`: the gelu of a channel vector is
    /// kept packed (one 0x600 row) and x, staged by the table task after it (0x10 per
    /// channel), is the add's first operand in L2; `z + gelu(x)` reads z from memory.
    #[test]
    fn a_table_activation_of_a_vector_is_kept_packed_beside_its_staged_source() {
        let ty = f16(768, 1, 1);
        let residual = |other_input: bool| {
            let mut m = Module::new("net");
            let (x, z) = (m.add_value(ty), m.add_value(ty));
            m.inputs = vec![port("x", x), port("z", z)];
            let g = op(&mut m, OpCode::Neuron, vec![x], ty, &[("mode", Attr::Str("gelu".into()))]);
            let first = if other_input { z } else { x };
            let y = op(&mut m, OpCode::ScaledElementwise, vec![first, g], ty, &[("kind", Attr::Str("add".into()))]);
            m.outputs = vec![port("y@output", y)];
            m
        };
        let m = residual(false);
        let g = m.ops[0].results[0];
        assert_eq!(plan_ops(&m).kept.get(&g), Some(&L2Form::Packed));
        let staged = shared_source(&m, &m.ops[0], g, L2Form::Packed).unwrap();
        assert_eq!((staged.region.base, staged.region.channel, staged.region.row), (0x600, 0x10, 0x3000));
        let m = residual(true);
        assert!(shared_source(&m, &m.ops[0], m.ops[0].results[0], L2Form::Packed).is_none());
    }

    /// A kept value read twice, or as an output, goes through memory.
    #[test]
    fn a_value_with_other_readers_is_not_kept() {
        let mut m = real_div(f16(64, 1, 1));
        let r = m.ops[0].results[0];
        m.outputs.push(port("r@output", r));
        assert!(plan_ops(&m).kept.is_empty());
    }

    /// Regions of the records: the packed reciprocal of 64 channels is one 0x80 row; a
    /// 64-channel copy 0x10 per channel, 0x400 per row; `[bias; scale]` rows of 512 and
    /// 768 channels 0x420 and 0x610 apart.
    #[test]
    fn regions_follow_the_records() {
        let r = region(L2Form::Packed, &f16(64, 1, 1));
        assert_eq!((r.channel, r.row, r.plane, r.size), (0x80, 0x80, 0x80, 0x80));
        let r = region(L2Form::Standard, &f16(64, 1, 1));
        assert_eq!((r.channel, r.row, r.plane, r.size), (0x10, 0x400, 0x400, 0x400));
        let r = region(L2Form::Standard, &f16(1, 1, 1));
        assert_eq!((r.channel, r.row, r.size), (0x10, 0x10, 0x10));
        let r = region(L2Form::Rows, &TensorType::nchw(1, 1, 2, 512, DType::F16));
        assert_eq!((r.channel, r.row, r.plane, r.size), (0x400, 0x420, 0x400, 0x840));
        let r = region(L2Form::Rows, &TensorType::nchw(1, 1, 2, 768, DType::F16));
        assert_eq!((r.row, r.size), (0x610, 0xc20));
    }

    /// Word 0x158 of `env_bcast_add_*`: 0x30 over H and W, 0xb0 also over C, batch none.
    #[test]
    fn broadcast_flags_by_axis() {
        let axes = |a: &[&str]| {
            let mut m = Module::new("n");
            let z = m.add_value(f16(1, 1, 1));
            let list = Attr::Array(a.iter().map(|s| Attr::Str(s.to_string())).collect());
            op(&mut m, OpCode::Broadcast, vec![z], f16(64, 8, 8), &[("axes", list)]);
            broadcast_flags(&m.ops[0])
        };
        assert_eq!(axes(&["height", "width"]), Some(0x30));
        assert_eq!(axes(&["channel", "height", "width"]), Some(0xb0));
        assert_eq!(axes(&["batch", "height", "width"]), Some(0x30));
        assert_eq!(axes(&["depth"]), None);
    }

    #[test]
    fn rows_hold_biases_then_scales_each_padded() {
        let b = rows_bytes(&[0.0, 1.0], &[2.0, 0.5], 64);
        assert_eq!(b.len(), 128);
        assert_eq!(&b[..4], &[0, 0, 0x00, 0x3c]);
        assert_eq!(&b[64..68], &[0x00, 0x40, 0x00, 0x38]);
    }
}
