//! `Pool` (seed 002 Table B.2): one bottom; the window within the (padded) input; each pad
//! below the kernel; the mode gated per chip ("Pooling mode \"%s\" is not available on this
//! ANE architecture.").
//!
//! The anec dialect has the max and average modes, which every chip of the table runs; no
//! seed or reference names a pooling mode one chip lacks, so the per-chip mode list is the
//! same for all (a chip that lacked one would be a row in `crate::target`).

use super::cx::{Check, Cx};

/// The pooling modes every chip runs.
const MODES: [&str; 2] = ["max", "avg"];

/// `anec.pooling`.
pub(super) fn pooling(cx: &Cx<'_>) -> Check {
    let kind = cx.str("kind").unwrap_or("");
    if !MODES.contains(&kind) {
        return Err(cx.reject(format!("Pooling mode \"{kind}\" is not available on this ANE architecture.")));
    }
    let (kernel, pad) = (cx.ints("kernel"), cx.ints("pad"));
    let ([kh, kw], [top, bottom, left, right]) = (kernel.as_slice(), pad.as_slice()) else { return Ok(()) };
    let Some(x) = cx.operand(0) else { return Ok(()) };
    if *kh > i64::from(x.h) + top + bottom || *kw > i64::from(x.w) + left + right {
        let rule = format!("Pooling window {kh}x{kw} is larger than the padded input {}x{}", x.h, x.w);
        return Err(cx.reject(rule));
    }
    for (side, p, k) in [("top", top, kh), ("bottom", bottom, kh), ("left", left, kw), ("right", right, kw)] {
        if p >= k {
            let rule = format!("Pooling pad {side} = {p} must be below the kernel size {k}");
            let s = "pad the input explicitly (a pad layer) and pool without padding";
            return Err(cx.reject(rule).suggest(s));
        }
    }
    Ok(())
}
