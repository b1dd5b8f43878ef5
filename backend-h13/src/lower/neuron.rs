//! Activations (`anec.neuron`): one NE pass task each, as Apple's compilers run them.
//!
//! - `relu`: the NE's native ReLU (NonlinearMode 1), no table.
//! - `abs`: a one-operand planar-engine task with the absolute-value bit (Apple's
//!   `unary_abs`: PE word 0x40, Cfg 0x21).
//! - every other mode the engine computes through a 128-byte lookup table
//!   (NonlinearMode 2, `crate::activation`), loaded by each NE the task runs on:
//!   - `exp`: the 2^x table with the input scaled by log2(e) through NE.PostScale (the
//!     current corpus: PostScale 0x3dc5);
//!   - `rsqrt(x, eps)`: the 1/sqrt table reading `x + eps`, eps added on the
//!     multiply-accumulate path as NE.AccBias (MACCfg OpMode 0; Apple's rsqrt: eps 1e-6 ->
//!     AccBias 0x0011, DPE.Category 1);
//!   - `inv(x, eps)`: the reciprocal table reading `x + eps` the same way (proposed);
//!   - `clamped_relu(lo, hi)`: the clip table; a bound at the fp16 range's end is no bound.
//!
//! A mode with no table rule is a named rejection.

use super::elementwise::PE_ADD;
use super::{attr, base_task};
use crate::activation::{self, TableFn};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::encode::ne_count;
use crate::error::BackendError;
use crate::task::{Engine, Nonlinear, PeOp, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Attr, Op};
use half::f16;

/// The largest finite fp16 value: a clamp bound at or beyond it bounds nothing.
const F16_MAX: f64 = 65504.0;

/// The table function of a neuron mode with its `alpha` and `beta`, if the engine has one.
pub fn table_fn(mode: &str, alpha: Option<f64>, beta: Option<f64>) -> Option<TableFn> {
    let unbounded = |v: f64, inf: f64| if v.abs() >= F16_MAX { inf } else { v };
    Some(match mode {
        "sigmoid" | "sigmoid_high_precision" => TableFn::Sigmoid,
        "tanh" => TableFn::Tanh,
        "gelu" => TableFn::Gelu,
        "gelu_sigmoid" => TableFn::GeluSigmoid,
        "swish" => TableFn::Silu,
        "exp" | "exp2" => TableFn::Exp2,
        "sqrt" => TableFn::Sqrt,
        "rsqrt" => TableFn::Rsqrt,
        "inv" => TableFn::Reciprocal,
        "log2" => TableFn::Log2,
        "erf" => TableFn::Erf,
        "elu" => TableFn::Elu(alpha.unwrap_or(1.0)),
        "leaky_relu" => TableFn::LeakyRelu(alpha.unwrap_or(0.01)),
        "clamped_relu" => TableFn::Clip(
            unbounded(alpha.unwrap_or(0.0), f64::NEG_INFINITY),
            unbounded(beta.unwrap_or(F16_MAX), f64::INFINITY),
        ),
        "sign" => TableFn::Sign,
        _ => return None,
    })
}

/// The table of an activation a convolution can apply itself (NonlinearMode 2, the
/// table at the head of each kernel chunk: `conv::with_table`): a table mode that reads
/// the value as it is. `exp` (PostScale), `rsqrt` and `inv` with eps (AccBias) transform
/// the input on the stages the convolution's own gain and bias use, so they stay tasks
/// of their own.
pub(crate) fn conv_table(op: &Op) -> Option<TableFn> {
    let mode = op.attr("mode").and_then(Attr::as_str)?;
    let alpha = op.attr("alpha").and_then(Attr::as_float);
    let transformed = match mode {
        "exp" | "rsqrt" => true,
        "inv" => alpha.is_some_and(|a| a != 0.0),
        _ => false,
    };
    if transformed {
        return None;
    }
    table_fn(mode, alpha, op.attr("beta").and_then(Attr::as_float))
}

/// fp16 1.0.
const ONE_F16: u16 = 0x3C00;

/// Lowers an activation to its NE pass task (or, for `abs`, a planar-engine task).
pub(super) fn lower_neuron(
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Task, BackendError> {
    let mut t = base_task(op, bufs, dest, Engine::NePass)?;
    match attr(op, "mode")?.as_str().unwrap_or_default() {
        "relu" => {
            t.nonlinear = Nonlinear::Relu;
            return Ok(t);
        }
        // |x| runs on the planar engine as a one-operand task (Apple's `unary_abs`).
        "abs" => {
            t.engine = Engine::Pe;
            t.pe = Some(PeOp { mode: PE_ADD, negate: false, bias: 0, scale: ONE_F16, abs: true, relu: false });
            return Ok(t);
        }
        _ => {}
    }
    let nes = ne_count(t.dest.ty.c);
    with_table(op, t, nes, consts)
}

/// Makes `t` apply `op`'s activation table on `nes` NEs (each NE's kernel channel reads
/// the one table), with the mode's input transform.
pub(super) fn with_table(op: &Op, mut t: Task, nes: u32, consts: &mut ConstSection) -> Result<Task, BackendError> {
    let mode = attr(op, "mode")?.as_str().unwrap_or_default();
    let alpha = op.attr("alpha").and_then(Attr::as_float);
    let beta = op.attr("beta").and_then(Attr::as_float);
    let Some(f) = table_fn(mode, alpha, beta) else {
        return Err(unsupported(op, &format!("neuron mode '{mode}' has no H13 activation table yet")));
    };
    let table = consts.add_table(&activation::table(f), nes);
    t.kernel = vec![table; nes as usize];
    t.nonlinear = Nonlinear::Table;
    t.table = Some(f);
    match mode {
        // exp(x) = 2^(x log2 e): the post-scale multiplies the input before the table.
        "exp" => t.affine.scale = f16::from_f64(std::f64::consts::LOG2_E).to_bits(),
        "rsqrt" => t.acc_bias = Some(f16::from_f64(alpha.unwrap_or(0.0)).to_bits()),
        // inverse(x, eps) = 1 / (x + eps): eps as for rsqrt (no Apple record); real_div's
        // reciprocal has none.
        "inv" if alpha.is_some_and(|a| a != 0.0) => t.acc_bias = Some(f16::from_f64(alpha.unwrap_or(0.0)).to_bits()),
        _ => {}
    }
    Ok(t)
}
