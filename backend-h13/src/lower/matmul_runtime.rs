//! A matmul of two runtime tensors (`anec.matmul`: attention's Q·Kᵀ and P·V) as Apple's
//! current compiler runs it (`docs/rationale/current-compiler/matmul-runtime.md`): a 1x1
//! convolution whose kernel is the x side, streamed by the kernel DMA from a runtime
//! buffer, and whose source is the y side as `[k][n]` (K channels of N). The MIL lowering
//! gives x as `M x 1 x K` (rows as channels; `K x 1 x M` with `transpose_lhs`), y as
//! `K x 1 x N` (`N x 1 x K` with `transpose_rhs`) and the product as `M x 1 x N`.
//!
//! 1. **Plan** ([`plan`]): slices of `Mt` product rows, `Mt` the largest `16·2^O` (O ≤ 3)
//!    dividing M, `B = Mt/16` rows per NE (OCGSize O); an M that is not a multiple of 16
//!    (no Apple record) takes slices of 16 rows, the last one the rest, with B = 1.
//! 2. **Kernel** ([`copy`]): x written to the BAR-3 scratch in the kernel layout, the
//!    destination DMA interleaving B channels element by element (Fmt.Interleave = B); on
//!    the planar engine when there is one slice, else on the NE, and on the NE writing
//!    transposed when x is transposed. Nothing when B = 1, x is not transposed and its
//!    rows are whole 64-byte units: the kernel DMA streams x's own buffer (direct case),
//!    from x's offset in it (a multiple of 64 bytes: the arena of `buffers.rs` places
//!    values so).
//! 3. **Source** ([`transposer`]): with `transpose_rhs`, an NE pass writes yᵀ into L2 (K
//!    channels of N); in the direct case it stands for writing the scratch yᵀ (DPC) and
//!    the slices for reading it (SPC). Otherwise the slices read y from memory.
//! 4. **Slices** ([`slice`]), upper rows first: the convolution (Cin = K, Cout = the slice's
//!    rows, width N), kernel chunk i of NE i at `(r0/B + i)·kp`, kp = `ru(B·2K, 64)`, the
//!    header naming the task that wrote the kernel (TDE). A fused scalar gain/offset is
//!    the NE's post-scale and bias.
//!
//! A product whose one reader is the softmax after it, over W, stays in L2 where that
//! softmax's one-row plan takes its input ([`kept_products`], `chains.md` §2.7): the slices
//! keep their rows there (no destination DMA), and yᵀ and y's staging go after it.
//!
//! Refused, with the limit named: a batch (the plan runs one matrix), yᵀ and y beyond the
//! 1 MiB L2 together, a per-channel gain/offset (its streams would need `__const`).

use super::l2_chain::{hazard_aliases, link, standard};
use super::matmul::region;
use crate::affine::gain_offset;
use crate::buffers::{Buffers, KeptValue};
use crate::consts::ConstSection;
use crate::encode::l2::l2_use;
use crate::error::BackendError;
use crate::generation::Compat;
use crate::layout::{round_up, L2Region, Strides, L2_GRANULE};
use crate::task::{
    ConvGeom, Engine, KernelChunk, L2Form, L2Link, L2Vector, PeOp, RuntimeKernel, SourceResidency, Surface, Task, Token,
};
use crate::window::unsupported;
use anec_ir::{Attr, DType, Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;
use std::collections::BTreeMap;
use std::ops::Range;

/// NEs, one kernel chunk each.
const NES: u32 = 16;
/// The largest OCGSize of a slice (at most 128 rows: `matmul-runtime.md` §2).
const MAX_OCG: u32 = 3;
/// The kernel DMA's unit: a chunk starts and ends on it.
const KERNEL_UNIT: u64 = 64;
// The L2 yᵀ and y share (as the constant-weight matmul's regime A, `matmul.md` §1), and
// the NE's piece of a streamed source row (`encode::l2`).
use super::l2_chain::L2_BYTES;
use crate::encode::l2::NE_CHANNEL_CAP;
/// fp16 1.0: the identity scale of the planar-engine copy.
const ONE_F16: u16 = 0x3C00;

/// The matrices of one matmul: x is M x K, y K x N, each possibly transposed in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    m: u32,
    k: u32,
    n: u32,
    tx: bool,
    ty: bool,
}

