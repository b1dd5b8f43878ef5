//! `anec.layer_norm` as Apple's current compiler runs it on H13
//! (`docs/rationale/current-compiler/normalization.md`): three planar-engine steps, the
//! statistics kept in L2 as two rows `[mean; rstd]`, no lookup table:
//! 1. `mean`: a sum reduction scaled by 1/N;
//! 2. `rstd`: a two-operand reduction (Cfg 0x61) that subtracts the mean (operand 1,
//!    broadcast) from x, squares, sums, scales by 1/N, adds epsilon and takes the
//!    reciprocal square root;
//! 3. `normalize`: `(x - mean) * rstd`, a ternary planar-engine task reading the two rows as
//!    operands 2 and 3, written to memory.
//!
//! Over W (every row of x read as a channel), or over H and W of each
//! channel (instance_norm: no Apple record), `row_plan` loads x once by step 1 and keeps
//! it after the statistics; over C, H and W together (`volume_plan`)
//! steps 1 and 2 read x as one channel with its rows as depth slices and step 3 loads it
//! again in its own layout; over the channels of a vector (`vector_plan`) planar-engine
//! copies pack it into one row first and unpack the result (`planned`). Other axis sets
//! run between transposes (`axis_moves`); gamma/beta are refused with the reason (the MIL
//! lowering applies them as a gain/offset after the plain normalization).

use super::l2_chain::{
    check_fits, link, read_in_place, scratch, standard, x_region, ONE_F16, OPERAND1_ALONG_D, OPERAND1_ALONG_H,
    OPERAND1_ALONG_W, OPERAND1_PACKED, OPERAND2_ALONG_C, OPERAND2_ALONG_W, OPERAND2_PACKED,
};
use super::reduction::SPLIT_ROW_MIN;
use super::softmax::{reduction_view, stats_region};
use super::{attr, reduction};
use crate::buffers::Buffers;
use crate::encode::l2::reduce_region;
use crate::encode::l2::{kept_region, KeptRows::*};
use crate::error::BackendError;
use crate::layout::{round_up, L2Region, Strides, L2_GRANULE};
use crate::task::{
    DramReuse, Engine, L2Form, L2Operand, L2Vector, PeLinks, PeOp, PeReduce, ReduceOp, ReducePost, SourceResidency,
    Surface, Task,
};
use crate::window::unsupported;
use anec_ir::{Module, Op, TensorType};
use half::f16;

/// Lowers a layer_norm to its tasks.
pub(super) fn lower_layer_norm(op: &Op, bufs: &Buffers, dest: Surface) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    if op.attr("gamma").is_some() || op.attr("beta").is_some() {
        return Err(unsupported(op, "layer_norm with gamma or beta (only the plain normalization is planned yet)"));
    }
    let axes = reduction::axes(op)?;
    let (n, eps) = (reduction::reduced_elements(&x.ty, &axes), epsilon(op)?);
    let ty = x.ty;
    let dense = |s: &Surface| s.strides.plane == s.strides.row * u64::from(s.ty.h);
    let tasks = match axes.as_slice() {
        _ if !planned(&ty, &axes) => None,
        [4] if dense(&x) && dense(&dest) && ty.c > 1 && ty.h > 1 => Some(grouped_or_rows(op, x, dest, n, eps)),
        [4] if dense(&x) && dense(&dest) => {
            Some(row_plan(op, rows_as_channels(&x), rows_as_channels(&dest), n, eps, None))
        }
        [4] => None,
        // Over H and W of each channel (instance_norm): the row plan on the whole planes.
        [3, 4] => Some(row_plan(op, x, dest, n, eps, None)),
        [1, 3, 4] => Some(volume_plan(op, x, dest, &axes, n, eps)?),
        _ => Some(vector_plan(op, x, dest, n, eps)),
    };
    let Some(tasks) = tasks else {
        let reason = format!(
            "layer_norm over these axes of a {}x{}x{}x{} tensor: planned over the width of the rows, over height \
             and width, over channel, height and width together, and over the channels of a vector, for one \
             batch of packed rows",
            ty.n, ty.c, ty.h, ty.w
        );
        return Err(unsupported(op, &reason));
    };
    check_fits(op, &tasks, "layer_norm")?;
    Ok(tasks)
}

