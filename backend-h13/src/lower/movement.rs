//! Data movement that reads its operand through another view: `anec.transpose` of axes
//! other than W and `anec.input_view` (slices), each one copy task (an NE pass, streaming
//! rows wider than 0x100 bytes through L2 in pieces: `encode::l2::row_piece`) of the
//! operand read with the view's strides and offset into the result (Apple's
//! `encoder_transpose_r4_0213`: the NE copies `[1, 8, 375, 128]` read with its channel and
//! row strides exchanged; `encoder_slice_lastdim`: the NE copies 375 of 749 columns of
//! `[1, 8, 375, 749]` in 0x100-byte pieces). Reshapes that keep the bytes are views without a task
//! (`buffers::view`); a transpose exchanging C and W (and a reshape moving a vector between them) is an
//! NE pass writing transposed (Common.Cfg bit 28); other transposes that move W arrive here
//! already split into these two kinds (`axis_moves`).

use super::{attr, AXES};
use crate::buffers::Buffers;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::Strides;
use crate::task::{Engine, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Op, TensorType};

/// The index of W in `AXES`.
const W: usize = 4;
/// The tile DMA's base address unit: a view must start on it.
pub(super) const DMA_UNIT: u64 = 64;

/// The copy task of `layer` from `src` to `dest`, one batch: an NE pass (Apple's copies;
/// rows wider than 0x100 bytes stream through L2 in 0x100-byte pieces, whose layout
/// `encode::l2::streams_padded` and `row_piece` decide).
/// A copy of several batches is split by [`per_batch`].
pub(super) fn copy(layer: &str, src: Surface, dest: Surface) -> Result<Task, BackendError> {
    Ok(Task::new(layer, Engine::NePass, vec![src], dest))
}

/// An NE pass (a copy, a transposing pass) over several batches as one task per batch,
/// each reading and writing its batch (a source broadcast along the batch has stride 0):
/// the NE has no batch loop. Refused when a surface lays its batches inside its depth
/// slices (a netplist layout: the pieces would not be one-batch layouts). Any other task
/// is returned as it is (the planar engine loops over the batch; NE compute tasks of
/// several batches are refused when lowered).
pub(super) fn per_batch(t: Task) -> Result<Vec<Task>, BackendError> {
    let n = t.dest.ty.n;
    if n <= 1 || t.engine != Engine::NePass || !lone(&t) || t.sources.iter().any(|s| s.ty.n != n) {
        return Ok(vec![t]);
    }
    let inner = |s: &Surface| s.strides.batch != 0 && s.strides.batch < s.strides.depth * u64::from(s.ty.d);
    if t.sources.iter().chain([&t.dest]).any(inner) {
        return Err(BackendError::Unsupported {
            line: 0,
            layer: t.layer.clone(),
            op: "copy".into(),
            reason: format!("a copy of a batch of {n} laid out inside its depth slices (one NE task runs one batch)"),
        });
    }
    let one = |s: &Surface, i: u32| Surface {
        ty: TensorType { n: 1, ..s.ty },
        offset: s.offset + u64::from(i) * s.strides.batch,
        ..*s
    };
    let tasks = (0..n)
        .map(|i| {
            let mut b = t.clone();
            b.sources = t.sources.iter().map(|s| one(s, i)).collect();
            b.dest = one(&t.dest, i);
            b
        })
        .collect();
    Ok(tasks)
}

/// A task that reads and writes memory only, with no kernel, token or L2 hand-over.
fn lone(t: &Task) -> bool {
    t.l2_source.is_none()
        && t.l2_result.is_none()
        && t.l2_operand.is_none()
        && t.token.is_none()
        && t.runtime_kernel.is_none()
        && t.kernel_write.is_none()
        && t.kernel.is_empty()
}

