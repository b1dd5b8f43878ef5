//! Binary elementwise ops (`add`, `sub`, `mul`, `real_div`, `maximum`, `minimum`, `pow`)
//! and the gain/offset and neuron helpers other families share.
//!
//! Two runtime operands are broadcast to the MIL result shape (`anec.broadcast` on the
//! mapped axes of extent 1) and combined by `anec.scaled_elementwise` with scale 1.0;
//! `real_div` is `x * inv(y)`. A runtime operand and a constant become, when the constant
//! is one value: an `anec.gain_offset_control` (`add c` -> bias c, `sub c` -> bias -c,
//! `c - x` -> scale -1 and bias c, `mul c` -> scale c, `real_div c` -> scale 1/c) or an
//! `anec.neuron` (`maximum(x, 0)` -> relu, `maximum`/`minimum` with another value ->
//! clamped_relu, `pow` 0.5 / -0.5 / -1 -> sqrt / rsqrt / inv (`pow` 2 is `x * x`), `c / x` -> inv then
//! scale, `2^x` -> exp2); when it varies along the channel axis only: a per-channel
//! `gain_offset_control` (`scale_data`, `bias_data`); otherwise it is emitted as an
//! `anec.constant` and combined like a runtime operand.

use super::consts::{channel_blob, materialize};
use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::layout::{axis_map, broadcast_shapes, promote, C, W};
use super::shape::{broadcast_rt, swap};
use super::tensor::Tensor;
use anec_ir::mil::ScalarType;
use anec_ir::{Attr, Attrs, OpCode, TensorType, ValueId};

/// The largest finite fp16 value, standing for "no bound" in clamps.
pub(crate) const F16_MAX: f32 = 65504.0;

/// A value and its anec type.
pub(crate) type V = (ValueId, TensorType);

/// The parameters of an `anec.gain_offset_control`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Goc {
    /// Scalar scale.
    pub scale: Option<f32>,
    /// Scalar bias.
    pub bias: Option<f32>,
    /// Per-channel scale.
    pub scale_data: Option<Vec<f32>>,
    /// Per-channel bias.
    pub bias_data: Option<Vec<f32>>,
    /// The MIL type the per-channel data came from (its precision is kept).
    pub source: Option<ScalarType>,
}

/// Emits `x * scale + bias`.
pub(crate) fn goc(cx: &mut Cx<'_, '_>, x: V, g: Goc) -> V {
    let mut a = Attrs::new();
    if let Some(s) = g.scale {
        a.insert("scale".into(), Attr::Float(f64::from(s)));
    }
    if let Some(b) = g.bias {
        a.insert("bias".into(), Attr::Float(f64::from(b)));
    }
    let source = g.source.unwrap_or(ScalarType::Fp16);
    let mut res = Vec::new();
    for (attr, data) in [("scale_data", g.scale_data), ("bias_data", g.bias_data)] {
        if let Some(d) = data {
            let (blob, ty) = channel_blob(&d, source);
            res.push((attr, blob, ty));
        }
    }
    if res.is_empty() {
        // A scalar gain/offset may run before the reshape or transpose it follows.
        return (cx.emit(OpCode::GainOffsetControl, &[x.0], x.1, a), x.1);
    }
    (cx.emit_with(OpCode::GainOffsetControl, &[x.0], x.1, a, res), x.1)
}

/// Emits an `anec.neuron` of `mode` with optional `alpha` and `beta`.
pub(crate) fn neuron(cx: &mut Cx<'_, '_>, x: V, mode: &str, alpha: Option<f32>, beta: Option<f32>) -> V {
    let mut a = attrs([("mode", Attr::Str(mode.into()))]);
    if let Some(v) = alpha {
        a.insert("alpha".into(), Attr::Float(f64::from(v)));
    }
    if let Some(v) = beta {
        a.insert("beta".into(), Attr::Float(f64::from(v)));
    }
    (cx.emit(OpCode::Neuron, &[x.0], x.1, a), x.1)
}

/// Emits `kind(a, b) * scale` for two values of one type.
pub(crate) fn scaled(cx: &mut Cx<'_, '_>, a: V, b: V, kind: &str, scale: f32) -> V {
    let at = attrs([("kind", Attr::Str(kind.into())), ("scale", Attr::Float(f64::from(scale)))]);
    (cx.emit(OpCode::ScaledElementwise, &[a.0, b.0], a.1, at), a.1)
}

/// The same MIL tensor, now held by `v`.
pub(crate) fn rt_with(x: &Rt, v: V) -> Rt {
    Rt { id: v.0, ty: v.1, shape: x.shape.clone() }
}

