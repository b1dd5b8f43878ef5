//! Buffer binding: which tensors get an `__FVMLIB` segment and which BAR each uses.
//!
//! BAR 0 is `__text`, 1 is `__const`. The numbering of the rest follows the compiler
//! generation ([`BarOrder`]): v4.2.1 puts outputs from 4, then inputs, each group in the
//! order the network lists it, and the first intermediate in BAR 3, the second in BAR 2;
//! the current compiler numbers inputs and outputs together by name from 4 and keeps
//! intermediates in BAR 3. Intermediates beyond the reserved BARs take the BARs after the
//! inputs and outputs. Segments are laid out inputs first, then outputs, then
//! intermediates.

use crate::error::BackendError;
use crate::generation::BarOrder;
use crate::layout::{L2Region, Strides};
use crate::task::{Engine, L2Form, Surface};
use anec_codegen::hwx::model::{BoundTensor, TensorRole};
use anec_ir::{DType, Layout, Module, ValueId};
use anec_passes::plan::{pack, Interval, Liveness, Packer, Schedule};
use anec_passes::Group;
use std::collections::BTreeMap;

/// Number of BARs a TD can name.
pub const BAR_COUNT: usize = 32;
/// First BAR of outputs.
const FIRST_OUTPUT_BAR: usize = 4;
/// BARs reserved for intermediates, in the order used (eiln/anecc places the one
/// intermediate buffer of v4.2.1 programs at BAR 3; the current compiler's scratch is BAR 3).
fn intermediate_bars(order: BarOrder) -> &'static [usize] {
    match order {
        BarOrder::OutputsThenInputs => &[3, 2],
        BarOrder::SortedByName => &[3],
    }
}

/// The BAR of each input, then of each output.
fn io_bars(m: &Module, order: BarOrder) -> (Vec<usize>, Vec<usize>) {
    let (ni, no) = (m.inputs.len(), m.outputs.len());
    match order {
        BarOrder::OutputsThenInputs => (
            (FIRST_OUTPUT_BAR + no..FIRST_OUTPUT_BAR + no + ni).collect(),
            (FIRST_OUTPUT_BAR..FIRST_OUTPUT_BAR + no).collect(),
        ),
        BarOrder::SortedByName => {
            let base = |n: &str| n.strip_suffix("@output").unwrap_or(n).to_string();
            let mut names: Vec<(String, usize)> =
                m.inputs.iter().map(|p| base(&p.name)).enumerate().map(|(i, n)| (n, i)).collect();
            names.extend(m.outputs.iter().map(|p| base(&p.name)).enumerate().map(|(i, n)| (n, ni + i)));
            names.sort();
            let mut bars = vec![0; ni + no];
            for (rank, (_, k)) in names.iter().enumerate() {
                bars[*k] = FIRST_OUTPUT_BAR + rank;
            }
            let outputs = bars.split_off(ni);
            (bars, outputs)
        }
    }
}
/// Element type code of a tensor in the thread state and the stabs strings: the stabs
/// type number of the element type in the catalog every v4.2.1 file carries
/// (`int8:t2`, `uint8:t3`, `float16:t5`). Only fp16 (5) is seen on a bound tensor in the
/// reference files; the 8-bit codes follow the same catalog (inferred).
fn dtype_code(dtype: DType) -> Option<u32> {
    match dtype {
        DType::F16 => Some(5),
        DType::U8 => Some(3),
        DType::I8 => Some(2),
        DType::F32 => None,
    }
}