/// An NE pass (a copy, a transposing pass) over several depth slices as one task per
/// slice, each reading and writing its slice at its depth offset (a source read with
/// permuted strides steps by the stride of the axis that becomes the result's depth): the
/// NE passes one C x H x W tensor per task (the transposing pass exchanges its C and W;
/// the simulator models source depth only for planar-engine reductions). Used by a patch
/// embedding's moves (`passes::lower::conv`). Any other task is returned as it is.
pub(super) fn per_depth_slice(t: Task) -> Vec<Task> {
    let d = t.dest.ty.d;
    let single = t.sources.len() == 1 && t.sources.iter().all(|s| s.ty.d == d);
    if d <= 1 || t.engine != Engine::NePass || !lone(&t) || !single {
        return vec![t];
    }
    // One batch of one slice: its batch stride is its depth stride (neither is stepped).
    let one = |s: &Surface, i: u32| Surface {
        ty: TensorType { d: 1, ..s.ty },
        offset: s.offset + u64::from(i) * s.strides.depth,
        strides: Strides { batch: s.strides.depth, ..s.strides },
        ..*s
    };
    (0..d)
        .map(|i| {
            let mut slice = t.clone();
            slice.sources = t.sources.iter().map(|s| one(s, i)).collect();
            slice.dest = one(&t.dest, i);
            slice
        })
        .collect()
}

/// `t` as it is when it fits the L2 a task addresses; otherwise, when each row of its
/// result reads only the same row of its one source (a copy, a table or gain/offset
/// pass), as several tasks over bands of rows, each as many rows as fit (the tile DMA
/// reads and writes each band at its row offset), or, for a one-row tensor without
/// per-channel vectors, over bands of channels; a transposing pass over bands of the
/// source's columns (the result's channels). Anything else is left for the encoder to
/// refuse by name.
pub(super) fn in_bands(t: Task, gen: &Generation) -> Vec<Task> {
    if crate::encode::l2::fits(&t, gen) {
        return vec![t];
    }
    let axis = match (row_local(&t), t.transposed_write && one_source(&t)) {
        (true, _) if t.dest.ty.h > 1 => Cut::Rows,
        (true, _) if !t.vectors.any() => Cut::Channels,
        // A transposing pass: columns of the source are channels of the result.
        (false, true) => Cut::Columns,
        _ => return vec![t],
    };
    let (n, unit) = (axis.extent(&t), axis.unit(&t));
    // The most rows (channels, columns) one band holds, in whole units: fits() is
    // monotone in them.
    let (mut lo, mut hi) = (0, n / unit);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if crate::encode::l2::fits(&band(&t, axis, 0, mid * unit), gen) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let size = lo * unit;
    if size == 0 {
        return vec![t];
    }
    (0..n).step_by(size as usize).map(|first| band(&t, axis, first, size.min(n - first))).collect()
}

/// The axis a task is cut along: the rows or channels of source and result alike, or the
/// columns of the source that a transposing pass writes as channels.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    Rows,
    Channels,
    Columns,
}

impl Cut {
    fn extent(self, t: &Task) -> u32 {
        match self {
            Cut::Rows => t.dest.ty.h,
            Cut::Channels | Cut::Columns => t.dest.ty.c,
        }
    }

    /// Bands hold whole multiples of this: a column band starts on a 64-byte unit of the
    /// source row (the tile DMA's base).
    fn unit(self, t: &Task) -> u32 {
        let elem = t.sources.first().map_or(2, |s| s.ty.dtype.size() as u64);
        match self {
            Cut::Columns => (DMA_UNIT / elem) as u32,
            _ => 1,
        }
    }

    /// The band `first .. first + count` of a source (`source`) or result surface.
    fn cut(self, s: &Surface, source: bool, first: u32, count: u32) -> Surface {
        let elem = s.ty.dtype.size() as u64;
        let (ty, stride) = match (self, source) {
            (Cut::Rows, _) => (TensorType { h: count, ..s.ty }, s.strides.row),
            (Cut::Channels, _) | (Cut::Columns, false) => (TensorType { c: count, ..s.ty }, s.strides.plane),
            (Cut::Columns, true) => (TensorType { w: count, ..s.ty }, elem),
        };
        Surface { ty, offset: s.offset + u64::from(first) * stride, ..*s }
    }
}

/// True for a task reading one source from memory, nothing from L2.
fn one_source(t: &Task) -> bool {
    t.sources.len() == 1
        && t.l2_source.is_none()
        && t.l2_result.is_none()
        && t.l2_operand.is_none()
        && t.token.is_none()
}