/// The value of a runtime tensor.
pub(crate) fn v(x: &Rt) -> V {
    (x.id, x.ty)
}

/// `add`, `sub`, `mul`, `real_div`, `maximum`, `minimum`, `pow`.
pub(crate) fn binary(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let op = cx.op();
    let xv = cx.val("x")?.ok_or("missing input `x`")?;
    let yv = cx.val("y")?.ok_or("missing input `y`")?;
    Ok(vec![Val::Rt(combine(cx, op, xv, yv)?)])
}

/// `op(x, y)` of two values, at least one computed at run time (the forms of [`binary`]).
pub(crate) fn combine(cx: &mut Cx<'_, '_>, op: &str, xv: Val, yv: Val) -> LResult<Rt> {
    Ok(match (xv, yv) {
        (x, Val::Const(c)) if !matches!(x, Val::Const(_)) => {
            let x = cx.runtime(x, "x")?;
            with_const(cx, op, &x, &c, true)?
        }
        (Val::Const(c), y) => {
            let y = cx.runtime(y, "y")?;
            with_const(cx, op, &y, &c, false)?
        }
        (x, y) => {
            let x = cx.runtime(x, "x")?;
            let y = cx.runtime(y, "y")?;
            both_runtime(cx, op, &x, &y)?
        }
    })
}

/// Two runtime operands.
fn both_runtime(cx: &mut Cx<'_, '_>, op: &str, x: &Rt, y: &Rt) -> LResult<Rt> {
    let shape = broadcast_shapes(&x.shape, &y.shape)
        .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", x.shape, y.shape))?;
    let kind = match op {
        "add" => "add",
        "sub" => "sub",
        "mul" | "real_div" => "mul",
        "maximum" => "max",
        "minimum" => "min",
        _ => return Err(Fail::Msg("`pow` with a runtime exponent is not supported".into())),
    };
    let a = broadcast_rt(cx, x, &shape)?;
    let mut b = broadcast_rt(cx, y, &shape)?;
    if op == "real_div" {
        b = rt_with(&b, neuron(cx, v(&b), "inv", None, None));
    }
    Ok(rt_with(&a, scaled(cx, v(&a), v(&b), kind, 1.0)))
}

/// How a constant operand varies over the result.
enum Spread {
    /// One value.
    Scalar(f32),
    /// One value per channel.
    Channel(Vec<f32>),
    /// One value per column of a result that is one row (a bias after a `linear` of a
    /// vector: the features on W).
    Width(Vec<f32>),
    /// Anything else.
    General,
}

/// Classifies constant `c` against a result of `shape`.
fn spread(c: &Tensor, shape: &[u64]) -> Spread {
    // One element: a scalar. A tensor stays a tensor whatever its values (Apple's
    // `chain_base_bias_d256_s64`: a bias of 256 equal values is loaded and broadcast).
    if let (Some(u), 1) = (c.uniform(), c.shape.iter().product::<u64>()) {
        return Spread::Scalar(u);
    }
    let cs = promote(&c.shape, shape.len());
    let Some(map) = axis_map(shape.len()) else { return Spread::General };
    let varying: Vec<usize> = (0..cs.len()).filter(|&k| cs[k] > 1).collect();
    match (varying.as_slice(), c.as_f32()) {
        ([k], Some(values)) if map[*k] == C && cs[*k] == shape[*k] => Spread::Channel(values),
        ([k], Some(values)) if map[*k] == W && cs[*k] == shape[*k] && shape.iter().product::<u64>() == shape[*k] => {
            Spread::Width(values)
        }
        _ => Spread::General,
    }
}

/// A runtime operand `x` and a constant `c` (`c` is `y` when `right`).
pub(crate) fn with_const(cx: &mut Cx<'_, '_>, op: &str, x: &Rt, c: &Tensor, right: bool) -> LResult<Rt> {
    let shape = broadcast_shapes(&x.shape, &c.shape)
        .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", x.shape, c.shape))?;
    let x = broadcast_rt(cx, x, &shape)?;
    let done = match spread(c, &shape) {
        Spread::Scalar(k) => scalar(cx, op, &x, k, right)?,
        Spread::Channel(d) => channel(cx, op, &x, d, c.dtype, right),
        Spread::Width(d) => {
            // The row's values become channels (a reshape), take the per-channel form,
            // and go back to the row.
            let on_c = rt_with(&x, swap(cx, v(&x), C, W));
            channel(cx, op, &on_c, d, c.dtype, right).map(|r| rt_with(&x, swap(cx, v(&r), C, W)))
        }
        Spread::General => None,
    };
    if let Some(r) = done {
        return Ok(r);
    }
    let k = materialize(cx, c)?;
    let (a, b) = if right { (&x, &k) } else { (&k, &x) };
    both_runtime(cx, op, a, b)
}