/// How the matmul runs (step 1).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    shape: Shape,
    /// Rows per NE (B = 2^OCGSize).
    b: u32,
    /// OCGSize.
    ocg: u32,
    /// The product rows of each slice, in task order (upper slice first).
    slices: Vec<Range<u32>>,
    /// The kernel DMA streams x's own buffer (no copy task).
    direct: bool,
}

impl Plan {
    /// Bytes of one NE's kernel chunk: B rows of K, interleaved, padded to 64 bytes.
    fn chunk(&self) -> u64 {
        round_up(u64::from(self.b) * u64::from(self.shape.k) * 2, KERNEL_UNIT)
    }

    /// The copy runs on the planar engine (one slice, x not transposed), else on the NE.
    fn pe_copy(&self) -> bool {
        !self.shape.tx && self.slices.len() == 1
    }

    /// The scratch surface's type: the kernel (M/B chunks of B·K values) or, in the
    /// direct case with `transpose_rhs`, yᵀ (K x N) standing for the L2 hand-over.
    fn scratch(&self, dtype: DType) -> Option<TensorType> {
        let s = self.shape;
        let ty = |c: u32, w: u32| TensorType { n: 1, c, d: 1, h: 1, w, dtype };
        match (self.direct, s.ty) {
            (false, _) => Some(ty(s.m / self.b, self.b * s.k)),
            (true, true) => Some(ty(s.k, s.n)),
            (true, false) => None,
        }
    }
}

/// Step 1: slices and the kernel's source.
fn plan(shape: Shape, x: &Surface) -> Plan {
    let m = shape.m;
    let rows = if m.is_multiple_of(NES) {
        let mut rows = NES;
        while rows < NES << MAX_OCG && m.is_multiple_of(rows * 2) {
            rows *= 2;
        }
        rows
    } else {
        NES.min(m)
    };
    let b = rows.div_ceil(NES).max(1);
    let mut slices: Vec<Range<u32>> = (0..m).step_by(rows as usize).map(|r| r..(r + rows).min(m)).collect();
    slices.reverse();
    let row = u64::from(shape.k) * 2;
    let whole_rows = row.is_multiple_of(KERNEL_UNIT) && x.strides.plane == row && x.offset.is_multiple_of(KERNEL_UNIT);
    let direct = !shape.tx && b == 1 && whole_rows;
    Plan { shape, b, ocg: b.trailing_zeros(), slices, direct }
}

/// The shape of `op` from its operand types; a batch, a depth or several rows are
/// refused.
fn shape(op: &Op, x: &TensorType, y: &TensorType) -> Result<Shape, BackendError> {
    for (side, t) in [("x", x), ("y", y)] {
        if t.n > 1 || t.d > 1 || t.h > 1 {
            let reason = format!(
                "a matmul over a batch ({side} is {t}): Apple's plan runs one matrix per task and no batched record \
                 exists (matmul-runtime.md §6)"
            );
            return Err(unsupported(op, &reason));
        }
        if t.dtype != DType::F16 {
            return Err(unsupported(op, &format!("a runtime matmul of {} operands (fp16 only)", t.dtype)));
        }
    }
    let flag = |name: &str| op.attr(name).and_then(Attr::as_bool).unwrap_or(false);
    let (tx, ty) = (flag("transpose_lhs"), flag("transpose_rhs"));
    let (m, k) = if tx { (x.w, x.c) } else { (x.c, x.w) };
    let n = if ty { y.c } else { y.w };
    Ok(Shape { m, k, n, tx, ty })
}

/// The operand types of a matmul op of `m`.
fn operand_types(m: &Module, op: &Op) -> Option<(TensorType, TensorType)> {
    Some((*m.ty(*op.operands.first()?)?, *m.ty(*op.operands.get(1)?)?))
}

