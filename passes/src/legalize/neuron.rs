//! `Neuron` (seed 002 Table B.2): one bottom; the non-linear mode in the engine's list (1
//! to 46) and in the chip's list ("This platform doesn't support Neuron %s"); ReLU-N with
//! positive parameters when the chip's gate byte is 0.
//!
//! The chip's list is the anec modes minus those below their family floor (`floors.rs`:
//! `sin`, `cos`). The seed does not give the ReLU-N gate byte's offset or values, so it is
//! taken as 0 on every chip (the conservative reading): ReLU-N needs a positive `alpha`.

use super::cx::{Check, Cx};
use anec_ir::verify::NEURON_MODES;

/// `anec.neuron` (the family floors of `sin` and `cos` run before this, in `floors.rs`).
pub(super) fn neuron(cx: &Cx<'_>) -> Check {
    let mode = cx.str("mode").unwrap_or("");
    if !NEURON_MODES.contains(&mode) {
        return Err(cx.reject(format!("This platform doesn't support Neuron {mode}")));
    }
    if mode == "relu_n" {
        let n = cx.float("alpha").unwrap_or(0.0);
        if n.is_nan() || n <= 0.0 {
            let rule = format!("This platform doesn't support Neuron relu_n with a non-positive parameter N = {n}");
            let s = "use clamped_relu (or relu followed by a minimum) for a bound that is not positive";
            return Err(cx.reject(rule).suggest(s));
        }
    }
    Ok(())
}
