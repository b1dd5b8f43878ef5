//! `SDPA` (seed 002 Table B.2, seed 003 listing 26.1): four or five bottoms (query, key,
//! value, scale, optional additive mask: "SDPA layer must have only 4 or 5(optional mask)
//! inputs"); key and value of one shape; the mask broadcast-compatible with the scores; the
//! scale a constant. Not texture-gated: it runs on every family from the M1 on.

use super::cx::{dims5, Check, Cx};

/// `anec.sdpa`.
pub(super) fn sdpa(cx: &Cx<'_>) -> Check {
    let ops = cx.operands();
    let (q, k, v) = match ops.as_slice() {
        [q, k, v, _scale] | [q, k, v, _scale, _] => (*q, *k, *v),
        _ => return Err(cx.reject("SDPA layer must have only 4 or 5(optional mask) inputs")),
    };
    if dims5(&k) != dims5(&v) {
        return Err(cx.reject(format!("SDPA key {k} and value {v} must have the same shape")));
    }
    if !cx.operand_is_constant(3) {
        let s = "bind the scale as a constant (a weight), e.g. 1/sqrt(head dimension)";
        return Err(cx.reject("SDPA scale must be a constant").suggest(s));
    }
    if let Some(mask) = ops.get(4) {
        let scores = [q.n, q.c, q.d, q.h, k.c];
        let fits = dims5(mask).iter().zip(scores).all(|(&m, s)| m == 1 || m == s);
        if !fits {
            let rule = format!("SDPA mask {mask} does not broadcast to the scores {scores:?} (N, Sq, D, H, Sk)");
            return Err(cx.reject(rule));
        }
    }
    Ok(())
}
