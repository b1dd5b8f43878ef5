//! `anec.neuron`: the math of each activation mode, with its `alpha` / `beta`.
//!
//! | mode | y | alpha (default) | beta (default) |
//! |---|---|---|---|
//! | `relu` | `max(x, 0)` | | |
//! | `sigmoid`, `sigmoid_high_precision` | `1 / (1 + e^-x)` | | |
//! | `tanh` | `tanh x` | | |
//! | `clamped_relu` | `min(max(x, alpha), beta)` | lower bound (0) | upper bound (+inf) |
//! | `leaky_relu` | `x` if `x >= 0`, else `alpha x` | slope (0.01) | offset: only 0 |
//! | `relu_n` | `min(x >= 0 ? x : alpha x, beta)` | negative slope (0) | ceiling (6) |
//! | `swish` | `x sigmoid(x)` | | |
//! | `swish_hard` | `x min(max(x + 3, 0), 6) / 6` | | |
//! | `sigmoid_hard` | `min(max(alpha x + beta, 0), 1)` | (0.2) | (0.5) |
//! | `sqr`, `sqrt`, `abs`, `sign`, `sin`, `cos`, `erf`, `exp`, `exp2`, `log2` | the function | | |
//! | `rsqrt` | `1 / sqrt(x + alpha)` | epsilon (0) | |
//! | `inv` | `1 / (x + alpha)` | epsilon (0) | |
//! | `elu` | `x` if `x > 0`, else `alpha (e^x - 1)` | (1) | |
//! | `gelu` | `0.5 x (1 + erf(x / sqrt 2))` | | |
//! | `gelu_sigmoid` | `x * sigmoid(1.702 x)` | | |
//! | `trunc`, `floor`, `ceil` | rounding | | |
//! | `round_nearest` | nearest integer, ties to even | | |
//! | `threshold_relu` | `x` if `x >= alpha`, else 0 | threshold (1) | |
//!
//! `degamma` and `gamma` have no math defined in any source we have (the seeds name them
//! only), so they are errors, as is an `alpha` / `beta` on a mode that takes none.

use crate::reference::kernels::activation as act;

/// The function of `mode` with its parameters, or why there is none.
pub(crate) fn neuron_fn(mode: &str, alpha: Option<f32>, beta: Option<f32>) -> Result<Box<dyn Fn(f32) -> f32>, String> {
    let takes: (bool, bool) = match mode {
        "clamped_relu" | "leaky_relu" | "relu_n" | "sigmoid_hard" => (true, true),
        "rsqrt" | "inv" | "elu" | "threshold_relu" => (true, false),
        _ => (false, false),
    };
    if alpha.is_some() && !takes.0 {
        return Err(format!("neuron mode `{mode}` takes no `alpha`"));
    }
    if beta.is_some() && !takes.1 {
        return Err(format!("neuron mode `{mode}` takes no `beta`"));
    }
    if let Some(f) = plain(mode) {
        return Ok(f);
    }
    let a = |d: f32| alpha.unwrap_or(d);
    let b = |d: f32| beta.unwrap_or(d);
    let f: Box<dyn Fn(f32) -> f32> = match mode {
        "clamped_relu" => {
            let (lo, hi) = (a(0.0), b(f32::INFINITY));
            Box::new(move |x| x.max(lo).min(hi))
        }
        "leaky_relu" => {
            if b(0.0) != 0.0 {
                return Err(format!("leaky_relu with an offset (beta = {}) has no defined math", b(0.0)));
            }
            let slope = a(0.01);
            Box::new(move |x| if x >= 0.0 { x } else { slope * x })
        }
        "relu_n" => {
            let (slope, ceiling) = (a(0.0), b(6.0));
            Box::new(move |x| (if x >= 0.0 { x } else { slope * x }).min(ceiling))
        }
        "sigmoid_hard" => {
            let (sa, sb) = (a(0.2), b(0.5));
            Box::new(move |x| act::hard_sigmoid(x, sa, sb))
        }
        "rsqrt" => {
            let eps = f64::from(a(0.0));
            Box::new(move |x| (1.0 / (f64::from(x) + eps).sqrt()) as f32)
        }
        "inv" => {
            let eps = f64::from(a(0.0));
            Box::new(move |x| (1.0 / (f64::from(x) + eps)) as f32)
        }
        "elu" => {
            let e = a(1.0);
            Box::new(move |x| act::elu(x, e))
        }
        "threshold_relu" => {
            let t = a(1.0);
            Box::new(move |x| if x >= t { x } else { 0.0 })
        }
        "degamma" | "gamma" => {
            return Err(format!("neuron mode `{mode}` has no defined math (no source specifies it)"))
        }
        other => return Err(format!("unknown neuron mode `{other}`")),
    };
    Ok(f)
}