/// The scratch surface each runtime matmul of `m` needs (by layer name): the kernel, or
/// yᵀ's token in the direct case; with the layer of the op that writes the kernel when it
/// is not the matmul's own copy ([`kernel_from_producer`]).
pub fn scratch_types(m: &Module) -> BTreeMap<String, (TensorType, Option<String>)> {
    let mut out = BTreeMap::new();
    for op in m.ops.iter().filter(|op| op.opcode == OpCode::Matmul) {
        let Some(p) = plan_of(m, op) else { continue };
        let Some(ty) = p.scratch(x_dtype(m, op)) else { continue };
        let writer = kernel_from_producer(m, op).and_then(|_| Some(m.producer(*op.operands.first()?)?.name.clone()));
        out.insert(op.name.clone(), (ty, writer));
    }
    out
}

/// The element type of `op`'s x.
fn x_dtype(m: &Module, op: &Op) -> DType {
    operand_types(m, op).map_or(DType::F16, |(x, _)| x.dtype)
}

/// The plan of the matmul `op` from its operand types (x in a buffer of its own).
fn plan_of(m: &Module, op: &Op) -> Option<Plan> {
    let (x, y) = operand_types(m, op)?;
    let s = shape(op, &x, &y).ok()?;
    Some(plan(s, &Surface { bar: 0, ty: x, strides: Strides::of(&x, &Default::default()), offset: 0 }))
}

/// The runtime matmuls whose product stays in L2 for its one reader, the softmax of the
/// next group, when that softmax runs the one-row plan and reads it in place
/// (`chains.md` §2.7: Apple's attention keeps the scores at the softmax's work region,
/// the maximum reading them with no load step): the product and its place. The matmul's
/// own regions (yᵀ, y's staging) go after that place and must fit the L2 with it.
pub fn kept_products(m: &Module, groups: &[Group]) -> BTreeMap<ValueId, KeptValue> {
    let mut kept = BTreeMap::new();
    let uses = m.use_counts();
    for pair in groups.windows(2) {
        let (g, next) = (&pair[0], &pair[1]);
        let (Some(op), Some(reader)) = (m.ops.get(g.head), m.ops.get(next.head)) else { continue };
        let Some(&v) = m.ops.get(g.last()).and_then(|o| o.results.first()) else { continue };
        let lone = g.neuron.is_none() && g.swap.is_none() && next.goc.is_none() && next.neuron.is_none();
        let sole = uses.get(v.index()) == Some(&1) && !m.outputs.iter().any(|o| o.value == v);
        let reads = reader.operands.first() == Some(&v);
        if op.opcode != OpCode::Matmul || !lone || !sole || !reads {
            continue;
        }
        let (Some(region), Some(p)) = (super::softmax::kept_input(m, reader), plan_of(m, op)) else { continue };
        let fits = own_regions_end(&p, x_dtype(m, op), region.end()) <= L2_BYTES;
        if fits && apple_s_order(m, op, &p, region.end()) {
            // The softmax's first task, the maximum, reads it on the planar engine.
            let whole = p.slices.len() == 1;
            kept.insert(v, KeptValue { region, writer: Engine::NeConv, read_by: Engine::Pe, whole });
        }
    }
    kept
}

/// True when the matmul runs as in Apple's attention (`chains.md` §1.1): the copy of x
/// into the kernel layout, then the transposer of y, whose regions (from `base`) take the
/// copy's live staging, so that it waits for the copy and the slices keeping the product
/// below it find no planar-engine region still in use. Otherwise (no transposer, x read
/// directly or written by its producer, or a transposer clear of the copy: no record
/// shows what Apple does there) the product goes to memory.
fn apple_s_order(m: &Module, op: &Op, p: &Plan, base: u64) -> bool {
    let Some((x, y)) = operand_types(m, op) else { return false };
    if !p.shape.ty || p.direct || kernel_from_producer(m, op).is_some() {
        return false;
    }
    let surface =
        |ty: TensorType, bar: u8| Surface { bar, ty, strides: Strides::of(&ty, &Default::default()), offset: 0 };
    let Some(kernel) = p.scratch(x.dtype) else { return false };
    let mut tasks = vec![copy(op, p, surface(x, 1), surface(kernel, 1))];
    tasks.push(transposer(op, p, surface(y, 1), None, true, base));
    if hazard_aliases(&mut tasks, Compat::Current.data()).is_err() {
        return false;
    }
    tasks.last().and_then(|t| t.l2_aliases).is_some_and(|a| {
        let waits = |b: crate::task::AliasBits| b.planar_src || b.planar_result;
        waits(a.source) || waits(a.result)
    })
}