/// Every bound tensor and the surface of every value.
#[derive(Debug, Clone, Default)]
pub struct Buffers {
    /// Bound tensors in segment order.
    pub tensors: Vec<BoundTensor>,
    /// The surface of each value that lives in a buffer.
    pub surfaces: BTreeMap<ValueId, Surface>,
    /// Values that stay in L2 between two tasks (no buffer), with their layout there.
    pub kept: BTreeMap<ValueId, L2Form>,
    /// Values kept in L2 at the place their reader's recipe gives its input (no buffer;
    /// `lower::kept_values`): where, and how they are written.
    pub kept_at: BTreeMap<ValueId, KeptValue>,
    /// Values whose memory buffer interleaves 8 channels element by element (a regime-B
    /// matmul's x^T, `lower::matmul_dram`).
    pub interleaved: std::collections::BTreeSet<ValueId>,
    /// Scratch surfaces by layer: memory a recipe declares between two of its tasks whose
    /// data stays in L2 (Apple's dependency token, BAR 3).
    pub scratch: BTreeMap<String, Surface>,
    /// Outputs that are an input or another output: (output name, from, to), each a copy
    /// task after the network's tasks.
    pub copies: Vec<(String, Surface, Surface)>,
    /// Every intermediate given memory, in the order it was placed (`anec dump --plan`).
    pub plan: Vec<PlannedValue>,
    /// Order of the per-tensor thread states (indices into `tensors`): inputs sorted by
    /// name, then outputs and intermediates in segment order. Apple's sum.hwx binds
    /// `image2, image` (the Inputs order) but writes the states as `image, image2`.
    pub state_order: Vec<usize>,
}

/// A value its producer keeps in L2 for its one reader, at the region the reader's
/// recipe takes its input from (`chains.md` §4: the handed-over value takes the place the
/// reader's layout gives it; the producer puts its own regions after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptValue {
    /// Where the value lies.
    pub region: L2Region,
    /// The engine of the tasks that write it.
    pub writer: Engine,
    /// The engine of the task that reads it.
    pub read_by: Engine,
    /// One task, the one just before the reader, writes it whole, in the reader's shape
    /// (the reader's SourceCfg.Dependent names the writer's engine, `chains.md` §3).
    pub whole: bool,
}

/// An intermediate's place in memory and its lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedValue {
    /// The value.
    pub value: ValueId,
    /// The layer that writes it.
    pub layer: String,
    /// Where it lies.
    pub surface: Surface,
    /// Its writer's and last reader's groups (positions in the schedule).
    pub live: Interval,
}

/// A scratch surface a recipe declares: its type, and the groups (by index) from the one
/// that first writes it to the one that last reads it. Surfaces whose groups do not
/// overlap share the scratch's bytes (Apple's attention writes P's kernel over q's,
/// `chains.md` §1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchNeed {
    /// The surface's type.
    pub ty: anec_ir::TensorType,
    /// The groups from its first writer to its last reader.
    pub live: std::ops::RangeInclusive<usize>,
}

impl Buffers {
    /// The surface of a value.
    pub fn surface(&self, v: ValueId) -> Result<Surface, BackendError> {
        self.surfaces.get(&v).copied().ok_or_else(|| BackendError::Internal(format!("value %{} has no buffer", v.0)))
    }
}

fn bound(
    m: &Module,
    name: &str,
    v: ValueId,
    layout: &Layout,
    role: TensorRole,
    bar: usize,
) -> Result<(BoundTensor, Surface), BackendError> {
    let ty = *m.ty(v).ok_or_else(|| BackendError::Internal(format!("no type for %{}", v.0)))?;
    bound_type(name, ty, layout, role, bar)
}

/// A bound tensor of `ty` in BAR `bar` and its surface.
fn bound_type(
    name: &str,
    ty: anec_ir::TensorType,
    layout: &Layout,
    role: TensorRole,
    bar: usize,
) -> Result<(BoundTensor, Surface), BackendError> {
    let Some(code) = dtype_code(ty.dtype) else {
        return Err(BackendError::Unsupported {
            line: 0,
            layer: name.to_string(),
            op: "tensor".into(),
            reason: format!("{} tensors cannot be bound on h13g (fp16, u8, i8 only)", ty.dtype),
        });
    };
    if bar >= BAR_COUNT {
        return Err(BackendError::Unsupported {
            line: 0,
            layer: name.to_string(),
            op: "tensor".into(),
            reason: format!("more than {BAR_COUNT} buffers"),
        });
    }
    let s = Strides::of(&ty, layout);
    let elem = ty.dtype.size() as u64;
    let t = BoundTensor {
        name: name.to_string(),
        role,
        bar: bar as u8,
        dtype_code: code,
        dims: [ty.n, ty.c, ty.h, ty.w, ty.d].map(u64::from),
        strides: [s.batch, s.plane, s.row, elem, s.depth],
        section_size: s.buffer_size(&ty),
        state_size: if role == TensorRole::Output { s.extent(&ty) } else { s.buffer_size(&ty) },
    };
    Ok((t, Surface { bar: bar as u8, ty, strides: s, offset: 0 }))
}

