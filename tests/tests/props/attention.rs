//! Strategy of the attention family: `scaled_dot_product_attention` (iOS18) of
//! `[1, heads, seq, head_dim]` queries against keys and values of `keys` positions, with
//! no mask, a causal additive mask or a general additive mask; sequence lengths like 77,
//! 1 to 16 heads, odd head sizes.

use super::model::{fp16_tensor, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs of the family (scores stay moderate: the softmax sees q·k / sqrt(d)).
const RANGE: (f32, f32) = (-1.0, 1.0);

/// The mask of a case: none, causal (0 on and below the diagonal, -65504 above), or
/// values in [-2, 2] from the seed.
fn mask(kind: u8, seq: usize, keys: usize, seed: u64) -> Option<String> {
    let values: Vec<f32> = (0..seq * keys)
        .map(|i| {
            let (r, c) = (i / keys, i % keys);
            match kind {
                1 => {
                    if c > r {
                        -65504.0
                    } else {
                        0.0
                    }
                }
                _ => ((seed.wrapping_mul(6364136223846793005).wrapping_add(i as u64) >> 40) % 65) as f32 / 16.0 - 2.0,
            }
        })
        .collect();
    (kind > 0).then(|| fp16_tensor(&[seq, keys], &values))
}

/// `scaled_dot_product_attention(q, k, v, attn_mask?)`.
pub fn attention() -> impl Strategy<Value = Model> {
    let heads = select(vec![1usize, 2, 3, 4, 8, 16]);
    let lengths = vec![1usize, 2, 5, 16, 33, 77];
    let dim = select(vec![1usize, 4, 7, 16, 64]);
    (heads, select(lengths.clone()), select(lengths), dim, 0u8..3, any::<u64>()).prop_map(
        |(h, s, keys, d, kind, seed)| {
            // A causal mask needs as many keys as queries.
            let keys = if kind == 1 { s } else { keys };
            let (qs, ks) = (vec![1, h, s, d], vec![1, h, keys, d]);
            let mut args = vec![("query", "q".to_string()), ("key", "k".to_string()), ("value", "v".to_string())];
            if let Some(m) = mask(kind, s, keys, seed) {
                args.push(("attn_mask", m));
            }
            let mut t = MilText::new(&[("q", &qs), ("k", &ks), ("v", &ks)]);
            t.op("a_0", &qs, "scaled_dot_product_attention", &args).output("a_0");
            Model {
                family: "attention",
                body: super::model::Body::Mil(t.text()),
                names: vec!["a_0".into()],
                range: RANGE,
                seed,
            }
        },
    )
}