/// The end of the matmul's own L2 regions placed from `base`: yᵀ and y staged after it,
/// or y staged for the slices.
fn own_regions_end(p: &Plan, dtype: DType, base: u64) -> u64 {
    let s = p.shape;
    let channel = round_up(u64::from(s.n) * 2, L2_GRANULE).min(NE_CHANNEL_CAP);
    let y = match s.ty {
        true => round_up(u64::from(s.k) * 2, L2_GRANULE).min(NE_CHANNEL_CAP) * u64::from(s.n),
        false => channel * u64::from(s.k),
    };
    let y_t = if s.ty { y_t_region(p, dtype, 0).size } else { 0 };
    base + y_t + y
}

/// yᵀ as the slices read it: K channels of N.
fn y_t(p: &Plan, dtype: DType) -> TensorType {
    TensorType { n: 1, c: p.shape.k, d: 1, h: 1, w: p.shape.n, dtype }
}

/// yᵀ's place in L2 (at `base`: 0, or after a product kept below it), laid out for the
/// convolution reading it.
fn y_t_region(p: &Plan, dtype: DType, base: u64) -> L2Region {
    L2Region { base, ..region(&y_t(p, dtype)) }
}

/// yᵀ and y (as the transposer stages it) must fit the L2 together.
fn check_fits(op: &Op, p: &Plan, y: &Surface) -> Result<(), BackendError> {
    if !p.shape.ty {
        return Ok(());
    }
    let channel = round_up(u64::from(y.ty.w) * 2, L2_GRANULE).min(NE_CHANNEL_CAP);
    let need = y_t_region(p, y.ty.dtype, 0).size + channel * u64::from(y.ty.c);
    if need <= L2_BYTES {
        return Ok(());
    }
    let s = p.shape;
    let reason = format!(
        "y^T ({} x {}) kept in L2 and y staged for its transposition need {need:#x} bytes, more than the \
         {L2_BYTES:#x}-byte L2 (tiling the reduction is not implemented)",
        s.k, s.n
    );
    Err(unsupported(op, &reason))
}

/// Where the product goes: a memory surface, or L2 for its one reader.
#[derive(Debug, Clone, Copy)]
enum Product {
    Memory(Surface),
    Kept(KeptValue, TensorType),
}

/// Lowers `op` writing to `dest`, with a scalar gain/offset `goc` fused into its slices.
pub(super) fn lower(
    m: &Module,
    op: &Op,
    goc: Option<&Op>,
    bufs: &Buffers,
    dest: Surface,
    consts: &mut ConstSection,
) -> Result<Vec<Task>, BackendError> {
    lower_to(m, op, goc, bufs, Product::Memory(dest), consts)
}

/// The tasks of the group `g` when it is a runtime matmul whose product stays in L2 for
/// its reader ([`kept_products`]); `None` for any other group.
pub(super) fn lower_kept(
    m: &Module,
    g: &Group,
    bufs: &Buffers,
    consts: &mut ConstSection,
) -> Result<Option<Vec<Task>>, BackendError> {
    let Some(op) = m.ops.get(g.head).filter(|op| op.opcode == OpCode::Matmul) else { return Ok(None) };
    let Some(&v) = m.ops.get(g.last()).and_then(|o| o.results.first()) else { return Ok(None) };
    let (Some(&kept), Some(&ty)) = (bufs.kept_at.get(&v), m.ty(v)) else { return Ok(None) };
    let goc = g.goc.and_then(|i| m.ops.get(i));
    lower_to(m, op, goc, bufs, Product::Kept(kept, ty), consts).map(Some)
}

