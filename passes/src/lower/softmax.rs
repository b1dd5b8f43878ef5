//! `softmax(x, axis)` to `anec.softmax` on the mapped axis.

use super::cx::{attrs, axis_attr, Cx, LResult, Val};
use super::elementwise::rt_with;
use super::layout;
use anec_ir::OpCode;

/// `softmax`.
pub(crate) fn softmax(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let rank = x.shape.len();
    let axis = cx.int("axis")?.unwrap_or(-1);
    let k = layout::normalize_axis(axis, rank).ok_or_else(|| format!("axis {axis} is out of range for rank {rank}"))?;
    let anec = layout::anec_axis(rank, k).ok_or("the rank is not supported")?;
    let id = cx.emit(OpCode::Softmax, &[x.id], x.ty, attrs([("axis", axis_attr(anec))]));
    Ok(vec![Val::Rt(rt_with(&x, (id, x.ty)))])
}
