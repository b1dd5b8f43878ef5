//! Strategies of the data-movement family: MIL `transpose` of a rank-4 tensor (any
//! permutation: those keeping the last axis in place run as NE copies through views, the
//! others as at most three engine transposes (backend `lower::axis_moves`); moving the
//! batch axis is refused by the chip's validator), `slice_by_index` along one axis and `tile`; constant `pad`.

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
    // Mostly one batch; now and then two (an NE copy per batch).
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

/// `pad(x, pad, mode = "constant", constant_val)` of `[1, c, h, w]` over H and W (and in
/// a quarter of the cases C, which the chip's validator refuses): left pads along W of 0
/// or 32 (a whole 64-byte unit) and now and then 1 (refused by name), other pads 0..3.
pub fn pad() -> impl Strategy<Value = Model> {
    let dims = (1usize..=4, 1usize..=6, 1usize..=40);
    let pads = (select(vec![0usize, 0, 0, 1]), 0usize..3, 0usize..3, select(vec![0usize, 0, 1, 32]), 0usize..4);
    (dims, pads, -2i32..3, any::<u64>()).prop_map(|((c, h, w), (c0, h0, h1, w0, w1), value, seed)| {
        let s = [1, c, h, w];
        let out = [1, c + c0, h + h0 + h1, w + w0 + w1];
        let pad = ints(&[0, 0, c0 as i64, 0, h0 as i64, h1 as i64, w0 as i64, w1 as i64]);
        let args = [
            ("x", "x".to_string()),
            ("pad", pad),
            ("mode", "tensor<string, []>(\"constant\")".to_string()),
            ("constant_val", format!("tensor<fp16, []>({value})")),
        ];
        let mut t = MilText::new(&[("x", &s)]);
        t.op("p_0", &out, "pad", &args).output("p_0");
        Model {
            family: "pad",
            body: super::model::Body::Mil(t.text()),
            names: vec!["p_0".into()],
            range: (-2.0, 2.0),
            seed,
        }
    })
}

/// A slice along W, a transpose exchanging C and H or C and W, a sigmoid (a table pass)
/// or the sum of two such tensors (the planar engine) of `[1, c, h, w]`, or a sigmoid of
/// one row of `[1, c·h, 1, w]`, larger than the L2 a task addresses (2 MiB of source and
/// result): the task runs in bands of rows (of channels for the one-row tensor, of
/// columns for the C <-> W pass).
pub fn large_copy() -> impl Strategy<Value = Model> {
    let dims = (8usize..=12, 256usize..=400, 510usize..=800);
    (dims, 0u8..6, any::<u64>()).prop_map(|((c, h, w), kind, seed)| {
        let s = if kind == 3 { [1, c * h, 1, w] } else { [1, c, h, w] };
        let mut t = match kind {
            5 => MilText::new(&[("x", &s), ("y", &s)]),
            _ => MilText::new(&[("x", &s)]),
        };
        match kind {
            5 => {
                // Two operands from memory: the planar engine in bands of rows of both.
                t.op("m_0", &s, "add", &[("x", "x".into()), ("y", "y".into())]);
            }
            0 => {
                let p = ints(&[0, 2, 1, 3]);
                t.op("m_0", &[1, h, c, w], "transpose", &[("x", "x".into()), ("perm", p)]);
            }
            4 => {
                // C and W exchanged: the NE's transposing pass, in bands of columns.
                let p = ints(&[0, 3, 2, 1]);
                t.op("m_0", &[1, w, h, c], "transpose", &[("x", "x".into()), ("perm", p)]);
            }
            1 => {
                let keep = w / 2 + 1;
                let end = ints(&[1, c as i64, h as i64, keep as i64]);
                let args = [("x", "x".into()), ("begin", ints(&[0, 0, 0, 0])), ("end", end)];
                t.op("m_0", &[1, c, h, keep], "slice_by_index", &args);
            }
            _ => {
                t.op("m_0", &s, "sigmoid", &[("x", "x".into())]);
            }
        }
        t.output("m_0");
        let body = super::model::Body::Mil(t.text());
        Model { family: "large_copy", body, names: vec!["m_0".into()], range: RANGE, seed }
    })
}

