//! `linear` and `matmul`.
//!
//! `linear(x, weight [out, in], bias?)` is a 1x1 `anec.conv` over the channel axis (the
//! rank mapping puts the last MIL axis on C for ranks <= 3; ranks 4 and 5 transpose
//! channel <-> width around it) followed by a per-channel `gain_offset_control` for a
//! nonzero bias. `matmul` with a constant `y` is the same with `weight = y^T` (or `y` when
//! `transpose_y`); with a constant `x` it runs on `y^T` and transposes back; with two
//! runtime operands it is `anec.matmul` (see [`runtime_matmul`]), and so is a constant
//! operand holding a batch of matrices (emitted as an `anec.constant`). A flatten feeding either
//! folds into one convolution (`flatten_fc.rs`).

use super::consts::{blob, materialize, weight_dtype};
use super::conv::{add_bias, emit_conv, ConvSpec};
use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::elementwise::{rt_with, v};
use super::flatten_fc;
use super::layout::{anec_type, broadcast_shapes, C, H, W};
use super::shape::{broadcast_rt, reshape_rt, swap, transpose_rt};
use super::tensor::Tensor;
use anec_ir::{Attr, Blob, OpCode, TensorType};

/// `linear(x, weight, bias?)`.
pub(crate) fn linear(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let weight = cx.req_konst("weight")?;
    let bias = cx.konst("bias")?;
    let [_, _] = weight.shape.as_slice() else {
        return Err(Fail::Msg(format!("`weight` must have rank 2, got {:?}", weight.shape)));
    };
    let x = cx.val("x")?.ok_or("missing input `x`")?;
    let y = match x {
        Val::Flatten(f) => {
            let rows = weight.as_f32().ok_or("`weight` must be numeric")?;
            let y = flatten_fc::fold(cx, &f, &rows, &weight)?;
            rt_with(&y, add_bias(cx, v(&y), bias.as_deref())?)
        }
        other => {
            let x = cx.runtime(other, "x")?;
            if x.shape.len() >= 5 {
                // Seed 002 Table B.2, Linear: input rank below 5 (the anec dialect has no
                // linear op, so its validator's rule is applied here, in the seed's words).
                let rank = x.shape.len();
                return Err(Fail::Msg(format!("Linear layer must have only one single input. (input rank {rank}; the Linear validator needs rank below 5)")));
            }
            let [cout, cin] = [weight.shape[0], weight.shape[1]];
            linear_rt(cx, &x, (weight_blob(&weight)?, cout, cin), bias.as_deref())?
        }
    };
    Ok(vec![Val::Rt(y)])
}

/// The weight of a `linear` (`cout x cin`, row-major) as a blob: the stored fp16 or fp32
/// bytes themselves, else the decoded values.
fn weight_blob(weight: &Tensor) -> LResult<Blob> {
    let dtype = weight_dtype(weight.dtype);
    match weight.raw() {
        Some(bytes) => Ok(Blob { dtype, bytes: bytes.clone() }),
        None => Ok(blob(&weight.as_f32().ok_or("`weight` must be numeric")?, dtype)),
    }
}

/// `x @ W^T + bias` for `rows` = W (`cout x cin`, row-major, fp16 or fp32).
pub(crate) fn linear_rt(
    cx: &mut Cx<'_, '_>,
    x: &Rt,
    (rows, cout, cin): (Blob, u64, u64),
    bias: Option<&Tensor>,
) -> LResult<Rt> {
    let features = *x.shape.last().ok_or("`x` must have rank >= 1")?;
    let values = (rows.bytes.len() / rows.dtype.size()) as u64;
    if cin != features || cout * cin != values {
        let s = &x.shape;
        return Err(Fail::Msg(format!("the weight ({cout} x {cin}) does not match the {features} features of {s:?}")));
    }
    let mut shape = x.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = cout;
    }
    let spec = ConvSpec {
        cout: u32::try_from(cout).map_err(|_| "too many output features")?,
        kernel: [1, 1],
        stride: [1, 1],
        pad: [0; 4],
        groups: 1,
    };
    // The features sit on W: every row becomes a channel (a free reshape), channels and
    // width swap (Apple's preparation task), the 1x1 convolution runs over the rows as
    // pixels, and the result swaps back (its transposed write).
    let t = x.ty;
    let pixels = TensorType { c: t.c * t.d * t.h, d: 1, h: 1, ..t };
    let mut cur = v(x);
    if pixels != cur.1 {
        cur = (cx.emit(OpCode::Reshape, &[cur.0], pixels, attrs([])), pixels);
    }
    cur = swap(cx, cur, C, W);
    cur = emit_conv(cx, cur, &spec, rows)?;
    cur = add_bias(cx, cur, bias)?;
    cur = swap(cx, cur, C, W);
    let ty = anec_type(&shape)?;
    if ty != cur.1 {
        cur = (cx.emit(OpCode::Reshape, &[cur.0], ty, attrs([])), ty);
    }
    if ty != cur.1 {
        return Err(Fail::Msg(format!("internal: linear result {} is not the layout {ty} of {shape:?}", cur.1)));
    }
    Ok(Rt { id: cur.0, ty, shape })
}

