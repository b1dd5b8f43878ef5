//! Lowering of anec ops to H13 tasks: the grouping of fused ops into tasks, the dispatch,
//! and one file per op family, each a recipe that reads the op's verified attributes and
//! operand/result surfaces and returns the [`Task`] its TD encodes (weights, tables and
//! per-channel vectors go into the const section):
//! - `attention`: `anec.sdpa` replaced by its steps (matmul, scale, mask, softmax,
//!   matmul) before grouping; `axis_moves`, `regroup`, `width_moves`: transposes split
//!   into the two kinds the engine runs, ops over axes without a plan between transposes,
//!   reshapes that move rows, and movement along W the tile DMA cannot address, rewritten
//!   before grouping too;
//! - `constant`: constants placed in `__const` (no task);
//! - `conv`: convolution;
//! - `pool`: max and average pooling;
//! - `neuron`: activations (native ReLU, lookup tables, the square-root family);
//! - `elementwise`: two-tensor elementwise ops and the gain/offset (scalar or per channel);
//! - `reduction`: sum, mean, max and min over axes, on the planar engine;
//! - `softmax`: the five-step plan through L2 (maximum, subtract, exp2, denominator,
//!   normalize);
//! - `normalization`: layer_norm as mean, rstd and a ternary normalize through L2;
//! - `l2_chain`: the regions, links and checks those multi-task recipes share;
//! - `movement`: transposes (C <-> W as a transposing NE pass, others without W as
//!   copies), slices, concatenations and broadcasts,
//!   as NE copies through views (reshapes that keep the bytes are views without a task);
//! - `pad`: constant padding as a fill and an interior copy;
//! - `l2_pair`: an NE task leaving an operand in L2 for the planar-engine task after it;
//! - `matmul`: a constant-weight matmul's preparation task keeping x^T in L2 for the
//!   convolution after it (`matmul_source`: x from a layer_norm in L2, a scale on x^T;
//!   `matmul_chain`: a product handed to the next matmul; `matmul_serial`: a product
//!   with two readers kept as rows; `matmul_fold`: a large product folded into rows of
//!   8, over one matmul or a chain; `matmul_residual`: a folded chain's input and product
//!   read by a residual add in L2);
//! - `matmul_dram`: regime B, x^T through memory 8 channels interleaved;
//! - `matmul_runtime`: a matmul of two runtime tensors (x streamed as the kernel).

pub mod attention;
pub mod axis_moves;
pub mod constant;
pub(crate) mod conv;
mod elementwise;
mod l2_chain;
pub mod l2_pair;
pub mod matmul;
mod matmul_chain;
pub mod matmul_dram;
mod matmul_fold;
pub mod matmul_heads;
mod matmul_residual;
mod matmul_runtime;
mod matmul_serial;
mod matmul_source;
pub(crate) mod movement;
pub(crate) mod neuron;
mod normalization;
mod pad;

pub use neuron::table_fn as neuron_table;
mod pool;
pub(crate) mod reduction;
pub mod regroup;
mod softmax;
pub mod upsample;
mod width_moves;

use crate::affine::gain_offset;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{Engine, Nonlinear, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Attr, Module, Op, OpCode};
use anec_passes::Group;

