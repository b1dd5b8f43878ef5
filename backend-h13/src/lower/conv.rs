//! Convolution, as Apple's current compiler runs it (`docs/rationale/current-compiler/
//! convolution.md`):
//! 1. the window, groups and kernel from the op; a depthwise convolution (one input
//!    channel per group, as many outputs) is one group with UnicastEn;
//! 2. a fused gain/offset folds in: per-channel gains into fp16 weights, the scalar scale
//!    into PostScale, the bias inline at the head of each kernel block;
//! 3. when the input and the result do not fit the L2 budget together, the output channels
//!    are split into slices, one task each, the first task keeping the input in L2 for the
//!    others and computing the highest slice;
//! 4. each task's share of the kernel is dealt over the 16 NEs (`weights`), in the sparse
//!    form for stride-2 1x1 kernels;
//! 5. a fused table activation (`with_table`) puts its 128-byte table at the head of
//!    every kernel chunk (NonlinearMode 2).

use super::{attr, base_task};
use crate::activation::{self, TableFn};
use crate::affine::{channel_affine, gain_offset};
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::deferred::Bank;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2_GRANULE};
use crate::task::{ConvGeom, Engine, KernelChunk, Nonlinear, SourceResidency, Surface, Task};
use crate::weights::{self, Kernel, Packing};
use crate::window::{window, Window};
use anec_ir::{DType, Module, Op, TensorType};
use half::f16;
use std::ops::Range;

/// L2 bytes a convolution's input and result may take together before its output
/// channels are split over several tasks (the 1024->1024 1x1 record at 16x16 needs
/// 0x100300 and is split in two; every single-task convolution needs at most 0x42200).
const L2_BUDGET: u64 = 1 << 20;
/// Kernel bytes per NE of a slice of a split layer, and the NEs the slice's output
/// channels are dealt over.
const SPLIT_KERNEL_PER_NE: u64 = 64 << 10;
const NE_COUNT: u32 = 16;
/// Output channels per NE block up to which a stride-2 1x1 kernel takes the sparse form
/// (the form is known for blocks of 1 and 4 channels).
const SPARSE_MAX_BLOCK: u32 = 4;

/// OCGSize of a convolution writing its result transposed (Common.Cfg bit 28): the
/// matmul records' N 512 and 1024 give 4 where the plain rule gives 5 (`matmul.md` §2).
const TRANSPOSED_MAX_OCG: u32 = 4;

/// Where a convolution writes: its destination, and whether with C and W swapped (a
/// channel<->width transpose fused into the write).
#[derive(Debug, Clone, Copy)]
pub(super) struct Output {
    /// The destination surface (of the swapped type when `transposed`).
    pub dest: Surface,
    /// The NE writes with C and W swapped (Common.Cfg bit 28).
    pub transposed: bool,
    /// The input's surface when it has no buffer of its own: the scratch surface standing
    /// for x^T, which a matmul's preparation task leaves in L2 (`matmul`).
    pub source: Option<Surface>,
    /// The result stays in L2 written transposed (a folded matmul's product): OCGSize as
    /// for a transposed write.
    pub kept_transposed: bool,
}

impl Output {
    /// The result as the convolution computes it.
    fn view(&self) -> Surface {
        let ty = self.dest.ty;
        match self.transposed {
            true => Surface { ty: TensorType { c: ty.w, w: ty.c, ..ty }, ..self.dest },
            false => self.dest,
        }
    }
}

/// The convolution geometry of a window, `groups` and `ocg_size`.
pub(super) fn geometry(op: &Op, groups: u32, ocg_size: u32) -> Result<ConvGeom, BackendError> {
    let w = window(op)?;
    Ok(ConvGeom { groups, ocg_size, ..geometry_of(&w) })
}

fn geometry_of(w: &Window) -> ConvGeom {
    ConvGeom { kh: w.kh, kw: w.kw, sy: w.sy, sx: w.sx, pad_top: w.pad_top, pad_left: w.pad_left, ..ConvGeom::default() }
}