/// `matmul(x, y, transpose_x?, transpose_y?)`.
pub(crate) fn matmul(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let tx = cx.boolean("transpose_x")?.unwrap_or(false);
    let ty = cx.boolean("transpose_y")?.unwrap_or(false);
    let xv = cx.val("x")?.ok_or("missing input `x`")?;
    let yv = cx.val("y")?.ok_or("missing input `y`")?;
    let out = match (xv, yv) {
        (Val::Flatten(f), Val::Const(w)) if !tx => {
            let (rows, _, _) = weight_rows(&w, ty)?;
            flatten_fc::fold(cx, &f, &rows, &w)?
        }
        (x, Val::Const(w)) if !matches!(x, Val::Const(_)) && !single_matrix(&w) => {
            let x = cx.runtime(x, "x")?;
            let y = materialize(cx, &w)?;
            runtime_matmul(cx, &x, &y, tx, ty)?
        }
        (Val::Const(w), y) if !matches!(y, Val::Const(_)) && !single_matrix(&w) => {
            let x = materialize(cx, &w)?;
            let y = cx.runtime(y, "y")?;
            runtime_matmul(cx, &x, &y, tx, ty)?
        }
        (x, Val::Const(w)) if !matches!(x, Val::Const(_)) => {
            let mut x = cx.runtime(x, "x")?;
            let want = matmul_shape(&x.shape, &w.shape, tx, ty)?;
            if tx {
                x = swap_last(cx, &x)?;
            }
            let (rows, cout, cin) = weight_rows(&w, ty)?;
            let y = linear_rt(cx, &x, (blob(&rows, weight_dtype(w.dtype)), cout, cin), None)?;
            reshape_rt(cx, &y, want)?
        }
        (Val::Const(w), y) => {
            let y = cx.runtime(y, "y")?;
            let want = matmul_shape(&w.shape, &y.shape, tx, ty)?;
            let yt = if ty { y.clone() } else { swap_last(cx, &y)? };
            let (rows, cout, cin) = weight_rows(&w, !tx)?;
            let z = linear_rt(cx, &yt, (blob(&rows, weight_dtype(w.dtype)), cout, cin), None)?;
            let zt = swap_last(cx, &z)?;
            reshape_rt(cx, &zt, want)?
        }
        (x, y) => {
            let x = cx.runtime(x, "x")?;
            let y = cx.runtime(y, "y")?;
            runtime_matmul(cx, &x, &y, tx, ty)?
        }
    };
    Ok(vec![Val::Rt(out)])
}

/// True when a constant holds one matrix (rank 2, or leading axes of extent 1).
fn single_matrix(w: &Tensor) -> bool {
    let r = w.shape.len();
    r >= 2 && w.shape[..r - 2].iter().all(|&d| d == 1)
}

/// A constant matmul operand as the `out x in` rows of a linear weight, with `out` and
/// `in`: `w^T`, or `w` itself when `transposed` (one matrix: see [`single_matrix`]).
fn weight_rows(w: &Tensor, transposed: bool) -> LResult<(Vec<f32>, u64, u64)> {
    let r = w.shape.len();
    if !single_matrix(w) {
        return Err(Fail::Msg(format!("a constant operand of shape {:?} is not one matrix", w.shape)));
    }
    let m = w.reshaped(w.shape[r - 2..].to_vec());
    let m = if transposed { m } else { m.permuted(&[1, 0]) };
    let rows = m.as_f32().ok_or_else(|| Fail::Msg("the constant operand must be numeric".into()))?;
    Ok((rows, m.shape[0], m.shape[1]))
}

