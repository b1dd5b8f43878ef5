//! `lstm` and `gru` (coremltools' MIL definitions, iOS15), evaluated step by step in f32
//! as the formulas read, independently of how the compiler unrolls them:
//!
//! - `lstm`: `x` `[s, b, I]`, `weight_ih` `[4H, I]`, `weight_hh` `[4H, H]` in gate order
//!   input, forget, output, cell; optional `bias` `[4H]`, `peephole` `[3H]` (input, forget,
//!   output), `clip`; `i = σ(Wi x + Ri h + bi + pi ⊙ c)`, `f` likewise, `z = tanh(Wz x +
//!   Rz h + bz)`, `c = f ⊙ c + i ⊙ z` (clipped to `±clip`), `o = σ(Wo x + Ro h + bo + po ⊙ c)`,
//!   `h = o ⊙ tanh(c)`. Results: the hidden states (every step with `output_sequence`,
//!   else the last, `[1, b, H]`), the last hidden state and the last cell state.
//! - `gru`: weights `[3H, ·]` in gate order reset, output, update; `z = σ(Wz x + Rz h +
//!   bz)`, `r = σ(Wr x + Rr h + br)`, `o = tanh(Wo x + Ro (r ⊙ h) + bo)`, `h = (1 - z) ⊙
//!   o + z ⊙ h` (coremltools' own numpy reference, `ops/tests/iOS14/test_recurrent.py`).
//!   Results: the hidden states and the last hidden state.
//!
//! `direction` `forward` or `reverse` (the steps taken last to first, the outputs in the
//! order they are computed); the activations `sigmoid`, `tanh`, `relu`, `linear`,
//! `hard_sigmoid` (α 0.2, β 0.5) and `scaled_tanh` (α 1, β 1). Bidirectional layers are
//! refused.

use super::args::Sx;
use super::value::MTensor;
use crate::tensor::Tensor;

/// A named activation.
fn act(name: &str) -> Result<fn(f32) -> f32, String> {
    Ok(match name {
        "sigmoid" => |v| 1.0 / (1.0 + (-v).exp()),
        "tanh" => f32::tanh,
        "relu" => |v| v.max(0.0),
        "linear" => |v| v,
        "hard_sigmoid" => |v| (0.2 * v + 0.5).clamp(0.0, 1.0),
        "scaled_tanh" => f32::tanh,
        other => return Err(format!("unknown activation `{other}`")),
    })
}

/// The shared inputs of both ops.
struct Layer {
    x: Tensor,
    wih: Tensor,
    whh: Tensor,
    bias: Vec<f32>,
    hidden: usize,
    reverse: bool,
    sequence: bool,
}

fn layer(sx: &Sx<'_>, gates: usize) -> Result<Layer, String> {
    let x = sx.x("x")?;
    let [_, b, i] = x.shape[..] else { return Err(format!("`x` {:?} must be [s, b, I]", x.shape)) };
    let (wih, whh) = (sx.x("weight_ih")?, sx.x("weight_hh")?);
    let hidden = wih.shape.first().copied().unwrap_or(0) / gates;
    if wih.shape != [gates * hidden, i] || whh.shape != [gates * hidden, hidden] || hidden == 0 {
        return Err(format!("weights {:?} and {:?} do not fit {gates} gates over {i} inputs", wih.shape, whh.shape));
    }
    let bias = sx.opt_x("bias")?.map_or_else(|| vec![0.0; gates * hidden], |t| t.data);
    let reverse = match sx.string("direction")?.as_deref().unwrap_or("forward") {
        "forward" => false,
        "reverse" => true,
        other => return Err(format!("direction `{other}` is not evaluated (forward and reverse are)")),
    };
    if bias.len() != gates * hidden || b == 0 {
        return Err(format!("`bias` has {} values, expected {}", bias.len(), gates * hidden));
    }
    Ok(Layer { x, wih, whh, bias, hidden, reverse, sequence: sx.bool("output_sequence")?.unwrap_or(false) })
}

/// `W[g·H + k] · v` for every `k` of gate `g`.
fn gate(w: &Tensor, g: usize, hidden: usize, v: &[f32]) -> Vec<f32> {
    let n = v.len();
    (0..hidden).map(|k| (0..n).map(|j| w.data[(g * hidden + k) * n + j] * v[j]).sum()).collect()
}

/// Row `r` of batch entry `bi` of a `[rows, b, n]` tensor, or of a `[b, n]` one.
fn row(t: &Tensor, step: Option<usize>, bi: usize) -> Vec<f32> {
    let (b, n) = (t.shape[t.shape.len() - 2], t.shape[t.shape.len() - 1]);
    let at = (step.unwrap_or(0) * b + bi) * n;
    t.data[at..at + n].to_vec()
}

/// The steps in the order they are taken.
fn steps(l: &Layer) -> Vec<usize> {
    let s = l.x.shape[0];
    if l.reverse {
        (0..s).rev().collect()
    } else {
        (0..s).collect()
    }
}