/// Binds every input, output and intermediate value of `m`; only the result of each
/// group's last op lives in memory (fused results stay inside the engine, the values of
/// `kept` in L2).
pub fn bind(
    m: &Module,
    groups: &[Group],
    order: BarOrder,
    kept: &BTreeMap<ValueId, L2Form>,
    scratch: &BTreeMap<String, ScratchNeed>,
) -> Result<Buffers, BackendError> {
    let mut b = Buffers { kept: kept.clone(), ..Buffers::default() };
    let (in_bars, out_bars) = io_bars(m, order);
    let next_bar = FIRST_OUTPUT_BAR + m.inputs.len() + m.outputs.len();
    for (p, &bar) in m.inputs.iter().zip(&in_bars) {
        let (t, s) = bound(m, &p.name, p.value, &p.layout, TensorRole::Input, bar)?;
        b.tensors.push(t);
        b.surfaces.insert(p.value, s);
    }
    for (p, &bar) in m.outputs.iter().zip(&out_bars) {
        let (t, s) = bound(m, &p.name, p.value, &p.layout, TensorRole::Output, bar)?;
        b.tensors.push(t);
        // An output that is an input or another output gets its own buffer and a copy.
        match b.surfaces.get(&p.value) {
            Some(&from) => b.copies.push((p.name.clone(), from, s)),
            None => {
                b.surfaces.insert(p.value, s);
            }
        }
    }
    bind_output_views(m, &mut b)?;
    let mut reserved = intermediate_bars(order).iter().copied();
    let mut next_bar = next_bar;
    if !scratch.is_empty() {
        let bar = reserved.next().unwrap_or_else(|| {
            next_bar += 1;
            next_bar - 1
        });
        bind_scratch(&mut b, scratch, bar)?;
    }
    let rest: Vec<usize> = reserved.collect();
    bind_intermediates(m, groups, &mut b, next_bar, &rest)?;
    b.state_order = state_order(&b.tensors, m.inputs.len());
    Ok(b)
}

/// The scratch surfaces of the recipes, all in BAR `bar` (Apple's scratch, BAR 3): one
/// surface alone is the BAR's tensor; several share one scratch tensor, each at the first
/// 64-byte-aligned offset no surface alive in one of its groups uses ([`place_scratch`]).
fn bind_scratch(b: &mut Buffers, scratch: &BTreeMap<String, ScratchNeed>, bar: usize) -> Result<(), BackendError> {
    if let [(layer, need)] = scratch.iter().collect::<Vec<_>>().as_slice() {
        let (t, s) =
            bound_type(&format!("{layer}@scratch"), need.ty, &Layout::default(), TensorRole::Intermediate, bar)?;
        b.tensors.push(t);
        b.scratch.insert((*layer).clone(), s);
        return Ok(());
    }
    let placed = place_scratch(scratch);
    let mut used = 0u64;
    for (layer, offset) in placed {
        let Some(need) = scratch.get(&layer) else { continue };
        let strides = Strides::of(&need.ty, &Layout::default());
        used = used.max(offset + strides.buffer_size(&need.ty));
        b.scratch.insert(layer, Surface { bar: bar as u8, ty: need.ty, strides, offset });
    }
    let w = u32::try_from(used.div_ceil(ARENA_ALIGN) * ARENA_ALIGN / 2).unwrap_or(u32::MAX);
    let ty = anec_ir::TensorType::nchw(1, 1, 1, w, DType::F16);
    let (t, _) = bound_type("recipes@scratch", ty, &Layout::default(), TensorRole::Intermediate, bar)?;
    b.tensors.push(t);
    Ok(())
}

/// The offset of each scratch surface (`plan::pack`: first fit in the order of their
/// first groups, then by layer): a surface whose last reader ran before another's first
/// writer leaves its bytes to it.
fn place_scratch(scratch: &BTreeMap<String, ScratchNeed>) -> Vec<(String, u64)> {
    let values: Vec<(u64, Interval)> = scratch
        .values()
        .map(|need| {
            let size = Strides::of(&need.ty, &Layout::default()).buffer_size(&need.ty);
            (size, Interval { first: *need.live.start(), last: *need.live.end() })
        })
        .collect();
    let (placed, _) = pack(&values, ARENA_ALIGN);
    scratch.keys().cloned().zip(placed.iter().map(|p| p.offset)).collect()
}