/// The MIL result shape of `matmul` (rank-1 operands promoted and their axis dropped).
fn matmul_shape(x: &[u64], y: &[u64], tx: bool, ty: bool) -> LResult<Vec<u64>> {
    if x.is_empty() || y.is_empty() {
        return Err(Fail::Msg("matmul operands must have rank >= 1".into()));
    }
    let (xs, ys) = (promote_x(x), promote_y(y));
    let (xr, yr) = (xs.len(), ys.len());
    let (m, k1) = if tx { (xs[xr - 1], xs[xr - 2]) } else { (xs[xr - 2], xs[xr - 1]) };
    let (k2, n) = if ty { (ys[yr - 1], ys[yr - 2]) } else { (ys[yr - 2], ys[yr - 1]) };
    if k1 != k2 {
        return Err(Fail::Msg(format!("the inner dimensions differ: {x:?} and {y:?}")));
    }
    let mut batch = broadcast_shapes(&xs[..xr - 2], &ys[..yr - 2])
        .ok_or_else(|| format!("the batch axes of {x:?} and {y:?} do not broadcast"))?;
    if x.len() > 1 {
        batch.push(m);
    }
    if y.len() > 1 {
        batch.push(n);
    }
    Ok(batch)
}

fn promote_x(x: &[u64]) -> Vec<u64> {
    if x.len() == 1 {
        vec![1, x[0]]
    } else {
        x.to_vec()
    }
}

fn promote_y(y: &[u64]) -> Vec<u64> {
    if y.len() == 1 {
        vec![y[0], 1]
    } else {
        y.to_vec()
    }
}

/// Swaps the last two MIL axes of a runtime tensor.
fn swap_last(cx: &mut Cx<'_, '_>, x: &Rt) -> LResult<Rt> {
    let r = x.shape.len();
    if r < 2 {
        return Err(Fail::Msg(format!("cannot transpose a rank-{r} operand")));
    }
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    transpose_rt(cx, x, &perm)
}

/// Two runtime operands: `anec.matmul` wants the rows on C and the columns on W; the rank
/// mapping holds them on H and W, so channel and height swap on both operands and on the
/// result (a free reshape when C is 1: ranks 2 and 3 with one batch).
fn runtime_matmul(cx: &mut Cx<'_, '_>, x: &Rt, y: &Rt, tx: bool, ty: bool) -> LResult<Rt> {
    let want = matmul_shape(&x.shape, &y.shape, tx, ty)?;
    let x = reshape_rt(cx, x, promote_x(&x.shape))?;
    let y = reshape_rt(cx, y, promote_y(&y.shape))?;
    let rank = x.shape.len().max(y.shape.len());
    let batch = broadcast_shapes(&x.shape[..x.shape.len() - 2], &y.shape[..y.shape.len() - 2])
        .ok_or("the batch axes do not broadcast")?;
    let full = |m: &Rt| [batch.clone(), m.shape[m.shape.len() - 2..].to_vec()].concat();
    let x = broadcast_rt(cx, &x, &full(&x))?;
    let y = broadcast_rt(cx, &y, &full(&y))?;
    let mut shape = batch.clone();
    let xs = &x.shape[rank - 2..];
    let ys = &y.shape[rank - 2..];
    shape.push(if tx { xs[1] } else { xs[0] });
    shape.push(if ty { ys[0] } else { ys[1] });
    let flags = |l: bool, r: bool| attrs([("transpose_lhs", Attr::Bool(l)), ("transpose_rhs", Attr::Bool(r))]);
    let out = match rank {
        2..=4 => {
            let (xs, ys) = (swap(cx, v(&x), C, H), swap(cx, v(&y), C, H));
            let res_ty = super::shape::swapped(anec_type(&shape)?, C, H);
            let id = cx.emit(OpCode::Matmul, &[xs.0, ys.0], res_ty, flags(tx, ty));
            let back = swap(cx, (id, res_ty), C, H);
            Rt { id: back.0, ty: back.1, shape: shape.clone() }
        }
        r => return Err(Fail::Msg(format!("matmul of rank-{r} operands is not supported (ranks 1 to 4)"))),
    };
    reshape_rt(cx, &out, want)
}
