//! `scaled_dot_product_attention(query, key, value, attn_mask?)` (iOS18) to `anec.sdpa`.
//!
//! `anec.sdpa` wants the sequence on C and the head dimension on W, with key and value of
//! one shape. The rank mapping holds a rank-3 `[B, L, E]` operand as `1 x B x 1 x L x E`
//! and a rank-4 `[B, H, L, E]` as `B x H x 1 x L x E`, so each operand (and the result)
//! is transposed channel <-> height, once per distinct value (self-attention reads one). The scale
//! `1 / sqrt(E)` is an `anec.constant` operand; a constant mask is emitted as a constant
//! (a boolean mask becomes additive: 0 where true, -65504 where false), a runtime mask is
//! used as is; both are promoted to the query's rank and transposed like it.

use super::consts::materialize;
use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::elementwise::{v, F16_MAX};
use super::layout::{promote, C, H};
use super::shape::{reshape_rt, swap, swapped};
use super::tensor::Tensor;
use anec_ir::mil::ScalarType;
use anec_ir::{Attr, OpCode, ValueId};

/// `scaled_dot_product_attention`.
pub(crate) fn sdpa(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let q = cx.input("query")?;
    let k = cx.input("key")?;
    let val = cx.input("value")?;
    let rank = q.shape.len();
    let axis = match rank {
        3 | 4 => H,
        r => return Err(Fail::Msg(format!("rank-{r} operands are not supported (ranks 3 and 4)"))),
    };
    if k.shape != val.shape || k.shape.len() != rank {
        return Err(Fail::Msg(format!(
            "key {:?} and value {:?} must have one shape (of the query's rank)",
            k.shape, val.shape
        )));
    }
    let e = q.shape[rank - 1];
    if k.shape[rank - 1] != e || k.shape[..rank - 2] != q.shape[..rank - 2] {
        return Err(Fail::Msg(format!("query {:?} does not match key {:?}", q.shape, k.shape)));
    }
    let scale = Tensor::floats(ScalarType::Fp16, vec![], vec![1.0 / (e as f32).sqrt()]);
    let scale = materialize(cx, &scale)?;
    let mut moved: Vec<(ValueId, ValueId)> = Vec::with_capacity(3);
    let mut operands = Vec::with_capacity(5);
    for t in [&q, &k, &val] {
        let id = match moved.iter().find(|(from, _)| *from == t.id) {
            Some(&(_, to)) => to,
            None => swap(cx, v(t), C, axis).0,
        };
        moved.push((t.id, id));
        operands.push(id);
    }
    operands.push(scale.id);
    if let Some(m) = mask(cx, rank)? {
        operands.push(swap(cx, v(&m), C, axis).0);
    }
    let qt = swapped(q.ty, C, axis);
    let id = cx.emit(OpCode::Sdpa, &operands, qt, attrs([("subtract_max", Attr::Bool(true))]));
    let out = swap(cx, (id, qt), C, axis);
    Ok(vec![Val::Rt(Rt { id: out.0, ty: out.1, shape: q.shape.clone() })])
}

/// The mask as a runtime tensor of `rank`, if there is one.
fn mask(cx: &mut Cx<'_, '_>, rank: usize) -> LResult<Option<Rt>> {
    let m = match cx.val("attn_mask")? {
        None => return Ok(None),
        Some(Val::Const(t)) => {
            let additive = if t.dtype == ScalarType::Bool {
                let values = t.as_f32().ok_or("`attn_mask` must be numeric")?;
                let add = values.iter().map(|&b| if b != 0.0 { 0.0 } else { -F16_MAX }).collect();
                Tensor::floats(ScalarType::Fp16, t.shape.clone(), add)
            } else {
                (*t).clone()
            };
            materialize(cx, &additive.reshaped(promote(&t.shape, rank)))?
        }
        Some(other) => cx.runtime(other, "attn_mask")?,
    };
    if m.shape.len() > rank {
        return Err(Fail::Msg(format!("`attn_mask` {:?} has a higher rank than the query", m.shape)));
    }
    Ok(Some(reshape_rt(cx, &m, promote(&m.shape, rank))?))
}
