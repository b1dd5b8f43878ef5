//! Strategies of the reduction family: `reduce_sum`, `reduce_mean`, `reduce_max` and
//! `reduce_min` of a rank-4 tensor over any non-empty subset of C, H and W, `keep_dims`
//! either way, with odd extents and 1-element axes.

use super::model::{boolean, ints, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs: values whose sums stay well inside the fp16 range.
const RANGE: (f32, f32) = (-2.0, 2.0);

/// The axes subsets of a rank-4 tensor's C, H and W (MIL axes 1, 2, 3).
const AXES: [&[i64]; 7] = [&[1], &[2], &[3], &[1, 2], &[1, 3], &[2, 3], &[1, 2, 3]];

/// One reduction of `[1, c, h, w]`: extents drawn from small odd and even values, 1
/// included; now and then a long axis (77, 128, 375) on W or C.
pub fn reduction() -> impl Strategy<Value = Model> {
    let op = select(vec!["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]);
    let long = select(vec![1usize, 7, 77, 128, 375, 512]);
    let dims = (1usize..=9, 1usize..=9, 1usize..=9, long, 0u8..3);
    (op, dims, select(AXES.to_vec()), any::<bool>(), any::<u64>()).prop_map(
        |(op, (c, h, w, long, on), axes, keep, seed)| {
            // A third of the cases put the long extent on C or W instead.
            let (c, w) = match on {
                0 => (c, w),
                1 => (long, w),
                _ => (c, long),
            };
            let shape = [1, c, h, w];
            let out: Vec<usize> = (0..4)
                .filter_map(|i| {
                    let reduced = axes.contains(&(i as i64));
                    match (reduced, keep) {
                        (true, true) => Some(1),
                        (true, false) => None,
                        (false, _) => Some(shape[i]),
                    }
                })
                .collect();
            let args = [("x", "x".to_string()), ("axes", ints(axes)), ("keep_dims", boolean(keep))];
            let mut t = MilText::new(&[("x", &shape)]);
            t.op("reduce_0", &out, op, &args).output("reduce_0");
            Model {
                family: "reduction",
                body: super::model::Body::Mil(t.text()),
                names: vec!["reduce_0".into()],
                range: RANGE,
                seed,
            }
        },
    )
}
