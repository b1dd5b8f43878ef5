//! The spatial rearrangements of seed 002 Table B.2, parameterized by the integer factors
//! `factor_x`, `factor_y`, `factor_z`:
//!
//! - PixelShuffle / PixelUnshuffle: depth factor 1; W and H factors in {1, 2, 3, 4, 8}; the
//!   channel divisible by the factor product ("returned invalid:", the prefix of the
//!   compiler's message, followed by the reason);
//! - SpaceToBatch / BatchToSpace: the factors fully factor into 2, 3, 4 and 8 (products of
//!   2 and 3); BatchToSpace's batch divisible by the factor product ("Input batch n = %zd
//!   is not divisible by factor x = %d * factor y = %d");
//! - ChannelToSpace / SpaceToChannel: the z dimension is not reorganizable ("ChannelToSpace
//!   in z dimension is not supported, current factor.z = %d."); x and y factor as above
//!   (seed 003 Table 26.1: the family's factors factor into {2, 3, 4, 8}).

use super::cx::{Check, Cx};
use anec_ir::OpCode;

/// The W and H factors PixelShuffle accepts.
const SHUFFLE_FACTORS: [i64; 5] = [1, 2, 3, 4, 8];

/// The seed's name of a rearrangement op.
fn seed_name(op: OpCode) -> &'static str {
    match op {
        OpCode::PixelShuffle => "PixelShuffle",
        OpCode::PixelUnshuffle => "PixelUnshuffle",
        OpCode::SpaceToBatch => "SpaceToBatch",
        OpCode::BatchToSpace => "BatchToSpace",
        OpCode::ChannelToSpace => "ChannelToSpace",
        _ => "SpaceToChannel",
    }
}

/// `[factor_x, factor_y, factor_z]` (1 when missing).
fn factors(cx: &Cx<'_>) -> [i64; 3] {
    ["factor_x", "factor_y", "factor_z"].map(|n| cx.int(n).unwrap_or(1))
}

/// Whether `f` is a product of 2s and 3s (1 included): it factors into 2, 3, 4 and 8.
fn factors_into_2_3(mut f: i64) -> bool {
    if f < 1 {
        return false;
    }
    for p in [2, 3] {
        while f % p == 0 {
            f /= p;
        }
    }
    f == 1
}

/// `anec.pixel_shuffle`, `anec.pixel_unshuffle`.
pub(super) fn pixel_shuffle(cx: &Cx<'_>) -> Check {
    let name = seed_name(cx.op.opcode);
    let [fx, fy, fz] = factors(cx);
    let invalid = |why: String| cx.reject(format!("{name} returned invalid: {why}"));
    if fz != 1 {
        return Err(invalid(format!("depth factor = {fz}, it must be 1")));
    }
    for (axis, f) in [("x", fx), ("y", fy)] {
        if !SHUFFLE_FACTORS.contains(&f) {
            let s = "apply the rearrangement in two steps whose factors are in {1, 2, 3, 4, 8}";
            return Err(invalid(format!("factor {axis} = {f} is not in {{1, 2, 3, 4, 8}}")).suggest(s));
        }
    }
    let (Some(x), product) = (cx.operand(0), fx * fy) else { return Ok(()) };
    if cx.op.opcode == OpCode::PixelShuffle && i64::from(x.c) % product != 0 {
        return Err(invalid(format!("channels {} are not divisible by factor x * factor y = {product}", x.c)));
    }
    Ok(())
}

/// `anec.space_to_batch`, `anec.batch_to_space`.
pub(super) fn space_batch(cx: &Cx<'_>) -> Check {
    let name = seed_name(cx.op.opcode);
    let [fx, fy, _] = factors(cx);
    for (axis, f) in [("x", fx), ("y", fy)] {
        if !factors_into_2_3(f) {
            return Err(cx.reject(format!("{name} factor {axis} = {f} does not factor into 2, 3, 4 and 8")));
        }
    }
    let Some(x) = cx.operand(0) else { return Ok(()) };
    if cx.op.opcode == OpCode::BatchToSpace && i64::from(x.n) % (fx * fy) != 0 {
        let rule = format!("Input batch n = {} is not divisible by factor x = {fx} * factor y = {fy}", x.n);
        return Err(cx.reject(rule));
    }
    Ok(())
}

/// `anec.channel_to_space`, `anec.space_to_channel`.
pub(super) fn channel_space(cx: &Cx<'_>) -> Check {
    let name = seed_name(cx.op.opcode);
    let [fx, fy, fz] = factors(cx);
    if fz != 1 {
        let rule = format!("{name} in z dimension is not supported, current factor.z = {fz}.");
        let s = "fold the depth axis into the channel axis with a reshape and rearrange x and y only";
        return Err(cx.reject(rule).suggest(s));
    }
    for (axis, f) in [("x", fx), ("y", fy)] {
        if !factors_into_2_3(f) {
            return Err(cx.reject(format!("{name} factor {axis} = {f} does not factor into 2, 3, 4 and 8")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::factors_into_2_3;

    #[test]
    fn factors_of_2_and_3_only() {
        let ok: Vec<i64> = (0..=20).filter(|&f| factors_into_2_3(f)).collect();
        assert_eq!(ok, [1, 2, 3, 4, 6, 8, 9, 12, 16, 18]);
    }
}
