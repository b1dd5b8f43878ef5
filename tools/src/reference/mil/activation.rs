//! Activations and other unary ops, with coremltools' definitions:
//!
//! | op | y |
//! |---|---|
//! | `relu`, `relu6` | `max(x, 0)`, `min(max(x, 0), 6)` |
//! | `sigmoid`, `tanh`, `exp`, `exp2`, `sqrt`, `abs`, `sign`, `floor`, `ceil`, `erf`, trig | the function |
//! | `round` | nearest integer, ties to even (numpy) |
//! | `square` | `x^2` |
//! | `log(epsilon = 1e-45)` | `ln(x + epsilon)` |
//! | `rsqrt(epsilon = 1e-12)`, `inverse(epsilon = 1e-4)` | `1 / sqrt(x + eps)`, `1 / (x + eps)` |
//! | `silu` | `x sigmoid(x)` |
//! | `softplus`, `softsign` | `ln(1 + e^x)`, `x / (1 + |x|)` |
//! | `gelu(mode = EXACT)` | exact, `TANH_APPROXIMATION`, `SIGMOID_APPROXIMATION` |
//! | `elu(alpha)` | `x` if `x > 0`, else `alpha (e^x - 1)` |
//! | `leaky_relu(alpha)` | `x` if `x >= 0`, else `alpha x` |
//! | `thresholded_relu(alpha)` | `x` if `x >= alpha`, else 0 |
//! | `threshold(alpha)` | `max(x, alpha)` |
//! | `clip(alpha, beta)` | `min(max(x, alpha), beta)` |
//! | `clamped_relu(alpha, beta)` | `min(beta, x >= 0 ? x : alpha x)` |
//! | `sigmoid_hard(alpha, beta)` | `min(max(alpha x + beta, 0), 1)` |
//! | `linear_activation(alpha, beta)` | `alpha x + beta` |
//! | `scaled_tanh(alpha, beta)` | `alpha tanh(beta x)` |
//! | `prelu(alpha[C])` | `x` if `x > 0`, else `alpha[c] x` (channel axis 1) |
//! | `softplus_parametric(alpha[C], beta[C])` | `alpha[c] ln(1 + e^(beta[c] x))` |
//!
//! `alpha` / `beta` are required where coremltools requires them.

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::activation as act;
use crate::reference::kernels::elementwise::{binary, unary};
use crate::reference::kernels::shape::reshape;
use crate::tensor::Tensor;

/// `f` evaluated in f64.
fn d(f: fn(f64) -> f64, x: f32) -> f32 {
    f(f64::from(x)) as f32
}

/// The unary ops without parameters.
fn plain(op: &str) -> Option<fn(f32) -> f32> {
    let f: fn(f32) -> f32 = match op {
        "relu" => |x| x.max(0.0),
        "relu6" => |x| x.clamp(0.0, 6.0),
        "sigmoid" => act::sigmoid,
        "tanh" => act::tanh,
        "exp" => act::exp,
        "exp2" => |x| d(f64::exp2, x),
        "sqrt" => |x| d(f64::sqrt, x),
        "abs" => f32::abs,
        "sign" => act::sign,
        "floor" => f32::floor,
        "ceil" => f32::ceil,
        "round" => f32::round_ties_even,
        "erf" => act::erf,
        "sin" => |x| d(f64::sin, x),
        "cos" => |x| d(f64::cos, x),
        "tan" => |x| d(f64::tan, x),
        "asin" => |x| d(f64::asin, x),
        "acos" => |x| d(f64::acos, x),
        "atan" => |x| d(f64::atan, x),
        "sinh" => |x| d(f64::sinh, x),
        "cosh" => |x| d(f64::cosh, x),
        "atanh" => |x| d(f64::atanh, x),
        "square" => |x| x * x,
        "silu" => |x| x * act::sigmoid(x),
        "softplus" => act::softplus,
        "softsign" => |x| x / (1.0 + x.abs()),
        _ => return None,
    };
    Some(f)
}

