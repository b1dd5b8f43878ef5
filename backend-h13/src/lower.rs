//! Lowering of anec ops to H13 tasks, one function per op family.
//!
//! Each function reads the op's verified attributes and operand/result surfaces and
//! returns the [`Task`] its TD encodes; weights and tables go into the const section.

use crate::activation::{self, TableFn};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{ConvGeom, Engine, NeAffine, Nonlinear, PeOp, Task};
use crate::weights;
use anec_ir::{Attr, Module, Op, OpCode};
use half::f16;

/// Lowers one op.
pub fn lower(m: &Module, op: &Op, bufs: &Buffers, consts: &mut ConstSection) -> Result<Task, BackendError> {
    match op.opcode {
        OpCode::Conv => lower_conv(m, op, bufs, consts),
        OpCode::Neuron => lower_neuron(op, bufs, consts),
        OpCode::GainOffsetControl => lower_goc(op, bufs),
        OpCode::ScaledElementwise => lower_scaled_ew(op, bufs),
        other => Err(unsupported(op, &format!("{other} has no H13 lowering yet"))),
    }
}

fn unsupported(op: &Op, reason: &str) -> BackendError {
    BackendError::Unsupported { layer: op.name.clone(), op: op.opcode.name().to_string(), reason: reason.to_string() }
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

fn base_task(op: &Op, bufs: &Buffers, engine: Engine) -> Result<Task, BackendError> {
    let sources = op.operands.iter().map(|&v| bufs.surface(v)).collect::<Result<Vec<_>, _>>()?;
    let result = op.results.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no result", op.name)))?;
    Ok(Task {
        layer: op.name.clone(),
        engine,
        sources,
        dest: bufs.surface(*result)?,
        conv: ConvGeom::default(),
        kernel: Vec::new(),
        kernel_fmt: None,
        nonlinear: Nonlinear::None,
        pe: None,
        affine: NeAffine::default(),
    })
}

fn lower_conv(m: &Module, op: &Op, bufs: &Buffers, consts: &mut ConstSection) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, Engine::NeConv)?;
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

fn lower_neuron(op: &Op, bufs: &Buffers, consts: &mut ConstSection) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, Engine::NePass)?;
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

fn lower_goc(op: &Op, bufs: &Buffers) -> Result<Task, BackendError> {
    if op.attr("scale_data").is_some() || op.attr("bias_data").is_some() {
        return Err(unsupported(op, "per-channel gain/offset (BiasScaleGroupData) is not supported on h13g yet"));
    }
    let mut t = base_task(op, bufs, Engine::NePass)?;
    t.affine = NeAffine { scale: fp16_bits(op, "scale", 1.0), bias: fp16_bits(op, "bias", 0.0) };
    Ok(t)
}

fn lower_scaled_ew(op: &Op, bufs: &Buffers) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, Engine::Pe)?;
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