/// The modes without parameters.
fn plain(mode: &str) -> Option<Box<dyn Fn(f32) -> f32>> {
    let f: fn(f32) -> f32 = match mode {
        "relu" => |x| x.max(0.0),
        "sigmoid" | "sigmoid_high_precision" => act::sigmoid,
        "tanh" => act::tanh,
        "swish" => |x| x * act::sigmoid(x),
        "swish_hard" => act::hard_swish,
        "sqr" => |x| x * x,
        "sqrt" => |x| (f64::from(x).sqrt()) as f32,
        "log2" => |x| (f64::from(x).log2()) as f32,
        "exp2" => |x| (f64::from(x).exp2()) as f32,
        "exp" => act::exp,
        "sign" => act::sign,
        "sin" => |x| (f64::from(x).sin()) as f32,
        "cos" => |x| (f64::from(x).cos()) as f32,
        "gelu" => act::gelu_exact,
        "gelu_sigmoid" => |x| x * act::sigmoid(1.702 * x),
        "trunc" => f32::trunc,
        "round_nearest" => f32::round_ties_even,
        "floor" => f32::floor,
        "ceil" => f32::ceil,
        "erf" => act::erf,
        "abs" => f32::abs,
        _ => return None,
    };
    Some(Box::new(f))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use anec_ir::verify::NEURON_MODES;

    fn f(mode: &str, a: Option<f32>, b: Option<f32>, x: f32) -> f32 {
        neuron_fn(mode, a, b).unwrap()(x)
    }

    #[test]
    fn every_verifier_mode_has_math_or_a_named_error() {
        for mode in NEURON_MODES {
            match neuron_fn(mode, None, None) {
                Ok(_) => {}
                Err(e) => assert!(["degamma", "gamma"].contains(&mode) && e.contains(mode), "{mode}: {e}"),
            }
        }
    }

    #[test]
    fn parameterized_modes() {
        assert_eq!(f("clamped_relu", Some(-1.0), Some(2.0), -3.0), -1.0);
        assert_eq!(f("clamped_relu", Some(-1.0), Some(2.0), 5.0), 2.0);
        assert_eq!(f("clamped_relu", Some(0.0), Some(6.0), 1.5), 1.5);
        assert_eq!(f("leaky_relu", Some(0.1), None, -2.0), -0.2);
        assert_eq!(f("leaky_relu", None, None, -100.0), -1.0);
        assert!(neuron_fn("leaky_relu", Some(0.1), Some(1.0)).is_err());
        assert_eq!(f("relu_n", None, None, 7.0), 6.0);
        assert_eq!(f("relu_n", None, Some(3.0), -1.0), 0.0);
        assert_eq!(f("rsqrt", Some(0.0), None, 4.0), 0.5);
        assert_eq!(f("inv", Some(1.0), None, 3.0), 0.25);
        assert_eq!(f("threshold_relu", Some(1.0), None, 1.0), 1.0);
        assert_eq!(f("threshold_relu", Some(1.0), None, 0.5), 0.0);
        assert_eq!(f("sigmoid_hard", None, None, 1.0), 0.7);
        assert!(neuron_fn("relu", Some(1.0), None).is_err());
        assert!(neuron_fn("elu", None, Some(1.0)).is_err());
    }

    #[test]
    fn plain_modes() {
        assert_eq!(f("relu", None, None, -1.0), 0.0);
        assert_eq!(f("sqr", None, None, -3.0), 9.0);
        assert_eq!(f("log2", None, None, 8.0), 3.0);
        assert_eq!(f("exp2", None, None, -1.0), 0.5);
        assert_eq!(f("round_nearest", None, None, 2.5), 2.0);
        assert_eq!(f("round_nearest", None, None, -1.5), -2.0);
        assert_eq!(f("trunc", None, None, -1.7), -1.0);
        assert_eq!(f("floor", None, None, -1.2), -2.0);
        assert_eq!(f("ceil", None, None, -1.7), -1.0);
        assert_eq!(f("abs", None, None, -2.5), 2.5);
        assert_eq!(f("sign", None, None, -0.1), -1.0);
        assert!((f("swish", None, None, 1.0) - 0.731_058_6).abs() < 1e-6);
        assert!((f("sigmoid_high_precision", None, None, 0.0) - 0.5).abs() < 1e-7);
    }
}
