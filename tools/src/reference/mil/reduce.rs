//! `reduce_*(x, axes?, keep_dims = false)` over `axes` (default all): `sum`, `mean`, `max`,
//! `min`, `prod`, `sum_square` (sum of squares), `l1_norm` (sum of |x|), `l2_norm`
//! (sqrt of the sum of squares), `log_sum` (ln of the sum), `log_sum_exp`
//! (`max + ln sum e^(x - max)`); `reduce_argmax` / `reduce_argmin(x, axis = -1,
//! keep_dims = false)` give int32 indices (first on ties).

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::elementwise::{binary, unary};
use crate::reference::kernels::reduce::{arg_reduce, reduce as reduce_kernel, Reduce};
use crate::reference::kernels::shape::reshape;
use crate::reference::kernels::{axis_index, KResult};
use crate::tensor::Tensor;
use anec_ir::mil::ScalarType;

/// A `reduce_*` op.
pub(crate) fn reduce(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let rank = x.shape.len();
    let keep = sx.bool("keep_dims")?.unwrap_or(false);
    let stem = sx.op().trim_start_matches("reduce_");
    if stem == "argmax" || stem == "argmin" {
        let axis = axis_index(sx.int("axis")?.unwrap_or(-1), rank)?;
        let y = drop_axes(arg_reduce(&x, axis, stem == "argmax")?, &[axis], keep)?;
        let t = MTensor::float(ScalarType::Fp32, y);
        return Ok(vec![t.cast(sx.out_dtype(0).filter(|d| !d.is_float()).unwrap_or(ScalarType::Int32))?]);
    }
    let raw = sx.ints("axes")?.unwrap_or_else(|| (0..rank as i64).collect());
    let mut axes = raw.iter().map(|&a| axis_index(a, rank)).collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    let y = match stem {
        "sum" | "mean" | "max" | "min" | "prod" => {
            let kind = Reduce::from_name(stem).ok_or("unknown reduction")?;
            reduce_kernel(&x, &axes, kind)?
        }
        "sum_square" => reduce_kernel(&unary(&x, |v| v * v)?, &axes, Reduce::Sum)?,
        "l1_norm" => reduce_kernel(&unary(&x, f32::abs)?, &axes, Reduce::Sum)?,
        "l2_norm" => unary(&reduce_kernel(&unary(&x, |v| v * v)?, &axes, Reduce::Sum)?, f32::sqrt)?,
        "log_sum" => unary(&reduce_kernel(&x, &axes, Reduce::Sum)?, |v| f64::from(v).ln() as f32)?,
        "log_sum_exp" => log_sum_exp(&x, &axes)?,
        other => return Err(format!("the reference interpreter does not implement MIL op `reduce_{other}`")),
    };
    Ok(sx.one(drop_axes(y, &axes, keep)?))
}

/// `max + ln(sum(e^(x - max)))` over `axes`.
fn log_sum_exp(x: &Tensor, axes: &[usize]) -> KResult<Tensor> {
    let m = reduce_kernel(x, axes, Reduce::Max)?;
    let e = binary(x, &m, |v, mx| (f64::from(v - mx)).exp() as f32)?;
    let s = reduce_kernel(&e, axes, Reduce::Sum)?;
    binary(&m, &s, |mx, sum| mx + f64::from(sum).ln() as f32)
}

/// Removes the reduced (extent-1) axes unless `keep`.
fn drop_axes(y: Tensor, axes: &[usize], keep: bool) -> KResult<Tensor> {
    if keep {
        return Ok(y);
    }
    let shape: Vec<usize> = y.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect();
    reshape(&y, &shape)
}