/// Lowers one group to its tasks (one, or a convolution's slices): the head's tasks, with
/// the fused stages applied and the group's last result as destination.
pub fn lower_group(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    // A runtime matmul keeping its product in L2 for the softmax after it.
    if let Some(tasks) = matmul_runtime::lower_kept(m, g, bufs, consts)? {
        return Ok(tasks);
    }
    if let Some(mut tasks) = lower_l2_pair(m, g, bufs, consts, gen)? {
        fuse_activation(m, g, &mut tasks, consts)?;
        return Ok(tasks);
    }
    if m.ops.get(g.head).is_some_and(|op| op.opcode == OpCode::Constant) {
        // In `__const` (`constant::place`): no task.
        return Ok(Vec::new());
    }
    if let Some(op) = m.ops.get(g.head).filter(|op| op.opcode == OpCode::Reshape) {
        // A view of its operand's buffer (`buffers::view`): no task; a vector moving
        // between C and W: a transposing pass.
        return movement::lower_reshape(m, op, bufs).map(|t| t.into_iter().collect());
    }
    let op = |i: usize| m.ops.get(i).ok_or_else(|| BackendError::Internal(format!("no op {i}")));
    let last = op(g.last())?;
    let result =
        last.results.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no result", last.name)))?;
    let dest = bufs.surface(*result)?;
    let head = op(g.head)?;
    let goc = g.goc.map(op).transpose()?;
    let mut tasks = match (g.swap, head.opcode) {
        // A reduction writing its vector of results as one row.
        (Some(_), OpCode::Reduction) => reduction::lower_into_row(head, bufs, dest)?,
        // A convolution writing its result through the channel<->width transpose after it.
        (Some(_), _) => {
            // (A vector along H written as one along C: the swap of a reshape.)
            let out = conv::Output {
                dest: movement::as_channels(dest),
                transposed: true,
                source: None,
                kept_transposed: false,
            };
            conv::lower_conv(m, head, goc, bufs, out, consts, gen)?
        }
        (None, _) => lower(m, head, goc, dest, bufs, consts, gen)?,
    };
    fuse_activation(m, g, &mut tasks, consts)?;
    // A regime-B matmul's x^T through memory, 8 channels interleaved.
    matmul_dram::apply(m, g, &mut tasks, bufs);
    // A softmax whose result is a runtime matmul's x writes it as that matmul's kernel.
    if head.opcode == OpCode::Softmax {
        if let (Some(mm), Some(t)) = (m.users(*result).next(), tasks.last_mut()) {
            if let Some(b) = matmul_runtime::kernel_from_producer(m, mm) {
                matmul_runtime::write_kernel(m, t, mm, bufs, b)?;
            }
        }
    }
    Ok(tasks)
}

/// Applies the group's fused activation to its tasks: a table in the convolution's
/// kernel chunks (`conv::with_table`, which also overrides a recipe's ReLU), else ReLU.
fn fuse_activation(m: &Module, g: &Group, tasks: &mut [Task], consts: &mut ConstSection) -> Result<(), BackendError> {
    let Some(op) = g.neuron.and_then(|i| m.ops.get(i)) else { return Ok(()) };
    match neuron::conv_table(op) {
        Some(f) => conv::with_table(tasks, f, consts),
        None => {
            tasks.iter_mut().for_each(with_relu);
            Ok(())
        }
    }
}

/// True when the group's fused activation is ReLU (NonlinearMode 1; a table activation is
/// set by [`fuse_activation`]).
pub(super) fn fuses_relu(m: &Module, g: &Group) -> bool {
    g.neuron.and_then(|i| m.ops.get(i)).is_some_and(|op| neuron::conv_table(op).is_none())
}

/// A fused ReLU: the NE's NonlinearMode 1, or the planar engine's ReLU bit.
fn with_relu(t: &mut Task) {
    match t.pe.as_mut() {
        Some(pe) if t.engine == Engine::Pe => pe.relu = true,
        _ => t.nonlinear = Nonlinear::Relu,
    }
}

