//! `anec.softmax` as Apple's current compiler runs it on H13
//! (`docs/rationale/current-compiler/softmax.md`): everything stays in L2 between the
//! first read and the last write.
//!
//! softmax(x) = 2^((x - max)·log2 e) / Σ 2^(...), in five steps:
//! 1. `maximum`: the planar engine's reduction keeps m = max over the axis in L2;
//! 2. `subtract`: t = (x - m)·log2 e (the second operand broadcast, log2 e as the PE scale);
//! 3. `exp2`: e = 2^t on the NE through the exp2 table, in place;
//! 4. `denominator`: r = 1 / Σ e, a sum reduction with the reciprocal post-op;
//! 5. `normalize`: y = r·e, written to memory.
//!
//! Over W of a single row (`row_plan`) x is loaded by step 1 and kept where step 5 writes
//! y; the statistics are one packed row of C values when C > 1. An x its producer kept in
//! L2 at the plan's work region ([`kept_input`]) is read there: no load step, the maximum
//! reads it in place and the subtract runs in place (`chains.md` §2.7). Over W of several rows
//! (`rows_plan`) an NE pass first copies x into L2 and the reductions take the rows as
//! groups (one 16-byte line per channel and row). The L2.SourceCfg link bits of each step
//! are those of Apple's records (fitted, `softmax.md` §5).

use super::attr;
use super::l2_chain::{
    check_fits, kept_link, link, read_in_place, scratch, standard, x_region, L2_BYTES, ONE_F16, OPERAND1_ALONG_C,
    OPERAND1_ALONG_W, OPERAND1_PACKED, OPERAND2_ALONG_C, OPERAND2_ALONG_W, OPERAND2_PACKED, PACKED_RESULT,
};
use super::reduction::{SPLIT_ROWS, SPLIT_ROW_MIN};
use crate::activation::{self, TableFn};
use crate::buffers::{Buffers, KeptValue};
use crate::consts::ConstSection;
use crate::encode::l2::{kept_region, ne_rows_unpadded, KeptRows::*};
use crate::encode::ne_count;
use crate::error::BackendError;
use crate::layout::{round_up, L2Region, L2_GRANULE};
use crate::task::{
    Engine, L2Form, L2Link, L2Operand, L2Vector, Nonlinear, PeLinks, PeOp, PeReduce, ReduceOp, ReducePost,
    SourceResidency, Surface, Task, Token,
};
use crate::window::unsupported;
use anec_ir::{Module, Op, OpCode, TensorType};
use half::f16;

