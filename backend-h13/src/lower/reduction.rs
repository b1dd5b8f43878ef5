//! `anec.reduction` (sum, mean, max, min) on the planar engine, as Apple's current
//! compiler plans it (`docs/rationale/current-compiler/reduction.md`).
//!
//! The planar engine's reduction (Common.Cfg 0x51) combines the depth, height and width of
//! each channel of the view it is given. A plan is therefore a choice of view: a
//! different reading of the source's DRAM bytes by the tile DMA, which brings the reduced
//! axes into (D, H, W) and keeps the others as channels:
//!
//! | reduced axes | view (C, D, H, W) of x = (C, 1, H, W) |
//! |---|---|
//! | H, W | (C, 1, H, W): x as it is |
//! | W, H = 1 | (C, 1, 4, W/4) when W is a multiple of 128, else x as it is |
//! | W, H > 1 | (C·H, 1, 1, W): every row a channel (our plan; Apple's differs, see the rationale) |
//! | C, H = W = 1 | (1, 1, C, 1): the channels as rows |
//! | C, H, W | (1, H, C, W): x's rows as depth slices, its channels as rows |
//!
//! A reduction over the channels alone of a tensor with several pixels first transposes
//! it into L2 with an NE pass (`through_transposer`). The maximum over the channels of a
//! `[1, C, 1, 1]` tensor runs on the NE instead
//! (`channel_max`). A mean is a sum with the fp32 post-scale 1/N. The result, one value per view channel,
//! is written to the reduced tensor read as (view channels, 1, 1, 1).

use super::attr;
use super::l2_pair::region;
use crate::buffers::Buffers;
use crate::encode::l2::ne_rows_unpadded;
use crate::error::BackendError;
use crate::layout::Strides;
use crate::layout::{round_up, L2Region};
use crate::task::{Engine, L2Form, L2Vector, PeOp, PeReduce, ReduceOp, SourceResidency, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Op, TensorType};

/// Lowers a reduction to its task. Other axis sets (C alone with H·W > 1, H alone with
/// W > 1: Apple transposes through L2 first) are refused with the reason.
pub(super) fn lower_reduction(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let kind = attr(op, "kind")?.as_str().unwrap_or_default();
    let axes = axes(op)?;
    if kind == "max" && is_channel_vector(&x.ty, &axes) {
        return Ok(vec![channel_max(op, x, dest)]);
    }
    let reduce = pe_reduce(op, &x.ty, &axes)?;
    if is_channels_of_planes(&x.ty, &axes) {
        return through_transposer(op, x, dest, reduce);
    }
    let (view, out) = plan(op, &x, &dest, &axes)?;
    let split = x.ty.h == 1 && view.ty.h == SPLIT_ROWS && view.ty.c == x.ty.c && view.ty.w < x.ty.w;
    Ok(vec![pe_reduction(op, view, out, PeReduce { split, ..reduce })])
}

/// What the planar engine combines and its post-scale (1/N for a mean).
fn pe_reduce(op: &Op, ty: &TensorType, axes: &[usize]) -> Result<PeReduce, BackendError> {
    let n = reduced_elements(ty, axes);
    let (red, scale) = match attr(op, "kind")?.as_str().unwrap_or_default() {
        "sum" => (ReduceOp::Sum, 1.0),
        "mean" => (ReduceOp::Sum, 1.0 / n as f32),
        "max" => (ReduceOp::Max, 1.0),
        "min" => (ReduceOp::Min, 1.0),
        other => return Err(unsupported(op, &format!("reduction '{other}' has no planar-engine form"))),
    };
    Ok(PeReduce::new(red, scale))
}

/// True when the reduction's one-task plan can write its result, a vector along C, as
/// one row instead (word 0x158 0x400: Apple's keep_dims = false reduction of
/// `reduce_probe_sum_ax2_3_1x64x8x8_flat`, whose `[1, 64]` result is a row).
pub(crate) fn packs_into_row(m: &anec_ir::Module, op: &Op) -> bool {
    let ty = |v: Option<&anec_ir::ValueId>| v.and_then(|&v| m.ty(v)).copied();
    let (Some(x), Some(r), Ok(axes)) = (ty(op.operands.first()), ty(op.results.first()), axes(op)) else {
        return false;
    };
    let vector = r.n == 1 && r.d == 1 && r.h == 1 && r.w == 1 && r.c > 1;
    let max = attr(op, "kind").is_ok_and(|k| k.as_str() == Some("max"));
    vector && !(max && is_channel_vector(&x, &axes)) && !is_channels_of_planes(&x, &axes)
}

/// The reduction writing its per-channel results along one row `row` (see
/// [`packs_into_row`]).
pub(super) fn lower_into_row(op: &Op, bufs: &Buffers, row: Surface) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let axes = axes(op)?;
    let reduce = pe_reduce(op, &x.ty, &axes)?;
    let (view, _) = plan(op, &x, &row, &axes)?;
    if view.ty.c != row.ty.w {
        return Err(BackendError::Internal(format!(
            "reduction '{}': {} results for a row of {}",
            op.name, view.ty.c, row.ty.w
        )));
    }
    let split = x.ty.h == 1 && view.ty.h == SPLIT_ROWS && view.ty.c == x.ty.c && view.ty.w < x.ty.w;
    Ok(vec![pe_reduction(op, view, row, PeReduce { split, packed: true, ..reduce })])
}

