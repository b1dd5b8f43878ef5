//! `lstm` and `gru` with a static sequence length, unrolled into what the engine runs:
//! per gate, one 1x1 convolution over every step's input at once (`W_g x_t + b_g`, the
//! steps as rows), and per step, a 1x1 convolution of the hidden state (`R_g h`), the
//! adds, the activations and the state updates as elementwise ops on channel vectors
//! (`[1, H, 1, 1]`). The formulas are coremltools' (its MIL definitions and its own
//! numpy references; `tools/src/reference/mil/recurrent.rs` evaluates them directly):
//!
//! - lstm (gates input, forget, output, cell): `i = σ(..+ p_i ⊙ c)`, `f = σ(..+ p_f ⊙ c)`,
//!   `z = tanh(..)`, `c = f ⊙ c + i ⊙ z`, `o = σ(..+ p_o ⊙ c)`, `h = o ⊙ tanh(c)`;
//! - gru (gates reset, output, update): `z = σ(..)`, `r = σ(..)`, `o = tanh(W_o x + b_o +
//!   R_o (r ⊙ h))`, `h = (1 - z) ⊙ o + z ⊙ h`.
//!
//! The results: the hidden states (`[s, 1, H]`, or the last as `[1, 1, H]`), the last
//! hidden state and, for lstm, the last cell state (`[1, H]`). A zero initial state
//! drops the first step's recurrent terms. One sequence (batch 1), `forward` or
//! `reverse`, activations `sigmoid`, `tanh`, `relu` and `linear`, up to 1024 steps; a
//! batch, a longer sequence, a bidirectional layer, `clip` or another activation is
//! refused by name.

use super::consts::{materialize, weight_dtype};
use super::conv::{add_bias, emit_conv, ConvSpec};
use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::elementwise::{goc, neuron, scaled, Goc, V};
use super::layout::{anec_type, C, W};
use super::shape::swap;
use super::tensor::{Data, Tensor};
use anec_ir::{Attr, OpCode, TensorType};

/// The most steps a recurrent layer is unrolled over (each step is about thirty ops; a
/// sequence this long is better run as a loop of dispatches than as one program).
const MAX_STEPS: u64 = 1024;

/// What both layers share.
struct Layer {
    /// Input-side pre-activations per gate: `[1, H, s, 1]`, the steps as rows.
    inputs: Vec<V>,
    /// Hidden-side weights per gate (`H x H`, row-major).
    recurrent: Vec<Vec<f32>>,
    hidden: u32,
    /// Steps in the order they are taken.
    order: Vec<u32>,
    sequence: bool,
    /// The weights' element type.
    dtype: anec_ir::DType,
    /// The initial hidden state as a channel vector, `None` when zero.
    h0: Option<V>,
}

/// An activation's neuron mode, `None` for `linear`.
fn mode(name: &str) -> LResult<Option<&'static str>> {
    match name {
        "sigmoid" => Ok(Some("sigmoid")),
        "tanh" => Ok(Some("tanh")),
        "relu" => Ok(Some("relu")),
        "linear" => Ok(None),
        other => Err(Fail::Msg(format!(
            "a recurrent layer with activation `{other}` is not lowered (sigmoid, tanh, relu and linear are)"
        ))),
    }
}

fn activation(cx: &mut Cx<'_, '_>, key: &str, default: &str) -> LResult<Option<&'static str>> {
    mode(&cx.string(key)?.unwrap_or_else(|| default.into()))
}

fn apply(cx: &mut Cx<'_, '_>, x: V, m: Option<&str>) -> V {
    match m {
        Some(m) => neuron(cx, x, m, None, None),
        None => x,
    }
}

/// Rows `g·H ..` of a `[G·H, n]` weight.
fn rows(w: &[f32], g: usize, hidden: usize, n: usize) -> Vec<f32> {
    w[g * hidden * n..(g + 1) * hidden * n].to_vec()
}

/// A 1x1 convolution of `x` with `weights` (`cout x x.c`).
fn conv(cx: &mut Cx<'_, '_>, x: V, weights: &[f32], cout: u32, dtype: anec_ir::DType) -> LResult<V> {
    let spec = ConvSpec { cout, kernel: [1, 1], stride: [1, 1], pad: [0; 4], groups: 1 };
    emit_conv(cx, x, &spec, super::consts::blob(weights, dtype))
}

/// A `[1, H]` state as a channel vector (a constant one stored so), or `None` for a
/// constant zero one.
fn state(cx: &mut Cx<'_, '_>, key: &str) -> LResult<Option<V>> {
    let val = cx.val(key)?.ok_or_else(|| format!("missing input `{key}`"))?;
    if let Val::Const(t) = &val {
        let values = t.as_f32().ok_or_else(|| format!("`{key}` must be numeric"))?;
        if values.iter().all(|&x| x == 0.0) {
            return Ok(None);
        }
        let column = Tensor { dtype: t.dtype, shape: vec![1, values.len() as u64, 1, 1], data: Data::Float(values) };
        let rt = materialize(cx, &column)?;
        return Ok(Some((rt.id, rt.ty)));
    }
    let rt = cx.runtime(val, key)?;
    Ok(Some(swap(cx, (rt.id, rt.ty), C, W)))
}

