//! Rewrites applied as the lowering emits each op (`Cx::emit`), so that the ops the
//! engine runs are not paid twice:
//!
//! - a reshape of a reshape reads the first one's operand; a reshape back to that
//!   operand's type is the operand (reshapes keep the element order);
//! - an activation (`anec.neuron`, elementwise) of a reshape or of a transpose, or a
//!   scalar gain/offset of a reshape, runs before it: the same values, and the op that
//!   writes the operand can apply it as it writes (a `linear`'s convolution writing
//!   through its swap back, attention's scale in the runtime matmul's post-scale:
//!   `chains.md` §2.6);
//! - a softmax over W of a reshape that keeps W runs before it (each row keeps its
//!   values): attention's scores stay in the matmul's layout, and the reshapes around
//!   the softmax cancel (`chains.md` §2.7);
//! - a transpose that undoes an earlier one, through reshapes that lead back to the earlier
//!   one's result type, is that transpose's operand (two `linear`s in a row: the swap back
//!   of the first and the swap of the second cancel);
//! - a channel<->width transpose of a scalar gain/offset's result (through reshapes) runs
//!   first, the gain/offset after it: a `linear`'s input transpose reads x itself, and the
//!   scale runs on x^T in L2 between the transpose and the convolution (Apple's
//!   `chain_pair_mul_mm`, `chains.md` §2.6). When `x * s` has other readers (not known
//!   while the statement lowers), it stays for them and the scale runs twice.
//!
//! Ops left without readers are removed at the end of the lowering.

use super::cx::Cx;
use super::layout::AXIS_NAMES;
use anec_ir::{Attr, Attrs, OpCode, TensorType, ValueId};

/// The value `opcode(operands)` of type `ty` reduces to, or `None` to emit it as it is.
pub(crate) fn rewrite(
    cx: &mut Cx<'_, '_>,
    opcode: OpCode,
    operands: &[ValueId],
    ty: TensorType,
    attrs: &Attrs,
) -> Option<ValueId> {
    match (opcode, operands) {
        (OpCode::Reshape, [x]) => Some(reshape(cx, *x, ty)),
        (OpCode::Neuron, [x]) => activation_first(cx, OpCode::Neuron, *x, ty, attrs),
        (OpCode::GainOffsetControl, [x]) if scalar(attrs) => {
            activation_first(cx, OpCode::GainOffsetControl, *x, ty, attrs)
        }
        (OpCode::Softmax, [x]) => softmax_first(cx, *x, ty, attrs),
        (OpCode::Transpose, [x]) => undone(cx, *x, ty, attrs).or_else(|| scale_after(cx, *x, ty, attrs)),
        _ => None,
    }
}

/// A reshape of `x` to `ty`, folded through a reshape producing `x`.
fn reshape(cx: &mut Cx<'_, '_>, x: ValueId, ty: TensorType) -> ValueId {
    let m = cx.module();
    let x = match m.producer(x) {
        Some(p) if p.opcode == OpCode::Reshape && p.operands.len() == 1 => p.operands[0],
        _ => x,
    };
    if m.ty(x) == Some(&ty) {
        return x;
    }
    cx.emit_plain(OpCode::Reshape, &[x], ty, Attrs::default())
}

/// True for a gain/offset of one scale and bias (no per-channel data).
fn scalar(attrs: &Attrs) -> bool {
    !attrs.contains_key("scale_data") && !attrs.contains_key("bias_data")
}

/// A softmax over W of a reshape's result that keeps W, run on its operand first.
fn softmax_first(cx: &mut Cx<'_, '_>, x: ValueId, ty: TensorType, attrs: &Attrs) -> Option<ValueId> {
    let m = cx.module();
    if attrs.get("axis").and_then(Attr::as_str) != Some("width") {
        return None;
    }
    let p = m.producer(x).filter(|p| p.opcode == OpCode::Reshape)?;
    let src = *p.operands.first()?;
    let src_ty = *m.ty(src)?;
    if src_ty.w != ty.w || src_ty.dtype != ty.dtype {
        return None;
    }
    let s = cx.emit(OpCode::Softmax, &[src], src_ty, attrs.clone());
    Some(cx.emit(OpCode::Reshape, &[s], ty, Attrs::default()))
}

