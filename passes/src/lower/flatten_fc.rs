//! Named rewrite "flatten into a fully connected conv": `reshape([1, C, H, W] -> [1, C*H*W])`
//! (or `[C*H*W]`) whose only reader is a `matmul` or `linear` with a constant weight
//! becomes ONE `anec.conv` with a `H x W` kernel over the `C` channels and output
//! `1 x Cout x 1 x 1 x 1`.
//!
//! The engine cannot cheaply flatten a feature map (it would move every element across
//! channels), but a convolution whose kernel covers the whole map computes the same dot
//! products. Row `o` of the `Cout x C*H*W` weight, in MIL's row-major flatten order
//! `c*H*W + h*W + w`, is exactly the `C x H x W` kernel of output channel `o`, so the
//! weight bytes need no permutation. The result `1 x Cout x 1 x 1 x 1` is the layout of
//! the MIL result `[1, Cout]` (and `[Cout]`).
//!
//! The reshape statement defers ([`defer`]) only when its result has one reader, is not a
//! function output, and that reader's weight is a constant of the right shape (already
//! known, or a plain `const` statement further down); the reader then lowers through [`fold`]. If the reader still needs the plain
//! flatten, [`materialize`] emits it.

use super::consts::weight_dtype;
use super::conv::{emit_conv, ConvSpec};
use super::cx::{Cx, Fail, LResult, Rt, Val};
use super::layout::{anec_type, C, W};
use super::shape::{reshape_rt, swap};
use super::tensor::Tensor;
use anec_ir::mil::{Arg, Function};
use std::collections::HashMap;

/// A deferred flatten of `src` to `shape`.
#[derive(Debug, Clone)]
pub(crate) struct Flatten {
    /// The `[1, C, H, W]` source.
    pub src: Rt,
    /// The flattened MIL shape (`[1, C*H*W]` or `[C*H*W]`).
    pub shape: Vec<u64>,
}

/// For each variable, the indices of the statements that read it.
pub(crate) fn readers(func: &Function) -> HashMap<&str, Vec<usize>> {
    let mut map: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, stmt) in func.body.iter().enumerate() {
        for a in stmt.inputs.iter().chain(&stmt.attrs) {
            names(&a.value, &mut |n| map.entry(n).or_default().push(i));
        }
    }
    map
}

fn names<'a>(arg: &'a Arg, f: &mut impl FnMut(&'a str)) {
    match arg {
        Arg::Name(id) => f(&id.name),
        Arg::Tuple(items, _) => items.iter().for_each(|a| names(a, f)),
        Arg::Value(_) => {}
    }
}

/// Decides whether the current reshape of `src` to `shape` defers into its reader.
pub(crate) fn defer(cx: &Cx<'_, '_>, src: &Rt, shape: &[u64]) -> Option<Flatten> {
    let [1, c, h, w] = *src.shape.as_slice() else { return None };
    let flat = c * h * w;
    if !(shape == [1, flat] || shape == [flat]) || h * w == 1 {
        return None;
    }
    let var = cx.stmt.outputs.first()?.name.name.as_str();
    if cx.lw.func.outputs.iter().any(|o| o.name == var) {
        return None;
    }
    let [reader] = cx.lw.readers.get(var)?.as_slice() else { return None };
    let stmt = cx.lw.func.body.get(*reader)?;
    let reads_x = matches!(stmt.arg("x"), Some(Arg::Name(id)) if id.name == var);
    let weight_key = match stmt.op.name.as_str() {
        "linear" => "weight",
        "matmul" => "y",
        _ => return None,
    };
    let transposed_x = match stmt.arg("transpose_x") {
        None => false,
        Some(a) => constant(cx, a)?.as_i64()?.first().copied().unwrap_or(0) != 0,
    };
    let transpose_y = match stmt.arg("transpose_y") {
        None => false,
        Some(a) => constant(cx, a)?.as_i64()?.first().copied().unwrap_or(0) != 0,
    };
    let weight = constant(cx, stmt.arg(weight_key)?)?;
    let rows_first = weight_key == "weight" || transpose_y;
    let ok_shape = match *weight.shape.as_slice() {
        [a, b] if rows_first => b == flat && a > 0,
        [a, b] => a == flat && b > 0,
        _ => false,
    };
    (reads_x && !transposed_x && ok_shape).then(|| Flatten { src: src.clone(), shape: shape.to_vec() })
}

/// The constant an argument stands for, if it is known now.
fn constant(cx: &Cx<'_, '_>, arg: &Arg) -> Option<Tensor> {
    match arg {
        Arg::Name(id) => match cx.lw.env.get(&id.name) {
            Some(Val::Const(t)) => Some((**t).clone()),
            Some(_) => None,
            None => later_const(cx, &id.name),
        },
        Arg::Value(v) => cx.value_tensor(v).ok(),
        Arg::Tuple(..) => None,
    }
}

/// The value of a plain `const` statement defining `var` later in the function.
fn later_const(cx: &Cx<'_, '_>, var: &str) -> Option<Tensor> {
    let stmt = cx.lw.func.body.iter().find(|s| s.outputs.iter().any(|o| o.name.name == var))?;
    match (stmt.op.name.as_str(), stmt.arg("val")?) {
        ("const", Arg::Value(v)) => cx.value_tensor(v).ok(),
        _ => None,
    }
}

/// Emits the plain flatten (the reader could not fold it).
pub(crate) fn materialize(cx: &mut Cx<'_, '_>, f: &Flatten) -> LResult<Rt> {
    reshape_rt(cx, &f.src, f.shape.clone())
}

/// The rewrite: `rows` is the weight as `Cout x C*H*W` (row-major) of MIL type `weight`.
pub(crate) fn fold(cx: &mut Cx<'_, '_>, f: &Flatten, rows: &[f32], weight: &Tensor) -> LResult<Rt> {
    let [_, c, h, w] = *f.src.shape.as_slice() else { return Err("the flatten source is not rank 4".into()) };
    let flat = (c * h * w) as usize;
    let cout = rows.len() / flat.max(1);
    let spec = ConvSpec {
        cout: u32::try_from(cout).map_err(|_| "too many output channels")?,
        kernel: [h as u32, w as u32],
        stride: [1, 1],
        pad: [0; 4],
        groups: 1,
    };
    let y = emit_conv(cx, (f.src.id, f.src.ty), &spec, super::consts::blob(rows, weight_dtype(weight.dtype)))?;
    let shape = if f.shape.len() == 2 { vec![1, cout as u64] } else { vec![cout as u64] };
    // The Cout results, one per channel, go along W (the rank mapping's last axis): the
    // convolution's write transposed channel <-> width.
    let y = swap(cx, y, C, W);
    let ty = anec_type(&shape)?;
    if ty != y.1 {
        return Err(Fail::Msg(format!("internal: flatten result {} is not the layout {ty} of {shape:?}", y.1)));
    }
    Ok(Rt { id: y.0, ty, shape })
}