/// The planar-engine task reducing `view` into `out`.
fn pe_reduction(op: &Op, view: Surface, out: Surface, reduce: PeReduce) -> Task {
    let mut t = Task::new(&op.name, Engine::Pe, vec![view], out);
    t.pe = Some(PeOp { mode: reduce.op.code(), negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    t.reduce = Some(reduce);
    t
}

/// True for a reduction over the channels alone of a tensor with several pixels.
fn is_channels_of_planes(ty: &TensorType, axes: &[usize]) -> bool {
    let dims = [ty.n, ty.c, ty.d, ty.h, ty.w];
    let real: Vec<usize> = axes.iter().copied().filter(|&a| dims[a] > 1).collect();
    real == [1] && ty.h * ty.w > 1 && ty.n == 1 && ty.d == 1
}

/// A reduction over C of `x` = (C, H, W) as Apple runs it (`reduce_sum_axes_1`): an NE
/// pass writes x into L2 transposed, W channels of C values per row; the planar engine
/// then reduces each such channel, the rows as groups (view (W, 1, C), NumGroups H), and
/// writes each group's W results as one packed row of the reduced tensor. With several
/// rows, C a multiple of 128 is read as four rows of C/4 (view (W, 4, C/4)), as Apple's
/// layer_norm over 128 channels reads its transposed x (`reduction.md` §5); channels of
/// 0x100 bytes or more the NE writes unpadded (`encode::l2::ne_rows_unpadded`: that x's
/// rows are 0x1000).
fn through_transposer(op: &Op, x: Surface, dest: Surface, reduce: PeReduce) -> Result<Vec<Task>, BackendError> {
    let ty = x.ty;
    let form = L2Form::Transposed;
    let split = ty.c.is_multiple_of(SPLIT_ROW_MIN) && ty.h > 1;
    let unpadded = L2Region::new(0, ty.w, ty.h, ty.c, ty.dtype, u64::MAX, 0);
    let transposed = if ne_rows_unpadded(unpadded.channel) { unpadded } else { region(form, &ty) };
    let vector = L2Vector { form, region: transposed };
    let needed = vector.region.size + u64::from(ty.c) * u64::from(ty.h) * round_up(u64::from(ty.w) * 2, 16);
    if needed > L2_BYTES {
        let reason = format!(
            "a reduction over the {} channels of {}x{} pixels needs {needed:#x} bytes of L2 for the transposed copy \
             and its source, more than the {L2_BYTES:#x} the engine has (no tiling yet)",
            ty.c, ty.h, ty.w
        );
        return Err(unsupported(op, &reason));
    }
    let mut transposer = Task::new(&op.name, Engine::NePass, vec![x], Surface { bar: 0, offset: 0, ..x });
    transposer.l2_result = Some(vector);
    let (rows_per_channel, w) = if split { (SPLIT_ROWS, ty.c / SPLIT_ROWS) } else { (1, ty.c) };
    let view_ty = TensorType { n: ty.h, c: ty.w, h: rows_per_channel, w, ..ty };
    let view = Surface { ty: view_ty, ..x };
    let d = dest.strides;
    let rows = Surface {
        ty: TensorType { n: ty.h, c: 1, d: 1, h: 1, w: ty.w, ..dest.ty },
        strides: Strides { row: d.plane, plane: d.plane, depth: d.depth, batch: d.row },
        ..dest
    };
    let mut reduction = pe_reduction(op, view, rows, PeReduce { packed: true, split, ..reduce });
    reduction.residency = SourceResidency::Resident;
    reduction.l2_source = Some(vector);
    Ok(vec![transposer, reduction])
}

use super::l2_chain::L2_BYTES;

/// True for a reduction over the channels of a `[1, C, 1, 1]` tensor.
fn is_channel_vector(ty: &TensorType, axes: &[usize]) -> bool {
    axes.contains(&1) && ty.n == 1 && ty.d == 1 && ty.h == 1 && ty.w == 1
}

/// The maximum over the channels of a `[1, C, 1, 1]` tensor: Apple runs it on the NE, one
/// output channel reading all C (`reduce_probe_max_ax1_1x512x1x1`; sums and means of the
/// same shape go to the planar engine).
fn channel_max(op: &Op, x: Surface, dest: Surface) -> Task {
    let mut t = Task::new(&op.name, Engine::NePass, vec![x], dest);
    t.channel_max = true;
    t
}

/// fp16 1.0: the BiasScale of a reduction.
const ONE_F16: u16 = 0x3C00;

/// Anec axis indices (N 0, C 1, D 2, H 3, W 4) of the op's `axes`.
pub(super) fn axes(op: &Op) -> Result<Vec<usize>, BackendError> {
    let mut out = super::axis_list(op, "axes")?;
    out.sort_unstable();
    Ok(out)
}

/// The number of elements each result combines.
pub(super) fn reduced_elements(ty: &TensorType, axes: &[usize]) -> u64 {
    let dims = [ty.n, ty.c, ty.d, ty.h, ty.w];
    axes.iter().map(|&a| u64::from(dims[a])).product()
}

/// Width from which a single row is read as four rows of a quarter (Apple's
/// `reduce_probe_mean_ax3_1x1x1x512`: 512 as 4 x 128); the quarter row must be a whole
/// number of 64-byte DMA rows.
pub(super) const SPLIT_ROW_MIN: u32 = 128;
pub(super) const SPLIT_ROWS: u32 = 4;

/// The view of `x` and the reading of `dest` the task uses, or why the engine has no
/// one-task plan for these axes.
pub(super) fn plan(op: &Op, x: &Surface, dest: &Surface, axes: &[usize]) -> Result<(Surface, Surface), BackendError> {
    let (c, h, w) = (x.ty.c, x.ty.h, x.ty.w);
    if x.ty.n > 1 || x.ty.d > 1 {
        return Err(unsupported(
            op,
            "a reduction of a tensor with batch or depth above 1 (no plan: one view per task)",
        ));
    }
    if x.strides.plane != x.strides.row * u64::from(h) {
        return Err(unsupported(op, "a reduction of a tensor whose channels are not packed row after row"));
    }
    let Some((view, strides)) = view(&x.ty, x.strides, axes) else {
        let names: Vec<&str> = real_axes(&x.ty, axes).iter().map(|&a| super::AXES[a]).collect();
        let reason = format!(
            "a reduction over {} of a {}x{}x{} tensor: no view brings these axes into the planar engine's \
             per-channel reduction (planned: width; height and width; channel with height or width 1; \
             channel, height and width)",
            names.join(" and "),
            c,
            h,
            w
        );
        return Err(unsupported(op, &reason));
    };
    let view = Surface { ty: view, strides, ..*x };
    Ok((view, results(dest, view.ty.c)))
}

/// True when a reduction over `axes` of a dense tensor of type `ty` has a plan: one of the
/// views of [`plan`], the channels of a vector's maximum on the NE, or the channels of
/// planes through the transposer.
pub(super) fn planned(ty: &TensorType, kind: &str, axes: &[usize]) -> bool {
    if ty.n > 1 || ty.d > 1 {
        return false;
    }
    let dense = Strides::of(ty, &Default::default());
    (kind == "max" && is_channel_vector(ty, axes)) || is_channels_of_planes(ty, axes) || view(ty, dense, axes).is_some()
}

/// The axes of `axes` along which `ty` has more than one element: axes of extent 1
/// change nothing, so a plan follows the axes that really reduce.
fn real_axes(ty: &TensorType, axes: &[usize]) -> Vec<usize> {
    let dims = [ty.n, ty.c, ty.d, ty.h, ty.w];
    axes.iter().copied().filter(|&a| dims[a] > 1).collect()
}

/// The view (type and strides) of `ty`, laid out with strides `s`, that brings `axes`
/// into the planar engine's per-channel reduction, if any.
fn view(ty: &TensorType, s: Strides, axes: &[usize]) -> Option<(TensorType, Strides)> {
    let (c, h, w) = (ty.c, ty.h, ty.w);
    let real = real_axes(ty, axes);
    let elem = ty.dtype.size() as u64;
    Some(match real.as_slice() {
        [3, 4] | [3] if w == 1 => (*ty, s),
        [3, 4] => (*ty, s),
        [4] if h == 1 && w.is_multiple_of(SPLIT_ROW_MIN) => {
            let quarter = w / SPLIT_ROWS;
            (TensorType { h: SPLIT_ROWS, w: quarter, ..*ty }, Strides { row: u64::from(quarter) * elem, ..s })
        }
        [4] if h == 1 => (*ty, s),
        // Every row of x a channel.
        [4] => (TensorType { c: c * h, h: 1, ..*ty }, Strides { plane: s.row, depth: s.row * u64::from(c * h), ..s }),
        // The channels (and rows) of x as rows of one channel.
        [1] | [1, 4] if h == 1 && (w == 1 || real.len() == 2) => {
            (TensorType { c: 1, h: c, ..*ty }, Strides { row: s.plane, ..s })
        }
        [1, 3] if w == 1 => (TensorType { c: 1, h: c * h, ..*ty }, Strides { row: s.row, ..s }),
        // x's rows as depth slices, its channels as rows.
        [1, 3, 4] => {
            (TensorType { c: 1, d: h, h: c, ..*ty }, Strides { row: s.plane, plane: s.depth, depth: s.row, ..s })
        }
        _ => return None,
    })
}

/// The reduced tensor read as `results` channels of one value, in the order the view's
/// channels produce them: its own channels, or (one result per row) its rows.
fn results(dest: &Surface, results: u32) -> Surface {
    let step = if results == dest.ty.c { dest.strides.plane } else { dest.strides.row };
    let strides = Strides { plane: step, depth: step * u64::from(results), ..dest.strides };
    Surface { ty: TensorType { c: results, d: 1, h: 1, w: 1, ..dest.ty }, strides, ..*dest }
}