/// The activation (or scalar gain/offset) `opcode` of a reshape's or a transpose's
/// result, run on its operand first.
fn activation_first(cx: &mut Cx<'_, '_>, opcode: OpCode, x: ValueId, ty: TensorType, attrs: &Attrs) -> Option<ValueId> {
    let m = cx.module();
    // A transpose costs a task: only an activation moves before one (a reshape is a view).
    let movers: &[OpCode] = match opcode {
        OpCode::Neuron => &[OpCode::Reshape, OpCode::Transpose],
        _ => &[OpCode::Reshape],
    };
    let p = m.producer(x).filter(|p| movers.contains(&p.opcode))?;
    let (mover, mover_attrs, src) = (p.opcode, p.attrs.clone(), *p.operands.first()?);
    let src_ty = *m.ty(src)?;
    if src_ty.dtype != ty.dtype {
        return None;
    }
    let n = cx.emit(opcode, &[src], src_ty, attrs.clone());
    Some(cx.emit(mover, &[n], ty, mover_attrs))
}

/// `x` read back through a transpose with the permutation `attrs` holds, when that undoes
/// a transpose whose result reaches `x` through reshapes of the same type.
fn undone(cx: &mut Cx<'_, '_>, x: ValueId, ty: TensorType, attrs: &Attrs) -> Option<ValueId> {
    let m = cx.module();
    let x_ty = *m.ty(x)?;
    let mut cur = x;
    while let Some(p) = m.producer(cur).filter(|p| p.opcode == OpCode::Reshape) {
        cur = *p.operands.first()?;
    }
    let t = m.producer(cur).filter(|p| p.opcode == OpCode::Transpose)?;
    let (src, first) = (*t.operands.first()?, perm(t.attrs.get("perm")?)?);
    let second = perm(attrs.get("perm")?)?;
    let inverse = second.iter().enumerate().all(|(i, &q)| first.get(q) == Some(&i));
    let same = m.ty(cur) == Some(&x_ty) && m.ty(src) == Some(&ty);
    (inverse && same).then_some(src)
}

/// A channel<->width transpose (to `ty`, permutation `attrs`) of `x`, a scalar
/// gain/offset's result through reshapes: the transpose of the gain/offset's operand
/// (reshaped to `x`'s type), then the gain/offset.
fn scale_after(cx: &mut Cx<'_, '_>, x: ValueId, ty: TensorType, attrs: &Attrs) -> Option<ValueId> {
    let m = cx.module();
    let swap = [0, 4, 2, 3, 1];
    if perm(attrs.get("perm")?)? != swap {
        return None;
    }
    let x_ty = *m.ty(x)?;
    let mut cur = x;
    while let Some(p) = m.producer(cur).filter(|p| p.opcode == OpCode::Reshape) {
        cur = *p.operands.first()?;
    }
    let g = m.producer(cur).filter(|p| p.opcode == OpCode::GainOffsetControl && scalar(&p.attrs))?;
    let (src, scale) = (*g.operands.first()?, g.attrs.clone());
    if m.ty(src).map(|t| t.dtype) != Some(ty.dtype) {
        return None;
    }
    let r = reshape(cx, src, x_ty);
    let t = cx.emit_plain(OpCode::Transpose, &[r], ty, attrs.clone());
    Some(cx.emit_plain(OpCode::GainOffsetControl, &[t], ty, scale))
}

/// The permutation of a `perm` attribute (axis names in anec order).
fn perm(a: &Attr) -> Option<Vec<usize>> {
    a.as_array()?.iter().map(|v| AXIS_NAMES.iter().position(|&n| Some(n) == v.as_str())).collect()
}
