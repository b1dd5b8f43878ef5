//! The semantics of each anec op over 5-D `[N, C, D, H, W]` tensors (`docs/ops.md`).
//!
//! Decisions where `docs/ops.md` leaves room: `conv` and `pooling` run per depth slice;
//! `kernel_group_reuse` does not change the math (the weight tensor is complete);
//! `gain_offset_control` is `x * scale * scale_data[c] + bias + bias_data[c]` (missing parts
//! are 1 and 0); `sdpa` is `softmax(q k^T * scale + mask) v` over the key sequence;
//! `layer_norm` with `groups = g` takes its statistics within each of the g channel groups.

use super::attrs::OpCx;
use super::dims5;
use super::hidden;
use super::neuron::neuron_fn;
use crate::reference::kernels::conv::{conv as conv_kernel, out_extent, ConvGeom};
use crate::reference::kernels::elementwise::{binary, unary};
use crate::reference::kernels::matmul::matmul as matmul_kernel;
use crate::reference::kernels::norm::normalize;
use crate::reference::kernels::pool::{pool, PoolGeom, PoolKind};
use crate::reference::kernels::reduce::{reduce, Reduce};
use crate::reference::kernels::shape::{broadcast_to, concat, reshape, slice, transpose, Window};
use crate::reference::kernels::softmax::softmax;
use crate::tensor::Tensor;
use anec_ir::{OpCode, TensorType};

/// Evaluates one op on its operands; `out` is the declared result type.
pub(crate) fn eval(cx: &OpCx<'_>, xs: &[&Tensor], out: &TensorType) -> Result<Tensor, String> {
    let first = || xs.first().copied().ok_or_else(|| "the op has no operand".to_string());
    let shape = dims5(out);
    match cx.op.opcode {
        OpCode::Conv => conv(cx, first()?),
        OpCode::Neuron => {
            let f = neuron_fn(cx.str("mode")?, cx.float("alpha")?, cx.float("beta")?)?;
            unary(first()?, f)
        }
        OpCode::GainOffsetControl => goc(cx, first()?),
        OpCode::ScaledElementwise => scaled_elementwise(cx, xs),
        OpCode::Concat => concat(xs, cx.axis("axis")?),
        OpCode::Reshape => reshape(first()?, &shape),
        OpCode::InputView => input_view(cx, first()?),
        OpCode::Broadcast => broadcast(cx, first()?, &shape),
        OpCode::Matmul => matmul(cx, xs),
        OpCode::Sdpa => sdpa(xs),
        OpCode::LayerNorm => layer_norm(cx, first()?),
        OpCode::Pooling => pooling(cx, first()?),
        OpCode::Softmax => softmax(first()?, cx.axis("axis")?),
        OpCode::Transpose => transpose(first()?, &cx.axes("perm")?),
        OpCode::Reduction => {
            let kind = cx.str("kind")?;
            let k = Reduce::from_name(kind).filter(|k| *k != Reduce::Prod);
            reduce(first()?, &cx.axes("axes")?, k.ok_or_else(|| format!("unknown reduction kind `{kind}`"))?)
        }
        OpCode::Constant => {
            let v = cx.resource("value")?.ok_or("missing attribute `value`")?;
            reshape(&v, &shape)
        }
        OpCode::Sort
        | OpCode::TopK
        | OpCode::ArgMinMax
        | OpCode::GlobalArgMinMax
        | OpCode::PixelShuffle
        | OpCode::PixelUnshuffle
        | OpCode::ChannelToSpace
        | OpCode::SpaceToChannel
        | OpCode::SpaceToBatch
        | OpCode::BatchToSpace
        | OpCode::MinMaxNorm
        | OpCode::Lrn
        | OpCode::InstanceNorm
        | OpCode::CrossCorrelation
        | OpCode::CrossProduct
        | OpCode::FurthestPointSampling
        | OpCode::RadiusSearch
        | OpCode::CostVolume
        | OpCode::DynamicSlice
        | OpCode::Flatten
        | OpCode::Dropout
        | OpCode::Pad
        | OpCode::Gather
        | OpCode::Resize
        | OpCode::CropResize
        | OpCode::AffineTransform
        | OpCode::Resample
        | OpCode::Random
        | OpCode::RingBufferWriter
        | OpCode::Nms => hidden::eval(cx, xs, &shape),
    }
}

/// `[N, C, D, H, W]` as `[N * D, C, H, W]` (each depth slice a batch entry).
fn planes(x: &Tensor) -> Result<Tensor, String> {
    let [n, c, d, h, w] = five(x)?;
    reshape(&transpose(x, &[0, 2, 1, 3, 4])?, &[n * d, c, h, w])
}

/// The inverse of [`planes`] for a result of `y`'s channels and size.
fn unplanes(y: &Tensor, n: usize, d: usize) -> Result<Tensor, String> {
    let [_, c, h, w] = y.shape[..] else { return Err("internal: plane result is not rank 4".into()) };
    transpose(&reshape(y, &[n, d, c, h, w])?, &[0, 2, 1, 3, 4])
}

