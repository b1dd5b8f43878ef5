//! The anec-dialect walk: evaluates a [`Module`]'s ops in order over 5-D `[N, C, D, H, W]`
//! f32 tensors.
//!
//! Inputs are checked against the ports (name, shape); every op's result is checked
//! against its declared type, and a result typed `ui8` / `si8` is converted the way an
//! integer store would (round half to even, saturate). Weight resources decode from their
//! little-endian bytes (`f16`, `f32`, `ui8`, `si8`). Op semantics are in `ops.rs` (data
//! flow and contraction ops), `neuron.rs` (activation modes) and `hidden.rs` /
//! `hidden_rank.rs` (the hidden-layer ops of seed 002; the ones not implemented are an
//! error naming the op).

mod attrs;
mod hidden;
mod hidden_rank;
mod neuron;
mod ops;

use super::RefError;
use crate::tensor::Tensor;
use anec_ir::{DType, Module, Port, TensorType};
use std::collections::BTreeMap;

/// Runs `m` on `inputs` (keyed by input port name, shapes `[N, C, H, W]` or
/// `[N, C, D, H, W]`); returns the outputs keyed by port name without `@output`, shaped
/// `[N, C, H, W]` (`[N, C, D, H, W]` when D > 1).
pub fn run_module(m: &Module, inputs: &BTreeMap<String, Tensor>) -> Result<BTreeMap<String, Tensor>, RefError> {
    let mut vals: Vec<Option<Tensor>> = vec![None; m.values.len()];
    bind_inputs(m, inputs, &mut vals)?;
    for op in &m.ops {
        let fail =
            |reason: String| RefError::ModuleOp { opcode: op.opcode.name().into(), name: op.name.clone(), reason };
        let mut operands = Vec::with_capacity(op.operands.len());
        for id in &op.operands {
            let v = vals.get(id.index()).and_then(Option::as_ref);
            operands.push(v.ok_or_else(|| fail(format!("operand %{} is not defined before the op", id.0)))?);
        }
        let [result] = op.results.as_slice() else {
            return Err(fail(format!("has {} results; every anec op has one", op.results.len())));
        };
        let ty = *m.ty(*result).ok_or_else(|| fail(format!("result %{} has no type", result.0)))?;
        let cx = attrs::OpCx { m, op };
        let out = ops::eval(&cx, &operands, &ty).map_err(fail)?;
        if out.shape != dims5(&ty) {
            return Err(fail(format!("computes a {:?} tensor, but the result type is {ty}", out.shape)));
        }
        let out = store_as(out, ty.dtype);
        if let Some(slot) = vals.get_mut(result.index()) {
            *slot = Some(out);
        }
    }
    collect_outputs(m, &vals)
}

/// The extents of a type in N, C, D, H, W order.
pub(crate) fn dims5(t: &TensorType) -> Vec<usize> {
    [t.n, t.c, t.d, t.h, t.w].iter().map(|&d| d as usize).collect()
}

/// The API shape of a type: `[N, C, H, W]`, or `[N, C, D, H, W]` when D > 1.
fn api_shape(t: &TensorType) -> Vec<usize> {
    t.dims().iter().map(|&d| d as usize).collect()
}

/// Values stored in an integer type: rounded half to even and saturated.
fn store_as(mut t: Tensor, dtype: DType) -> Tensor {
    let (lo, hi) = match dtype {
        DType::U8 => (0.0, 255.0),
        DType::I8 => (-128.0, 127.0),
        DType::F16 | DType::F32 => return t,
    };
    for v in &mut t.data {
        *v = v.round_ties_even().clamp(lo, hi);
    }
    t
}

/// `name [1, 3, 8, 8] (f16), ...` for error messages.
fn port_list(m: &Module, ports: &[Port]) -> String {
    let list: Vec<String> = ports
        .iter()
        .map(|p| match m.ty(p.value) {
            Some(t) => format!("{} {:?} ({})", p.name, api_shape(t), t.dtype),
            None => p.name.clone(),
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// Checks the inputs against the ports and stores them as 5-D tensors.
fn bind_inputs(m: &Module, inputs: &BTreeMap<String, Tensor>, vals: &mut [Option<Tensor>]) -> Result<(), RefError> {
    let expected = || format!("the program's inputs: {}", port_list(m, &m.inputs));
    if let Some(extra) = inputs.keys().find(|k| !m.inputs.iter().any(|p| &p.name == *k)) {
        return Err(RefError::Input(format!("unknown input `{extra}`; {}", expected())));
    }
    for p in &m.inputs {
        let ty = m.ty(p.value).ok_or_else(|| RefError::Input(format!("input `{}` has no type", p.name)))?;
        let t = inputs
            .get(&p.name)
            .ok_or_else(|| RefError::Input(format!("missing input `{}`; {}", p.name, expected())))?;
        let full = dims5(ty);
        if (t.shape != api_shape(ty) && t.shape != full) || t.data.len() != ty.elements() as usize {
            return Err(RefError::Input(format!(
                "input `{}` has shape {:?} with {} values, expected {:?}; {}",
                p.name,
                t.shape,
                t.data.len(),
                api_shape(ty),
                expected()
            )));
        }
        if let Some(slot) = vals.get_mut(p.value.index()) {
            *slot = Some(Tensor { shape: full, data: t.data.clone() });
        }
    }
    Ok(())
}

/// The output tensors keyed by port name without `@output`.
fn collect_outputs(m: &Module, vals: &[Option<Tensor>]) -> Result<BTreeMap<String, Tensor>, RefError> {
    let mut out = BTreeMap::new();
    for p in &m.outputs {
        let key = p.name.strip_suffix("@output").unwrap_or(&p.name).to_string();
        let ty = m.ty(p.value).ok_or_else(|| RefError::Program(format!("output `{}` has no type", p.name)))?;
        let t = vals
            .get(p.value.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| RefError::Program(format!("output `{}` reads a value no op defines", p.name)))?;
        out.insert(key, Tensor { shape: api_shape(ty), data: t.data.clone() });
    }
    Ok(out)
}
