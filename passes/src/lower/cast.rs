//! `cast(x, dtype)`: between fp16 and fp32 it is the same engine value (runtime tensors
//! are f16). A `bool`, `uint8` or `int8` input is an 8-bit runtime tensor (`mod.rs`
//! `input_type`); its cast to fp16 or fp32 is an `anec.gain_offset_control` with scale 1
//! and bias 0 whose operand is 8-bit and whose result is f16: the verifier checks only the
//! shape of that op (its element types may differ), the reference interpreter computes
//! `x * 1 + 0` on the integer values, and the H13 backend runs it as the planar engine's
//! one-operand identity reading the 8-bit surface (InFmt u8 or i8, OutFmt fp16), the task
//! Apple's compiler writes for `cast_b_to_f16_1x1x64x1`. Every other target (bool,
//! integers) is an error: the engine computes and returns fp16. Casts of constants fold
//! (`consts.rs`).

use super::cx::{attrs, Cx, Fail, LResult, Val};
use anec_ir::{Attr, OpCode};

/// `cast`.
pub(crate) fn cast(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let dtype = cx.string("dtype")?.ok_or("missing input `dtype`")?;
    let x = cx.input("x")?;
    let eight_bit = x.ty.dtype.size() == 1;
    match dtype.as_str() {
        "fp16" | "fp32" if eight_bit => {
            let params = attrs([("scale", Attr::Float(1.0)), ("bias", Attr::Float(0.0))]);
            let y = cx.emit_rt(OpCode::GainOffsetControl, &[x.id], x.shape.clone(), params)?;
            Ok(vec![Val::Rt(y)])
        }
        "fp16" | "fp32" => Ok(vec![Val::Rt(x)]),
        other if eight_bit => Err(Fail::Msg(format!(
            "a cast of an 8-bit input to {other} is not supported: the engine computes and returns fp16, so an \
             8-bit input can only be cast to fp16 or fp32"
        ))),
        other => Err(Fail::Msg(format!(
            "a cast to {other} is not supported: runtime tensors are fp16 on the engine, which computes and \
             returns no {other} tensors (only fp16 <-> fp32 casts, and casts of bool, uint8 and int8 inputs to \
             fp16 or fp32, lower)"
        ))),
    }
}
