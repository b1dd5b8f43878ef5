//! Scalar activation functions shared by the anec neuron modes and the MIL activations.
//!
//! Transcendental functions are evaluated in f64 and rounded once to f32, so the reference
//! is as exact as f32 allows. `erf` is computed here (Rust's std has none): a Taylor series
//! for |x| < 3 and the continued fraction of erfc beyond, both accurate to ~1e-13.

use std::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};

/// `1 / (1 + e^-x)`.
pub fn sigmoid(x: f32) -> f32 {
    let x = f64::from(x);
    (1.0 / (1.0 + (-x).exp())) as f32
}

/// The Gauss error function, in f64.
pub fn erf64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 3.0 { erf_series(a) } else { 1.0 - erfc_fraction(a) };
    r.copysign(x)
}

/// `erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))`, for small |x|.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x; // (-1)^n x^(2n+1) / n!
    let mut sum = x;
    for n in 1..200 {
        term *= -x2 / n as f64;
        let add = term / (2 * n + 1) as f64;
        sum += add;
        if add.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    FRAC_2_SQRT_PI * sum
}

/// `erfc(x)` for x >= 3 by its continued fraction, evaluated from the tail.
fn erfc_fraction(x: f64) -> f64 {
    let mut k = x;
    for n in (1..=80).rev() {
        k = x + (n as f64 / 2.0) / k;
    }
    (-x * x).exp() / (PI.sqrt() * k)
}

/// The Gauss error function.
pub fn erf(x: f32) -> f32 {
    erf64(f64::from(x)) as f32
}

/// GELU, exact: `0.5 x (1 + erf(x / sqrt 2))`.
pub fn gelu_exact(x: f32) -> f32 {
    let x = f64::from(x);
    (0.5 * x * (1.0 + erf64(x / SQRT_2))) as f32
}

/// GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
pub fn gelu_tanh(x: f32) -> f32 {
    let x = f64::from(x);
    (0.5 * x * (1.0 + ((2.0 / PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())) as f32
}

/// GELU, sigmoid approximation: `x * sigmoid(1.702 x)`.
pub fn gelu_sigmoid(x: f32) -> f32 {
    let x = f64::from(x);
    (x / (1.0 + (-1.702 * x).exp())) as f32
}

/// `log(1 + e^x)`, computed without overflow.
pub fn softplus(x: f32) -> f32 {
    let x = f64::from(x);
    (x.max(0.0) + (-x.abs()).exp().ln_1p()) as f32
}

/// `x` for x > 0, else `alpha (e^x - 1)`.
pub fn elu(x: f32, alpha: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        (f64::from(alpha) * f64::from(x).exp_m1()) as f32
    }
}

/// -1, 0 or 1 (NaN stays NaN).
pub fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x * 0.0
    }
}

/// `min(max(alpha x + beta, 0), 1)`.
pub fn hard_sigmoid(x: f32, alpha: f32, beta: f32) -> f32 {
    (alpha * x + beta).clamp(0.0, 1.0)
}

/// Hard swish: `x * min(max(x + 3, 0), 6) / 6`.
pub fn hard_swish(x: f32) -> f32 {
    x * (x + 3.0).clamp(0.0, 6.0) / 6.0
}

/// `exp` in f64, rounded to f32.
pub fn exp(x: f32) -> f32 {
    f64::from(x).exp() as f32
}

/// `tanh` in f64, rounded to f32.
pub fn tanh(x: f32) -> f32 {
    f64::from(x).tanh() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f32, b: f64, tol: f64) -> bool {
        (f64::from(a) - b).abs() <= tol
    }

    #[test]
    fn erf_matches_tabulated_values() {
        // Abramowitz & Stegun table 7.1.
        assert!(close(erf(0.5), 0.520_499_877_8, 1e-7));
        assert!(close(erf(1.0), 0.842_700_792_9, 1e-7));
        assert!(close(erf(2.0), 0.995_322_265_0, 1e-7));
        assert!(close(erf(-1.0), -0.842_700_792_9, 1e-7));
        assert!((erf64(3.5) - 0.999_999_256_901_627_6).abs() < 1e-12);
        assert!((erf64(2.9) - 0.999_958_902_121_900_5).abs() < 1e-12);
        assert_eq!(erf(0.0), 0.0);
    }

    #[test]
    fn gelu_forms() {
        // 0.5 * 1 * (1 + erf(1/sqrt 2)) = 0.841344746.
        assert!(close(gelu_exact(1.0), 0.841_344_746, 1e-6));
        assert!(close(gelu_exact(-1.0), -0.158_655_254, 1e-6));
        // tanh form at 1: 0.5 * (1 + tanh(0.797884561 * 1.044715)) = 0.841191990.
        assert!(close(gelu_tanh(1.0), 0.841_191_990, 1e-6));
        // sigmoid form at 1: 1 / (1 + e^-1.702) = 0.845795766.
        assert!(close(gelu_sigmoid(1.0), 0.845_795_766, 1e-6));
    }

    #[test]
    fn simple_activations() {
        assert!(close(sigmoid(0.0), 0.5, 0.0));
        assert!(close(sigmoid(2.0), 0.880_797_078, 1e-7));
        assert!(close(softplus(0.0), std::f64::consts::LN_2, 1e-7));
        assert!(close(softplus(100.0), 100.0, 1e-4));
        assert!(close(elu(-1.0, 2.0), 2.0 * (-0.632_120_558_8), 1e-6));
        assert_eq!(elu(3.0, 2.0), 3.0);
        assert_eq!((sign(-2.0), sign(0.0), sign(5.0)), (-1.0, 0.0, 1.0));
        assert_eq!(hard_sigmoid(1.0, 0.2, 0.5), 0.7);
        assert_eq!(hard_sigmoid(10.0, 0.2, 0.5), 1.0);
        assert_eq!(hard_swish(-4.0), 0.0);
        assert_eq!(hard_swish(3.0), 3.0);
        assert_eq!(hard_swish(0.0), 0.0);
        assert!(close(hard_swish(1.0), 4.0 / 6.0, 1e-7));
    }
}