fn bind_intermediates(
    m: &Module,
    groups: &[Group],
    b: &mut Buffers,
    next_bar: usize,
    reserved: &[usize],
) -> Result<(), BackendError> {
    let schedule = Schedule::of(m, groups).map_err(|e| BackendError::Internal(e.to_string()))?;
    let live = Liveness::of(m, groups, &schedule);
    let mut bars = Bars::new(reserved, next_bar);
    for op in groups.iter().filter_map(|g| m.ops.get(g.last())) {
        if op.results.first().is_some_and(|&r| is_constant(m, r)) {
            // In `__const` (`lower::constant::place`).
            continue;
        }
        if let Some((&r, view)) = op.results.first().zip(reshape_view(m, op, b)?) {
            b.surfaces.entry(r).or_insert(view);
            continue;
        }
        for &r in &op.results {
            if b.surfaces.contains_key(&r) || b.kept.contains_key(&r) {
                continue;
            }
            let ty = *m.ty(r).ok_or_else(|| BackendError::Internal(format!("no type for %{}", r.0)))?;
            let life = live.of_value(r).unwrap_or(Interval { first: 0, last: groups.len() });
            let s = match bars.own() {
                Some(bar) => {
                    let (t, s) = bound_type(&op.name, ty, &Layout::default(), TensorRole::Intermediate, bar)?;
                    b.tensors.push(t);
                    s
                }
                None => bars.in_arena(ty, life),
            };
            b.surfaces.insert(r, s);
            b.plan.push(PlannedValue { value: r, layer: op.name.clone(), surface: s, live: life });
        }
    }
    if let Some((bar, size)) = bars.arena() {
        // One fp16 row of the arena's bytes.
        let ty = anec_ir::TensorType::nchw(1, 1, 1, u32::try_from(size / 2).unwrap_or(u32::MAX), DType::F16);
        let (t, _) = bound_type("intermediates@arena", ty, &Layout::default(), TensorRole::Intermediate, bar)?;
        b.tensors.push(t);
    }
    Ok(())
}

/// The BARs intermediates take: each reserved BAR holds one value of its own (Apple's
/// scratch BAR 3; v4.2.1's BARs 3 and 2); every other intermediate lives in one arena,
/// the BAR after the inputs and outputs, at an offset `plan::Packer` gives it by
/// liveness: a value whose last reader has run leaves its bytes to later values, so the
/// arena holds the tensors alive at once, however deep the network (64-byte aligned: the
/// tile DMA's base unit).
struct Bars<'a> {
    reserved: std::slice::Iter<'a, usize>,
    arena_bar: usize,
    arena: Option<Packer>,
}

/// Alignment of a value in the arena.
const ARENA_ALIGN: u64 = 64;

impl<'a> Bars<'a> {
    fn new(reserved: &'a [usize], next: usize) -> Self {
        Bars { reserved: reserved.iter(), arena_bar: next, arena: None }
    }

    /// The next reserved BAR, or `None` once they are taken.
    fn own(&mut self) -> Option<usize> {
        self.reserved.next().copied()
    }

    /// A surface of `ty` alive over `live` in the arena.
    fn in_arena(&mut self, ty: anec_ir::TensorType, live: Interval) -> Surface {
        let strides = Strides::of(&ty, &Layout::default());
        let packer = self.arena.get_or_insert_with(|| Packer::new(ARENA_ALIGN));
        let placed = packer.place(strides.buffer_size(&ty), live);
        Surface { bar: self.arena_bar as u8, ty, strides, offset: placed.offset }
    }

    /// The arena's BAR and bytes, if one was used.
    fn arena(&self) -> Option<(usize, u64)> {
        self.arena.as_ref().map(|p| (self.arena_bar, p.size()))
    }
}

