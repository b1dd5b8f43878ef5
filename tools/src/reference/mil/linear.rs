//! `linear(x, weight, bias?)` = `x @ weight^T + bias` over the last axis of `x`, and
//! `matmul(x, y, transpose_x?, transpose_y?)` with numpy semantics: the last two axes are
//! the matrices (a transpose flag swaps them), the others broadcast, and a rank-1 operand
//! is a row (`x`) or column (`y`) vector whose axis is dropped from the result.

use super::args::Sx;
use super::value::MTensor;
use crate::reference::kernels::elementwise::binary;
use crate::reference::kernels::matmul::matmul as matmul_kernel;
use crate::reference::kernels::shape::{reshape, transpose};
use crate::tensor::Tensor;

/// `x` with its last two axes swapped.
fn swap_last(x: &Tensor) -> Result<Tensor, String> {
    let r = x.shape.len();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    transpose(x, &perm)
}

/// `linear`.
pub(crate) fn linear(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let w = sx.x("weight")?;
    let [out_f, in_f] = w.shape[..] else { return Err(format!("`weight` must have rank 2, got {:?}", w.shape)) };
    if x.shape.last() != Some(&in_f) {
        return Err(format!("`x` {:?} does not end in the weight's {in_f} input features", x.shape));
    }
    let rows = x.data.len() / in_f.max(1);
    let x2 = reshape(&x, &[rows, in_f])?;
    let mut y = matmul_kernel(&x2, &transpose(&w, &[1, 0])?)?;
    if let Some(b) = sx.opt_x("bias")? {
        if b.data.len() != out_f {
            return Err(format!("`bias` holds {} values for {out_f} output features", b.data.len()));
        }
        y = binary(&y, &reshape(&b, &[out_f])?, |a, c| a + c)?;
    }
    let mut shape = x.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = out_f;
    }
    Ok(sx.one(reshape(&y, &shape)?))
}

/// `matmul`.
pub(crate) fn matmul(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let (x, y) = (sx.x("x")?, sx.x("y")?);
    let (tx, ty) = (sx.bool("transpose_x")?.unwrap_or(false), sx.bool("transpose_y")?.unwrap_or(false));
    if x.shape.is_empty() || y.shape.is_empty() {
        return Err("matmul operands must have rank >= 1".into());
    }
    let (xr, yr) = (x.shape.len(), y.shape.len());
    let xm = match xr {
        1 => reshape(&x, &[1, x.shape[0]])?,
        _ if tx => swap_last(&x)?,
        _ => x.clone(),
    };
    let ym = match yr {
        1 => reshape(&y, &[y.shape[0], 1])?,
        _ if ty => swap_last(&y)?,
        _ => y.clone(),
    };
    let z = matmul_kernel(&xm, &ym)?;
    let mut shape = z.shape.clone();
    if yr == 1 {
        shape.pop();
    }
    if xr == 1 {
        let at = shape.len().saturating_sub(if yr == 1 { 1 } else { 2 });
        shape.remove(at);
    }
    Ok(sx.one(reshape(&z, &shape)?))
}
