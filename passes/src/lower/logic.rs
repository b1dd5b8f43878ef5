//! Comparisons (`equal`, `not_equal`, `less`, `less_equal`, `greater`,
//! `greater_equal`), logical ops (`logical_and`, `logical_or`, `logical_xor`,
//! `logical_not`) and `select`, on the engine's fp16 arithmetic, a bool being fp16 0 or 1.
//!
//! The engine has no comparison. `step(d) = clamp(d · 2^12 · 2^12, 0, 1)` (two
//! gain/offsets and a clamped ReLU) is 1 for every positive fp16 `d` (the smallest,
//! 2^-24, scales to 1) and 0 otherwise, and `x - y` of two fp16 values is positive
//! exactly when `x > y` (fp16 subtraction underflows gradually, never to 0 for `x ≠ y`),
//! so:
//! `greater = step(x - y)`, `less = step(y - x)`, `greater_equal = 1 - less`,
//! `less_equal = 1 - greater`, `not_equal = step(|x - y|)`, `equal = 1 - not_equal`;
//! `logical_and = a · b`, `logical_or = max(a, b)`, `logical_xor = |a - b|`,
//! `logical_not = 1 - a`; `select(c, a, b) = c · a + (1 - c) · b`, exact for c in {0, 1}.
//! Operands broadcast as for the arithmetic ops (`elementwise::combine`). A difference
//! beyond the fp16 range saturates the step to 1, as it should. Anything relying on a
//! flush of subnormals to zero would break the first rule: no record of Apple's shows how
//! the engine treats them (the simulator computes IEEE fp16).

use super::cx::{Cx, LResult, Rt, Val};
use super::elementwise::{combine, goc, neuron, rt_with, v, Goc};

/// 2^12: two gain/offsets by it take the smallest positive fp16 value to 1.
const STEP_GAIN: f32 = 4096.0;

/// `clamp(d · 2^24, 0, 1)`.
fn step(cx: &mut Cx<'_, '_>, d: &Rt) -> Rt {
    let gain = Goc { scale: Some(STEP_GAIN), ..Goc::default() };
    let once = goc(cx, v(d), gain.clone());
    let twice = goc(cx, once, gain);
    rt_with(d, neuron(cx, twice, "clamped_relu", Some(0.0), Some(1.0)))
}

/// `1 - x`.
fn not(cx: &mut Cx<'_, '_>, x: &Rt) -> Rt {
    rt_with(x, goc(cx, v(x), Goc { scale: Some(-1.0), bias: Some(1.0), ..Goc::default() }))
}

fn abs(cx: &mut Cx<'_, '_>, x: &Rt) -> Rt {
    rt_with(x, neuron(cx, v(x), "abs", None, None))
}

fn operands(cx: &Cx<'_, '_>) -> LResult<(Val, Val)> {
    Ok((cx.val("x")?.ok_or("missing input `x`")?, cx.val("y")?.ok_or("missing input `y`")?))
}

/// The comparisons.
pub(crate) fn compare(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    cx.allow_bool_results();
    let op = cx.op();
    let (x, y) = operands(cx)?;
    let r = match op {
        "greater" | "less_equal" => {
            let d = combine(cx, "sub", x, y)?;
            let gt = step(cx, &d);
            if op == "greater" {
                gt
            } else {
                not(cx, &gt)
            }
        }
        "less" | "greater_equal" => {
            let d = combine(cx, "sub", y, x)?;
            let lt = step(cx, &d);
            if op == "less" {
                lt
            } else {
                not(cx, &lt)
            }
        }
        _ => {
            let d = combine(cx, "sub", x, y)?;
            let a = abs(cx, &d);
            let ne = step(cx, &a);
            if op == "not_equal" {
                ne
            } else {
                not(cx, &ne)
            }
        }
    };
    Ok(vec![Val::Rt(r)])
}

/// `logical_and`, `logical_or`, `logical_xor`.
pub(crate) fn logical(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    cx.allow_bool_results();
    let op = cx.op();
    let (x, y) = operands(cx)?;
    let r = match op {
        "logical_and" => combine(cx, "mul", x, y)?,
        "logical_or" => combine(cx, "maximum", x, y)?,
        _ => {
            let d = combine(cx, "sub", x, y)?;
            abs(cx, &d)
        }
    };
    Ok(vec![Val::Rt(r)])
}

/// `logical_not`.
pub(crate) fn logical_not(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    cx.allow_bool_results();
    let x = cx.input("x")?;
    Ok(vec![Val::Rt(not(cx, &x))])
}

/// `select(cond, a, b)`.
pub(crate) fn select(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let cond = cx.input("cond")?;
    let a = cx.val("a")?.ok_or("missing input `a`")?;
    let b = cx.val("b")?.ok_or("missing input `b`")?;
    let keep = not(cx, &cond);
    let picked = combine(cx, "mul", Val::Rt(cond), a)?;
    let other = combine(cx, "mul", Val::Rt(keep), b)?;
    Ok(vec![Val::Rt(combine(cx, "add", Val::Rt(picked), Val::Rt(other))?)])
}