/// Lowers a convolution (with its fused gain/offset, if any) to one task per slice of
/// its output channels.
pub(super) fn lower_conv(
    m: &Module,
    op: &Op,
    goc: Option<&Op>,
    bufs: &Buffers,
    out: Output,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    // The convolution's own view of its result: the destination with C and W swapped
    // back when the task writes transposed.
    let dest = out.view();
    let mut proto = match out.source {
        Some(src) => super::base_task_from(op, vec![src], dest, Engine::NeConv)?,
        None => base_task(op, bufs, dest, Engine::NeConv)?,
    };
    let cin = proto.sources.first().map_or(0, |s| s.ty.c);
    let groups = u32::try_from(attr(op, "groups")?.as_int().unwrap_or(1)).unwrap_or(u32::MAX).max(1);
    let depthwise = groups > 1 && groups == cin && dest.ty.c == cin;
    let w = window(op)?;
    let mut kernel = kernel(m, op, dest.ty.c, cin / groups, &w)?;
    let bias = match goc {
        Some(g) => fuse_gain_offset(m, g, &mut kernel, &mut proto, consts)?,
        None => None,
    };
    proto.inline_bias = bias.is_some();
    let ng = if depthwise { 1 } else { groups };
    proto.conv = ConvGeom { groups: ng, unicast: depthwise, ..geometry_of(&w) };
    let whole: Range<u32> = 0..dest.ty.c / ng;
    // A source whose rows the NE streams in pieces leaves only the last piece in L2:
    // every slice loads it again, and the slices run upward (Apple's regime-B matmul
    // slices each re-read x^T, the first computing channels 0..); otherwise the later
    // slices read the staging the first kept, highest slice first (`slices`).
    let streamed = proto
        .sources
        .first()
        .is_some_and(|s| u64::from(s.ty.w) * s.ty.dtype.size() as u64 > crate::encode::l2::row_piece(&proto));
    let mut slices = if ng == 1 && !depthwise { slices(&proto, &kernel, gen) } else { Vec::from([whole]) };
    if streamed {
        slices.sort_by_key(|r| r.start);
    }
    let count = slices.len();
    let mut tasks = Vec::with_capacity(count);
    for (i, range) in slices.into_iter().enumerate() {
        let mut t = proto.clone();
        t.residency = match (count, i) {
            (1, _) => SourceResidency::Load,
            _ if streamed => SourceResidency::Load,
            (_, 0) => SourceResidency::LoadAndKeep,
            _ => SourceResidency::Resident,
        };
        let n = if depthwise { 1 } else { range.len() as u32 };
        let pixels = u64::from(dest.ty.h) * u64::from(dest.ty.w);
        t.conv.ocg_size = weights::ocg_size(n, pixels);
        if out.kept_transposed {
            t.conv.ocg_size = weights::ocg_size(n, 0).min(TRANSPOSED_MAX_OCG);
        }
        if out.transposed {
            // The slice's channels are columns of the destination; a transposed write
            // caps OCGSize at 4 with no pixel budget (`matmul.md` §2).
            let elem = out.dest.ty.dtype.size() as u64;
            t.dest = Surface { ty: TensorType { w: range.len() as u32, ..out.dest.ty }, ..out.dest };
            t.dest.offset += u64::from(range.start) * elem;
            t.transposed_write = true;
            t.conv.ocg_size = weights::ocg_size(n, 0).min(TRANSPOSED_MAX_OCG);
        } else {
            t.dest.ty.c = range.len() as u32 * ng;
            t.dest.offset = dest.offset + u64::from(range.start) * dest.strides.plane;
        }
        t.conv.sparse = sparse(&w, kernel.fmt, t.conv.ocg_size);
        let packing = Packing { groups: ng, channels: range, ocg_size: t.conv.ocg_size, sparse: t.conv.sparse };
        t.kernel = consts.add_bank(Bank { kernel: kernel.clone(), bias: bias.clone(), packing })?;
        t.kernel_fmt = Some(kernel.fmt);
        tasks.push(t);
    }
    Ok(tasks)
}

