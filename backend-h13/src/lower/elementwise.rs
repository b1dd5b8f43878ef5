//! Elementwise ops on the planar engine, and the gain/offset.

use super::{attr, base_task};
use crate::affine::gain_offset;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{Engine, PeOp, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Attr, Module, Op};
use half::f16;

pub(super) fn fp16_bits(op: &Op, name: &str, default: f64) -> u16 {
    let v = op.attr(name).and_then(Attr::as_float).unwrap_or(default);
    f16::from_f64(v).to_bits()
}

/// A gain/offset that is not fused into a convolution: with per-channel data an NE pass
/// task (bias and post-scale streams); a scalar one on the planar engine's BiasScale word
/// where the generation does so (`y = (x + B/S) * S`; the planar engine loops over a
/// batch), else an NE pass task. Its operand may be 8-bit and its result fp16: the cast
/// of a bool, uint8 or int8 input (scale 1, bias 0), which the engine converts by InFmt
/// (Apple's `cast_b_to_f16_1x1x64x1`: the one-operand identity, Cfg 0x21, BiasScale
/// 0x3c000000).
pub(super) fn lower_goc(
    m: &Module,
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Task, BackendError> {
    let (affine, vectors) = gain_offset(m, op, dest.ty.c, consts)?;
    if gen.scalar_affine_on_pe && !vectors.any() {
        let mut t = base_task(op, bufs, dest, Engine::Pe)?;
        t.pe =
            Some(PeOp { mode: PE_ADD, negate: false, bias: affine.bias, scale: affine.scale, abs: false, relu: false });
        return Ok(t);
    }
    let mut t = base_task(op, bufs, dest, Engine::NePass)?;
    (t.affine, t.vectors) = (affine, vectors);
    Ok(t)
}

/// PE OpMode of add (the mode of a one-operand task that only applies BiasScale).
pub(super) const PE_ADD: u32 = 0;

pub(super) fn lower_scaled_ew(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let t = base_task(op, bufs, dest, Engine::Pe)?;
    lower_scaled_ew_from(op, t.sources, dest)
}

/// The planar-engine task of a scaled elementwise op reading `sources` (the second operand
/// may come from L2 instead, `l2_pair`).
pub(super) fn lower_scaled_ew_from(op: &Op, sources: Vec<Surface>, dest: Surface) -> Result<Task, BackendError> {
    let mut t = Task::new(&op.name, Engine::Pe, sources, dest);
    let (mode, negate) = match attr(op, "kind")?.as_str().unwrap_or_default() {
        "add" => (PE_ADD, false),
        "sub" => (PE_ADD, true),
        "mul" => (1, false),
        "max" => (2, false),
        "min" => (3, false),
        other => return Err(unsupported(op, &format!("elementwise '{other}' has no planar-engine mode"))),
    };
    t.pe = Some(PeOp { mode, negate, bias: 0, scale: fp16_bits(op, "scale", 1.0), abs: false, relu: false });
    Ok(t)
}