/// fp16 epsilon of a layer_norm.
fn epsilon(op: &Op) -> Result<u16, BackendError> {
    Ok(f16::from_f64(attr(op, "epsilon")?.as_float().unwrap_or(0.0)).to_bits())
}

/// The L2 bytes of a layer_norm's own regions (its statistics and its staging of x) when
/// it can keep its result in L2 as `view` (a matmul's x: rows as channels): over W, no
/// gamma or beta, a dense input whose rows are one set of channels (the row plan), the
/// statistics and staging fitting the L2 once.
pub(super) fn keeps_rows_for(m: &Module, op: &Op, view: &TensorType) -> Option<u64> {
    let &x = op.operands.first()?;
    let ty = *m.ty(x)?;
    let plain = op.attr("gamma").is_none() && op.attr("beta").is_none();
    let layout = m.inputs.iter().find(|p| p.value == x).map(|p| p.layout.clone()).unwrap_or_default();
    let s = Strides::of(&ty, &layout);
    let dense = s.plane == s.row * u64::from(ty.h);
    let rows = (ty.c == 1 || ty.h == 1) && ty.n == 1 && ty.d == 1;
    let lines = ty.c * ty.h;
    let same = (view.c, view.h, view.w, view.dtype) == (lines, 1, ty.w, ty.dtype) && view.n == 1 && view.d == 1;
    if !(plain && dense && rows && same && reduction::axes(op).ok()? == [4] && epsilon(op).is_ok()) {
        return None;
    }
    Some(stat_rows(lines).size + x_region(0, view, false).size)
}

/// The bytes of the statistics the row plan of layer_norm `op` keeps at L2 0.
pub(super) fn statistics_bytes(m: &Module, op: &Op) -> Option<u64> {
    let ty = m.ty(*op.operands.first()?)?;
    Some(stat_rows(ty.c * ty.h).size)
}

/// A layer_norm over W (`keeps_rows_for`) keeping its result in L2 at `at` (its rows as
/// channels) for the next task, its staging of x right after it: the row plan whose last
/// step writes L2 (ResultCfg 0x140, no destination DMA).
pub(super) fn lower_layer_norm_kept(op: &Op, bufs: &Buffers, at: L2Region) -> Result<Vec<Task>, BackendError> {
    let x = super::first_operand(op, bufs)?;
    let axes = reduction::axes(op)?;
    let (n, eps) = (reduction::reduced_elements(&x.ty, &axes), epsilon(op)?);
    let view = rows_as_channels(&x);
    let tasks = row_plan(op, view, scratch(&view.ty), n, eps, Some(at));
    check_fits(op, &tasks, "layer_norm")?;
    Ok(tasks)
}

/// True when a layer_norm over `axes` of a tensor of type `ty` (packed rows) has a plan.
pub(super) fn planned(ty: &TensorType, axes: &[usize]) -> bool {
    if ty.n > 1 || ty.d > 1 {
        return false;
    }
    match axes {
        [4] | [3, 4] | [1, 3, 4] => true,
        [1] => ty.h == 1 && ty.w == 1,
        _ => false,
    }
}

/// The two rows `[mean; rstd]` of `lines` statistics at 0: one packed row each, at least
/// 0x20 apart (a scalar or up to 8 values: 0x10 of data and 0x10 of padding).
fn stat_rows(lines: u32) -> L2Region {
    let channel = round_up(u64::from(lines) * 2, L2_GRANULE);
    let row = channel.max(2 * L2_GRANULE);
    L2Region { base: 0, channel, row, plane: channel, size: 2 * row }
}

/// Row `i` (0 the mean, 1 rstd) of the statistics.
fn stat_row(rows: &L2Region, i: u64) -> L2Region {
    L2Region { base: rows.base + i * rows.row, size: rows.row, ..*rows }
}