/// The surface of a reshape's result as a view of its operand's buffer (no task), if the
/// op is a reshape whose operand is bound: the same bytes read in the new shape.
fn reshape_view(m: &Module, op: &anec_ir::Op, b: &Buffers) -> Result<Option<Surface>, BackendError> {
    if op.opcode != anec_ir::OpCode::Reshape {
        return Ok(None);
    }
    let (Some(&x), Some(&r)) = (op.operands.first(), op.results.first()) else { return Ok(None) };
    let Some(ty) = m.ty(r) else { return Ok(None) };
    if b.kept.contains_key(&r) {
        // A view of a value kept in L2 (`lower::matmul_source`): no buffer either.
        return Ok(None);
    }
    if m.ty(x).is_some_and(|from| reshape_is_swap(from, ty)) {
        // A task writes it (`lower::movement`): a buffer of its own.
        return Ok(None);
    }
    let Some(src) = b.surfaces.get(&x) else {
        return Err(BackendError::Unsupported {
            line: op.loc.line,
            layer: op.name.clone(),
            op: op.opcode.to_string(),
            reason: "a reshape of a value kept in L2 between two tasks (a view needs the value in memory)".into(),
        });
    };
    view(src, *ty).map(Some).ok_or_else(|| not_a_view(op, &src.ty, ty))
}

/// Binds the operand of a reshape whose result is a module output to a view of the output
/// buffer (the producer writes the output directly); last reshape first, so that a chain
/// of reshapes into an output is a chain of views.
fn bind_output_views(m: &Module, b: &mut Buffers) -> Result<(), BackendError> {
    for op in m.ops.iter().rev().filter(|op| op.opcode == anec_ir::OpCode::Reshape) {
        let (Some(&x), Some(&r)) = (op.operands.first(), op.results.first()) else { continue };
        let is_input = m.inputs.iter().any(|p| p.value == x);
        let (Some(out), Some(ty)) = (b.surfaces.get(&r).copied(), m.ty(x)) else { continue };
        if reshape_is_swap(ty, &out.ty) {
            continue;
        }
        let s = view(&out, *ty).ok_or_else(|| not_a_view(op, ty, &out.ty))?;
        match b.surfaces.get(&x) {
            // Input and output are separate buffers: the output gets a copy of the input
            // read in its shape.
            Some(&from) if is_input || b.surfaces.contains_key(&x) => {
                let read = view(&from, out.ty).ok_or_else(|| not_a_view(op, ty, &out.ty))?;
                b.copies.push((op.name.clone(), read, out));
            }
            _ => {
                b.surfaces.insert(x, s);
            }
        }
    }
    Ok(())
}

/// `s`'s bytes read as `ty`, when the element order and every row's place agree: the same
/// row width, or rows without padding on both sides; `s` packs its rows, planes and
/// depth slices one after the other (the default layout); and channels and depth slices
/// are not regrouped while both exceed 1 (their order in memory is the reverse of a
/// reshape's).
pub fn view(s: &Surface, ty: anec_ir::TensorType) -> Option<Surface> {
    if s.ty == ty {
        return Some(*s);
    }
    let elems = |t: &anec_ir::TensorType| [t.n, t.c, t.d, t.h, t.w].iter().map(|&v| u64::from(v)).product::<u64>();
    let dense_rows = |t: &anec_ir::TensorType| (u64::from(t.w) * t.dtype.size() as u64).is_multiple_of(64);
    let st = s.strides;
    // (The row stride of a one-row surface is not read: a view may hold any there.)
    let uniform = (s.ty.h <= 1 || st.plane == st.row * u64::from(s.ty.h))
        && st.depth == st.plane * u64::from(s.ty.c)
        && (s.ty.n <= 1 || st.batch == st.depth * u64::from(s.ty.d));
    let rows_agree = s.ty.w == ty.w || (dense_rows(&s.ty) && dense_rows(&ty));
    // A reshape orders elements N, C, D, H, W; the layout stores depth slices outside the
    // channels (N, D, C, H, W): the two agree when C or D is 1 on both sides, or when
    // neither changes.
    let unmixed = |t: &anec_ir::TensorType| t.c <= 1 || t.d <= 1;
    let same_cd = s.ty.c == ty.c && s.ty.d == ty.d;
    let ok = elems(&s.ty) == elems(&ty)
        && s.ty.dtype == ty.dtype
        && uniform
        && rows_agree
        && (same_cd || (unmixed(&s.ty) && unmixed(&ty)));
    ok.then(|| Surface { ty, strides: view_strides(s, &ty), ..*s })
}