/// Lowers `op` writing its product to `out`, with a scalar gain/offset `goc` fused into
/// its slices.
fn lower_to(
    m: &Module,
    op: &Op,
    goc: Option<&Op>,
    bufs: &Buffers,
    out: Product,
    consts: &mut ConstSection,
) -> Result<Vec<Task>, BackendError> {
    let operand = |i: usize| {
        let v = op.operands.get(i).ok_or_else(|| BackendError::Internal(format!("'{}' lacks operand {i}", op.name)))?;
        bufs.surface(*v)
    };
    let (x, y) = (operand(0)?, operand(1)?);
    let p = plan(shape(op, &x.ty, &y.ty)?, &x);
    check_fits(op, &p, &y)?;
    let scratch = match p.scratch(x.ty.dtype) {
        Some(_) => Some(bufs.scratch.get(&op.name).copied().ok_or_else(|| {
            unsupported(op, "a runtime matmul needs the scratch buffer (BAR 3) of Apple's current compiler generation")
        })?),
        None => None,
    };
    let mut tasks = Vec::new();
    // The task before the recipe wrote the kernel (a softmax's last step), or the copy.
    let written = kernel_from_producer(m, op).is_some();
    // The kernel's buffer and where in it the kernel starts (the scratch may hold other
    // recipes' surfaces before it).
    let (kernel_bar, kernel_base) = match (p.direct, scratch) {
        (true, _) => (x.bar, x.offset),
        (false, Some(s)) => {
            if !written {
                tasks.push(copy(op, &p, x, s));
            }
            (s.bar, s.offset)
        }
        (false, None) => return Err(BackendError::Internal(format!("'{}': no kernel scratch", op.name))),
    };
    // The matmul's own regions go after a product kept for the reader (`chains.md` §4).
    let (dest, own_base) = match out {
        Product::Memory(d) => (d, 0),
        Product::Kept(k, ty) => (super::l2_chain::scratch(&ty), k.region.end()),
    };
    if p.shape.ty {
        let token = scratch.filter(|_| p.direct);
        tasks.push(transposer(op, &p, y, token, written || !tasks.is_empty(), own_base));
    }
    let affine = match goc {
        Some(g) => {
            let (affine, vectors) = gain_offset(m, g, p.shape.m, consts)?;
            if vectors.any() {
                return Err(unsupported(op, "a per-channel gain/offset fused into a runtime matmul (its streams would be read from the kernel's buffer)"));
            }
            affine
        }
        None => Default::default(),
    };
    let source = slice_source(&p, y, scratch);
    let links = SliceLinks { scratch, after_kernel_write: written, own_base };
    for (j, rows) in p.slices.iter().enumerate() {
        let at = tasks.len() as u32 + u32::from(written);
        let kernel = RuntimeKernel { bar: kernel_bar, producer_back: (!p.direct).then_some(at) };
        let mut t = slice(op, &p, rows.clone(), source, dest, kernel);
        t.kernel.iter_mut().for_each(|c| c.offset += kernel_base);
        if let Product::Kept(k, _) = out {
            t.l2_result = Some(standard(rows_of(k.region, rows.clone())));
            t.kept_for_pe = k.read_by == Engine::Pe;
        }
        link_slice(&mut t, &p, j, &links, tasks.last())?;
        t.affine = affine;
        tasks.push(t);
    }
    // The alias bits of what the tasks after the first write into L2 follow from the
    // regions of the tasks before (`matmul-runtime.md` §6). The recipe exists only in the
    // current generation (it needs its scratch buffer).
    hazard_aliases(&mut tasks, Compat::Current.data())?;
    Ok(tasks)
}

/// The part of the kept product `r` (rows as channels) a slice of `rows` writes.
fn rows_of(r: L2Region, rows: Range<u32>) -> L2Region {
    let count = u64::from(rows.end - rows.start);
    L2Region { base: r.base + u64::from(rows.start) * r.channel, size: count * r.channel, ..r }
}

