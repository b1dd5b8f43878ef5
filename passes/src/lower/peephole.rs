//! Rewrites applied as the lowering emits each op (`Cx::emit`), so that the ops the
//! engine runs are not paid twice:
//!
//! - a reshape of a reshape reads the first one's operand; a reshape back to that
//!   operand's type is the operand (reshapes keep the element order);
//! - an activation (`anec.neuron`, elementwise) of a reshape or of a transpose runs before
//!   it: the same values, and the op that writes the operand can apply it as it writes (a
//!   `linear`'s convolution writing through its swap back);
//! - a transpose that undoes an earlier one, through reshapes that lead back to the earlier
//!   one's result type, is that transpose's operand (two `linear`s in a row: the swap back
//!   of the first and the swap of the second cancel).
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
        (OpCode::Neuron, [x]) => activation_first(cx, *x, ty, attrs),
        (OpCode::Transpose, [x]) => undone(cx, *x, ty, attrs),
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

/// The activation of a reshape's or a transpose's result, run on its operand first.
fn activation_first(cx: &mut Cx<'_, '_>, x: ValueId, ty: TensorType, attrs: &Attrs) -> Option<ValueId> {
    let m = cx.module();
    let p = m.producer(x).filter(|p| matches!(p.opcode, OpCode::Reshape | OpCode::Transpose))?;
    let (mover, mover_attrs, src) = (p.opcode, p.attrs.clone(), *p.operands.first()?);
    let src_ty = *m.ty(src)?;
    if src_ty.dtype != ty.dtype {
        return None;
    }
    let n = cx.emit(OpCode::Neuron, &[src], src_ty, attrs.clone());
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

/// The permutation of a `perm` attribute (axis names in anec order).
fn perm(a: &Attr) -> Option<Vec<usize>> {
    a.as_array()?.iter().map(|v| AXIS_NAMES.iter().position(|&n| Some(n) == v.as_str())).collect()
}