/// True for a task whose result row `h` (and channel `c`) reads row `h` (channel `c`) of
/// its source (or of both sources of a two-operand planar-engine op) only.
fn row_local(t: &Task) -> bool {
    let same = |s: &Surface| s.ty.h == t.dest.ty.h && s.ty.c == t.dest.ty.c && s.ty.n == 1;
    (1..=2).contains(&t.sources.len())
        && t.sources.iter().all(same)
        && t.dest.ty.n == 1
        && !t.engine.windowed()
        && !t.transposed_write
        && t.reduce.is_none()
        && !t.channel_max
        && !t.channel_sum
        && t.l2_result.is_none()
        && t.l2_source.is_none()
        && t.l2_operand.is_none()
        && t.token.is_none()
        && t.runtime_kernel.is_none()
        && t.kernel_write.is_none()
}

/// Band `first .. first + count` of `t` along `axis`.
fn band(t: &Task, axis: Cut, first: u32, count: u32) -> Task {
    let mut b = t.clone();
    b.sources = t.sources.iter().map(|s| axis.cut(s, true, first, count)).collect();
    b.dest = axis.cut(&t.dest, false, first, count);
    b
}

/// The permutation exchanging C and W (anec order N, C, D, H, W).
const CHANNEL_WIDTH_SWAP: [usize; 5] = [0, W, 2, 3, 1];

/// True for an `anec.transpose` exchanging the channels and the width, or a reshape
/// moving a vector between them.
pub(crate) fn is_channel_width_swap(m: &anec_ir::Module, op: &Op) -> bool {
    let types = (op.operands.first().and_then(|&v| m.ty(v)), op.results.first().and_then(|&v| m.ty(v)));
    match (op.opcode, types) {
        (anec_ir::OpCode::Transpose, _) => super::axis_list(op, "perm").is_ok_and(|p| p == CHANNEL_WIDTH_SWAP),
        (anec_ir::OpCode::Reshape, (Some(from), Some(to))) => crate::buffers::reshape_is_swap(from, to),
        _ => false,
    }
}

/// A transpose: keeping W in place, the NE copies the operand read with its strides
/// permuted; exchanging C and W, an NE pass writes its result transposed (Common.Cfg bit
/// 28: Apple's preparation task of a matmul, `matmul.md` §1).
pub(super) fn lower_transpose(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let perm = super::axis_list(op, "perm")?;
    if perm == CHANNEL_WIDTH_SWAP {
        return transposing_pass(op, x, dest);
    }
    if perm.len() != AXES.len() || perm[W] != W {
        let reason = "a transpose that moves the width (the NE's rows) needs a transposing write (Common.Cfg \
                      bit 28), planned with Apple's rank mapping (docs/rationale/current-compiler/rank-mapping.md)";
        return Err(unsupported(op, reason));
    }
    let src = [x.strides.batch, x.strides.plane, x.strides.depth, x.strides.row];
    let stride = |result_axis: usize| src[perm[result_axis]];
    let strides = Strides { batch: stride(0), plane: stride(1), depth: stride(2), row: stride(3) };
    let view = Surface { ty: TensorType { dtype: x.ty.dtype, ..dest.ty }, strides, ..x };
    copy(&op.name, view, dest)
}

/// A reshape: none when it is a view of its operand (`buffers::view`); a vector moving
/// between C and W (`buffers::reshape_is_swap`) is a transposing pass.
pub(super) fn lower_reshape(m: &anec_ir::Module, op: &Op, bufs: &Buffers) -> Result<Option<Task>, BackendError> {
    let (Some(&x), Some(&r)) = (op.operands.first(), op.results.first()) else { return Ok(None) };
    let (Some(from), Some(to)) = (m.ty(x), m.ty(r)) else { return Ok(None) };
    if !crate::buffers::reshape_is_swap(from, to) {
        return Ok(None);
    }
    transposing_pass(op, as_channels(bufs.surface(x)?), as_channels(bufs.surface(r)?)).map(Some)
}

/// A vector along H read as one along C (the row stride as the channel stride).
pub(super) fn as_channels(s: Surface) -> Surface {
    if s.ty.h > 1 && s.ty.c == 1 && s.ty.w == 1 {
        let ty = TensorType { c: s.ty.h, h: 1, ..s.ty };
        return Surface { ty, strides: Strides { plane: s.strides.row, ..s.strides }, ..s };
    }
    s
}