/// The five extents of a 5-D tensor.
fn five(x: &Tensor) -> Result<[usize; 5], String> {
    match x.shape[..] {
        [n, c, d, h, w] => Ok([n, c, d, h, w]),
        _ => Err(format!("internal: operand {:?} is not 5-D", x.shape)),
    }
}

/// `[top, bottom, left, right]` as per-axis pairs.
fn pad_pairs(p: &[usize]) -> Vec<(usize, usize)> {
    p.chunks(2).map(|c| (c[0], c.get(1).copied().unwrap_or(0))).collect()
}

fn conv(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let w = cx.resource("weights")?.ok_or("missing attribute `weights`")?;
    let [co, ci, wd, kh, kw] = five(&w)?;
    if wd != 1 {
        return Err(format!("weights {:?} must be Cout x Cin/groups x Kh x Kw", w.shape));
    }
    let kernel = cx.usizes("kernel", 2)?;
    if kernel != [kh, kw] {
        return Err(format!("`kernel` {kernel:?} differs from the weights' {kh}x{kw}"));
    }
    let groups = usize::try_from(cx.int("groups")?).map_err(|_| "`groups` must be >= 1")?;
    let g = ConvGeom {
        strides: cx.usizes("stride", 2)?,
        pads: pad_pairs(&cx.usizes("pad", 4)?),
        dilations: vec![1, 1],
        groups,
    };
    cx.bool("kernel_group_reuse")?;
    let [n, _, d, _, _] = five(x)?;
    let w4 = reshape(&w, &[co, ci, kh, kw])?;
    unplanes(&conv_kernel(&planes(x)?, &w4, None, &g)?, n, d)
}

fn goc(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let [_, c, _, _, _] = five(x)?;
    let per_channel = |name: &str| -> Result<Option<Tensor>, String> {
        match cx.resource(name)? {
            Some(t) if t.data.len() == c => Ok(Some(Tensor { shape: vec![1, c, 1, 1, 1], data: t.data })),
            Some(t) => Err(format!("`{name}` holds {} values for {c} channels", t.data.len())),
            None => Ok(None),
        }
    };
    let (scale, bias) = (cx.float("scale")?.unwrap_or(1.0), cx.float("bias")?.unwrap_or(0.0));
    let mut y = unary(x, |v| v * scale)?;
    if let Some(sd) = per_channel("scale_data")? {
        y = binary(&y, &sd, |a, b| a * b)?;
    }
    y = unary(&y, |v| v + bias)?;
    if let Some(bd) = per_channel("bias_data")? {
        y = binary(&y, &bd, |a, b| a + b)?;
    }
    Ok(y)
}

fn scaled_elementwise(cx: &OpCx<'_>, xs: &[&Tensor]) -> Result<Tensor, String> {
    let [a, b] = xs else { return Err(format!("expects 2 operands, got {}", xs.len())) };
    if a.shape != b.shape {
        return Err(format!("operand shapes differ: {:?} and {:?}", a.shape, b.shape));
    }
    let scale = cx.float("scale")?.ok_or("missing attribute `scale`")?;
    let f: fn(f32, f32) -> f32 = match cx.str("kind")? {
        "add" => |x, y| x + y,
        "sub" => |x, y| x - y,
        "mul" => |x, y| x * y,
        "min" => f32::min,
        "max" => f32::max,
        other => return Err(format!("unknown elementwise kind `{other}`")),
    };
    binary(a, b, move |x, y| f(x, y) * scale)
}

fn input_view(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let axis = cx.axis("axis")?;
    let (offset, size, step) = (cx.int("offset")?, cx.int("size")?, cx.int("step")?);
    let mut windows: Vec<Window> = x.shape.iter().map(|&d| Window::all(d)).collect();
    let count = usize::try_from(size).map_err(|_| format!("`size` {size} must be >= 0"))?;
    if step < 1 {
        return Err(format!("`step` {step} must be >= 1"));
    }
    if let Some(w) = windows.get_mut(axis) {
        *w = Window { start: offset, count, step };
    }
    slice(x, &windows)
}

fn broadcast(cx: &OpCx<'_>, x: &Tensor, shape: &[usize]) -> Result<Tensor, String> {
    let (axes, sizes) = (cx.axes("axes")?, cx.ints("sizes")?);
    if axes.len() != sizes.len() {
        return Err(format!("{} axes but {} sizes", axes.len(), sizes.len()));
    }
    let mut want = x.shape.clone();
    for (&a, &s) in axes.iter().zip(&sizes) {
        if x.shape.get(a) != Some(&1) {
            return Err(format!("broadcast axis {a} has extent {:?} in the operand, not 1", x.shape.get(a)));
        }
        want[a] = usize::try_from(s).map_err(|_| format!("size {s} must be >= 1"))?;
    }
    if want != shape {
        return Err(format!("broadcasting {:?} gives {want:?}, the result type is {shape:?}", x.shape));
    }
    broadcast_to(x, shape)
}