/// Over the H and W of each channel of `view` (x itself; a `C x 1 x W` tensor for
/// layer_norm over W, or a `1 x H x W` one with its rows read as channels), `y` read the
/// same way.
/// With `result`, the last step keeps `y` there, and x is staged after it.
fn row_plan(op: &Op, view: Surface, y: Surface, n: u64, eps: u16, result: Option<L2Region>) -> Vec<Task> {
    let lines = view.ty.c;
    let packed = lines > 1;
    let rows = stat_rows(lines);
    let kept = x_region(result.map_or(rows.size, |r| r.end()), &view.ty, false);
    let mut mean = statistic(op, view, stat_row(&rows, 0), n, packed);
    (mean.residency, mean.l2_source) = (SourceResidency::LoadAndKeep, Some(standard(kept)));
    // The statistic (operand 1) is broadcast along the view's W, and along its H when the
    // planes have several rows (instance_norm; no record: the flags of `normalization.md`).
    let along_h = if view.ty.h > 1 { OPERAND1_ALONG_H } else { 0 };
    let op1 = OPERAND1_ALONG_W | along_h | if packed { OPERAND1_PACKED } else { 0 };
    let rstd = deviation(op, view, &rows, kept, op1, n, eps, packed);
    let mut out = normalize(op, view, y, &rows, if packed { OPERAND2_PACKED } else { 0 });
    read_in_place(&mut out, kept, link(false, true, 0));
    out.l2_result = result.map(standard);
    vec![mean, rstd, out]
}

/// Over W of a `C x H x W` tensor with several channels and rows: Apple's grouped plan
/// when its regions fit the L2, else the row plan on the rows read as channels.
fn grouped_or_rows(op: &Op, x: Surface, y: Surface, n: u64, eps: u16) -> Vec<Task> {
    let grouped = grouped_plan(op, x, y, n, eps);
    if check_fits(op, &grouped, "layer_norm").is_ok() {
        return grouped;
    }
    row_plan(op, rows_as_channels(&x), rows_as_channels(&y), n, eps, None)
}

