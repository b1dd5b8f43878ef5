//! Strategy of the constant-operand family: an elementwise op of a runtime tensor and a
//! constant tensor that is neither one value nor one per channel (an `anec.constant` in
//! `__const`, read through the tile DMA), of the same shape or broadcast along the
//! leading axes (an attention mask over the heads).

use super::model::{fp16_tensor, weights, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs of the family.
const RANGE: (f32, f32) = (-2.0, 2.0);

/// `op(x, k)` with `x` of shape `[1, c, h, w]` (or rank 3 `[c, h, w]`) and `k` of the
/// full shape or of `[1, 1, h, w]`.
pub fn constant_operand() -> impl Strategy<Value = Model> {
    let op = select(vec!["add", "mul", "sub"]);
    let dims = (1usize..=4, 1usize..=6, select(vec![1usize, 2, 3, 7, 16, 77]));
    (op, dims, any::<bool>(), any::<bool>(), any::<u64>()).prop_map(|(op, (c, h, w), heads, rank3, seed)| {
        let xs: Vec<usize> = if rank3 { vec![c, h, w] } else { vec![1, c, h, w] };
        let mut ks = xs.clone();
        if heads {
            // One row block shared by every channel (head).
            let lead = ks.len() - 2;
            ks[..lead].iter_mut().for_each(|d| *d = 1);
        }
        let n: usize = ks.iter().product();
        // At least two distinct values, so that it is a general constant.
        let mut values = weights(seed, n);
        if n >= 2 {
            values[0] = 0.5;
            values[n - 1] = -1.5;
        }
        let mut t = MilText::new(&[("x", &xs)]);
        let k = fp16_tensor(&ks, &values);
        t.op("k_0", &xs, op, &[("x", "x".into()), ("y", k)]).output("k_0");
        Model {
            family: "constant",
            body: super::model::Body::Mil(t.text()),
            names: vec!["k_0".into()],
            range: RANGE,
            seed,
        }
    })
}
