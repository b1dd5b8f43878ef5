//! Binary elementwise ops with numpy broadcasting: `add`, `sub`, `mul`, `real_div`,
//! `floor_div`, `mod`, `maximum`, `minimum`, `pow`, and the comparisons `equal`,
//! `not_equal`, `less`, `less_equal`, `greater`, `greater_equal` and the logical
//! `logical_and`, `logical_or`, `logical_xor` (bool results, 1 / 0; a nonzero operand is
//! true).

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::elementwise::binary as binary_kernel;
use anec_ir::mil::ScalarType;

/// The binary ops.
const OPS: [&str; 18] = [
    "add",
    "sub",
    "mul",
    "real_div",
    "floor_div",
    "mod",
    "maximum",
    "minimum",
    "pow",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
];

/// True for the ops [`binary`] evaluates.
pub(crate) fn handles(op: &str) -> bool {
    OPS.contains(&op)
}

/// The function of a binary op.
fn function(op: &str) -> Option<fn(f32, f32) -> f32> {
    let f: fn(f32, f32) -> f32 = match op {
        "add" => |x, y| x + y,
        "sub" => |x, y| x - y,
        "mul" => |x, y| x * y,
        "real_div" => |x, y| x / y,
        "floor_div" => |x, y| (x / y).floor(),
        "mod" => |x, y| x - (x / y).floor() * y,
        "maximum" => f32::max,
        "minimum" => f32::min,
        "pow" => |x, y| f64::from(x).powf(f64::from(y)) as f32,
        "equal" => |x, y| f32::from(u8::from(x == y)),
        "not_equal" => |x, y| f32::from(u8::from(x != y)),
        "less" => |x, y| f32::from(u8::from(x < y)),
        "less_equal" => |x, y| f32::from(u8::from(x <= y)),
        "greater" => |x, y| f32::from(u8::from(x > y)),
        "greater_equal" => |x, y| f32::from(u8::from(x >= y)),
        "logical_and" => |x, y| f32::from(u8::from(x != 0.0 && y != 0.0)),
        "logical_or" => |x, y| f32::from(u8::from(x != 0.0 || y != 0.0)),
        "logical_xor" => |x, y| f32::from(u8::from((x != 0.0) != (y != 0.0))),
        _ => return None,
    };
    Some(f)
}

/// A binary op.
pub(crate) fn binary(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let f = function(sx.op()).ok_or_else(|| format!("`{}` is not a binary op", sx.op()))?;
    let (xm, ym) = (sx.req("x")?, sx.req("y")?);
    let z = binary_kernel(&xm.to_f32()?, &ym.to_f32()?, f)?;
    let dtype = sx.out_dtype(0).unwrap_or(if xm.dtype.is_float() { xm.dtype } else { ScalarType::Fp32 });
    let t = MTensor::float(ScalarType::Fp32, z);
    if dtype.is_float() {
        Ok(vec![MTensor { dtype, ..t }])
    } else {
        Ok(vec![t.cast(dtype)?])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn functions() {
        let f = |op: &str, x: f32, y: f32| function(op).unwrap()(x, y);
        assert_eq!(f("floor_div", -7.0, 2.0), -4.0);
        assert_eq!(f("mod", -7.0, 2.0), 1.0);
        assert_eq!(f("pow", 2.0, 10.0), 1024.0);
        assert_eq!(f("real_div", 1.0, 4.0), 0.25);
        assert_eq!((f("less", 1.0, 2.0), f("greater_equal", 1.0, 2.0)), (1.0, 0.0));
        assert!(function("gather").is_none());
    }
}