/// An NE pass writing `x` with C and W swapped into `dest` (several batches or depth
/// slices: one task each, [`per_batch`] and [`per_depth_slice`]).
fn transposing_pass(op: &Op, x: Surface, dest: Surface) -> Result<Task, BackendError> {
    let mut t = Task::new(&op.name, Engine::NePass, vec![x], dest);
    t.transposed_write = true;
    Ok(t)
}

/// A slice along one axis: the NE copies the window, read from its first element with the
/// axis stride times `step`.
pub(super) fn lower_input_view(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let axis = attr(op, "axis")?.as_str().and_then(|n| AXES.iter().position(|&a| a == n));
    let int = |name: &str| attr(op, name).map(|a| a.as_int().unwrap_or(0).max(0) as u64);
    let (Some(axis), offset, step) = (axis, int("offset")?, int("step")?) else {
        return Err(BackendError::Internal(format!("verified input_view '{}' lacks `axis`", op.name)));
    };
    let s = x.strides;
    let elem = x.ty.dtype.size() as u64;
    let axis_stride = [s.batch, s.plane, s.depth, s.row, elem][axis];
    let start = x.offset + offset * axis_stride;
    if axis == W && step != 1 {
        return Err(unsupported(op, "a slice along the width with a step above 1 (the DMA reads whole rows)"));
    }
    if !start.is_multiple_of(DMA_UNIT) {
        let reason = format!(
            "a slice starting {start} bytes into its operand's buffer: the tile DMA starts on {DMA_UNIT}-byte units"
        );
        return Err(unsupported(op, &reason));
    }
    let mut strides = s;
    match axis {
        0 => strides.batch *= step,
        1 => strides.plane *= step,
        2 => strides.depth *= step,
        3 => strides.row *= step,
        _ => {}
    }
    let view = Surface { ty: TensorType { dtype: x.ty.dtype, ..dest.ty }, strides, offset: start, ..x };
    copy(&op.name, view, dest)
}

/// A concatenation: one NE copy per input, each writing its part of the result through a
/// view of the result's buffer at the part's offset (the v4.2.1 concat programs: a copy
/// task per input at a channel offset of one output).
pub(super) fn lower_concat(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Vec<Task>, BackendError> {
    let axis = attr(op, "axis")?.as_str().and_then(|n| AXES.iter().position(|&a| a == n));
    let Some(axis) = axis else {
        return Err(BackendError::Internal(format!("verified concat '{}' lacks `axis`", op.name)));
    };
    let d = dest.strides;
    let elem = dest.ty.dtype.size() as u64;
    let axis_stride = [d.batch, d.plane, d.depth, d.row, elem][axis];
    let mut start = 0u64;
    let mut tasks = Vec::with_capacity(op.operands.len());
    for &v in &op.operands {
        let x = bufs.surface(v)?;
        let offset = dest.offset + start * axis_stride;
        if !offset.is_multiple_of(DMA_UNIT) {
            let reason = format!(
                "a concatenation whose part starts {offset} bytes into the result: the tile DMA writes from \
                 {DMA_UNIT}-byte units"
            );
            return Err(unsupported(op, &reason));
        }
        let part = Surface { ty: TensorType { dtype: dest.ty.dtype, ..x.ty }, offset, ..dest };
        tasks.push(copy(&op.name, x, part)?);
        start += u64::from([x.ty.n, x.ty.c, x.ty.d, x.ty.h, x.ty.w][axis]);
    }
    Ok(tasks)
}

/// A broadcast on its own (not the producer of an L2 pair): the NE copies the operand
/// read with a zero stride along each broadcast axis. W is contiguous in memory and
/// cannot be repeated by a stride: a broadcast along W is refused (the planar engine
/// repeats an L2 operand along W when an elementwise op reads it: `l2_pair`).
pub(super) fn lower_broadcast(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Task, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let axes = super::axis_list(op, "axes")?;
    if axes.contains(&W) {
        return Err(unsupported(op, "a broadcast along the width on its own (rows are contiguous in memory)"));
    }
    let mut strides = x.strides;
    for axis in axes {
        match axis {
            0 => strides.batch = 0,
            1 => strides.plane = 0,
            2 => strides.depth = 0,
            _ => strides.row = 0,
        }
    }
    let view = Surface { ty: TensorType { dtype: x.ty.dtype, ..dest.ty }, strides, ..x };
    copy(&op.name, view, dest)
}