/// The tasks of a group that is one side of an L2 pair (`l2_pair`), if it is one: the
/// producer of a kept value, the planar-engine op reading one, or a per-channel
/// gain/offset the generation runs as a pair.
fn lower_l2_pair(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Option<Vec<Task>>, BackendError> {
    let op = m.ops.get(g.head).ok_or_else(|| BackendError::Internal(format!("no op {}", g.head)))?;
    // A matmul's convolution reading x^T, or the product before it, in L2.
    if let Some(tasks) = matmul::lower_reader(m, g, bufs, consts, gen)? {
        return Ok(Some(tasks));
    }
    // A value kept for a matmul: P, the scale on x^T, a layer_norm's result for P.
    if let Some(tasks) = matmul_source::lower_writer(m, g, bufs, consts, gen)? {
        return Ok(Some(tasks));
    }
    if let Some((&v, &form)) = op.results.first().and_then(|v| bufs.kept.get_key_value(v)) {
        return Ok(Some(vec![l2_pair::producer(m, op, v, form, bufs, consts)?]));
    }
    let dest = |op: &Op| bufs.surface(*op.results.first().ok_or_else(|| BackendError::Internal("no result".into()))?);
    // The elementwise op reading both products of a serial pair of matmuls in L2.
    if let Some(t) = matmul_serial::elementwise(m, g, bufs)? {
        return Ok(Some(vec![t]));
    }
    // The residual add reading a folded chain's input and product in L2.
    if let Some(t) = matmul_residual::add(m, g, bufs, &bufs.kept)? {
        return Ok(Some(vec![t]));
    }
    let kept = |v: &anec_ir::ValueId| Some((m.producer(*v)?, *bufs.kept.get(v)?));
    if let Some((prod, form)) = op.operands.get(1).and_then(kept) {
        // (Its fused ReLU, if any, writes the group's result.)
        let last = m.ops.get(g.last()).ok_or_else(|| BackendError::Internal(format!("no op {}", g.last())))?;
        return Ok(Some(vec![l2_pair::consumer(m, op, prod, form, bufs, dest(last)?)?]));
    }
    if gen.l2_staging && l2_pair::per_channel(op) && g.neuron.is_none() && g.goc.is_none() {
        return Ok(Some(l2_pair::channel_affine_tasks(m, op, bufs, dest(op)?, consts)?));
    }
    Ok(None)
}

/// Lowers one op writing to `dest`, with the gain/offset fused into it: a convolution
/// folds it (and may be several tasks), any other op is one task whose NE affine stage
/// applies it.
pub fn lower(
    m: &Module,
    op: &Op,
    goc: Option<&Op>,
    dest: Surface,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    match op.opcode {
        OpCode::Conv => {
            let out = conv::Output { dest, transposed: false, source: None, kept_transposed: false };
            return conv::lower_conv(m, op, goc, bufs, out, consts, gen);
        }
        OpCode::Reduction if goc.is_none() => return reduction::lower_reduction(op, bufs, dest),
        OpCode::Softmax if goc.is_none() => return softmax::lower_softmax(m, op, bufs, dest, consts),
        OpCode::Concat if goc.is_none() => return batches(movement::lower_concat(op, bufs, dest)?),
        OpCode::Pad if goc.is_none() => return batches(pad::lower_pad(op, bufs, dest, consts)?),
        OpCode::LayerNorm if goc.is_none() => return normalization::lower_layer_norm(op, bufs, dest),
        OpCode::Matmul => return matmul_runtime::lower(m, op, goc, bufs, dest, consts),
        _ => {}
    }
    let mut t = lower_one(m, op, dest, bufs, consts, gen)?;
    if let Some(goc) = goc {
        (t.affine, t.vectors) = gain_offset(m, goc, t.dest.ty.c, consts)?;
    }
    let slices = movement::per_batch(t)?.into_iter().flat_map(movement::per_depth_slice);
    Ok(slices.flat_map(|b| movement::in_bands(b, gen)).collect())
}

/// Copies of several batches as one task per batch (`movement::per_batch`).
fn batches(tasks: Vec<Task>) -> Result<Vec<Task>, BackendError> {
    let split: Result<Vec<Vec<Task>>, BackendError> = tasks.into_iter().map(movement::per_batch).collect();
    Ok(split?.into_iter().flatten().collect())
}

/// Lowers one op other than a convolution to its task.
fn lower_one(
    m: &Module,
    op: &Op,
    dest: Surface,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Task, BackendError> {
    match op.opcode {
        OpCode::Pooling => pool::lower_pool(op, bufs, dest),
        OpCode::Neuron => neuron::lower_neuron(op, bufs, dest, consts),
        OpCode::GainOffsetControl => elementwise::lower_goc(m, op, bufs, dest, consts, gen),
        OpCode::ScaledElementwise => elementwise::lower_scaled_ew(op, bufs, dest),
        OpCode::Transpose => movement::lower_transpose(op, bufs, dest),
        OpCode::InputView => movement::lower_input_view(op, bufs, dest),
        OpCode::Broadcast => movement::lower_broadcast(op, bufs, dest),
        other => Err(no_lowering(op, other)),
    }
}

/// The scratch surfaces the recipes of `m` declare (by layer): memory standing for a
/// value two tasks pass through L2 (Apple's BAR 3), or a runtime matmul's kernel. Each
/// lives from its layer's group to the next (a token's reader), a runtime kernel from the
/// group that writes it (its x's softmax, `matmul_runtime::kernel_from_producer`) to its
/// matmul's.
pub fn scratch_needs(
    m: &Module,
    groups: &[Group],
    kept: &std::collections::BTreeMap<anec_ir::ValueId, crate::task::L2Form>,
) -> std::collections::BTreeMap<String, crate::buffers::ScratchNeed> {
    let mut types: std::collections::BTreeMap<String, anec_ir::TensorType> =
        m.ops.iter().filter_map(|op| Some((op.name.clone(), softmax::scratch_type(m, op)?))).collect();
    types.extend(matmul::scratch_types(m, kept));
    let kernels = matmul_runtime::scratch_types(m);
    let group_of =
        |name: &str| groups.iter().position(|g| g.ops().iter().any(|&i| m.ops.get(i).is_some_and(|o| o.name == name)));
    let mut needs = std::collections::BTreeMap::new();
    for (layer, ty) in types {
        let g = group_of(&layer).unwrap_or(0);
        needs.insert(layer, crate::buffers::ScratchNeed { ty, live: g..=g + 1 });
    }
    for (layer, (ty, writer)) in kernels {
        let g = group_of(&layer).unwrap_or(0);
        let first = writer.and_then(|w| group_of(&w)).map_or(g, |w| w.min(g));
        needs.insert(layer, crate::buffers::ScratchNeed { ty, live: first..=g });
    }
    needs
}

/// Derives the alias bits of the `tasks` of a group from the task before them too when
/// that task wrote the runtime kernel they read (`l2_chain::after_kernel_writer`).
pub fn link_after_kernel_writer(prev: &Task, tasks: &mut [Task], gen: &Generation) -> Result<(), BackendError> {
    l2_chain::after_kernel_writer(prev, tasks, gen)
}

/// The values kept in L2 at the place their reader's recipe takes them (no buffer): a
/// runtime matmul's product for the softmax after it (`matmul_runtime::kept_products`).
pub fn kept_values(
    m: &Module,
    groups: &[Group],
) -> std::collections::BTreeMap<anec_ir::ValueId, crate::buffers::KeptValue> {
    matmul_runtime::kept_products(m, groups)
}

/// The op kinds [`lower`] places on H13.
pub const LOWERED: [OpCode; 17] = [
    OpCode::Pad,
    OpCode::Sdpa,
    OpCode::Constant,
    OpCode::Conv,
    OpCode::Pooling,
    OpCode::Neuron,
    OpCode::GainOffsetControl,
    OpCode::ScaledElementwise,
    OpCode::Reduction,
    OpCode::Softmax,
    OpCode::LayerNorm,
    OpCode::Reshape,
    OpCode::Transpose,
    OpCode::InputView,
    OpCode::Concat,
    OpCode::Broadcast,
    OpCode::Matmul,
];

/// Every op of `m` whose kind has no H13 lowering (a broadcast only as the producer of an
/// L2 pair, `kept`), as errors in op order: checked before buffers are bound so the user
/// hears about each layer, not about a buffer limit.
pub fn unplaceable(m: &Module, kept: &l2_pair::Plan) -> Vec<BackendError> {
    let paired = |op: &Op| op.results.first().is_some_and(|v| kept.kept.contains_key(v));
    m.ops
        .iter()
        .filter(|op| !LOWERED.contains(&op.opcode) && !paired(op))
        .filter_map(|op| match op.opcode {
            // Rewritten before grouping when it can be (`upsample`).
            OpCode::Resize => upsample::refusal(m, op).map(|why| unsupported(op, &why)),
            _ => Some(no_lowering(op, op.opcode)),
        })
        .collect()
}

fn no_lowering(op: &Op, opcode: OpCode) -> BackendError {
    unsupported(op, &format!("{opcode} has no H13 lowering yet"))
}

/// The copy of an output that is an input or another output (`Buffers::copies`) from one
/// buffer to the other (one task per batch).
pub fn copy_tasks(name: &str, from: Surface, to: Surface) -> Result<Vec<Task>, BackendError> {
    movement::per_batch(movement::copy(name, from, to)?)
}

/// Anec axis indices (N 0, C 1, D 2, H 3, W 4) of `op`'s axis-name array attribute
/// `name`, in the attribute's order.
pub(crate) fn axis_list(op: &Op, name: &str) -> Result<Vec<usize>, BackendError> {
    let Some(Attr::Array(items)) = op.attr(name) else {
        return Err(BackendError::Internal(format!("verified {} '{}' lacks `{name}`", op.opcode, op.name)));
    };
    Ok(items.iter().filter_map(Attr::as_str).filter_map(|n| AXES.iter().position(|&a| a == n)).collect())
}

/// The anec axis names, in order (N, C, D, H, W), as the ops' attributes spell them.
pub(crate) const AXES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

/// The surface of `op`'s first operand.
pub(crate) fn first_operand(op: &Op, bufs: &Buffers) -> Result<Surface, BackendError> {
    let v = op.operands.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no operand", op.name)))?;
    bufs.surface(*v)
}

pub(crate) fn attr<'a>(op: &'a Op, name: &str) -> Result<&'a Attr, BackendError> {
    op.attr(name)
        .ok_or_else(|| BackendError::Internal(format!("verified {} '{}' lacks attribute {name}", op.opcode, op.name)))
}