/// Reads the shared inputs and emits the input-side convolutions of `gates` gates.
fn layer(cx: &mut Cx<'_, '_>, gates: usize) -> LResult<Layer> {
    let x = cx.input("x")?;
    let [s, b, i] = x.shape[..] else { return Err(Fail::Msg(format!("`x` {:?} must be [s, b, I]", x.shape))) };
    if b != 1 {
        return Err(Fail::Msg(format!(
            "a recurrent layer over a batch of {b} sequences is not lowered (one sequence is)"
        )));
    }
    if s > MAX_STEPS {
        return Err(Fail::Msg(format!("a recurrent layer over {s} steps is not unrolled (at most {MAX_STEPS} are)")));
    }
    let reverse = match cx.string("direction")?.as_deref().unwrap_or("forward") {
        "forward" => false,
        "reverse" => true,
        other => return Err(Fail::Msg(format!("a {other} recurrent layer is not lowered (forward and reverse are)"))),
    };
    let (wih, whh) = (cx.req_konst("weight_ih")?, cx.req_konst("weight_hh")?);
    let hidden = wih.shape.first().copied().unwrap_or(0) / gates as u64;
    if wih.shape != [gates as u64 * hidden, i] || whh.shape != [gates as u64 * hidden, hidden] || hidden == 0 {
        return Err(Fail::Msg(format!(
            "weights {:?} and {:?} do not fit {gates} gates over {i} inputs",
            wih.shape, whh.shape
        )));
    }
    let bias = cx.konst("bias")?;
    let (wi, wh) =
        (wih.as_f32().ok_or("`weight_ih` must be numeric")?, whh.as_f32().ok_or("`weight_hh` must be numeric")?);
    let b = match &bias {
        Some(t) => t.as_f32().ok_or("`bias` must be numeric")?,
        None => vec![0.0; gates * hidden as usize],
    };
    let (hd, n) = (hidden as usize, i as usize);
    let dtype = weight_dtype(wih.dtype);
    let h32 = u32::try_from(hidden).map_err(|_| "too many hidden units")?;
    let s32 = u32::try_from(s).map_err(|_| "too many steps")?;
    // The steps as rows of one channel, then channels <-> width: I channels of s rows.
    let rows_ty = TensorType { c: 1, h: s32, ..x.ty };
    let steps = (cx.emit(OpCode::Reshape, &[x.id], rows_ty, attrs([])), rows_ty);
    let steps = swap(cx, steps, C, W);
    let mut inputs = Vec::with_capacity(gates);
    for g in 0..gates {
        let pre = conv(cx, steps, &rows(&wi, g, hd, n), h32, dtype)?;
        let bias =
            Tensor { dtype: wih.dtype, shape: vec![hidden], data: Data::Float(b[g * hd..(g + 1) * hd].to_vec()) };
        inputs.push(add_bias(cx, pre, Some(&bias))?);
    }
    let order = if reverse { (0..s32).rev().collect() } else { (0..s32).collect() };
    let h0 = state(cx, "initial_h")?;
    let recurrent = (0..gates).map(|g| rows(&wh, g, hd, hd)).collect();
    Ok(Layer {
        inputs,
        recurrent,
        hidden: h32,
        order,
        sequence: cx.boolean("output_sequence")?.unwrap_or(false),
        dtype,
        h0,
    })
}

impl Layer {
    /// Gate `g`'s input-side pre-activation at step `t`: row `t` of its convolution.
    fn input_at(&self, cx: &mut Cx<'_, '_>, g: usize, t: u32) -> V {
        let (v, ty) = self.inputs[g];
        let one = TensorType { h: 1, ..ty };
        let a = attrs([
            ("axis", Attr::Str("height".into())),
            ("offset", Attr::Int(i64::from(t))),
            ("size", Attr::Int(1)),
            ("step", Attr::Int(1)),
        ]);
        (cx.emit(OpCode::InputView, &[v], one, a), one)
    }

    /// `R_g h`, or `None` for a zero state.
    fn recurrent_at(&self, cx: &mut Cx<'_, '_>, g: usize, h: Option<V>) -> LResult<Option<V>> {
        h.map(|h| conv(cx, h, &self.recurrent[g], self.hidden, self.dtype)).transpose()
    }

    /// `input + R_g h` at step `t`.
    fn pre(&self, cx: &mut Cx<'_, '_>, g: usize, t: u32, h: Option<V>) -> LResult<V> {
        let x = self.input_at(cx, g, t);
        Ok(match self.recurrent_at(cx, g, h)? {
            Some(r) => scaled(cx, x, r, "add", 1.0),
            None => x,
        })
    }