/// B (rows per NE) of the runtime matmul `op` when the task that computes its x writes x
/// straight into the kernel layout instead of a copy task: x is a softmax over W (whose
/// last step is a planar-engine task) read by this matmul alone, and the kernel would be
/// copied by the planar engine (Apple's attention: the softmax's multiply writes P into
/// BAR 3 interleaved, `chains.md` §2.8).
pub(super) fn kernel_from_producer(m: &Module, op: &Op) -> Option<u32> {
    let &xv = op.operands.first()?;
    let producer = m.producer(xv)?;
    let softmax_over_w = producer.opcode == OpCode::Softmax
        && producer.attr("axis").and_then(anec_ir::Attr::as_str) == Some("width")
        && m.ty(xv).is_some_and(|t| t.w > 1);
    let sole = m.users(xv).count() == 1 && !m.outputs.iter().any(|o| o.value == xv);
    if op.opcode != OpCode::Matmul || !softmax_over_w || !sole {
        return None;
    }
    let p = plan_of(m, op)?;
    (!p.direct && p.pe_copy()).then_some(p.b)
}

/// Makes `t`, the last task of the op computing x of the runtime matmul `op`, write x
/// into the kernel layout of `op`'s scratch, B channels interleaved (as the copy would).
pub(super) fn write_kernel(m: &Module, t: &mut Task, op: &Op, bufs: &Buffers, b: u32) -> Result<(), BackendError> {
    let scratch = bufs.scratch.get(&op.name).copied();
    let scratch = scratch.ok_or_else(|| BackendError::Internal(format!("'{}': no kernel scratch", op.name)))?;
    let x = op.operands.first().and_then(|&v| m.ty(v)).copied().unwrap_or(t.dest.ty);
    t.dest = kernel_surface(x, scratch);
    t.kernel_write = Some(b);
    Ok(())
}

/// x (`M x K`, M channels) as the kernel in `scratch`.
fn kernel_surface(x: TensorType, scratch: Surface) -> Surface {
    Surface { ty: x, ..scratch }
}

/// Step 2: x (or xᵀ) to the scratch in the kernel layout, B channels interleaved.
fn copy(op: &Op, p: &Plan, x: Surface, scratch: Surface) -> Task {
    let ty = TensorType { c: p.shape.m, w: p.shape.k, ..x.ty };
    let dest = kernel_surface(ty, scratch);
    let engine = if p.pe_copy() { Engine::Pe } else { Engine::NePass };
    let mut t = Task::new(&op.name, engine, vec![x], dest);
    if engine == Engine::Pe {
        t.pe = Some(PeOp { mode: 0, negate: false, bias: 0, scale: ONE_F16, abs: false, relu: false });
    }
    // xᵀ (K channels of M) written with C and W swapped: M channels of K.
    t.transposed_write = p.shape.tx;
    t.kernel_write = Some(p.b);
    t.opens_section = false;
    t
}

/// Step 3: yᵀ into L2 (K channels of N) at `base`, standing for writing `token` in the
/// direct case.
fn transposer(op: &Op, p: &Plan, y: Surface, token: Option<Surface>, after_copy: bool, base: u64) -> Task {
    let mut t = Task::new(&op.name, Engine::NePass, vec![y], Surface { bar: 0, offset: 0, ..y });
    t.l2_result = Some(L2Vector { form: L2Form::Transposed, region: y_t_region(p, y.ty.dtype, base) });
    t.token = token.map(Token::Writes);
    t.opens_section = after_copy;
    t
}

/// The slices' source: y from memory (K channels of N), or yᵀ in L2 (its token's surface
/// in the direct case).
fn slice_source(p: &Plan, y: Surface, scratch: Option<Surface>) -> Surface {
    match (p.shape.ty, scratch.filter(|_| p.direct)) {
        (false, _) => y,
        (true, Some(token)) => token,
        (true, None) => {
            let ty = y_t(p, y.ty.dtype);
            Surface { bar: y.bar, ty, strides: Strides::of(&ty, &Default::default()), offset: 0 }
        }
    }
}

