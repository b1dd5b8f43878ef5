//! Strategies of the data-movement family: MIL `transpose` of a rank-4 tensor (any
//! permutation: those keeping the last axis in place run as NE copies through views, the
//! others are refused by name), `slice_by_index` along one axis and `tile`.

use super::model::{ints, MilText, Model};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs: any fp16 values move exactly.
const RANGE: (f32, f32) = (-4.0, 4.0);

fn model(text: &MilText, seed: u64) -> Model {
    Model {
        family: "movement",
        body: super::model::Body::Mil(text.text()),
        names: vec!["m_0".into()],
        range: RANGE,
        seed,
    }
}

/// The permutations of four axes.
fn perms() -> Vec<[usize; 4]> {
    let mut out = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    let p = [a, b, c, d];
                    if (0..4).all(|k| p.contains(&k)) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// One transpose, slice or tile of `[n, c, h, w]`.
pub fn movement() -> impl Strategy<Value = Model> {
    // Mostly one batch (a task copies one); now and then two, which is refused by name.
    let dims = (select(vec![1usize, 1, 1, 2]), 1usize..=9, 1usize..=9, select(vec![1usize, 3, 32, 64, 77]));
    (0u8..3, dims, select(perms()), (0usize..4, 0usize..8, 1usize..=3), any::<u64>()).prop_map(
        |(kind, (n, c, h, w), perm, (axis, begin, reps), seed)| {
            let s = [n, c, h, w];
            let mut t = MilText::new(&[("x", &s)]);
            match kind {
                0 => {
                    let out = perm.map(|p| s[p]);
                    let p = ints(&perm.map(|v| v as i64));
                    t.op("m_0", &out, "transpose", &[("x", "x".into()), ("perm", p)]);
                }
                1 => {
                    let b = begin % s[axis];
                    let mut begin_v = [0i64; 4];
                    begin_v[axis] = b as i64;
                    let end_v = s.map(|v| v as i64);
                    let mut out = s;
                    out[axis] = s[axis] - b;
                    let args = [("x", "x".into()), ("begin", ints(&begin_v)), ("end", ints(&end_v))];
                    t.op("m_0", &out, "slice_by_index", &args);
                }
                _ => {
                    let mut r = [1i64; 4];
                    r[axis] = reps as i64;
                    let mut out = s;
                    out[axis] *= reps;
                    t.op("m_0", &out, "tile", &[("x", "x".into()), ("reps", ints(&r))]);
                }
            }
            t.output("m_0");
            model(&t, seed)
        },
    )
}
