//! `Neuron` units: pointwise activations (`anec.neuron`).
//!
//! `Params.Type` names the activation in Apple's spelling (`ReLU`, `Sigmoid`, `Exp2`,
//! `SigmoidHighPrecision`, `ClampedReLU`, ...). It maps to the `mode` of `docs/ops.md` by
//! comparing case-insensitively with underscores ignored, so `ReLUN` is `relu_n` and
//! `round_nearest` is accepted too; `SiLU`, `ReLU6`, `ThresholdedReLU`, `HardSwish` and
//! `HardSigmoid` are aliases. Parameters (fp16 bit patterns, or reals) map to `alpha`/`beta`
//! following the keys Apple's netplist writer emits per type (see [`PARAMS`]).

use super::{Lowered, UnitCx};
use crate::netplist::reader::Result;
use anec_ir::{Attr, Attrs, OpCode};

/// The neuron modes of `docs/ops.md` a netplist `Type` can name (the IR verifier's, less
/// anec's own).
fn modes() -> impl Iterator<Item = &'static str> {
    anec_ir::verify::NEURON_MODES.into_iter().filter(|m| !anec_ir::verify::ANEC_ONLY_NEURON_MODES.contains(m))
}

/// Other spellings (normalized: lower case, no underscores) and the mode they mean.
const ALIASES: [(&str, &str); 5] = [
    ("silu", "swish"),
    ("relu6", "relu_n"),
    ("thresholdedrelu", "threshold_relu"),
    ("hardswish", "swish_hard"),
    ("hardsigmoid", "sigmoid_hard"),
];

/// Per mode: the Params key and the attribute it becomes.
pub(crate) const PARAMS: [(&str, &str, &str); 9] = [
    ("clamped_relu", "ReluMin", "alpha"),
    ("clamped_relu", "ReluMax", "beta"),
    ("leaky_relu", "ReluSlope", "alpha"),
    ("leaky_relu", "ReluOffset", "beta"),
    ("relu_n", "ReluSlope", "alpha"),
    ("relu_n", "ReluMax", "beta"),
    ("elu", "EluAlpha", "alpha"),
    ("inv", "Epsilon", "alpha"),
    ("rsqrt", "Epsilon", "alpha"),
];

/// The mode for a netplist neuron type, if known.
pub(crate) fn mode_of(netplist_type: &str) -> Option<&'static str> {
    let norm = normalize(netplist_type);
    modes().find(|m| normalize(m) == norm).or_else(|| ALIASES.iter().find(|(a, _)| *a == norm).map(|(_, m)| *m))
}

fn normalize(s: &str) -> String {
    s.chars().filter(|&c| c != '_').map(|c| c.to_ascii_lowercase()).collect()
}

/// Lowers a `Neuron` unit.
pub(crate) fn lower(cx: &UnitCx<'_>) -> Result<Lowered> {
    let input = cx.single()?;
    let p = cx.params()?;
    let ty = p.str("Type")?;
    let mode = mode_of(ty).ok_or_else(|| {
        p.bad("Type", format!("unknown neuron type '{ty}' (supported: {})", modes().collect::<Vec<_>>().join(", ")))
    })?;
    let mut attrs = Attrs::new();
    attrs.insert("mode".into(), Attr::Str(mode.into()));
    for (key, attr) in param_keys(mode) {
        if let Some(v) = p.opt_half(key)? {
            attrs.insert(attr.into(), Attr::Float(v));
        }
    }
    let result = anec_ir::TensorType { dtype: cx.out_dtype, ..input };
    Ok(Lowered { opcode: OpCode::Neuron, attrs, result, resources: Vec::new() })
}

/// The (Params key, attribute) pairs a mode reads.
fn param_keys(mode: &str) -> Vec<(&'static str, &'static str)> {
    PARAMS.iter().filter(|(m, _, _)| *m == mode).map(|(_, k, a)| (*k, *a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apple_spellings_map_to_modes() {
        let cases = [
            ("ReLU", "relu"),
            ("Sigmoid", "sigmoid"),
            ("SigmoidHighPrecision", "sigmoid_high_precision"),
            ("Exp2", "exp2"),
            ("Exp", "exp"),
            ("Sign", "sign"),
            ("ReLUN", "relu_n"),
            ("ReLU6", "relu_n"),
            ("LeakyReLU", "leaky_relu"),
            ("ClampedReLU", "clamped_relu"),
            ("RoundNearest", "round_nearest"),
            ("GELU", "gelu"),
            ("ELU", "elu"),
            ("SiLU", "swish"),
            ("Rsqrt", "rsqrt"),
        ];
        for (t, m) in cases {
            assert_eq!(mode_of(t), Some(m), "{t}");
        }
        assert_eq!(mode_of("Dirac"), None);
    }

    #[test]
    fn every_mode_is_reachable_by_its_own_name() {
        for m in modes() {
            assert_eq!(mode_of(m), Some(m));
        }
    }

    #[test]
    fn epsilon_applies_to_rsqrt() {
        assert_eq!(param_keys("rsqrt"), vec![("Epsilon", "alpha")]);
        assert!(param_keys("relu").is_empty());
    }
}