/// `[N, C, 1, H, W]` as `[N, H, C, W]`: a batch of C x W matrices, transposed if asked.
fn matrices(x: &Tensor, transposed: bool) -> Result<Tensor, String> {
    let [n, c, d, h, w] = five(x)?;
    if d != 1 {
        return Err(format!("matmul operand {:?} has depth > 1", x.shape));
    }
    let m = transpose(&reshape(x, &[n, c, h, w])?, &[0, 2, 1, 3])?;
    if transposed {
        transpose(&m, &[0, 1, 3, 2])
    } else {
        Ok(m)
    }
}

fn matmul(cx: &OpCx<'_>, xs: &[&Tensor]) -> Result<Tensor, String> {
    let [a, b] = xs else { return Err(format!("expects 2 operands, got {}", xs.len())) };
    let (ma, mb) = (matrices(a, cx.bool("transpose_lhs")?)?, matrices(b, cx.bool("transpose_rhs")?)?);
    if ma.shape[..2] != mb.shape[..2] {
        return Err(format!("batch axes (N, H) differ between {:?} and {:?}", a.shape, b.shape));
    }
    let y = matmul_kernel(&ma, &mb)?; // [N, H, M, Ncol]
    let [n, h, m, ncol] = y.shape[..] else { return Err("internal: matmul result rank".into()) };
    reshape(&transpose(&y, &[0, 2, 1, 3])?, &[n, m, 1, h, ncol])
}

fn sdpa(xs: &[&Tensor]) -> Result<Tensor, String> {
    let [q, k, v, scale, rest @ ..] = xs else { return Err(format!("expects 4 or 5 operands, got {}", xs.len())) };
    // [N, S, D, H, E] -> [N, D, H, S, E]: batches of S x E matrices.
    let seq_last = |t: &Tensor| transpose(t, &[0, 2, 3, 1, 4]);
    let (qm, km, vm) = (seq_last(q)?, seq_last(k)?, seq_last(v)?);
    let kt = transpose(&km, &[0, 1, 2, 4, 3])?;
    let scores = matmul_kernel(&qm, &kt)?; // [N, D, H, Sq, Sk]
    let scores = binary(&scores, &seq_last(scale)?, |s, c| s * c)?;
    let scores = match rest.first() {
        Some(mask) => binary(&scores, &seq_last(mask)?, |s, m| s + m)?,
        None => scores,
    };
    let p = softmax(&scores, 4)?;
    let y = matmul_kernel(&p, &vm)?; // [N, D, H, Sq, E]
    transpose(&y, &[0, 3, 1, 2, 4])
}

fn layer_norm(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let axes = cx.axes("axes")?;
    let eps = cx.float("epsilon")?.ok_or("missing attribute `epsilon`")?;
    let g = usize::try_from(cx.int("groups")?).ok().filter(|&g| g >= 1).ok_or("`groups` must be >= 1")?;
    let [n, c, d, h, w] = five(x)?;
    if c % g != 0 {
        return Err(format!("{c} channels are not divisible by {g} groups"));
    }
    // [N, G, C/G, D, H, W]: the channel axis becomes axis 2, within a group.
    let six = reshape(x, &[n, g, c / g, d, h, w])?;
    let mapped: Vec<usize> = axes.iter().map(|&a| if a == 0 { 0 } else { a + 1 }).collect();
    let y = reshape(&normalize(&six, &mapped, eps)?, &x.shape)?;
    let mut pshape = vec![1usize; 5];
    for &a in &axes {
        pshape[a] = x.shape[a];
    }
    let mut y = y;
    for (name, add) in [("gamma", false), ("beta", true)] {
        if let Some(p) = cx.resource(name)? {
            let p = reshape(&p, &pshape).map_err(|e| format!("`{name}`: {e}"))?;
            y = binary(&y, &p, move |a, b| if add { a + b } else { a * b })?;
        }
    }
    Ok(y)
}

fn pooling(cx: &OpCx<'_>, x: &Tensor) -> Result<Tensor, String> {
    let kind = match cx.str("kind")? {
        "max" => PoolKind::Max,
        "avg" => PoolKind::Avg { exclude_padding: cx.opt_bool("exclude_padding")?.unwrap_or(false) },
        other => return Err(format!("unknown pooling kind `{other}`")),
    };
    let (kernel, strides, pads) = (cx.usizes("kernel", 2)?, cx.usizes("stride", 2)?, pad_pairs(&cx.usizes("pad", 4)?));
    let [n, _, d, h, w] = five(x)?;
    let out = [h, w]
        .iter()
        .enumerate()
        .map(|(i, &e)| out_extent(e, pads[i], kernel[i], strides[i], 1))
        .collect::<Result<Vec<_>, _>>()?;
    let g = PoolGeom { kernel, strides, pads, out };
    unplanes(&pool(&planes(x)?, kind, &g)?, n, d)
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