/// Makes the convolution tasks of `tasks` apply the activation `f` (NonlinearMode 2):
/// each NE's kernel chunk becomes `[the table, 128 bytes][its blocks]`, the layout of
/// Apple's compute task with a fused gelu (`chain_pair_mm_gelu`, `chain_ffn`: chunks of
/// 0x80 + the weights, `matmul.md` §2). A folded matmul's copy-out task keeps its pass.
pub(super) fn with_table(tasks: &mut [Task], f: TableFn, consts: &mut ConstSection) -> Result<(), BackendError> {
    let convs: Vec<&mut Task> = tasks.iter_mut().filter(|t| t.engine == Engine::NeConv).collect();
    if convs.is_empty() {
        return Err(BackendError::Internal(format!("a {f:?} table fused into a group with no convolution task")));
    }
    let banks: Vec<Vec<KernelChunk>> = convs.iter().map(|t| t.kernel.clone()).collect();
    let banks = consts.with_table_heads(&banks, &activation::table(f))?;
    for (t, kernel) in convs.into_iter().zip(banks) {
        (t.kernel, t.nonlinear, t.table) = (kernel, Nonlinear::Table, Some(f));
    }
    Ok(())
}

/// Whether the convolution's kernel is fp16 (stored as fp16 or fp32), the format Apple's
/// records show a table beside.
pub(crate) fn fp16_kernel(m: &Module, op: &Op) -> bool {
    let blob = op.attr("weights").and_then(|a| a.as_resource()).and_then(|(name, _)| m.resources.get(name));
    blob.is_some_and(|b| matches!(b.dtype, DType::F16 | DType::F32))
}

/// The op's weights as a kernel of `cout` x `cin_g` x the window.
fn kernel(m: &Module, op: &Op, cout: u32, cin_g: u32, w: &Window) -> Result<Kernel, BackendError> {
    let (name, _) = attr(op, "weights")?
        .as_resource()
        .ok_or_else(|| BackendError::Internal(format!("weights of '{}' is not a resource", op.name)))?;
    let blob = m.resources.get(name).ok_or_else(|| BackendError::Internal(format!("no blob {name}")))?;
    Kernel::from_blob(blob, cout, cin_g, w.kh, w.kw)
}

/// The sparse form: stride 2 in both directions, a 1x1 fp16 kernel, blocks of at most 4
/// channels (the records' stride-2 1x1 convolutions; 3x3 kernels stay dense: the sparse
/// form's tap order for them is not known, `docs/conformance.md`).
fn sparse(w: &Window, fmt: DType, ocg: u32) -> bool {
    (w.sy, w.sx, w.kh, w.kw) == (2, 2, 1, 1) && fmt == DType::F16 && (1 << ocg) <= SPARSE_MAX_BLOCK
}

/// Folds a gain/offset into the convolution: per-channel gains scale the fp16 weights,
/// the scalar scale is the PostScale and the bias (divided by it) goes inline; returns
/// the inline bias (fp16 bits), `None` when every bias is zero. Integer kernels keep the
/// NE's per-channel streams.
fn fuse_gain_offset(
    m: &Module,
    goc: &Op,
    kernel: &mut Kernel,
    t: &mut Task,
    consts: &mut ConstSection,
) -> Result<Option<Vec<u16>>, BackendError> {
    if kernel.fmt != DType::F16 {
        (t.affine, t.vectors) = gain_offset(m, goc, kernel.cout, consts)?;
        return Ok(None);
    }
    let a = channel_affine(m, goc, kernel.cout)?;
    if let Some(gains) = &a.gains {
        kernel.scale_channels(gains)?;
    }
    t.affine.scale = f16::from_f64(a.scale).to_bits();
    let pre = a.pre_scale_biases(goc, &vec![a.scale; a.channels])?;
    Ok(pre.iter().any(|&b| b != 0.0).then(|| pre.iter().map(|&b| f16::from_f64(b).to_bits()).collect()))
}

