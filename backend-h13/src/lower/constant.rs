//! `anec.constant`: a tensor the network computes at compile time (an additive attention
//! mask, a scale) is no task. Its fp16 value goes into `__const` in the DRAM layout of its
//! type (rows of `r64(2W)` bytes, planes after rows, as `layout::Strides::of`), and the
//! tasks reading it name BAR 1 through the tile DMA, as they would any buffer. A constant
//! that is itself a network output is copied into the output's buffer.

use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::encode::CONST_BAR;
use crate::error::BackendError;
use crate::layout::Strides;
use crate::task::Surface;
use anec_ir::{Attr, DType, Module, Op, TensorType};
use half::f16;

/// Places every constant of `m` in `consts` and gives its value that surface (or, for an
/// output, a copy from it).
pub fn place(m: &Module, bufs: &mut Buffers, consts: &mut ConstSection) -> Result<(), BackendError> {
    for op in m.ops.iter().filter(|op| op.results.first().is_some_and(|&r| crate::buffers::is_constant(m, r))) {
        let Some(&v) = op.results.first() else { continue };
        let output = m.outputs.iter().any(|p| p.value == v);
        if !output && m.users(v).all(|u| u.opcode == anec_ir::OpCode::Reshape) {
            // Read only through reshapes, which are laid out on their own.
            continue;
        }
        let ty = *m.ty(v).ok_or_else(|| BackendError::Internal(format!("no type for '{}'", op.name)))?;
        // A reshape of a constant keeps the element order: the root's values laid out in
        // the reshaped type.
        let surface = add(root(m, op), m, &ty, consts)?;
        match bufs.surfaces.get(&v).copied() {
            Some(out) => bufs.copies.push((op.name.clone(), surface, out)),
            None => {
                bufs.surfaces.insert(v, surface);
            }
        }
    }
    Ok(())
}

/// The `anec.constant` a chain of reshapes starts from.
fn root<'m>(m: &'m Module, op: &'m Op) -> &'m Op {
    match op.operands.first().and_then(|&x| m.producer(x)) {
        Some(p) if op.opcode != anec_ir::OpCode::Constant => root(m, p),
        _ => op,
    }
}

/// The constant's bytes laid out in `__const`, and their surface.
fn add(op: &Op, m: &Module, ty: &TensorType, consts: &mut ConstSection) -> Result<Surface, BackendError> {
    Ok(laid_out(&values(op, m)?, ty, consts))
}

/// A tensor of `ty`'s shape holding `value` everywhere, in `__const` (a pad's fill, a
/// softmax over one element).
pub(super) fn filled(value: f32, ty: &TensorType, consts: &mut ConstSection) -> Surface {
    laid_out(&vec![value; ty.elements() as usize], ty, consts)
}

/// `values` (anec row-major order) as an fp16 tensor of `ty`'s shape in `__const`, and its
/// surface.
pub(super) fn laid_out(values: &[f32], ty: &TensorType, consts: &mut ConstSection) -> Surface {
    let f16_ty = TensorType { dtype: DType::F16, ..*ty };
    let strides = Strides::of(&f16_ty, &Default::default());
    let mut bytes = vec![0u8; strides.buffer_size(&f16_ty) as usize];
    let dims = [ty.n, ty.c, ty.d, ty.h].map(|d| d as usize);
    let mut k = 0;
    for n in 0..dims[0] {
        for c in 0..dims[1] {
            for d in 0..dims[2] {
                for h in 0..dims[3] {
                    let row = n as u64 * strides.batch + d as u64 * strides.depth + c as u64 * strides.plane;
                    let at = (row + h as u64 * strides.row) as usize;
                    for w in 0..ty.w as usize {
                        let bits = f16::from_f32(values.get(k).copied().unwrap_or(0.0)).to_bits();
                        bytes[at + 2 * w..at + 2 * w + 2].copy_from_slice(&bits.to_le_bytes());
                        k += 1;
                    }
                }
            }
        }
    }
    let chunk = consts.add_tensor(&bytes);
    Surface { bar: CONST_BAR as u8, ty: f16_ty, strides, offset: chunk.offset }
}

/// The constant's values in anec row-major order (N, C, D, H, W).
fn values(op: &Op, m: &Module) -> Result<Vec<f32>, BackendError> {
    let Some(Attr::Resource { name, .. }) = op.attr("value") else {
        return Err(BackendError::Internal(format!("constant '{}' has no `value` resource", op.name)));
    };
    let blob = m.resources.get(name).ok_or_else(|| BackendError::Internal(format!("no blob {name}")))?;
    let values: Vec<f32> = match blob.dtype {
        DType::F16 => blob.bytes.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        DType::F32 => blob.bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        DType::U8 => blob.bytes.iter().map(|&b| f32::from(b)).collect(),
        DType::I8 => blob.bytes.iter().map(|&b| f32::from(b as i8)).collect(),
    };
    Ok(values)
}
