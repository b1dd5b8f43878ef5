//! `ScaledElementWise` units: a binary elementwise op and a scalar scale
//! (`anec.scaled_elementwise`).
//!
//! Params: `Type` (`Add`, `Mult`, `Sub`, `Min`, `Max`) and `Scale` (an fp16 bit pattern,
//! e.g. 15360 = 1.0; default 1.0). Exactly two bottoms of the same shape; the result has
//! that shape.

use super::{Lowered, UnitCx};
use crate::netplist::reader::Result;
use anec_ir::{Attr, Attrs, OpCode, TensorType};

/// Netplist `Type` to `kind`.
const KINDS: [(&str, &str); 5] = [("Add", "add"), ("Mult", "mul"), ("Sub", "sub"), ("Min", "min"), ("Max", "max")];

/// Lowers a `ScaledElementWise` unit.
pub(crate) fn lower(cx: &UnitCx<'_>) -> Result<Lowered> {
    let [(_, a), (_, b)] = cx.operands.as_slice() else {
        let n = cx.operands.len();
        return Err(cx.unit.bad("Bottom", format!("expects 2 bottoms, found {n}")));
    };
    if !same_shape(a, b) {
        return Err(cx.shape_error(format!("bottom shapes differ: {a} and {b}")));
    }
    let p = cx.params()?;
    let ty = p.str("Type")?;
    let kind = KINDS.iter().find(|(t, _)| *t == ty).map(|(_, k)| *k).ok_or_else(|| {
        p.bad("Type", format!("unknown elementwise type '{ty}' (supported: Add, Mult, Sub, Min, Max)"))
    })?;
    let scale = p.opt_half("Scale")?.unwrap_or(1.0);
    let mut attrs = Attrs::new();
    attrs.insert("kind".into(), Attr::Str(kind.into()));
    attrs.insert("scale".into(), Attr::Float(scale));
    let result = TensorType { dtype: cx.out_dtype, ..*a };
    Ok(Lowered { opcode: OpCode::ScaledElementwise, attrs, result, resources: Vec::new() })
}

/// Whether two types have the same extents (element types may differ).
fn same_shape(a: &TensorType, b: &TensorType) -> bool {
    (a.n, a.c, a.d, a.h, a.w) == (b.n, b.c, b.d, b.h, b.w)
}