pub(crate) fn base_task(op: &Op, bufs: &Buffers, dest: Surface, engine: Engine) -> Result<Task, BackendError> {
    let sources = op.operands.iter().map(|&v| bufs.surface(v)).collect::<Result<Vec<_>, _>>()?;
    base_task_from(op, sources, dest, engine)
}

/// The task of `engine` from `sources` to `dest` (an NE task runs one batch).
pub(crate) fn base_task_from(
    op: &Op,
    sources: Vec<Surface>,
    dest: Surface,
    engine: Engine,
) -> Result<Task, BackendError> {
    // The planar engine loops over the batch (NumGroups); an NE task has no batch loop yet.
    let batch = sources.iter().chain([&dest]).map(|s| s.ty.n).max().unwrap_or(1);
    if engine.uses_ne() && batch > 1 {
        let reason = format!("a batch of {batch} on the neural engine (one task runs batch 1; tiling comes later)");
        return Err(crate::window::unsupported(op, &reason));
    }
    Ok(Task::new(&op.name, engine, sources, dest))
}

#[cfg(test)]
mod recipe_tests;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::activation::TableFn;
    use crate::buffers;
    use crate::generation::BarOrder;
    use crate::task::{NeAffine, PoolMode};
    use anec_ir::{Blob, DType, Location, Port, TensorType, ValueId};
    use half::f16;

    fn ints(v: &[i64]) -> Attr {
        Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
    }

    fn push(
        m: &mut Module,
        opcode: OpCode,
        name: &str,
        x: ValueId,
        out: TensorType,
        attrs: Vec<(&str, Attr)>,
    ) -> ValueId {
        let r = m.add_value(out);
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        m.ops.push(Op {
            opcode,
            name: name.into(),
            operands: vec![x],
            results: vec![r],
            attrs,
            loc: Location::default(),
        });
        r
    }

    /// `input 1x8x6x6 -> pooling(kind, 3x3, stride 3, pad) -> output`.
    fn pool_module(kind: &str, pad: &[i64], exclude: bool) -> Module {
        let mut m = Module::new("net");
        let x = m.add_value(TensorType::nchw(1, 8, 6, 6, DType::F16));
        m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: Location::default() });
        // (6 + pads - 3) / 3 + 1 = 2 for pads of 0 or 1 per side.
        let out = TensorType::nchw(1, 8, 2, 2, DType::F16);
        let attrs = vec![
            ("kind", Attr::Str(kind.into())),
            ("kernel", ints(&[3, 3])),
            ("stride", ints(&[3, 3])),
            ("pad", ints(pad)),
            ("exclude_padding", Attr::Bool(exclude)),
        ];
        let r = push(&mut m, OpCode::Pooling, "pool", x, out, attrs);
        m.outputs.push(Port {
            name: "y@output".into(),
            value: r,
            layout: Default::default(),
            loc: Location::default(),
        });
        m
    }

    fn lower_only(m: &Module) -> Result<Task, BackendError> {
        let groups = vec![Group { head: 0, goc: None, neuron: None, swap: None }];
        let bufs = buffers::bind(m, &groups, BarOrder::OutputsThenInputs, &Default::default(), &Default::default())?;
        one(lower_group(m, &groups[0], &bufs, &mut ConstSection::default(), &crate::generation::V4_2)?)
    }

    fn one(mut tasks: Vec<Task>) -> Result<Task, BackendError> {
        assert_eq!(tasks.len(), 1);
        Ok(tasks.remove(0))
    }

    #[test]
    fn average_pool_is_a_unity_window_scaled_by_one_ninth() {
        let t = lower_only(&pool_module("avg", &[0, 0, 0, 0], false)).unwrap();
        assert_eq!((t.engine, t.pool), (Engine::NePool, Some(PoolMode::Avg)));
        assert_eq!((t.conv.kh, t.conv.kw, t.conv.sy, t.conv.sx), (3, 3, 3, 3));
        assert_eq!(t.affine.scale, f16::from_f64(1.0 / 9.0).to_bits());
        let t = lower_only(&pool_module("max", &[0, 0, 0, 0], false)).unwrap();
        assert_eq!((t.pool, t.affine.scale), (Some(PoolMode::Max), 0x3C00));
    }

    #[test]
    fn average_pool_excluding_padding_is_refused() {
        let e = lower_only(&pool_module("avg", &[1, 1, 1, 1], true)).unwrap_err().to_string();
        assert!(e.contains("layer 'pool'") && e.contains("excludes padding"), "{e}");
        assert!(lower_only(&pool_module("avg", &[0, 0, 0, 0], true)).is_ok());
    }

    /// `conv 1x1 3->3 -> goc(bias_data) -> relu`.
    fn conv_goc_relu() -> Module {
        let mut m = Module::new("net");
        let ty = TensorType::nchw(1, 3, 1, 1, DType::F16);
        let x = m.add_value(ty);
        m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: Location::default() });
        m.resources.insert("c.weights".into(), Blob { dtype: DType::F16, bytes: vec![0; 18].into() });
        m.resources
            .insert("g.bias_data".into(), Blob { dtype: DType::F16, bytes: vec![0, 0x3c, 0, 0x40, 0, 0x42].into() });
        let w = Attr::Resource { name: "c.weights".into(), ty: TensorType::nchw(3, 3, 1, 1, DType::F16) };
        let conv = vec![
            ("kernel", ints(&[1, 1])),
            ("stride", ints(&[1, 1])),
            ("pad", ints(&[0, 0, 0, 0])),
            ("groups", Attr::Int(1)),
            ("weights", w),
            ("kernel_group_reuse", Attr::Bool(false)),
        ];
        let c = push(&mut m, OpCode::Conv, "c", x, ty, conv);
        let b = Attr::Resource { name: "g.bias_data".into(), ty };
        let g = push(&mut m, OpCode::GainOffsetControl, "g", c, ty, vec![("bias_data", b)]);
        let r = push(&mut m, OpCode::Neuron, "r", g, ty, vec![("mode", Attr::Str("relu".into()))]);
        m.outputs.push(Port {
            name: "y@output".into(),
            value: r,
            layout: Default::default(),
            loc: Location::default(),
        });
        m
    }

    /// The convolution, its gain/offset and its activation of `conv_goc_relu`, grouped
    /// (checked to be one group) and lowered to one task.
    fn lowered_as_one_group(m: &Module) -> (Task, ConstSection) {
        let generic = vec![Group { head: 0, goc: Some(1), neuron: Some(2), swap: None }];
        let groups = crate::fuse::groups(m);
        assert_eq!(groups, generic);
        let bufs =
            buffers::bind(m, &groups, BarOrder::OutputsThenInputs, &Default::default(), &Default::default()).unwrap();
        let mut consts = ConstSection::default();
        let t = one(lower_group(m, &groups[0], &bufs, &mut consts, &crate::generation::V4_2).unwrap()).unwrap();
        (t, consts)
    }

    #[test]
    fn per_channel_goc_and_relu_fuse_into_the_convolution() {
        let m = conv_goc_relu();
        let (t, consts) = lowered_as_one_group(&m);
        assert_eq!((t.engine, t.nonlinear, t.kernel.len()), (Engine::NeConv, Nonlinear::Relu, 3));
        // Three chunks of 64 bytes, each an output channel's bias, then its weights.
        assert!(t.inline_bias && !t.vectors.any());
        assert_eq!(t.affine, NeAffine::default());
        let (bytes, _) = consts.finish().unwrap();
        assert_eq!(&bytes[0x40..0x42], &[0x00, 0x40], "channel 1's bias 2.0 leads chunk 1");
    }

    /// `chains.md` §2.5: a table activation joins the convolution, its table at the head
    /// of every kernel chunk, before the chunk's bias and weights.
    #[test]
    fn a_table_activation_runs_in_the_convolution_with_its_table_first() {
        let mut m = conv_goc_relu();
        m.ops[2].attrs.insert("mode".into(), Attr::Str("gelu".into()));
        let (t, consts) = lowered_as_one_group(&m);
        assert_eq!((t.engine, t.nonlinear, t.table), (Engine::NeConv, Nonlinear::Table, Some(TableFn::Gelu)));
        let sizes: Vec<u64> = t.kernel.iter().map(|k| k.size).collect();
        assert_eq!(sizes, [0xc0; 3], "[table 0x80][bias, weights 0x40] per NE");
        let (bytes, symbols) = consts.finish().unwrap();
        let table = crate::activation::table(TableFn::Gelu);
        for k in &t.kernel {
            assert_eq!(&bytes[k.offset as usize..][..0x80], table.as_slice());
        }
        assert_eq!(&bytes[0xc0 + 0x80..][..2], &[0x00, 0x40], "channel 1's bias 2.0 after its table");
        assert_eq!(symbols.len(), 3, "the banks without a table are gone");
        // An activation whose table reads a transformed input stays a task of its own.
        m.ops[2].attrs.insert("mode".into(), Attr::Str("exp".into()));
        assert_eq!(crate::fuse::groups(&m).len(), 2);
    }

    #[test]
    fn a_standalone_per_channel_goc_is_a_pass_task_with_streams() {
        let mut m = conv_goc_relu();
        // Make the gain/offset the first op: it reads the input directly.
        let input = m.inputs[0].value;
        m.ops[1].operands = vec![input];
        m.ops[1].attrs.insert("scale".into(), Attr::Float(0.5));
        let goc = Group { head: 1, goc: None, neuron: None, swap: None };
        let bufs = buffers::bind(
            &m,
            &[Group { head: 0, goc: None, neuron: None, swap: None }, goc.clone()],
            BarOrder::OutputsThenInputs,
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
        let t =
            one(lower_group(&m, &goc, &bufs, &mut ConstSection::default(), &crate::generation::V4_2).unwrap()).unwrap();
        assert_eq!((t.engine, t.kernel.len()), (Engine::NePass, 0));
        assert_eq!(t.vectors.bias, Some(crate::task::KernelChunk { offset: 0, size: 0x40 }));
        assert_eq!(t.affine.scale, 0x3800);
        assert!(t.reads_kernel_memory());
    }
}