/// `[s, b, H]` (or `[1, b, H]`) from the states of each batch entry, step by step.
fn stacked(per_batch: &[Vec<Vec<f32>>], hidden: usize, sequence: bool) -> Tensor {
    let b = per_batch.len();
    let s = per_batch.first().map_or(0, Vec::len);
    let keep: Vec<usize> = if sequence { (0..s).collect() } else { vec![s.saturating_sub(1)] };
    let mut data = Vec::with_capacity(keep.len() * b * hidden);
    for &t in &keep {
        for states in per_batch {
            data.extend_from_slice(&states[t]);
        }
    }
    Tensor { shape: vec![keep.len(), b, hidden], data }
}

fn last(per_batch: &[Vec<Vec<f32>>], hidden: usize) -> Tensor {
    let data = per_batch.iter().flat_map(|s| s.last().cloned().unwrap_or_default()).collect();
    Tensor { shape: vec![per_batch.len(), hidden], data }
}

/// `lstm`.
pub(crate) fn lstm(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let l = layer(sx, 4)?;
    if sx.float("clip")?.is_some_and(f32::is_finite) {
        return Err("`clip` is not evaluated".into());
    }
    let h0 = sx.x("initial_h")?;
    let c0 = sx.x("initial_c")?;
    let peep = sx.opt_x("peephole")?.map_or_else(|| vec![0.0; 3 * l.hidden], |t| t.data);
    let rec = act(&sx.string("recurrent_activation")?.unwrap_or_else(|| "sigmoid".into()))?;
    let cell = act(&sx.string("cell_activation")?.unwrap_or_else(|| "tanh".into()))?;
    let out = act(&sx.string("activation")?.unwrap_or_else(|| "tanh".into()))?;
    let hd = l.hidden;
    let b = l.x.shape[1];
    let (mut hs, mut cs) = (Vec::new(), Vec::new());
    for bi in 0..b {
        let (mut h, mut c) = (row(&h0, None, bi), row(&c0, None, bi));
        let (mut hseq, mut cseq) = (Vec::new(), Vec::new());
        for t in steps(&l) {
            let x = row(&l.x, Some(t), bi);
            let pre = |g: usize| -> Vec<f32> {
                let (a, r) = (gate(&l.wih, g, hd, &x), gate(&l.whh, g, hd, &h));
                (0..hd).map(|k| a[k] + r[k] + l.bias[g * hd + k]).collect()
            };
            let (pi, pf, po, pz) = (pre(0), pre(1), pre(2), pre(3));
            let i: Vec<f32> = (0..hd).map(|k| rec(pi[k] + peep[k] * c[k])).collect();
            let f: Vec<f32> = (0..hd).map(|k| rec(pf[k] + peep[hd + k] * c[k])).collect();
            let z: Vec<f32> = pz.iter().map(|&v| cell(v)).collect();
            c = (0..hd).map(|k| f[k] * c[k] + i[k] * z[k]).collect();
            let o: Vec<f32> = (0..hd).map(|k| rec(po[k] + peep[2 * hd + k] * c[k])).collect();
            h = (0..hd).map(|k| o[k] * out(c[k])).collect();
            hseq.push(h.clone());
            cseq.push(c.clone());
        }
        hs.push(hseq);
        cs.push(cseq);
    }
    let dtype = sx.float_dtype();
    Ok(vec![
        MTensor::float(dtype, stacked(&hs, hd, l.sequence)),
        MTensor::float(dtype, last(&hs, hd)),
        MTensor::float(dtype, last(&cs, hd)),
    ])
}

/// `gru`.
pub(crate) fn gru(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let l = layer(sx, 3)?;
    let h0 = sx.x("initial_h")?;
    let rec = act(&sx.string("recurrent_activation")?.unwrap_or_else(|| "sigmoid".into()))?;
    let out = act(&sx.string("activation")?.unwrap_or_else(|| "tanh".into()))?;
    let hd = l.hidden;
    let b = l.x.shape[1];
    let mut hs = Vec::new();
    for bi in 0..b {
        let mut h = row(&h0, None, bi);
        let mut hseq = Vec::new();
        for t in steps(&l) {
            let x = row(&l.x, Some(t), bi);
            let input = |g: usize| gate(&l.wih, g, hd, &x);
            let (xr, xo, xz) = (input(0), input(1), input(2));
            let (hr, hz) = (gate(&l.whh, 0, hd, &h), gate(&l.whh, 2, hd, &h));
            let r: Vec<f32> = (0..hd).map(|k| rec(xr[k] + hr[k] + l.bias[k])).collect();
            let z: Vec<f32> = (0..hd).map(|k| rec(xz[k] + hz[k] + l.bias[2 * hd + k])).collect();
            let reset: Vec<f32> = (0..hd).map(|k| r[k] * h[k]).collect();
            let ho = gate(&l.whh, 1, hd, &reset);
            let o: Vec<f32> = (0..hd).map(|k| out(xo[k] + ho[k] + l.bias[hd + k])).collect();
            h = (0..hd).map(|k| (1.0 - z[k]) * o[k] + z[k] * h[k]).collect();
            hseq.push(h.clone());
        }
        hs.push(hseq);
    }
    let dtype = sx.float_dtype();
    Ok(vec![MTensor::float(dtype, stacked(&hs, hd, l.sequence)), MTensor::float(dtype, last(&hs, hd))])
}
