//! `Conv` (seed 002 Table B.2): one bottom plus the weight; the kernel within the per-chip
//! range ("Invalid conv kernel %s = %zd, It should be in [%zd, %zd]"); channels divisible
//! by the groups, and the group count within the chip's `numGroups` field.
//!
//! The range is the chip's `conv-kernel-width` limit (ANEForge: the height has no fixed
//! cap; the H13 code generator caps both sides at 13, which its own check reports). The
//! seed's "large kernel W and H multiple of 8" is not expressed: the seed does not say
//! where "large" starts.

use super::cx::{Check, Cx};

/// `anec.conv`.
pub(super) fn conv(cx: &Cx<'_>) -> Check {
    kernel_width(cx)?;
    groups(cx)
}

fn kernel_width(cx: &Cx<'_>) -> Check {
    let Some(&kw) = cx.ints("kernel").get(1) else { return Ok(()) };
    let range = cx.limits().conv_kernel_width.value;
    let kw = u32::try_from(kw).unwrap_or(u32::MAX);
    if range.contains(kw) {
        return Ok(());
    }
    let t = cx.target;
    let rule = format!("Invalid conv kernel width = {kw}, It should be in [{}, {}]", range.min, range.max);
    let r = cx.reject(rule).limit(t, "conv-kernel-width", format!("{}..={}", range.min, range.max));
    if kw > range.max {
        // What the model can do instead that the chip runs: strides stay within 3 on H13,
        // so a kernel wider than the limit is the sum of narrower ones over shifted views
        // of the input; a patch embedding (stride = kernel) reaches here only when
        // `tile::patch_embedding` could not rewrite it.
        let patches = cx.ints("stride").get(1).is_some_and(|&s| s == i64::from(kw));
        let s = if patches {
            format!(
                "kernel {kw} = stride > {} on {t}: a patch embedding runs as data moves and a 1x1 convolution when it \
                 has one group, an fp16 input of one batch and patches covering a width that is a multiple of 32",
                range.max
            )
        } else {
            format!(
                "kernel {kw} > {} on {t}: write it as kernels of at most {} taps over shifted slices of the input, \
                 their results added (a dilated kernel spans (k - 1) x dilation + 1)",
                range.max, range.max
            )
        };
        return Err(r.suggest(s));
    }
    Err(r)
}

fn groups(cx: &Cx<'_>) -> Check {
    let g = cx.int("groups").unwrap_or(1);
    let (Some(x), Some(y)) = (cx.operand(0), cx.result()) else { return Ok(()) };
    let max = cx.limits().max_groups.value;
    if g < 1 || g > i64::from(max) {
        let rule = format!("Invalid conv groups = {g}, It should be in [1, {max}]");
        return Err(cx.reject(rule).limit(cx.target, "max-groups", max));
    }
    let g = g as u32;
    if x.c % g != 0 || y.c % g != 0 {
        let rule = format!(
            "Invalid conv groups = {g}: input channels {} and output channels {} must be divisible by it",
            x.c, y.c
        );
        return Err(cx.reject(rule));
    }
    Ok(())
}