/// The strides of `s` read as `ty`: rows of one channel read as channels of one row keep
/// their strides exchanged (Apple's views of `[1, 1, 64, 512]` as 64 channels: channel
/// stride one row, row stride the whole plane; `matmul_*`, `chain_base_layer_norm_*`);
/// anything else, the default layout of `ty`.
fn view_strides(s: &Surface, ty: &anec_ir::TensorType) -> Strides {
    let rows_as_channels = s.ty.c == 1 && ty.h == 1 && ty.c == s.ty.h && ty.w == s.ty.w && ty.d == s.ty.d;
    match rows_as_channels && s.ty.h > 1 {
        true => Strides { plane: s.strides.row, row: s.strides.plane, ..s.strides },
        false => Strides::of(ty, &Layout::default()),
    }
}

/// Whether the reshape `op` of `m` is a view when both sides have the default layout
/// (what `anec check` reports for a reshape, which a probe of the op alone cannot judge:
/// alone its operand is an input and its result an output).
pub fn reshape_is_view(m: &Module, op: &anec_ir::Op) -> Result<(), BackendError> {
    let (Some(x), Some(r)) = (op.operands.first().and_then(|&v| m.ty(v)), op.results.first().and_then(|&v| m.ty(v)))
    else {
        return Ok(());
    };
    if reshape_is_swap(x, r) {
        return Ok(());
    }
    let s = Surface { bar: 0, ty: *x, strides: Strides::of(x, &Layout::default()), offset: 0 };
    view(&s, *r).map(drop).ok_or_else(|| not_a_view(op, x, r))
}

/// True for the value of an `anec.constant`, or a reshape of one.
pub fn is_constant(m: &Module, v: ValueId) -> bool {
    match m.producer(v) {
        Some(op) if op.opcode == anec_ir::OpCode::Constant => true,
        Some(op) if op.opcode == anec_ir::OpCode::Reshape => op.operands.first().is_some_and(|&x| is_constant(m, x)),
        _ => false,
    }
}

/// True for a reshape between a vector along W (`[1, 1, 1, 1, n]`) and one along C or H
/// (`[1, n, 1, 1, 1]`, `[1, 1, 1, n, 1]`): not a view (each element of the latter is a row
/// of its own), but the NE writes it with C and W swapped, one task (a vector along H read
/// as one along C).
pub fn reshape_is_swap(from: &anec_ir::TensorType, to: &anec_ir::TensorType) -> bool {
    let along_w = |t: &anec_ir::TensorType| t.n == 1 && t.d == 1 && t.c == 1 && t.h == 1;
    let across = |t: &anec_ir::TensorType| t.n == 1 && t.d == 1 && t.w == 1 && (t.c == 1 || t.h == 1);
    let n = |t: &anec_ir::TensorType| t.c * t.h * t.w;
    let crosses = (along_w(from) && across(to)) || (across(from) && along_w(to));
    crosses && n(from) == n(to) && n(from) > 1 && from.dtype == to.dtype
}

fn not_a_view(op: &anec_ir::Op, from: &anec_ir::TensorType, to: &anec_ir::TensorType) -> BackendError {
    let mixed = |t: &anec_ir::TensorType| t.c > 1 && t.d > 1;
    let why = if (from.c != to.c || from.d != to.d) && (mixed(from) || mixed(to)) {
        "regroups channels and depth slices (memory holds the depth slices outside the channels)"
    } else {
        "moves rows in memory (a row width changes and a row is not a whole number of 64 bytes)"
    };
    BackendError::Unsupported {
        line: op.loc.line,
        layer: op.name.clone(),
        op: op.opcode.to_string(),
        reason: format!("reshape {from} -> {to} {why}; such a reshape needs a copy task, not supported yet"),
    }
}