/// `op` with a one-value constant `k`; `None` when it has no one-op form.
fn scalar(cx: &mut Cx<'_, '_>, op: &str, x: &Rt, k: f32, right: bool) -> LResult<Option<Rt>> {
    let xv = v(x);
    let g = |scale: Option<f32>, bias: Option<f32>| Goc { scale, bias, ..Goc::default() };
    let r = match (op, right) {
        ("add", _) => goc(cx, xv, g(None, Some(k))),
        ("sub", true) => goc(cx, xv, g(None, Some(-k))),
        ("sub", false) => goc(cx, xv, g(Some(-1.0), Some(k))),
        ("mul", _) => goc(cx, xv, g(Some(k), None)),
        ("real_div", true) => goc(cx, xv, g(Some(1.0 / k), None)),
        ("real_div", false) => {
            let inv = neuron(cx, xv, "inv", None, None);
            if k == 1.0 {
                inv
            } else {
                goc(cx, inv, g(Some(k), None))
            }
        }
        ("maximum", _) if k == 0.0 => neuron(cx, xv, "relu", None, None),
        ("maximum", _) => neuron(cx, xv, "clamped_relu", Some(k), Some(F16_MAX)),
        ("minimum", _) => neuron(cx, xv, "clamped_relu", Some(-F16_MAX), Some(k)),
        ("pow", true) => return power(cx, x, k).map(Some),
        ("pow", false) => return exponential(cx, x, k).map(Some),
        _ => return Ok(None),
    };
    Ok(Some(rt_with(x, r)))
}

/// `x ^ k`.
fn power(cx: &mut Cx<'_, '_>, x: &Rt, k: f32) -> LResult<Rt> {
    let mode = match k {
        1.0 => return Ok(x.clone()),
        // x · x on the planar engine: exact, where a table would approximate.
        2.0 => return Ok(rt_with(x, scaled(cx, v(x), v(x), "mul", 1.0))),
        0.5 => "sqrt",
        -0.5 => "rsqrt",
        -1.0 => "inv",
        _ => return Err(Fail::Msg(format!("`pow` with exponent {k} is not supported (only 2, 0.5, -0.5, -1, 1)"))),
    };
    Ok(rt_with(x, neuron(cx, v(x), mode, None, None)))
}

/// `k ^ x` = `exp2(x * log2(k))`.
fn exponential(cx: &mut Cx<'_, '_>, x: &Rt, k: f32) -> LResult<Rt> {
    if !(k > 0.0 && k.is_finite()) {
        return Err(Fail::Msg(format!("`pow` of the constant base {k} is not supported (the base must be > 0)")));
    }
    let mut cur = v(x);
    if k != 2.0 {
        cur = goc(cx, cur, Goc { scale: Some(k.log2()), ..Goc::default() });
    }
    Ok(rt_with(x, neuron(cx, cur, "exp2", None, None)))
}

/// `op` with a per-channel constant `d`; `None` when it has no per-channel form.
fn channel(cx: &mut Cx<'_, '_>, op: &str, x: &Rt, d: Vec<f32>, source: ScalarType, right: bool) -> Option<Rt> {
    let xv = v(x);
    let src = Some(source);
    let neg: Vec<f32> = d.iter().map(|v| -v).collect();
    let r = match (op, right) {
        ("add", _) => goc(cx, xv, Goc { bias_data: Some(d), source: src, ..Goc::default() }),
        ("sub", true) => goc(cx, xv, Goc { bias_data: Some(neg), source: src, ..Goc::default() }),
        ("sub", false) => goc(cx, xv, Goc { scale: Some(-1.0), bias_data: Some(d), source: src, ..Goc::default() }),
        ("mul", _) => goc(cx, xv, Goc { scale_data: Some(d), source: src, ..Goc::default() }),
        ("real_div", true) => {
            let inv = d.iter().map(|v| 1.0 / v).collect();
            goc(cx, xv, Goc { scale_data: Some(inv), source: src, ..Goc::default() })
        }
        ("real_div", false) => {
            let inv = neuron(cx, xv, "inv", None, None);
            goc(cx, inv, Goc { scale_data: Some(d), source: src, ..Goc::default() })
        }
        _ => return None,
    };
    Some(rt_with(x, r))
}
