//! Lowering of anec ops to H13 tasks, one function per op family.
//!
//! Each function reads the op's verified attributes and operand/result surfaces and
//! returns the [`Task`] its TD encodes; weights and tables go into the const section.

use crate::activation::{self, TableFn};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{ConvGeom, Engine, NeAffine, Nonlinear, PeOp, Surface, Task};
use crate::weights;
use anec_ir::{Attr, Module, Op, OpCode};
use anec_passes::Group;
use half::f16;

/// Splits the generic fusion groups into what one H13 task runs: a fused gain/offset must
/// be scalar, and a fused activation must be native ReLU (a table-driven activation needs
/// kernel channel 0, which the convolution's weights use). Ops left out become groups of
/// their own.
pub fn h13_groups(m: &Module, groups: &[Group]) -> Vec<Group> {
    let mut out = Vec::new();
    for g in groups {
        let mut cur = Group { head: g.head, goc: None, neuron: None };
        for i in g.ops().into_iter().skip(1) {
            let Some(op) = m.ops.get(i) else { continue };
            let fits = match op.opcode {
                OpCode::GainOffsetControl => cur.neuron.is_none() && is_scalar_goc(op),
                OpCode::Neuron => op.attr("mode").and_then(Attr::as_str) == Some("relu"),
                _ => false,
            };
            match (fits, op.opcode) {
                (true, OpCode::GainOffsetControl) => cur.goc = Some(i),
                (true, _) => cur.neuron = Some(i),
                (false, _) => {
                    out.push(cur);
                    cur = Group { head: i, goc: None, neuron: None };
                }
            }
        }
        out.push(cur);
    }
    out
}

fn is_scalar_goc(op: &Op) -> bool {
    op.attr("scale_data").is_none() && op.attr("bias_data").is_none()
}

/// Lowers one group to one task: the head's task, with the fused stages applied and the
/// group's last result as destination.
pub fn lower_group(m: &Module, g: &Group, bufs: &Buffers, consts: &mut ConstSection) -> Result<Task, BackendError> {
    let op = |i: usize| m.ops.get(i).ok_or_else(|| BackendError::Internal(format!("no op {i}")));
    let last = op(g.last())?;
    let result =
        last.results.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no result", last.name)))?;
    let mut t = lower(m, op(g.head)?, bufs.surface(*result)?, bufs, consts)?;
    if let Some(i) = g.goc {
        t.affine = goc_affine(op(i)?)?;
    }
    if g.neuron.is_some() {
        t.nonlinear = Nonlinear::Relu;
    }
    Ok(t)
}

/// Lowers one op writing to `dest`.
pub fn lower(
    m: &Module,
    op: &Op,
    dest: Surface,
    bufs: &Buffers,
    consts: &mut ConstSection,
) -> Result<Task, BackendError> {
    match op.opcode {
        OpCode::Conv => lower_conv(m, op, bufs, dest, consts),
        OpCode::Neuron => lower_neuron(op, bufs, dest, consts),
        OpCode::GainOffsetControl => lower_goc(op, bufs, dest),
        OpCode::ScaledElementwise => lower_scaled_ew(op, bufs, dest),
        other => Err(unsupported(op, &format!("{other} has no H13 lowering yet"))),
    }
}

fn unsupported(op: &Op, reason: &str) -> BackendError {
    BackendError::Unsupported {
        line: op.loc.line,
        layer: op.name.clone(),
        op: op.opcode.name().to_string(),
        reason: reason.to_string(),
    }
}

fn attr<'a>(op: &'a Op, name: &str) -> Result<&'a Attr, BackendError> {
    op.attr(name)
        .ok_or_else(|| BackendError::Internal(format!("verified {} '{}' lacks attribute {name}", op.opcode, op.name)))
}

fn int_pair(op: &Op, name: &str) -> Result<[u32; 2], BackendError> {
    let v = attr(op, name)?.as_int_array().unwrap_or_default();
    match v.as_slice() {
        [a, b] => Ok([u32::try_from(*a).unwrap_or(u32::MAX), u32::try_from(*b).unwrap_or(u32::MAX)]),
        _ => Err(BackendError::Internal(format!("{name} of '{}' is not a pair", op.name))),
    }
}

