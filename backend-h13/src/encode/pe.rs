//! The planar-engine block (unnamed words 0x22C..0x238): elementwise op mode, second
//! source select, bias/scale, pre-scale and the final fp32 scale (a reduction's 1/N).

use crate::error::BackendError;
use crate::task::{PeReduce, ReducePost, Task};
use crate::td::TdImage;

/// PE.Cfg bit 19: a second operand is read (every two-input program, from memory or L2);
/// bit 18 negates it
/// (the current compiler's `sub`: 0xc0000).
const SECOND_OPERAND: u32 = 1 << 19;
const NEGATE_SECOND: u32 = 1 << 18;
/// PE.Cfg bit 6: the absolute value of the result (Apple's `unary_abs`: 0x40).
const ABS: u32 = 1 << 6;
/// PE.Cfg bit 5: a ReLU of the result (Apple's `chain_add_relu_c512`: 0x80020).
const RELU: u32 = 1 << 5;
/// PE word bits of a reduction: the reciprocal (softmax's denominator) or the reciprocal
/// square root (layer_norm's rstd) of the result; each element squared; operand 1
/// negated (subtracted from operand 2: layer_norm's variance, 0x92010 with bit 19).
const RECIPROCAL: u32 = 1 << 12;
const RSQRT: u32 = 1 << 13;
const SQUARE: u32 = 1 << 4;
const NEGATE_FIRST: u32 = 1 << 16;

/// The post-op and input bits of a reduction.
fn reduce_bits(r: &PeReduce) -> u32 {
    let post = match r.post {
        ReducePost::None => 0,
        ReducePost::Reciprocal => RECIPROCAL,
        ReducePost::Rsqrt { .. } => RSQRT,
    };
    post | if r.centered { SQUARE } else { 0 }
}
/// fp16 1.0.
const ONE_F16: u32 = 0x3C00;
/// fp32 1.0.
const ONE_F32: u32 = 0x3F80_0000;

/// Writes the block for planar-engine tasks; NE tasks leave it zero as Apple does.
pub fn encode(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let Some(pe) = t.pe else { return Ok(()) };
    let second = if t.operands() > 1 { SECOND_OPERAND } else { 0 };
    let negate = if pe.negate { NEGATE_SECOND } else { 0 };
    let abs = if pe.abs { ABS } else { 0 } | if pe.relu { RELU } else { 0 };
    // A reduction's op sits in the low bits (max 2); an elementwise op's from bit 2.
    let op = match t.reduce {
        // Two operands: the statistic (operand 1) is subtracted from operand 2.
        Some(r) if r.centered && t.operands() > 1 => pe.mode | reduce_bits(&r) | NEGATE_FIRST,
        Some(r) => pe.mode | reduce_bits(&r),
        None => pe.mode << 2,
    };
    td.set_unnamed(0x22C, second | negate | abs | op)?;
    td.set_unnamed(0x230, u32::from(pe.bias) | (u32::from(pe.scale) << 16))?;
    // The rsqrt post-op's epsilon sits in the low half of the pre-scale word.
    let eps = match t.reduce.map(|r| r.post) {
        Some(ReducePost::Rsqrt { eps }) => u32::from(eps),
        _ => 0,
    };
    td.set_unnamed(0x234, (ONE_F16 << 16) | eps)?;
    // A reduction's fp32 post-scale (1/N for a mean); 1.0 otherwise.
    let post = t.reduce.map_or(ONE_F32, |r| r.scale.to_bits());
    td.set_unnamed(0x238, post)
}
