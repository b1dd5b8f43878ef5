//! The cast family: a `bool`, `uint8` or `int8` input of a random rank-4 shape cast to
//! fp16 or fp32 (the planar engine's identity reading the 8-bit surface, Apple's
//! `cast_b_to_f16_1x1x64x1`), half the time scaled by a constant after the cast, so the
//! converted tensor feeds an fp16 op. Inputs cover the whole 8-bit type (0 and 1 for
//! bool: `anec_tests::agree::random_inputs`).

use super::model::{scalar, string, weights, Body, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Casts of 8-bit inputs: batch 1..2, channels 1..8, rows 1..8, columns 1..300 (rows of
/// more than 16 bytes, whose fp16 result does not fit the 8-bit source's L2 layout, and
/// rows beyond 0x100 bytes).
pub fn cast() -> impl Strategy<Value = Model> {
    let shape = (1usize..=2, 1usize..=8, 1usize..=8, prop_oneof![1usize..=16, 17usize..=300]);
    let kinds = (select(vec!["bool", "uint8", "int8"]), select(vec!["fp16", "fp32"]), any::<bool>());
    (shape, kinds, any::<u64>()).prop_map(|((n, c, h, w), (from, to, scaled), seed)| {
        let shape = [n, c, h, w];
        let mut t = MilText::typed(&[("x", from, &shape)]);
        t.op_as(to, "cast_0", &shape, "cast", &[("dtype", string(to)), ("x", "x".to_string())]);
        let mut names = vec!["cast_0".to_string()];
        if scaled {
            // A multiple of 1/64 in [-2, 2].
            let k = weights(seed, 1).first().copied().unwrap_or(0.5) * 2.0;
            t.op("scale_0", &shape, "mul", &[("x", "cast_0".to_string()), ("y", scalar(k))]);
            t.output("scale_0");
            names.push("scale_0".to_string());
        } else {
            t.output("cast_0");
        }
        Model { family: "cast", body: Body::Mil(t.text()), names, range: (0.0, 1.0), seed }
    })
}