/// Rows wider than the piece an engine streams through L2 (0x100 bytes on the NE, 0x400
/// on the planar engine: `header-common-l2.md` §4c): a slice along W of `[1, c, h, w]`
/// (an NE copy, padded pieces when the channels fill whole banks over several rows),
/// a transpose exchanging C and H (an NE copy through a view) or the planar engine's
/// `abs` of rows up to 1200 wide; 1 to 12 channels, 1 to 24 rows.
pub fn streamed_rows() -> impl Strategy<Value = Model> {
    let dims = (1usize..=12, 1usize..=24, 129usize..=1200);
    (dims, 0u8..3, 0usize..4, any::<u64>()).prop_map(|((c, h, w), kind, skip, seed)| {
        let mut t = MilText::new(&[("x", &[1, c, h, w])]);
        match kind {
            0 => {
                // The window starts on a 64-byte unit of the row (the tile DMA's base).
                let begin = (32 * skip).min(w - 1);
                let end = ints(&[1, c as i64, h as i64, w as i64]);
                let args = [("x", "x".into()), ("begin", ints(&[0, 0, 0, begin as i64])), ("end", end)];
                t.op("m_0", &[1, c, h, w - begin], "slice_by_index", &args);
            }
            1 => {
                let p = ints(&[0, 2, 1, 3]);
                t.op("m_0", &[1, h, c, w], "transpose", &[("x", "x".into()), ("perm", p)]);
            }
            _ => {
                t.op("m_0", &[1, c, h, w], "abs", &[("x", "x".into())]);
            }
        }
        t.output("m_0");
        Model { family: "streamed_rows", ..model(&t, seed) }
    })
}

/// Nearest-neighbour upsampling of `[1, c, h, w]`: `upsample_nearest_neighbor` by whole
/// factors 1..4 per axis, or `resize_nearest_neighbor` to a whole multiple of H and W;
/// one case in eight asks for a factor of 1.5 along W, which the backend refuses naming
/// the layer.
pub fn upsample() -> impl Strategy<Value = Model> {
    let dims = (1usize..=12, 1usize..=12, 1usize..=24);
    (dims, (1usize..=4, 1usize..=4), any::<bool>(), proptest::bool::weighted(0.125), any::<u64>()).prop_map(
        |((c, h, w), (fy, fx), resize, fractional, seed)| {
            let s = [1, c, h, w];
            let (args, op, out) = if fractional {
                let out = [1, c, h * fy, w * 3 / 2];
                let args = vec![
                    ("x", "x".to_string()),
                    ("scale_factor_height", format!("tensor<fp32, []>({fy})")),
                    ("scale_factor_width", "tensor<fp32, []>(1.5)".to_string()),
                ];
                (args, "upsample_nearest_neighbor", out)
            } else if resize {
                let out = [1, c, h * fy, w * fx];
                let args = vec![
                    ("x", "x".to_string()),
                    ("target_size_height", super::model::int((h * fy) as i64)),
                    ("target_size_width", super::model::int((w * fx) as i64)),
                ];
                (args, "resize_nearest_neighbor", out)
            } else {
                let out = [1, c, h * fy, w * fx];
                let args = vec![
                    ("x", "x".to_string()),
                    ("scale_factor_height", format!("tensor<fp32, []>({fy})")),
                    ("scale_factor_width", format!("tensor<fp32, []>({fx})")),
                ];
                (args, "upsample_nearest_neighbor", out)
            };
            let mut t = MilText::new(&[("x", &s)]);
            t.op("u_0", &out, op, &args).output("u_0");
            Model {
                family: "upsample",
                body: super::model::Body::Mil(t.text()),
                names: vec!["u_0".into()],
                range: (-2.0, 2.0),
                seed,
            }
        },
    )
}