fn state_order(tensors: &[BoundTensor], inputs: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..inputs).collect();
    order.sort_by(|&a, &b| tensors[a].name.cmp(&tensors[b].name));
    order.extend(inputs..tensors.len());
    order
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Attr, Location, Op, OpCode, Port, TensorType};

    /// `x -> relu -> relu -> ... -> y`, `n` ReLUs of `1 x 3 x 4 x 5`.
    fn chain(n: usize) -> (Module, Vec<Group>) {
        let ty = TensorType::nchw(1, 3, 4, 5, DType::F16);
        let mut m = Module::new("net");
        let port =
            |name: &str, value| Port { name: name.into(), value, layout: Default::default(), loc: Location::default() };
        let mut cur = m.add_value(ty);
        m.inputs.push(port("x", cur));
        for i in 0..n {
            let r = m.add_value(ty);
            let attrs = [("mode".to_string(), Attr::Str("relu".into()))].into_iter().collect();
            m.ops.push(Op {
                opcode: OpCode::Neuron,
                name: format!("r{i}"),
                operands: vec![cur],
                results: vec![r],
                attrs,
                loc: Location::default(),
            });
            cur = r;
        }
        m.outputs.push(port("y@output", cur));
        let groups = (0..n).map(|head| Group { head, goc: None, neuron: None, swap: None }).collect();
        (m, groups)
    }

    /// The arena's surfaces, by value.
    fn arena(b: &Buffers, bar: usize) -> Vec<Surface> {
        b.surfaces.values().filter(|s| usize::from(s.bar) == bar).copied().collect()
    }

    #[test]
    fn a_deep_chain_keeps_two_intermediates_alive_and_reuses_their_bytes() {
        let (m, groups) = chain(64);
        let b = bind(&m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
        // x and y take BARs 4 and 5; the first intermediate BAR 3, the other 62 the arena
        // after them, alternating between two places (each read by the next layer only).
        let size = Strides::of(&m.ty(m.ops[0].results[0]).copied().unwrap(), &Layout::default())
            .buffer_size(m.ty(m.ops[0].results[0]).unwrap());
        let place = size.div_ceil(ARENA_ALIGN) * ARENA_ALIGN;
        let in_arena = arena(&b, 6);
        assert_eq!(in_arena.len(), 62);
        let offsets: std::collections::BTreeSet<u64> = in_arena.iter().map(|s| s.offset).collect();
        assert_eq!(offsets, [0, place].into_iter().collect());
        let arena_tensor = b.tensors.iter().find(|t| t.name == "intermediates@arena").unwrap();
        assert_eq!((usize::from(arena_tensor.bar), b.tensors.len()), (6, 4));
        assert_eq!(b.plan.len(), 63);
        assert!(b.plan.iter().enumerate().all(|(i, p)| p.live == Interval { first: i, last: i + 1 }));
    }

    #[test]
    fn values_alive_at_once_never_share_bytes() {
        // Each value read by the next two layers (a chain with skips).
        let (mut m, groups) = chain(12);
        for i in 2..12 {
            let skip = m.ops[i - 2].results[0];
            m.ops[i].operands.push(skip);
        }
        let b = bind(&m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
        let planned: Vec<&PlannedValue> = b.plan.iter().filter(|p| usize::from(p.surface.bar) == 6).collect();
        assert_eq!(planned.len(), 10);
        for (i, a) in planned.iter().enumerate() {
            for c in &planned[i + 1..] {
                let end = |s: &Surface| s.offset + s.strides.buffer_size(&s.ty);
                let apart = end(&a.surface) <= c.surface.offset || end(&c.surface) <= a.surface.offset;
                assert!(apart || !a.live.overlaps(&c.live), "{} and {}", a.layer, c.layer);
            }
        }
        // Three values are alive at once (written, read next, read after next).
        let offsets: std::collections::BTreeSet<u64> = planned.iter().map(|p| p.surface.offset).collect();
        assert_eq!(offsets.len(), 3);
    }

    #[test]
    fn scratch_surfaces_alive_in_disjoint_groups_share_their_bytes() {
        let kernel = TensorType::nchw(1, 16, 1, 256, DType::F16);
        let need = |live| ScratchNeed { ty: kernel, live };
        // q's kernel read in group 0, P's written from group 1 (attention): both at 0; a
        // third alive with P's goes after it.
        let scratch: BTreeMap<String, ScratchNeed> =
            [("mm1".to_string(), need(0..=0)), ("mm2".to_string(), need(1..=2)), ("tok".to_string(), need(2..=3))]
                .into_iter()
                .collect();
        let placed: BTreeMap<String, u64> = place_scratch(&scratch).into_iter().collect();
        assert_eq!((placed["mm1"], placed["mm2"], placed["tok"]), (0, 0, 0x2000));
    }
}