/// Step 4: the convolution of one slice of rows.
fn slice(op: &Op, p: &Plan, rows: Range<u32>, source: Surface, dest: Surface, kernel: RuntimeKernel) -> Task {
    let count = rows.len() as u32;
    let out = Surface {
        ty: TensorType { c: count, ..dest.ty },
        offset: dest.offset + u64::from(rows.start) * dest.strides.plane,
        ..dest
    };
    let mut t = Task::new(&op.name, Engine::NeConv, vec![source], out);
    t.conv = ConvGeom { ocg_size: p.ocg, ..ConvGeom::default() };
    let kp = p.chunk();
    let first = u64::from(rows.start / p.b);
    t.kernel =
        (0..count.div_ceil(p.b)).map(|i| KernelChunk { offset: (first + u64::from(i)) * kp, size: kp }).collect();
    t.kernel_fmt = Some(DType::F16);
    t.runtime_kernel = Some(kernel);
    t
}

/// What every slice's links depend on.
struct SliceLinks {
    /// The kernel's scratch surface (yᵀ's token in the direct case).
    scratch: Option<Surface>,
    /// The task before the recipe wrote the kernel (and ended its L2 section).
    after_kernel_write: bool,
    /// Where the matmul's own regions start (after a product kept below them).
    own_base: u64,
}

/// How slice `j` reads its source and follows the task before it.
fn link_slice(t: &mut Task, p: &Plan, j: usize, l: &SliceLinks, prev: Option<&Task>) -> Result<(), BackendError> {
    let several = p.slices.len() > 1;
    if p.shape.ty {
        t.residency = SourceResidency::Resident;
        let y_t = y_t_region(p, t.dest.ty.dtype, l.own_base);
        t.l2_source = Some(L2Vector { form: L2Form::Transposed, region: y_t });
        match (p.direct, j, prev) {
            // Reads yᵀ where the transposer left it: Dependent on it when its result does
            // not overwrite y's staging (`chains.md` §3), else aliasing its result (0x120).
            (false, 0, Some(q)) => {
                if !overwrites_source(t, q)? {
                    t.l2_link = Some(link(false, false, DEPENDENT_NE));
                }
            }
            (false, 0, None) => {}
            (false, _, _) => t.l2_link = Some(L2Link::default()),
            (true, _, _) => {
                t.l2_link = Some(L2Link { conv_result: j == 0, dma_fmt: true, ..L2Link::default() });
                t.token = l.scratch.map(Token::Reads);
            }
        }
        return Ok(());
    }
    t.residency = match (several, j) {
        (false, _) => SourceResidency::Load,
        (true, 0) => SourceResidency::LoadAndKeep,
        (true, _) => SourceResidency::Resident,
    };
    if let (true, Some(_), Some(y)) = (several, t.l2_result, t.sources.first()) {
        // The slices keep their rows at different places: y is staged once, after them.
        let staged = crate::encode::l2::source_region(t, y, l.own_base, Compat::Current.data());
        t.l2_source = Some(standard(staged));
    }
    // The first slice after the kernel's writer opens the section the writer closed.
    t.opens_section = j == 0 && (l.after_kernel_write || prev.is_some_and(|q| q.kernel_write.is_some()));
    Ok(())
}

/// SourceCfg.Dependent naming the NE as the producer.
const DEPENDENT_NE: u8 = 1;

