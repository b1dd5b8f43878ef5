//! `softmax(x, axis = -1)` and `scaled_dot_product_attention(query, key, value,
//! attn_mask?)` (iOS18): `softmax(q k^T / sqrt(E) + mask) v` over the last two axes, the
//! leading axes broadcast; a boolean mask keeps the positions where it is true (the others
//! get -inf), a float mask is added.

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::axis_index;
use crate::reference::kernels::elementwise::{binary, unary};
use crate::reference::kernels::matmul::matmul;
use crate::reference::kernels::shape::transpose;
use crate::reference::kernels::softmax::softmax as softmax_kernel;
use anec_ir::mil::ScalarType;

/// `softmax`.
pub(crate) fn softmax(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let axis = axis_index(sx.int("axis")?.unwrap_or(-1), x.shape.len())?;
    Ok(sx.one(softmax_kernel(&x, axis)?))
}

/// `scaled_dot_product_attention`.
pub(crate) fn sdpa(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let (q, k, v) = (sx.x("query")?, sx.x("key")?, sx.x("value")?);
    let rank = k.shape.len();
    if q.shape.len() < 2 || rank < 2 {
        return Err("query, key and value need rank >= 2".into());
    }
    let e = *q.shape.last().ok_or("empty query shape")?;
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(rank - 2, rank - 1);
    let scores = matmul(&q, &transpose(&k, &perm)?)?;
    let scale = 1.0 / (e as f64).sqrt();
    let mut scores = unary(&scores, |s| (f64::from(s) * scale) as f32)?;
    if let Some(mask) = sx.value("attn_mask")? {
        let m = mask.to_f32()?;
        scores = if mask.dtype == ScalarType::Bool {
            binary(&scores, &m, |s, keep| if keep != 0.0 { s } else { f32::NEG_INFINITY })?
        } else {
            binary(&scores, &m, |s, add| s + add)?
        };
    }
    let last = scores.shape.len() - 1;
    let p = softmax_kernel(&scores, last)?;
    Ok(sx.one(matmul(&p, &v)?))
}