fn base_task(op: &Op, bufs: &Buffers, dest: Surface, engine: Engine) -> Result<Task, BackendError> {
    let sources = op.operands.iter().map(|&v| bufs.surface(v)).collect::<Result<Vec<_>, _>>()?;
    Ok(Task {
        layer: op.name.clone(),
        engine,
        sources,
        dest,
        conv: ConvGeom::default(),
        kernel: Vec::new(),
        kernel_fmt: None,
        nonlinear: Nonlinear::None,
        pe: None,
        affine: NeAffine::default(),
    })
}

fn lower_conv(
    m: &Module,
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NeConv)?;
    let [kh, kw] = int_pair(op, "kernel")?;
    let [sy, sx] = int_pair(op, "stride")?;
    let pad = attr(op, "pad")?.as_int_array().unwrap_or_default();
    if pad.len() != 4 || pad[0] != pad[1] || pad[2] != pad[3] {
        return Err(unsupported(op, "asymmetric padding is not supported on h13g yet"));
    }
    let groups = attr(op, "groups")?.as_int().unwrap_or(1);
    let (name, _) = attr(op, "weights")?
        .as_resource()
        .ok_or_else(|| BackendError::Internal(format!("weights of '{}' is not a resource", op.name)))?;
    let blob = m.resources.get(name).ok_or_else(|| BackendError::Internal(format!("no blob {name}")))?;
    let bank = weights::bank(blob, t.dest.ty.c)?;
    t.kernel = consts.add_weights(&bank.chunks);
    t.kernel_fmt = Some(bank.fmt);
    t.conv = ConvGeom {
        kh,
        kw,
        sy,
        sx,
        pad_top: u32::try_from(pad[0]).unwrap_or(u32::MAX),
        pad_left: u32::try_from(pad[2]).unwrap_or(u32::MAX),
        groups: u32::try_from(groups).unwrap_or(u32::MAX),
        ocg_size: bank.ocg_size,
    };
    Ok(t)
}

fn lower_neuron(op: &Op, bufs: &Buffers, dest: Surface, consts: &mut ConstSection) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NePass)?;
    let mode = attr(op, "mode")?.as_str().unwrap_or_default();
    t.nonlinear = match (mode, TableFn::for_mode(mode)) {
        ("relu", _) => Nonlinear::Relu,
        (_, Some(f)) => {
            t.kernel = vec![consts.add_table(&activation::table(f))];
            Nonlinear::Table
        }
        _ => return Err(unsupported(op, &format!("neuron mode '{mode}' has no H13 activation table yet"))),
    };
    Ok(t)
}

fn fp16_bits(op: &Op, name: &str, default: f64) -> u16 {
    let v = op.attr(name).and_then(Attr::as_float).unwrap_or(default);
    f16::from_f64(v).to_bits()
}

fn goc_affine(op: &Op) -> Result<NeAffine, BackendError> {
    if !is_scalar_goc(op) {
        return Err(unsupported(op, "per-channel gain/offset (BiasScaleGroupData) is not supported on h13g yet"));
    }
    Ok(NeAffine { scale: fp16_bits(op, "scale", 1.0), bias: fp16_bits(op, "bias", 0.0) })
}

fn lower_goc(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NePass)?;
    t.affine = goc_affine(op)?;
    Ok(t)
}

fn lower_scaled_ew(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::Pe)?;
    let mode = match attr(op, "kind")?.as_str().unwrap_or_default() {
        "add" => 0,
        "mul" => 1,
        "max" => 2,
        "min" => 3,
        other => return Err(unsupported(op, &format!("elementwise '{other}' has no planar-engine mode"))),
    };
    t.pe = Some(PeOp { mode, bias: 0, scale: fp16_bits(op, "scale", 1.0) });
    Ok(t)
}
