//! Activations: each MIL activation that the neuron modes cover is one `anec.neuron`; a
//! few are short compositions with `gain_offset_control` and `scaled_elementwise`.
//!
//! | MIL | anec |
//! |---|---|
//! | `relu`, `sigmoid`, `tanh`, `exp`, `exp2`, `sqrt`, `abs`, `sign`, `floor`, `ceil`, `erf`, `sin`, `cos` | neuron of the same mode |
//! | `silu` | `swish` |
//! | `square` | `sqr` |
//! | `round` | `round_nearest` |
//! | `relu6` | `clamped_relu` alpha 0, beta 6 |
//! | `clip(alpha, beta)` | `clamped_relu` alpha, beta (alpha = lower, beta = upper bound) |
//! | `threshold(alpha)` | `clamped_relu` alpha, beta = 65504 (`max(x, alpha)`) |
//! | `leaky_relu(alpha)` | `leaky_relu` alpha |
//! | `elu(alpha)` | `elu` alpha |
//! | `thresholded_relu(alpha)` | `threshold_relu` alpha |
//! | `rsqrt(epsilon)`, `inverse(epsilon)` | `rsqrt`, `inv` with alpha = epsilon |
//! | `gelu` mode `EXACT`, `TANH_APPROXIMATION` | `gelu` (one engine table for both) |
//! | `gelu` mode `SIGMOID_APPROXIMATION` | `gelu_sigmoid` (`x * sigmoid(1.702 x)` as one table) |
//! | `log(epsilon)` | `log2(x + epsilon) * ln 2` |
//! | `sigmoid_hard(alpha, beta)` | `clamped_relu(alpha x + beta)` to [0, 1] |
//! | `linear_activation(alpha, beta)` | gain/offset `alpha x + beta` |
//! | `scaled_tanh(alpha, beta)` | `alpha * tanh(beta x)` |
//! | `softplus` | `log2(exp(x) + 1) * ln 2` |
//! | `softsign` | `x * inv(abs(x) + 1)` |

use super::cx::{Cx, Fail, LResult, Val};
use super::elementwise::{goc, neuron, rt_with, scaled, v, Goc, F16_MAX, V};

/// The smallest positive fp16 value; smaller epsilons vanish on the engine.
const F16_TINY: f32 = 5.96e-8;

/// The MIL ops [`activation`] lowers (the single list: the property tests draw from it).
pub const ACTIVATIONS: [&str; 31] = [
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "exp2",
    "sqrt",
    "abs",
    "sign",
    "floor",
    "ceil",
    "erf",
    "sin",
    "cos",
    "silu",
    "square",
    "round",
    "relu6",
    "clip",
    "leaky_relu",
    "elu",
    "thresholded_relu",
    "rsqrt",
    "inverse",
    "gelu",
    "log",
    "sigmoid_hard",
    "linear_activation",
    "scaled_tanh",
    "softplus",
    "softsign",
    "threshold",
];

/// True for the ops [`activation`] lowers.
pub(crate) fn handles(op: &str) -> bool {
    ACTIVATIONS.contains(&op)
}

fn g(scale: Option<f32>, bias: Option<f32>) -> Goc {
    Goc { scale, bias, ..Goc::default() }
}

/// Lowers an activation.
pub(crate) fn activation(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = cx.input("x")?;
    let xv = v(&x);
    let op = cx.op();
    let same = ["relu", "sigmoid", "tanh", "exp", "exp2", "sqrt", "abs", "sign", "floor", "ceil", "erf", "sin", "cos"];
    let y = if same.contains(&op) { neuron(cx, xv, op, None, None) } else { composite(cx, op, xv)? };
    Ok(vec![Val::Rt(rt_with(&x, y))])
}

/// The activations that rename, take parameters or compose.
fn composite(cx: &mut Cx<'_, '_>, op: &str, x: V) -> LResult<V> {
    let alpha = cx.float("alpha")?;
    let beta = cx.float("beta")?;
    let y = match op {
        "silu" => neuron(cx, x, "swish", None, None),
        "square" => neuron(cx, x, "sqr", None, None),
        "round" => neuron(cx, x, "round_nearest", None, None),
        "relu6" => neuron(cx, x, "clamped_relu", Some(0.0), Some(6.0)),
        "clip" => {
            let (lo, hi) = (alpha.ok_or("missing input `alpha`")?, beta.ok_or("missing input `beta`")?);
            neuron(cx, x, "clamped_relu", Some(lo), Some(hi))
        }
        "threshold" => neuron(cx, x, "clamped_relu", Some(alpha.ok_or("missing input `alpha`")?), Some(F16_MAX)),
        "leaky_relu" => neuron(cx, x, "leaky_relu", Some(alpha.unwrap_or(0.01)), None),
        "elu" => neuron(cx, x, "elu", Some(alpha.unwrap_or(1.0)), None),
        "thresholded_relu" => neuron(cx, x, "threshold_relu", Some(alpha.unwrap_or(1.0)), None),
        "rsqrt" => neuron(cx, x, "rsqrt", Some(cx.float("epsilon")?.unwrap_or(1e-12)), None),
        "inverse" => neuron(cx, x, "inv", Some(cx.float("epsilon")?.unwrap_or(1e-4)), None),
        "gelu" => gelu(cx, x)?,
        "log" => {
            let eps = cx.float("epsilon")?.unwrap_or(0.0);
            let x = if eps >= F16_TINY { goc(cx, x, g(None, Some(eps))) } else { x };
            let l = neuron(cx, x, "log2", None, None);
            goc(cx, l, g(Some(std::f32::consts::LN_2), None))
        }
        "sigmoid_hard" => {
            let lin = goc(cx, x, g(Some(alpha.unwrap_or(0.2)), Some(beta.unwrap_or(0.5))));
            neuron(cx, lin, "clamped_relu", Some(0.0), Some(1.0))
        }
        "linear_activation" => goc(cx, x, g(Some(alpha.unwrap_or(1.0)), Some(beta.unwrap_or(0.0)))),
        "scaled_tanh" => {
            let inner = goc(cx, x, g(Some(beta.unwrap_or(1.0)), None));
            let t = neuron(cx, inner, "tanh", None, None);
            goc(cx, t, g(Some(alpha.unwrap_or(1.0)), None))
        }
        "softplus" => {
            let e = neuron(cx, x, "exp", None, None);
            let e1 = goc(cx, e, g(None, Some(1.0)));
            let l = neuron(cx, e1, "log2", None, None);
            goc(cx, l, g(Some(std::f32::consts::LN_2), None))
        }
        "softsign" => {
            let a = neuron(cx, x, "abs", None, None);
            let a1 = goc(cx, a, g(None, Some(1.0)));
            let inv = neuron(cx, a1, "inv", None, None);
            scaled(cx, x, inv, "mul", 1.0)
        }
        other => return Err(Fail::Msg(format!("activation `{other}` has no neuron mode"))),
    };
    Ok(y)
}

/// `gelu(x, mode)`.
fn gelu(cx: &mut Cx<'_, '_>, x: V) -> LResult<V> {
    let mode = cx.string("mode")?.unwrap_or_else(|| "EXACT".into());
    match mode.as_str() {
        "EXACT" | "TANH_APPROXIMATION" => Ok(neuron(cx, x, "gelu", None, None)),
        "SIGMOID_APPROXIMATION" => Ok(neuron(cx, x, "gelu_sigmoid", None, None)),
        other => Err(Fail::Msg(format!("gelu mode {other:?} is not supported"))),
    }
}
