//! `cast(x, dtype)`: between fp16 and fp32 it is the same engine value (runtime tensors
//! are f16); other targets are errors, since the engine does not compute in integers.
//! Casts of constants fold (`consts.rs`).

use super::cx::{Cx, Fail, LResult, Val};

/// `cast`.
pub(crate) fn cast(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let dtype = cx.string("dtype")?.ok_or("missing input `dtype`")?;
    let x = cx.input("x")?;
    match dtype.as_str() {
        "fp16" | "fp32" => Ok(vec![Val::Rt(x)]),
        other => Err(Fail::Msg(format!(
            "a cast to {other} is not supported: runtime tensors are fp16 on the engine (only fp16 <-> fp32 casts lower)"
        ))),
    }
}