/// The ops with parameters.
const PARAMETERIZED: [&str; 14] = [
    "log",
    "rsqrt",
    "inverse",
    "gelu",
    "elu",
    "leaky_relu",
    "thresholded_relu",
    "threshold",
    "clip",
    "clamped_relu",
    "sigmoid_hard",
    "linear_activation",
    "scaled_tanh",
    "prelu",
];

/// True for the ops [`activation`] evaluates.
pub(crate) fn handles(op: &str) -> bool {
    plain(op).is_some() || PARAMETERIZED.contains(&op) || op == "softplus_parametric"
}

/// An activation.
pub(crate) fn activation(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let y = match plain(sx.op()) {
        Some(f) => unary(&x, f)?,
        None => parameterized(sx, &x)?,
    };
    Ok(sx.one(y))
}

fn parameterized(sx: &Sx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let op = sx.op();
    if op == "prelu" || op == "softplus_parametric" {
        return per_channel(sx, x);
    }
    if op == "gelu" {
        let f: fn(f32) -> f32 = match sx.string("mode")?.as_deref().unwrap_or("EXACT") {
            "EXACT" => act::gelu_exact,
            "TANH_APPROXIMATION" => act::gelu_tanh,
            "SIGMOID_APPROXIMATION" => act::gelu_sigmoid,
            other => return Err(format!("unknown gelu mode {other:?}")),
        };
        return unary(x, f);
    }
    if let Some(default) = match op {
        "log" => Some(1e-45),
        "rsqrt" => Some(1e-12),
        "inverse" => Some(1e-4),
        _ => None,
    } {
        let eps = f64::from(sx.float_or("epsilon", default)?);
        let f = move |v: f32| {
            let s = f64::from(v) + eps;
            (match op {
                "log" => s.ln(),
                "rsqrt" => 1.0 / s.sqrt(),
                _ => 1.0 / s,
            }) as f32
        };
        return unary(x, f);
    }
    let a = sx.req_float("alpha")?;
    let y = match op {
        "elu" => unary(x, |v| act::elu(v, a))?,
        "leaky_relu" => unary(x, |v| if v >= 0.0 { v } else { a * v })?,
        "thresholded_relu" => unary(x, |v| if v >= a { v } else { 0.0 })?,
        "threshold" => unary(x, |v| v.max(a))?,
        _ => {
            let b = sx.req_float("beta")?;
            match op {
                "clip" => unary(x, |v| v.max(a).min(b))?,
                "clamped_relu" => unary(x, |v| (if v >= 0.0 { v } else { a * v }).min(b))?,
                "sigmoid_hard" => unary(x, |v| act::hard_sigmoid(v, a, b))?,
                "linear_activation" => unary(x, |v| a * v + b)?,
                "scaled_tanh" => unary(x, |v| a * act::tanh(b * v))?,
                other => return Err(format!("`{other}` is not an activation")),
            }
        }
    };
    Ok(y)
}

/// `prelu` and `softplus_parametric`: parameters per channel (axis 1).
fn per_channel(sx: &Sx<'_>, x: &Tensor) -> Result<Tensor, String> {
    if x.shape.len() < 2 {
        return Err(format!("`x` {:?} has no channel axis", x.shape));
    }
    let c = x.shape[1];
    let shape: Vec<usize> = (0..x.shape.len()).map(|i| if i == 1 { c } else { 1 }).collect();
    let param = |key: &str| -> Result<Tensor, String> {
        let t = sx.x(key)?;
        if t.data.len() != c {
            return Err(format!("`{key}` holds {} values for {c} channels", t.data.len()));
        }
        reshape(&t, &shape)
    };
    let alpha = param("alpha")?;
    if sx.op() == "prelu" {
        return binary(x, &alpha, |v, a| if v > 0.0 { v } else { a * v });
    }
    let beta = param("beta")?;
    let inner = binary(x, &beta, |v, b| act::softplus(v * b))?;
    binary(&inner, &alpha, |s, a| a * s)
}
