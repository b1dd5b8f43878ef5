//! The MIL walk: evaluates a function's statements in order with coremltools' op
//! semantics (`mil/ops/defs/iOS15` ... `iOS18`), independently of the lowering.
//!
//! Each statement's results are checked against its declared types (a computed shape that
//! differs from the declared one is an error, so a misread op cannot pass silently) and
//! converted to the declared element type (floats stay f32; integer results truncate).
//! One file per op family: `consts.rs` (`const`, `constexpr_*`), `linear.rs`, `conv.rs`
//! (conv and pooling), `norm.rs`, `attention.rs` (softmax, sdpa), `activation.rs`,
//! `elementwise.rs`, `shape.rs`, `reduce.rs`.

mod activation;
mod args;
mod attention;
mod consts;
mod conv;
mod conv_transpose;
mod elementwise;
mod linear;
mod logic;
mod norm;
mod recurrent;
mod reduce;
mod resize;
mod shape;
mod value;

use super::RefError;
use crate::tensor::Tensor;
use anec_ir::mil::{Function, MilModel, Param, ScalarType, Stmt};
use args::{Env, Sx};
use std::collections::BTreeMap;
use std::rc::Rc;
use value::{Data, MTensor};

/// Runs function `function` of `model` on `inputs` (keyed by the function's input names,
/// MIL shapes); returns the returned variables keyed by name, MIL shapes.
pub fn run_mil(
    model: &MilModel,
    function: &str,
    inputs: &BTreeMap<String, Tensor>,
) -> Result<BTreeMap<String, Tensor>, RefError> {
    let Some(func) = model.program.function(function) else {
        let names: Vec<&str> = model.program.functions.iter().map(|f| f.name.as_str()).collect();
        return Err(RefError::Program(format!(
            "the program has no function `{function}` (functions: {})",
            names.join(", ")
        )));
    };
    let mut env = bind_inputs(func, inputs)?;
    for stmt in &func.body {
        let var = stmt.outputs.first().map_or_else(|| "none".to_string(), |o| o.name.name.clone());
        let fail = |reason: String| RefError::MilOp { op: stmt.op.name.clone(), var: var.clone(), reason };
        let results = {
            let sx = Sx { model, env: &env, stmt };
            dispatch(&sx).and_then(|r| typed_results(stmt, r)).map_err(fail)?
        };
        for (out, t) in stmt.outputs.iter().zip(results) {
            env.insert(out.name.name.clone(), Rc::new(t));
        }
    }
    let mut out = BTreeMap::new();
    for o in &func.outputs {
        let t = env.get(&o.name).ok_or_else(|| RefError::Program(format!("output `{}` is not defined", o.name)))?;
        let t = t.to_f32().map_err(|e| RefError::Program(format!("output `{}`: {e}", o.name)))?;
        out.insert(o.name.clone(), t);
    }
    Ok(out)
}

/// `name [1, 3] (fp16), ...` for error messages.
fn input_list(func: &Function) -> String {
    let list: Vec<String> = func
        .inputs
        .iter()
        .map(|p| match (p.ty.static_shape(), p.ty.dtype()) {
            (Some(s), Some(d)) => format!("{} {s:?} ({d})", p.name.name),
            _ => p.name.name.clone(),
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// The static shape and element type of a function input.
fn input_type(p: &Param) -> Result<(Vec<usize>, ScalarType), String> {
    let dtype = p.ty.dtype().ok_or("is not a tensor")?;
    let shape = p.ty.static_shape().ok_or("has a dynamic shape (`?`)")?;
    let shape =
        shape.iter().map(|&d| usize::try_from(d).map_err(|_| "has an extent too large")).collect::<Result<_, _>>()?;
    Ok((shape, dtype))
}

/// Checks the inputs against the function's and binds them.
fn bind_inputs(func: &Function, inputs: &BTreeMap<String, Tensor>) -> Result<Env, RefError> {
    let expected = || format!("the function's inputs: {}", input_list(func));
    if let Some(extra) = inputs.keys().find(|k| !func.inputs.iter().any(|p| &p.name.name == *k)) {
        return Err(RefError::Input(format!("unknown input `{extra}`; {}", expected())));
    }
    let mut env = Env::new();
    for p in &func.inputs {
        let name = &p.name.name;
        let (shape, dtype) = input_type(p).map_err(|e| RefError::Input(format!("input `{name}` {e}")))?;
        let t = inputs.get(name).ok_or_else(|| RefError::Input(format!("missing input `{name}`; {}", expected())))?;
        if t.shape != shape || t.data.len() != t.shape.iter().product::<usize>() {
            let (s, n) = (&t.shape, t.data.len());
            return Err(RefError::Input(format!(
                "input `{name}` has shape {s:?} ({n} values), expected {shape:?}; {}",
                expected()
            )));
        }
        let m = MTensor { dtype: ScalarType::Fp32, shape, data: Data::Float(t.data.clone()) };
        let m = m.cast(dtype).map_err(|e| RefError::Input(format!("input `{name}`: {e}")))?;
        env.insert(name.clone(), Rc::new(m));
    }
    Ok(env)
}

/// Checks the results against the declared types and converts their element types.
fn typed_results(stmt: &Stmt, results: Vec<MTensor>) -> Result<Vec<MTensor>, String> {
    if results.len() != stmt.outputs.len() {
        return Err(format!("computes {} results, the statement declares {}", results.len(), stmt.outputs.len()));
    }
    results
        .into_iter()
        .zip(&stmt.outputs)
        .map(|(t, out)| {
            if let Some(declared) = out.ty.static_shape() {
                if declared.iter().map(|&d| d as usize).ne(t.shape.iter().copied()) {
                    return Err(format!("`{}` is declared {declared:?} but computes {:?}", out.name.name, t.shape));
                }
            }
            match out.ty.dtype() {
                Some(d) if d != t.dtype && !(d.is_float() && matches!(t.data, Data::Float(_))) => t.cast(d),
                Some(d) => Ok(MTensor { dtype: d, ..t }),
                None => Ok(t),
            }
        })
        .collect()
}

/// Evaluates a statement by its op type.
fn dispatch(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let op = sx.op();
    match op {
        "const" => consts::const_op(sx),
        op if op.starts_with("constexpr_") => consts::constexpr(sx),
        "linear" => linear::linear(sx),
        "matmul" => linear::matmul(sx),
        "conv" => conv::conv(sx),
        "conv_transpose" => conv_transpose::conv_transpose(sx),
        "max_pool" | "avg_pool" => conv::pool(sx),
        "layer_norm" => norm::layer_norm(sx),
        "batch_norm" => norm::batch_norm(sx),
        "instance_norm" => norm::instance_norm(sx),
        "softmax" => attention::softmax(sx),
        "scaled_dot_product_attention" => attention::sdpa(sx),
        "upsample_nearest_neighbor" | "resize_nearest_neighbor" => resize::nearest(sx),
        "lstm" => recurrent::lstm(sx),
        "logical_not" => logic::logical_not(sx),
        "select" => logic::select(sx),
        "gru" => recurrent::gru(sx),
        op if elementwise::handles(op) => elementwise::binary(sx),
        op if op.starts_with("reduce_") => reduce::reduce(sx),
        op if activation::handles(op) => activation::activation(sx),
        op if shape::handles(op) => shape::shape_op(sx),
        other => Err(format!("the reference interpreter does not implement MIL op `{other}`")),
    }
}
