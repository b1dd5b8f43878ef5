//! `logical_not(x)` (1 where `x` is 0) and `select(cond, a, b)` (`a` where `cond` is
//! nonzero, else `b`, the three broadcast together as numpy does).

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::elementwise::binary as binary_kernel;
use crate::tensor::Tensor;
use anec_ir::mil::ScalarType;

/// `logical_not`.
pub(crate) fn logical_not(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.req("x")?.to_f32()?;
    let data = x.data.iter().map(|&v| f32::from(u8::from(v == 0.0))).collect();
    let t = MTensor::float(ScalarType::Fp32, Tensor { shape: x.shape, data });
    Ok(vec![t.cast(sx.out_dtype(0).unwrap_or(ScalarType::Bool))?])
}

/// `select`.
pub(crate) fn select(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let (c, a, b) = (sx.req("cond")?.to_f32()?, sx.req("a")?.to_f32()?, sx.req("b")?.to_f32()?);
    // Each of the three broadcast to the shape of all three.
    let (c_ca, a_ca) = (binary_kernel(&c, &a, |c, _| c)?, binary_kernel(&c, &a, |_, a| a)?);
    let cond = binary_kernel(&c_ca, &b, |c, _| c)?;
    let on = binary_kernel(&a_ca, &b, |a, _| a)?;
    let off = binary_kernel(&a_ca, &b, |_, b| b)?;
    let data =
        cond.data.iter().zip(&on.data).zip(&off.data).map(|((&c, &a), &b)| if c != 0.0 { a } else { b }).collect();
    Ok(sx.one(Tensor { shape: cond.shape, data }))
}