/// Over W of a `C x H x W` tensor with C > 1 and H > 1 (`norm_layer_norm_ax3_1x128x16x16`,
/// five tasks): an NE pass copies x into L2; the mean takes the rows as groups (one
/// 16-byte line per channel and row); `x - mean` is kept; the sum of its squares goes
/// through rsqrt, grouped the same way; `(x - mean)·rstd` is written to memory. L2: the
/// copy at 0, `x - mean` after it (over x's staging), the means after that, rstd at 0
/// (over the copy). Rows a multiple of 128 wide are read by the reductions as four rows
/// of a quarter (as softmax's; no record of this plan shows it).
fn grouped_plan(op: &Op, x: Surface, y: Surface, n: u64, eps: u16) -> Vec<Task> {
    let (c, h) = (x.ty.c, x.ty.h);
    let split = x.ty.w.is_multiple_of(SPLIT_ROW_MIN);
    let copied = kept_region(0, &x.ty, NePass);
    let centred = kept_region(copied.end(), &x.ty, Planar);
    let means = stats_region(centred.end(), c, h, false);
    let rstds = stats_region(0, c, h, false);
    let view = reduction_view(&x, h, split);
    let mut copy = Task::new(&op.name, Engine::NePass, vec![x], scratch(&x.ty));
    copy.l2_result = Some(standard(copied));
    let mut mean = statistic(op, view, means, n, false);
    mean.reduce = mean.reduce.map(|r| PeReduce { split, ..r });
    read_in_place(&mut mean, copied, link(true, false, 0));
    let mut sub = Task::new(&op.name, Engine::Pe, vec![x], scratch(&x.ty));
    sub.pe = Some(PeOp { mode: 0, negate: true, bias: 0, scale: ONE_F16, abs: false, relu: false });
    read_in_place(&mut sub, copied, link(false, true, 0));
    sub.l2_operand = Some(L2Operand { vector: standard(means), broadcast: OPERAND2_ALONG_W });
    sub.l2_result = Some(standard(centred));
    sub.pe_links = PeLinks { feeds_pe: true, fed_by_pe: true };
    let mut rstd = statistic(op, view, rstds, n, false);
    rstd.reduce = rstd.reduce.map(|r| PeReduce { split, centered: true, post: ReducePost::Rsqrt { eps }, ..r });
    read_in_place(&mut rstd, centred, link(false, true, 0));
    rstd.pe_links.fed_by_pe = true;
    let mut out = Task::new(&op.name, Engine::Pe, vec![x], y);
    out.pe = Some(PeOp { mode: PE_MUL, negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    read_in_place(&mut out, centred, link(false, true, 0));
    out.l2_operand = Some(L2Operand { vector: standard(rstds), broadcast: OPERAND2_ALONG_W });
    out.pe_links = PeLinks { feeds_pe: false, fed_by_pe: true };
    vec![copy, mean, sub, rstd, out]
}

/// The planar engine's multiply (elementwise op 1).
const PE_MUL: u32 = 1;

/// Over C, H and W of a `C x H x W` tensor: the mean and rstd read x as one channel (its
/// channels as rows, its rows as depth slices); the last step loads x again.
fn volume_plan(op: &Op, x: Surface, y: Surface, axes: &[usize], n: u64, eps: u16) -> Result<Vec<Task>, BackendError> {
    let _ = axes;
    let s = x.strides;
    let ty = TensorType { c: 1, d: x.ty.h, h: x.ty.c, ..x.ty };
    let view = Surface { ty, strides: Strides { row: s.plane, plane: s.depth, depth: s.row, ..s }, ..x };
    let rows = stat_rows(1);
    let kept = reduce_region(view.ty.c * view.ty.d.max(1), &view, rows.size, false);
    let mut mean = statistic(op, view, stat_row(&rows, 0), n, false);
    (mean.residency, mean.l2_source) = (SourceResidency::LoadAndKeep, Some(standard(kept)));
    mean.dram_reuse = DramReuse::ReadAgain;
    let v = view.ty;
    let flag = |on: bool, bit: u32| if on { bit } else { 0 };
    let op1 = flag(v.w > 1, OPERAND1_ALONG_W) | flag(v.h > 1, OPERAND1_ALONG_H) | flag(v.d > 1, OPERAND1_ALONG_D);
    let rstd = deviation(op, view, &rows, kept, op1, n, eps, false);
    let mut out = normalize(op, x, y, &rows, if x.ty.c > 1 { OPERAND2_ALONG_C } else { 0 });
    (out.l2_link, out.dram_reuse) = (Some(link(false, true, 0)), DramReuse::LastRead);
    Ok(vec![mean, rstd, out])
}

/// Over the channels of a `C x 1 x 1` vector: a planar-engine copy packs the C values into
/// one row, the three steps run on that row (the row plan of one channel, in place), and
/// a last copy unpacks the row into the C channels of y (five tasks,
/// `norm_layer_norm_ax1_1x64x1x1`).
fn vector_plan(op: &Op, x: Surface, y: Surface, n: u64, eps: u16) -> Vec<Task> {
    let rows = stat_rows(1);
    let row_ty = TensorType { c: 1, w: x.ty.c, ..x.ty };
    let row = Surface { ty: row_ty, strides: Strides::of(&row_ty, &Default::default()), ..x };
    let packed = x_region(rows.size, &row_ty, false);
    let mut pack = copy(op, x, scratch(&x.ty));
    pack.l2_result = Some(L2Vector { form: L2Form::Packed, region: packed });
    pack.pe_links = PeLinks { feeds_pe: true, fed_by_pe: false };
    let mut mean = statistic(op, row, stat_row(&rows, 0), n, false);
    read_in_place(&mut mean, packed, link(false, true, 0));
    mean.pe_links.fed_by_pe = true;
    let mut rstd = deviation(op, row, &rows, packed, OPERAND1_ALONG_W, n, eps, false);
    rstd.l2_link = Some(link(false, false, 2));
    let mut out = normalize(op, row, scratch(&row_ty), &rows, OPERAND2_PACKED);
    read_in_place(&mut out, packed, link(false, true, 0));
    out.l2_result = Some(standard(packed));
    out.pe_links.feeds_pe = true;
    let mut unpack = copy(op, x, y);
    read_in_place(&mut unpack, packed, link(false, true, 0));
    unpack.l2_source = Some(L2Vector { form: L2Form::Packed, region: packed });
    unpack.pe_links = PeLinks { feeds_pe: false, fed_by_pe: true };
    vec![pack, mean, rstd, out, unpack]
}

/// A planar-engine copy of `view` (the one-operand identity, Cfg 0x21) into `out`.
fn copy(op: &Op, view: Surface, out: Surface) -> Task {
    let mut t = Task::new(&op.name, Engine::Pe, vec![view], out);
    t.pe = Some(PeOp { mode: 0, negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    t
}

/// x itself, or, with several rows, its rows as channels: `C x H` channels of one row,
/// the row stride as the channel stride (Apple's `chain_base_layer_norm_d256_s64`,
/// `[1, 64, 256]`: channel stride 0x200, row stride 0x8000, the whole tensor).
fn rows_as_channels(x: &Surface) -> Surface {
    if x.ty.h > 1 {
        let lines = x.ty.c * x.ty.h;
        let ty = TensorType { c: lines, h: 1, ..x.ty };
        let s = x.strides;
        let whole = s.row * u64::from(lines);
        let strides = Strides { plane: s.row, row: whole, depth: whole, ..s };
        return Surface { ty, strides, ..*x };
    }
    *x
}

/// A reduction step over `view` kept at `at`, one value per channel (packed into a row
/// when `packed`), scaled by 1/n.
fn statistic(op: &Op, view: Surface, at: L2Region, n: u64, packed: bool) -> Task {
    let out = TensorType { h: 1, w: 1, d: 1, ..view.ty };
    let mut t = Task::new(&op.name, Engine::Pe, vec![view], scratch(&out));
    t.pe = Some(PeOp { mode: ReduceOp::Sum.code(), negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    t.reduce = Some(PeReduce { packed, ..PeReduce::new(ReduceOp::Sum, 1.0 / n as f32) });
    t.l2_result = Some(standard(at));
    t.pe_links = PeLinks { feeds_pe: true, fed_by_pe: false };
    t
}

/// Step 2: rstd = rsqrt(Σ (x - mean)² / n + eps), the mean (row 0, operand 1, broadcast
/// by `op1`) read from L2 with x (`kept`) as operand 2; written to row 1.
#[allow(clippy::too_many_arguments)]
fn deviation(
    op: &Op,
    view: Surface,
    rows: &L2Region,
    kept: L2Region,
    op1: u32,
    n: u64,
    eps: u16,
    packed: bool,
) -> Task {
    let mut t = statistic(op, view, stat_row(rows, 1), n, packed);
    t.reduce = t.reduce.map(|r| PeReduce { centered: true, post: ReducePost::Rsqrt { eps }, ..r });
    read_in_place(&mut t, stat_row(rows, 0), link(false, true, 0));
    t.l2_operand = Some(L2Operand { vector: standard(kept), broadcast: op1 });
    t.pe_links = PeLinks { feeds_pe: true, fed_by_pe: true };
    t
}

/// Step 3: `(x - mean) * rstd` with the two statistic rows as operands 2 and 3, to `y`.
fn normalize(op: &Op, view: Surface, y: Surface, rows: &L2Region, flags: u32) -> Task {
    let mut t = Task::new(&op.name, Engine::Pe, vec![view], y);
    t.pe = Some(PeOp { mode: 0, negate: true, bias: 0, scale: ONE_F16, abs: false, relu: false });
    let vector = L2Vector { form: L2Form::Rows, region: *rows };
    t.l2_operand = Some(L2Operand { vector, broadcast: flags });
    t.pe_links = PeLinks { feeds_pe: false, fed_by_pe: true };
    t
}
