//! Strategies of the L2 hand-overs into a constant-weight matmul (`chains.md` §2.3, §2.6)
//! at shapes other than the records': a layer_norm over the features feeding a `linear`
//! (its result kept in L2 for the matmul's preparation task), a scalar `mul` feeding one
//! (the scale run on x^T in L2), a product with two readers (the next `linear` and an
//! add), and the feed-forward block (two `linear`s around a gelu, with and without the
//! residual add: the folded chain). Odd widths, one row and several rows, rank 2 and
//! rank 3.

use super::model::{fp16_tensor, ints, scalar, string, weights, Body, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs of the family.
const RANGE: (f32, f32) = (-2.0, 2.0);

/// Which hand-over a model exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `linear(layer_norm(x, [-1]))`.
    NormThenLinear,
    /// `linear(mul(x, s))`.
    ScaleThenLinear,
    /// `m = linear(x); add(m, linear(m))`.
    Serial,
    /// `linear(x)` alone (the folded plan's shapes).
    Linear,
    /// `linear(gelu(linear(x)))` back to `d` features (the folded chain, `chains.md` §2.4).
    Ffn,
    /// `add(x, linear(gelu(linear(x))))` (x loaded once, no copy-out).
    ResidualFfn,
}

/// The model of `kind` over `s` rows of `d` features into `n` outputs (rank 3 `[1, s, d]`
/// or rank 2 `[s, d]`), weights from `seed`.
pub fn model(kind: Kind, s: usize, d: usize, n: usize, rank3: bool, seed: u64) -> Model {
    let shape = |f: usize| if rank3 { vec![1, s, f] } else { vec![s, f] };
    let linear = |t: &mut MilText, name: &str, x: &str, din: usize, dout: usize, salt: u64| {
        let args = [("x", x.to_string()), ("weight", fp16_tensor(&[dout, din], &weights(seed ^ salt, dout * din)))];
        t.op(name, &shape(dout), "linear", &args);
    };
    let mut t = MilText::new(&[("x", &shape(d))]);
    let names: &[&str] = match kind {
        Kind::NormThenLinear => {
            let eps = "tensor<fp16, []>(0.00001)".to_string();
            let args = [("x", "x".to_string()), ("axes", ints(&[-1])), ("epsilon", eps)];
            t.op("n_0", &shape(d), "layer_norm", &args);
            linear(&mut t, "fc_0", "n_0", d, n, 2);
            &["n_0", "fc_0"]
        }
        Kind::ScaleThenLinear => {
            t.op("s_0", &shape(d), "mul", &[("x", "x".to_string()), ("y", scalar(0.375))]);
            linear(&mut t, "fc_0", "s_0", d, n, 2);
            &["s_0", "fc_0"]
        }
        Kind::Linear => {
            linear(&mut t, "fc_0", "x", d, n, 2);
            &["fc_0"]
        }
        Kind::Ffn | Kind::ResidualFfn => {
            linear(&mut t, "fc_0", "x", d, n, 2);
            t.op("g_0", &shape(n), "gelu", &[("x", "fc_0".to_string()), ("mode", string("EXACT"))]);
            // The second weights scaled by a power of two near 1/sqrt(n), as a layer's
            // initialisation is: the tolerance counts the gelu table's absolute error once
            // (`anec_tests::tolerance`), not as amplified by a sum of n unit weights.
            let scale = (n as f32).sqrt().log2().round().exp2().recip();
            let w: Vec<f32> = weights(seed ^ 4, d * n).iter().map(|v| v * scale).collect();
            let args = [("x", "g_0".to_string()), ("weight", fp16_tensor(&[d, n], &w))];
            t.op("fc_1", &shape(d), "linear", &args);
            if kind == Kind::Ffn {
                &["fc_0", "g_0", "fc_1"]
            } else {
                t.op("a_0", &shape(d), "add", &[("x", "x".to_string()), ("y", "fc_1".to_string())]);
                &["fc_0", "g_0", "fc_1", "a_0"]
            }
        }
        Kind::Serial => {
            // The second linear maps n back to n so that the add has one shape.
            linear(&mut t, "fc_0", "x", d, n, 2);
            linear(&mut t, "fc_1", "fc_0", n, n, 4);
            t.op("a_0", &shape(n), "add", &[("x", "fc_0".to_string()), ("y", "fc_1".to_string())]);
            &["fc_0", "fc_1", "a_0"]
        }
    };
    t.output(names[names.len() - 1]);
    let names = names.iter().map(ToString::to_string).collect();
    Model { family: "l2_hand_over", body: Body::Mil(t.text()), names, range: RANGE, seed }
}

/// Feed-forward blocks, with and without the residual add, at sizes around the fold's
/// bounds (rows in eights and not, hidden widths whose first product is over or under
/// 64 KiB, features whose rows are or are not whole granules).
pub fn feed_forward() -> impl Strategy<Value = Model> {
    let kind = select(vec![Kind::Ffn, Kind::ResidualFfn]);
    let rows = prop_oneof![(1usize..=8).prop_map(|r| 8 * r), 1usize..=64];
    (kind, rows, 1usize..=96, 64usize..=1100, any::<bool>(), any::<u64>())
        .prop_map(|(kind, s, d, n, rank3, seed)| model(kind, s, d, n, rank3, seed))
}

/// Every kind at rows 1..=20, features and outputs 1..=80 (layer_norm: 4 or more
/// features; two or three are ill-conditioned, `normalization::NORM_FEATURES`).
pub fn hand_overs() -> impl Strategy<Value = Model> {
    let kind = select(vec![Kind::NormThenLinear, Kind::ScaleThenLinear, Kind::Serial]);
    (kind, 1usize..=20, 1usize..=80, 1usize..=80, any::<bool>(), any::<u64>()).prop_map(
        |(kind, s, d, n, rank3, seed)| {
            let d = if kind == Kind::NormThenLinear { d.max(4) } else { d };
            model(kind, s, d, n, rank3, seed)
        },
    )
}