/// Lowers a softmax to its tasks.
pub(super) fn lower_softmax(
    m: &Module,
    op: &Op,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Vec<Task>, BackendError> {
    let kept = op.operands.first().and_then(|v| Some((*bufs.kept_at.get(v)?, *m.ty(*v)?)));
    if let Some((k, ty)) = kept {
        let plan = row_plan(op, scratch(&ty), Some(k), dest, consts);
        check_fits(op, &plan, "softmax")?;
        return Ok(plan);
    }
    let x = super::first_operand(op, bufs)?;
    let axis = attr(op, "axis")?.as_str().unwrap_or_default();
    let ty = x.ty;
    if extent(&ty, axis) == Some(1) {
        return ones(op, dest, consts);
    }
    let plan = match axis {
        "width" if one_row(&ty) => row_plan(op, x, None, dest, consts),
        "width" if ty.n == 1 && ty.d == 1 && ty.w > 1 => rows_plan(op, x, dest, consts),
        "channel" if is_vector(&ty) && ty.c > 1 => {
            let token = bufs
                .scratch
                .get(&op.name)
                .copied()
                .ok_or_else(|| BackendError::Internal(format!("softmax '{}' has no scratch surface", op.name)))?;
            vector_plan(op, x, dest, token, consts)
        }
        _ => {
            let reason = format!(
                "softmax over {axis} of a {}x{}x{}x{} tensor: planned over the width (more than one element) of \
                 one batch; Apple's plans for other axes are not derived yet",
                ty.n, ty.c, ty.h, ty.w
            );
            return Err(unsupported(op, &reason));
        }
    };
    check_fits(op, &plan, "softmax")?;
    Ok(plan)
}

/// True when a softmax over `axis` of a tensor of type `ty` has a plan: over an axis of
/// one element, over W of one batch, or over the channels of a vector.
pub(super) fn planned(ty: &TensorType, axis: &str) -> bool {
    extent(ty, axis) == Some(1)
        || match axis {
            "width" => ty.n == 1 && ty.d == 1,
            "channel" => is_vector(ty),
            _ => false,
        }
}

/// log2 e in fp16: the subtract's scale.
fn log2_e() -> u16 {
    f16::from_f64(std::f64::consts::LOG2_E).to_bits()
}

/// PE op codes of the elementwise steps.
const PE_ADD: u32 = 0;
const PE_MUL: u32 = 1;

/// True for a `1 x C x 1 x 1` tensor.
fn is_vector(ty: &TensorType) -> bool {
    ty.n == 1 && ty.d == 1 && ty.h == 1 && ty.w == 1
}

/// The scratch surface a softmax declares: over the channels of a vector, the packed row
/// of its exponents' inputs (`1 x 1 x C`).
pub(super) fn scratch_type(m: &anec_ir::Module, op: &Op) -> Option<TensorType> {
    let x = m.ty(*op.operands.first()?)?;
    let over_c = op.attr("axis").and_then(anec_ir::Attr::as_str) == Some("channel");
    (op.opcode == anec_ir::OpCode::Softmax && over_c && is_vector(x) && x.c > 1).then_some(TensorType {
        c: 1,
        w: x.c,
        ..*x
    })
}

/// The extent of the named axis.
fn extent(ty: &TensorType, axis: &str) -> Option<u32> {
    super::AXES.iter().position(|&n| n == axis).map(|i| [ty.n, ty.c, ty.d, ty.h, ty.w][i])
}

/// A softmax over an axis of one element is 1 everywhere: a copy of ones from `__const`
/// (Apple's five-task plan for `softmax_1x512x1x1` is not derived, `softmax.md` §1).
fn ones(op: &Op, dest: Surface, consts: &mut ConstSection) -> Result<Vec<Task>, BackendError> {
    let src = super::constant::filled(1.0, &dest.ty, consts);
    Ok(vec![super::movement::copy(&op.name, src, dest)?])
}

/// Softmax over the channels of a `C x 1 x 1` vector (`norm_softmax_a1_*`): the NE takes
/// the maximum over the channels; the planar engine subtracts it and writes the scaled
/// differences as one packed row (standing for writing the scratch row); the NE's exp2
/// table reads the row and writes it back as channels (Cfg bit 28); one NE task sums the
/// channels through the reciprocal table; the planar engine multiplies. L2: the maximum,
/// then the reciprocal at 0, the exponents after it, the packed row after them, x last.
fn vector_plan(op: &Op, x: Surface, y: Surface, token: Surface, consts: &mut ConstSection) -> Vec<Task> {
    let c = x.ty.c;
    let stat = L2Region { base: 0, channel: L2_GRANULE, row: L2_GRANULE, plane: L2_GRANULE, size: L2_GRANULE };
    let lines = L2_GRANULE * u64::from(c);
    let exps = L2Region { base: stat.end(), channel: L2_GRANULE, row: lines, plane: lines, size: lines };
    let row = round_up(u64::from(c) * 2, L2_GRANULE);
    let packed = L2Region { base: exps.end(), channel: row, row, plane: row, size: row };
    let kept = L2Region { base: packed.end(), channel: L2_GRANULE, row: lines, plane: lines, size: lines };
    let one = TensorType { c: 1, ..x.ty };
    let mut max = Task::new(&op.name, Engine::NePass, vec![x], scratch(&one));
    (max.channel_max, max.residency, max.l2_source) = (true, SourceResidency::LoadAndKeep, Some(standard(kept)));
    max.l2_result = Some(standard(stat));
    let conv_src = L2Link { conv_src: true, ..link(true, false, 0) };
    let mut sub = subtract(op, x, kept, stat, OPERAND2_ALONG_C | PACKED_RESULT, packed, conv_src);
    sub.l2_result = Some(L2Vector { form: L2Form::Packed, region: packed });
    (sub.token, sub.pe_links) = (Some(Token::Writes(token)), PeLinks::default());
    let row_ty = TensorType { c: 1, w: c, ..x.ty };
    let mut exp = exp2(op, Surface { ty: row_ty, ..x }, packed, consts);
    exp.l2_link = Some(L2Link { dma_fmt: true, ..link(false, true, 0) });
    exp.l2_result = Some(L2Vector { form: L2Form::Transposed, region: exps });
    exp.token = Some(Token::Reads(token));
    let mut sum = Task::new(&op.name, Engine::NePass, vec![x], scratch(&one));
    sum.channel_sum = true;
    with_table_channel(&mut sum, TableFn::Reciprocal, consts);
    (sum.residency, sum.l2_source, sum.l2_link) =
        (SourceResidency::Resident, Some(standard(exps)), Some(link(true, false, 0)));
    sum.l2_result = Some(standard(stat));
    let mut mul = normalize(op, x, y, stat, exps, OPERAND1_ALONG_C, link(true, false, 0));
    mul.pe_links = PeLinks::default();
    vec![max, sub, exp, sum, mul]
}

/// Gives `t` the table of `f` on one kernel-DMA channel.
fn with_table_channel(t: &mut Task, f: TableFn, consts: &mut ConstSection) {
    let table = consts.add_table(&activation::table(f), 1);
    (t.kernel, t.nonlinear, t.table) = (vec![table], Nonlinear::Table, Some(f));
}

/// True for a tensor the one-row plan takes: one batch, one row, more than one element.
fn one_row(ty: &TensorType) -> bool {
    ty.n == 1 && ty.d == 1 && ty.w > 1 && ty.h == 1
}

/// The statistics and the work region of the one-row plan: one packed row of C values
/// (or one line) at 0, the work region (the differences, then the exponents) after it.
fn row_layout(ty: &TensorType) -> (L2Region, L2Region) {
    let stats = stats_region(0, ty.c, 1, ty.c > 1);
    (stats, x_region(stats.size, ty, false))
}

/// Where the softmax `op` of `m` takes an x its producer keeps in L2: the one-row plan's
/// work region (its first task, the maximum, reads it there on the planar engine). `None`
/// when the softmax does not run that plan.
pub(super) fn kept_input(m: &Module, op: &Op) -> Option<L2Region> {
    let ty = m.ty(*op.operands.first()?)?;
    let over_w = op.attr("axis").and_then(anec_ir::Attr::as_str) == Some("width");
    (op.opcode == OpCode::Softmax && over_w && one_row(ty)).then(|| row_layout(ty).1)
}

/// Softmax over W of a `C x 1 x W` tensor: five tasks. x is loaded by the maximum and
/// kept after the work region, or, when its producer kept it in L2 (`input`), read where
/// it lies: the maximum reads it in place and the subtract writes over it.
fn row_plan(op: &Op, x: Surface, input: Option<KeptValue>, y: Surface, consts: &mut ConstSection) -> Vec<Task> {
    let c = x.ty.c;
    let packed = c > 1;
    let (stats, work) = row_layout(&x.ty);
    let mut max = reduction(op, x, ReduceOp::Max, packed, 1, false, stats);
    let source = match input {
        Some(k) => {
            read_in_place(&mut max, k.region, kept_link(&k));
            k.region
        }
        None => {
            let kept = x_region(stats.size + work.size, &x.ty, false);
            max.residency = SourceResidency::LoadAndKeep;
            max.l2_source = Some(standard(kept));
            kept
        }
    };
    let (packed1, packed2) = if packed { (OPERAND1_PACKED, OPERAND2_PACKED) } else { (0, 0) };
    let sub = subtract(op, x, source, stats, OPERAND2_ALONG_W | packed2, work, link(false, true, 0));
    let exp = exp2(op, x, work, consts);
    let mut sum = reduction(op, x, ReduceOp::Sum, packed, 1, false, stats);
    sum.reduce = sum.reduce.map(|r| PeReduce { post: ReducePost::Reciprocal, ..r });
    (sum.residency, sum.l2_source, sum.l2_link) =
        (SourceResidency::Resident, Some(standard(work)), Some(link(false, true, 1)));
    let mul = normalize(op, x, y, stats, work, OPERAND1_ALONG_W | packed1, link(false, false, 2));
    vec![max, sub, exp, sum, mul]
}

/// Softmax over W of a `C x H x W` tensor with H > 1: an NE copy into L2, then the five
/// steps with the rows as the reductions' groups (or, with one channel, as their
/// channels). Rows a multiple of 128 wide are read by the reductions as four rows of a
/// quarter (`softmax.md` §1). The layout is [`RowsLayout`]'s, or, when that does not fit
/// the L2, whole rows with exp2 in place.
fn rows_plan(op: &Op, x: Surface, y: Surface, consts: &mut ConstSection) -> Vec<Task> {
    let (c, h) = (x.ty.c, x.ty.h);
    let apple = RowsLayout::new(&x.ty, x.ty.w.is_multiple_of(SPLIT_ROW_MIN), false);
    let l = if apple.end() <= L2_BYTES { apple } else { RowsLayout::new(&x.ty, false, true) };
    let (split, groups) = (l.split, if c > 1 { h } else { 1 });
    let mut copy = Task::new(&op.name, Engine::NePass, vec![x], scratch(&x.ty));
    copy.l2_result = Some(standard(l.copied));
    let mut max = reduction(op, x, ReduceOp::Max, false, groups, split, l.maxima);
    (max.residency, max.l2_source, max.l2_link) =
        (SourceResidency::Resident, Some(standard(l.copied)), Some(link(true, false, 0)));
    let sub = subtract(op, x, l.copied, l.maxima, OPERAND2_ALONG_W, l.work, link(false, true, 0));
    let mut exp = exp2(op, x, l.work, consts);
    exp.l2_result = Some(standard(l.exps));
    let mut sum = reduction(op, x, ReduceOp::Sum, false, groups, split, l.sums);
    sum.reduce = sum.reduce.map(|r| PeReduce { post: ReducePost::Reciprocal, ..r });
    (sum.residency, sum.l2_source, sum.l2_link) =
        (SourceResidency::Resident, Some(standard(l.exps)), Some(link(true, false, 0)));
    let mul = normalize(op, x, y, l.sums, l.exps, OPERAND1_ALONG_W, link(false, true, 0));
    vec![copy, max, sub, exp, sum, mul]
}

/// The L2 regions of the rows plan (`encode::l2::kept_region` pads their rows). The copy
/// at 0; the differences `(x - m)·log2 e` where x was staged for the copy, exp2 in place,
/// and the maxima after them; the reciprocal sums at 0, over the copy. An NE task writes
/// rows of 0x100 bytes or more per channel unpadded: when the differences' rows are
/// padded, the exponents then go where x was staged (its unpadded size) and the
/// differences after that (1x8x128x128, the 64x256 chain).
struct RowsLayout {
    split: bool,
    copied: L2Region,
    work: L2Region,
    exps: L2Region,
    maxima: L2Region,
    sums: L2Region,
}

impl RowsLayout {
    /// The layout with the reductions reading split rows or not; `in_place`: exp2 in place
    /// whatever the layouts (the fallback that needs least L2).
    fn new(ty: &TensorType, split: bool, in_place: bool) -> RowsLayout {
        let c = ty.c;
        // A region the reductions read: with one channel and split rows, its rows are the
        // view's channels and its plane the whole region (Apple: 0x8000 for 64 x 0x200).
        let reduced = |r: L2Region| if split && c == 1 { L2Region { plane: r.size, ..r } } else { r };
        let copied = reduced(kept_region(0, ty, NePass));
        let staged = x_region(copied.end(), ty, false);
        let differences = kept_region(0, ty, Planar);
        let streamed = ne_rows_unpadded(differences.channel) && !in_place;
        let exps = if streamed { reduced(kept_region(0, ty, NePass)) } else { differences };
        let same = |a: &L2Region, b: &L2Region| (a.channel, a.row, a.plane) == (b.channel, b.row, b.plane);
        let (work, exps) = if same(&exps, &differences) {
            let work = L2Region { base: copied.end(), ..differences };
            (work, work)
        } else {
            (L2Region { base: staged.end(), ..differences }, L2Region { base: staged.base, ..exps })
        };
        let stats_at = |base| match c {
            // One channel: the reductions' channels are x's rows, one line each, which the
            // elementwise steps read as a column (Apple: channel stride = the whole region).
            1 => {
                let r = stats_region(base, ty.h, 1, false);
                L2Region { channel: r.size, row: L2_GRANULE, ..r }
            }
            _ => stats_region(base, c, ty.h, false),
        };
        RowsLayout { split, copied, work, exps, maxima: stats_at(work.end()), sums: stats_at(0) }
    }

    /// The first byte after every region.
    fn end(&self) -> u64 {
        [self.copied, self.work, self.exps, self.maxima, self.sums].iter().map(L2Region::end).max().unwrap_or(0)
    }
}

/// The statistics (one value per line, `lines` per group, `groups` groups) as their
/// readers see them: a packed row, or one 16-byte line per value.
pub(super) fn stats_region(base: u64, lines: u32, groups: u32, packed: bool) -> L2Region {
    let row = if packed { round_up(u64::from(lines) * 2, L2_GRANULE) } else { L2_GRANULE * u64::from(lines) };
    let channel = if packed { row } else { L2_GRANULE };
    L2Region { base, channel, row, plane: row, size: row * u64::from(groups.max(1)) }
}

/// The view a reduction step reduces: one row per channel (per group), or the rows as
/// channels when there is one channel; a split row as four rows of a quarter.
pub(super) fn reduction_view(x: &Surface, groups: u32, split: bool) -> Surface {
    let ty = x.ty;
    let (h, w) = if split { (SPLIT_ROWS, ty.w / SPLIT_ROWS) } else { (1, ty.w) };
    let view =
        if groups > 1 || ty.h == 1 { TensorType { n: groups, h, w, ..ty } } else { TensorType { c: ty.h, h, w, ..ty } };
    Surface { ty: view, ..*x }
}

/// A reduction step of x keeping its statistics in `stats`.
fn reduction(op: &Op, x: Surface, red: ReduceOp, packed: bool, groups: u32, split: bool, stats: L2Region) -> Task {
    let view = reduction_view(&x, groups, split);
    let out = TensorType { c: view.ty.c, h: 1, w: 1, ..view.ty };
    let mut t = Task::new(&op.name, Engine::Pe, vec![view], scratch(&out));
    t.pe = Some(PeOp { mode: red.code(), negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    t.reduce = Some(PeReduce { packed, split, ..PeReduce::new(red, 1.0) });
    t.l2_result = Some(standard(stats));
    t.pe_links = PeLinks { feeds_pe: true, fed_by_pe: false };
    t
}

/// Step 2: `(x - m)·log2 e` from x in `src` and the statistics in `stats` into `out`.
fn subtract(op: &Op, x: Surface, src: L2Region, stats: L2Region, flags: u32, out: L2Region, l: L2Link) -> Task {
    let mut t = Task::new(&op.name, Engine::Pe, vec![x], scratch(&x.ty));
    t.pe = Some(PeOp { mode: PE_ADD, negate: true, bias: 0, scale: log2_e(), abs: false, relu: false });
    (t.residency, t.l2_source, t.l2_link) = (SourceResidency::Resident, Some(standard(src)), Some(l));
    t.l2_operand = Some(L2Operand { vector: standard(stats), broadcast: flags });
    t.l2_result = Some(standard(out));
    t.pe_links = PeLinks { feeds_pe: false, fed_by_pe: true };
    t
}

/// Step 3: 2^t in place through the exp2 table (one table channel per NE the channels
/// use, at most 16).
fn exp2(op: &Op, x: Surface, region: L2Region, consts: &mut ConstSection) -> Task {
    let mut t = Task::new(&op.name, Engine::NePass, vec![x], scratch(&x.ty));
    let channels = x.ty.c.min(ne_count(x.ty.c));
    let table = consts.add_table(&activation::table(TableFn::Exp2), channels);
    t.kernel = vec![table; channels as usize];
    (t.nonlinear, t.table) = (Nonlinear::Table, Some(TableFn::Exp2));
    (t.residency, t.l2_source, t.l2_link) =
        (SourceResidency::Resident, Some(standard(region)), Some(link(false, false, 2)));
    t.l2_result = Some(standard(region));
    t
}

/// Step 5: `r·e` from the statistics (operand 1, broadcast) and e, written to `y`.
fn normalize(op: &Op, x: Surface, y: Surface, stats: L2Region, e: L2Region, flags: u32, l: L2Link) -> Task {
    let mut t = Task::new(&op.name, Engine::Pe, vec![x], y);
    t.pe = Some(PeOp { mode: PE_MUL, negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    (t.residency, t.l2_source, t.l2_link) = (SourceResidency::Resident, Some(standard(stats)), Some(l));
    t.l2_operand = Some(L2Operand { vector: standard(e), broadcast: flags });
    t.pe_links = PeLinks { feeds_pe: false, fed_by_pe: true };
    t
}