/// The slices of the output channels, one per task in task order: the fewest (a power of
/// two) whose result fits the L2 budget beside the input and, once the layer is split,
/// whose kernel is at most 64 KiB per NE (Apple's regime-B matmul: 8 slices where the
/// L2 alone asks for 4; the split 1024->1024 convolution: 2 either way), highest slice
/// first (that convolution computes channels 512..1023 in its first task).
fn slices(t: &Task, kernel: &Kernel, gen: &Generation) -> Vec<Range<u32>> {
    let cout = t.dest.ty.c;
    let source = t.sources.first().map_or(0, |s| crate::encode::l2::source_region(t, s, 0, gen).size);
    let row = round_up(u64::from(t.dest.ty.w) * t.dest.ty.dtype.size() as u64, L2_GRANULE);
    let result = |channels: u32| u64::from(channels) * row * u64::from(t.dest.ty.h);
    let mut n = 1u32;
    while n < cout && source + result(cout.div_ceil(n)) > L2_BUDGET {
        n *= 2;
    }
    // Bytes of kernel one NE holds for a slice of `c` output channels.
    let taps = u64::from(kernel.cin_g) * u64::from(kernel.kh) * u64::from(kernel.kw) * kernel.fmt.size() as u64;
    let per_ne = |c: u32| taps * u64::from(c.div_ceil(NE_COUNT));
    while n > 1 && n < cout && per_ne(cout.div_ceil(n)) > SPLIT_KERNEL_PER_NE {
        n *= 2;
    }
    let size = cout.div_ceil(n);
    let mut out: Vec<Range<u32>> = (0..cout).step_by(size as usize).map(|lo| lo..(lo + size).min(cout)).collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generation::CURRENT;

    fn conv_task(cin: u32, cout: u32, hw: u32) -> Task {
        let surface = |c: u32| {
            let ty = TensorType::nchw(1, c, hw, hw, DType::F16);
            Surface { bar: 4, ty, strides: crate::layout::Strides::of(&ty, &Default::default()), offset: 0 }
        };
        Task::new("c", Engine::NeConv, vec![surface(cin)], surface(cout))
    }

    /// A 1x1 fp16 kernel of `cin` -> `cout`.
    fn kernel_of(cin: u32, cout: u32) -> Kernel {
        Kernel { fmt: DType::F16, source: DType::F16, bytes: Vec::new().into(), cout, cin_g: cin, kh: 1, kw: 1 }
    }

    /// `conv_probe_k1_c1024_n1024_s16`: 0x80300 of input and 0x80000 of result exceed
    /// 1 MiB, so two tasks, the upper 512 channels first; 512 -> 1024 at 16x16 fits.
    #[test]
    fn a_large_footprint_splits_the_output_channels_highest_first() {
        let split = |cin, cout, hw| slices(&conv_task(cin, cout, hw), &kernel_of(cin, cout), &CURRENT);
        assert_eq!(split(1024, 1024, 16), vec![512..1024, 0..512]);
        assert_eq!(split(512, 1024, 16), vec![0..1024]);
        assert_eq!(split(768, 768, 1), vec![0..768]);
    }

    /// Once split, a slice's kernel is at most 64 KiB per NE: 2048 -> 2048 over 512
    /// pixels fits L2 in 4 slices (0x80000 of input, 0x80000 of result each) but takes 8
    /// (Apple's regime-B matmul); an unsplit layer keeps any kernel (2048 -> 64 at 1x1).
    #[test]
    fn a_split_layer_holds_at_most_64_kib_of_kernel_per_ne() {
        let mut t = conv_task(2048, 2048, 1);
        (t.sources[0].ty.w, t.dest.ty.w) = (512, 512);
        t.sources[0].ty.h = 1;
        let got = slices(&t, &kernel_of(2048, 2048), &CURRENT);
        assert_eq!(got.len(), 8, "{got:?}");
        assert_eq!(slices(&conv_task(2048, 64, 1), &kernel_of(2048, 64), &CURRENT).len(), 1);
    }

    /// The sparse form: the stride-2 1x1 records (blocks of 4 and 1); 3x3 stays dense.
    #[test]
    fn only_stride_2_1x1_kernels_with_small_blocks_are_sparse() {
        let w = |k: u32, s: u32| Window { kh: k, kw: k, sy: s, sx: s, pad_top: 0, pad_left: 0, padded: false };
        assert!(sparse(&w(1, 2), DType::F16, 2));
        assert!(!sparse(&w(1, 2), DType::F16, 3));
        assert!(!sparse(&w(3, 2), DType::F16, 0));
        assert!(!sparse(&w(1, 1), DType::F16, 0));
        assert!(!sparse(&w(1, 2), DType::U8, 0));
    }
}