    /// The results as MIL values: the hidden states, then the last `states`.
    fn results(&self, cx: &mut Cx<'_, '_>, hs: &[V], states: &[V]) -> LResult<Vec<Val>> {
        let last = *hs.last().ok_or("a recurrent layer of no steps")?;
        let y = match (self.sequence, hs) {
            (true, [_, _, ..]) => {
                let ids: Vec<_> = hs.iter().map(|h| h.0).collect();
                let ty = TensorType { h: hs.len() as u32, ..last.1 };
                (cx.emit(OpCode::Concat, &ids, ty, attrs([("axis", Attr::Str("height".into()))])), ty)
            }
            _ => last,
        };
        let steps = u64::from(y.1.h);
        let mut out = vec![Val::Rt(row_major(cx, y, vec![steps, 1, u64::from(self.hidden)])?)];
        for &s in states {
            out.push(Val::Rt(row_major(cx, s, vec![1, u64::from(self.hidden)])?));
        }
        Ok(out)
    }
}

/// Channel vectors (`[1, H, rows, 1]`) as the MIL tensor `shape` (`[rows, 1, H]` or
/// `[1, H]`): channels <-> width, then the rows read as the MIL layout puts them.
fn row_major(cx: &mut Cx<'_, '_>, v: V, shape: Vec<u64>) -> LResult<Rt> {
    let swapped = swap(cx, v, C, W);
    let ty = anec_type(&shape)?;
    let id = if ty == swapped.1 { swapped.0 } else { cx.emit(OpCode::Reshape, &[swapped.0], ty, attrs([])) };
    Ok(Rt { id, ty, shape })
}

/// `lstm`.
pub(crate) fn lstm(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    if cx.float("clip")?.is_some() {
        return Err(Fail::Msg("an lstm with `clip` is not lowered".into()));
    }
    let (rec, cell, out) = (
        activation(cx, "recurrent_activation", "sigmoid")?,
        activation(cx, "cell_activation", "tanh")?,
        activation(cx, "activation", "tanh")?,
    );
    let l = layer(cx, 4)?;
    let peep = match cx.konst("peephole")? {
        Some(t) => t.as_f32().ok_or("`peephole` must be numeric")?,
        None => Vec::new(),
    };
    let hd = l.hidden as usize;
    let peephole =
        |g: usize| peep.get(g * hd..(g + 1) * hd).filter(|p| p.iter().any(|&v| v != 0.0)).map(<[f32]>::to_vec);
    let (mut h, mut c) = (l.h0, state(cx, "initial_c")?);
    let mut hs = Vec::with_capacity(l.order.len());
    for &t in &l.order {
        let gate = |cx: &mut Cx<'_, '_>, g: usize, p: Option<Vec<f32>>, c: Option<V>| -> LResult<V> {
            let pre = l.pre(cx, g, t, h)?;
            let pre = match (p, c) {
                (Some(p), Some(c)) => {
                    let pc = goc(cx, c, Goc { scale_data: Some(p), ..Goc::default() });
                    scaled(cx, pre, pc, "add", 1.0)
                }
                _ => pre,
            };
            Ok(pre)
        };
        let i = gate(cx, 0, peephole(0), c)?;
        let i = apply(cx, i, rec);
        let f = gate(cx, 1, peephole(1), c)?;
        let f = apply(cx, f, rec);
        let z = gate(cx, 3, None, None)?;
        let z = apply(cx, z, cell);
        let iz = scaled(cx, i, z, "mul", 1.0);
        let next = match c {
            Some(c) => {
                let fc = scaled(cx, f, c, "mul", 1.0);
                scaled(cx, fc, iz, "add", 1.0)
            }
            None => iz,
        };
        let o = gate(cx, 2, peephole(2), Some(next))?;
        let o = apply(cx, o, rec);
        let oc = apply(cx, next, out);
        let hn = scaled(cx, o, oc, "mul", 1.0);
        (h, c) = (Some(hn), Some(next));
        hs.push(hn);
    }
    let (h, c) = (h.ok_or("an lstm of no steps")?, c.ok_or("an lstm of no steps")?);
    l.results(cx, &hs, &[h, c])
}

/// `gru`.
pub(crate) fn gru(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let (rec, out) = (activation(cx, "recurrent_activation", "sigmoid")?, activation(cx, "activation", "tanh")?);
    let l = layer(cx, 3)?;
    let mut h = l.h0;
    let mut hs = Vec::with_capacity(l.order.len());
    for &t in &l.order {
        let z = l.pre(cx, 2, t, h)?;
        let z = apply(cx, z, rec);
        let r = l.pre(cx, 0, t, h)?;
        let r = apply(cx, r, rec);
        let reset = h.map(|h| scaled(cx, r, h, "mul", 1.0));
        let o = l.input_at(cx, 1, t);
        let o = match l.recurrent_at(cx, 1, reset)? {
            Some(ro) => scaled(cx, o, ro, "add", 1.0),
            None => o,
        };
        let o = apply(cx, o, out);
        let keep = goc(cx, z, Goc { scale: Some(-1.0), bias: Some(1.0), ..Goc::default() });
        let new = scaled(cx, keep, o, "mul", 1.0);
        let hn = match h {
            Some(h) => {
                let zh = scaled(cx, z, h, "mul", 1.0);
                scaled(cx, new, zh, "add", 1.0)
            }
            None => new,
        };
        h = Some(hn);
        hs.push(hn);
    }
    let h = h.ok_or("a gru of no steps")?;
    l.results(cx, &hs, &[h])
}