/// True when `t`'s result overlaps what `prev` loaded into L2.
fn overwrites_source(t: &Task, prev: &Task) -> Result<bool, BackendError> {
    let gen = Compat::Current.data();
    let (ours, theirs) = (l2_use(t, gen)?, l2_use(prev, gen)?);
    Ok(theirs.loaded.iter().any(|r| r.start < ours.result.end && ours.result.start < r.end))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn x_surface(c: u32, w: u32) -> Surface {
        let ty = TensorType { n: 1, c, d: 1, h: 1, w, dtype: DType::F16 };
        Surface { bar: 5, ty, strides: Strides::of(&ty, &Default::default()), offset: 0 }
    }

    fn plan_of(m: u32, k: u32, n: u32, tx: bool) -> Plan {
        let x = if tx { x_surface(k, m) } else { x_surface(m, k) };
        plan(Shape { m, k, n, tx, ty: false }, &x)
    }

    #[test]
    fn slices_are_apple_s_rows_upper_first() {
        let rows = |m| plan_of(m, 64, 64, false).slices;
        assert_eq!(rows(64), vec![0..64]);
        assert_eq!(rows(256), vec![128..256, 0..128]);
        assert_eq!(rows(96), vec![64..96, 32..64, 0..32]);
        assert_eq!(plan_of(96, 64, 64, false).b, 2);
        // Not a multiple of 16: slices of 16, B = 1.
        assert_eq!(rows(40), vec![32..40, 16..32, 0..16]);
        assert_eq!(rows(5), vec![0..5]);
    }

    #[test]
    fn x_is_read_directly_only_with_one_row_per_ne_and_whole_rows() {
        assert!(plan_of(16, 64, 64, false).direct);
        assert!(!plan_of(16, 64, 64, true).direct);
        assert!(!plan_of(16, 24, 64, false).direct);
        assert!(!plan_of(64, 64, 64, false).direct);
        assert_eq!(plan_of(128, 64, 64, false).chunk(), 0x400);
    }

    /// `softmax(matmul(q, k, transpose_rhs), width)` of `s x d` matrices, the softmax's
    /// result the output.
    fn scores_then_softmax(s: u32, d: u32) -> (Module, Vec<Group>) {
        use anec_ir::{Location, Port};
        let ty = |c, w| TensorType { n: 1, c, d: 1, h: 1, w, dtype: DType::F16 };
        let mut m = Module::new("net");
        let port =
            |name: &str, value| Port { name: name.into(), value, layout: Default::default(), loc: Location::default() };
        let (q, k) = (m.add_value(ty(s, d)), m.add_value(ty(s, d)));
        m.inputs.extend([port("q", q), port("k", k)]);
        let (scores, p) = (m.add_value(ty(s, s)), m.add_value(ty(s, s)));
        let op = |opcode, name: &str, operands, result, attrs: Vec<(&str, Attr)>| Op {
            opcode,
            name: name.into(),
            operands,
            results: vec![result],
            attrs: attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            loc: Location::default(),
        };
        m.ops.push(op(OpCode::Matmul, "mm", vec![q, k], scores, vec![("transpose_rhs", Attr::Bool(true))]));
        m.ops.push(op(OpCode::Softmax, "sm", vec![scores], p, vec![("axis", Attr::Str("width".into()))]));
        m.outputs.push(port("p@output", p));
        let group = |head| Group { head, goc: None, neuron: None, swap: None };
        (m, vec![group(0), group(1)])
    }

    #[test]
    fn scores_stay_at_the_softmax_s_work_region_in_apple_s_order_only() {
        // Attention's 64 x 64: after the packed statistics (0x80), one row of 64 channels
        // of 0x80; one slice writes it whole.
        let (m, groups) = scores_then_softmax(64, 64);
        let kept: Vec<KeptValue> = kept_products(&m, &groups).into_values().collect();
        let region = L2Region { base: 0x80, channel: 0x80, row: 0x2000, plane: 0x2000, size: 0x2000 };
        assert_eq!(kept, vec![KeptValue { region, writer: Engine::NeConv, read_by: Engine::Pe, whole: true }]);
        // 128 x 64: kᵀ after the 0x8000-byte scores is clear of the copy's staging, an
        // order no record shows: through memory.
        let (m, groups) = scores_then_softmax(128, 64);
        assert!(kept_products(&m, &groups).is_empty());
        // A product that is also an output stays in memory.
        let (mut m, groups) = scores_then_softmax(64, 64);
        let scores = m.ops[0].results[0];
        m.outputs.push(anec_ir::Port {
            name: "s@output".into(),
            value: scores,
            layout: Default::default(),
            loc: Default::default(),
        });
        assert!(kept_products(&m, &groups).is_empty());
    }
}
