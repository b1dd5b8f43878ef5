//! Normalizations (biased variance, `epsilon` inside the square root, default 1e-5):
//!
//! - `layer_norm(x, axes?, gamma?, beta?, epsilon?)`: over `axes` (default all);
//!   `gamma` / `beta` hold the normalized axes' extents, in ascending axis order.
//! - `batch_norm(x, mean, variance, gamma?, beta?, epsilon?)`: per channel (axis 1) with
//!   the given statistics.
//! - `instance_norm(x, gamma?, beta?, epsilon?)`: over the axes after the channel, per
//!   batch and channel, then `gamma` / `beta` per channel.

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::axis_index;
use crate::reference::kernels::elementwise::binary;
use crate::reference::kernels::norm::normalize;
use crate::reference::kernels::shape::reshape;
use crate::tensor::Tensor;

/// Multiplies by `gamma` and adds `beta`, each reshaped to `shape` (broadcastable to `y`).
fn affine(y: Tensor, gamma: Option<Tensor>, beta: Option<Tensor>, shape: &[usize]) -> Result<Tensor, String> {
    let mut y = y;
    if let Some(g) = gamma {
        y = binary(&y, &reshape(&g, shape).map_err(|e| format!("`gamma`: {e}"))?, |a, b| a * b)?;
    }
    if let Some(b) = beta {
        y = binary(&y, &reshape(&b, shape).map_err(|e| format!("`beta`: {e}"))?, |a, c| a + c)?;
    }
    Ok(y)
}

/// `layer_norm`.
pub(crate) fn layer_norm(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let rank = x.shape.len();
    let raw = sx.ints("axes")?.unwrap_or_else(|| (0..rank as i64).collect());
    let mut axes = raw.iter().map(|&a| axis_index(a, rank)).collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    let eps = sx.float_or("epsilon", 1e-5)?;
    let y = normalize(&x, &axes, eps)?;
    let shape: Vec<usize> = (0..rank).map(|i| if axes.contains(&i) { x.shape[i] } else { 1 }).collect();
    Ok(sx.one(affine(y, sx.opt_x("gamma")?, sx.opt_x("beta")?, &shape)?))
}

/// The per-channel broadcast shape of a rank-`rank` tensor with `c` channels on axis 1.
fn channel_shape(rank: usize, c: usize) -> Vec<usize> {
    (0..rank).map(|i| if i == 1 { c } else { 1 }).collect()
}

/// `batch_norm`.
pub(crate) fn batch_norm(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    if x.shape.len() < 2 {
        return Err(format!("`x` {:?} has no channel axis", x.shape));
    }
    let shape = channel_shape(x.shape.len(), x.shape[1]);
    let (mean, var) = (sx.x("mean")?, sx.x("variance")?);
    let eps = sx.float_or("epsilon", 1e-5)?;
    let centered = binary(&x, &reshape(&mean, &shape).map_err(|e| format!("`mean`: {e}"))?, |a, m| a - m)?;
    let var = reshape(&var, &shape).map_err(|e| format!("`variance`: {e}"))?;
    let y = binary(&centered, &var, |a, v| (f64::from(a) / (f64::from(v) + f64::from(eps)).sqrt()) as f32)?;
    Ok(sx.one(affine(y, sx.opt_x("gamma")?, sx.opt_x("beta")?, &shape)?))
}

/// `instance_norm`.
pub(crate) fn instance_norm(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let rank = x.shape.len();
    if rank < 3 {
        return Err(format!("`x` {:?} needs a channel and at least one spatial axis", x.shape));
    }
    let axes: Vec<usize> = (2..rank).collect();
    let y = normalize(&x, &axes, sx.float_or("epsilon", 1e-5)?)?;
    let shape = channel_shape(rank, x.shape[1]);
    Ok(sx.one(affine(y, sx.opt_x("gamma")?, sx.opt_x("beta")?, &shape)?))
}
