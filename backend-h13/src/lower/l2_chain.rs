//! Pieces every recipe that keeps its intermediates in L2 uses (softmax, layer_norm):
//! regions in Apple's layouts, the SourceCfg link of a step, scratch surfaces for results
//! that never reach memory, the check that a plan fits the L2, and the alias bits of what
//! a task writes into L2 ([`hazard_aliases`]).

use crate::buffers::KeptValue;
use crate::encode::l2::{l2_use, L2Use};
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{L2Region, Strides};
use crate::task::{AliasBits, Engine, L2Aliases, L2Form, L2Link, L2Vector, SourceResidency, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Op, TensorType};
use std::ops::Range;

/// The L2 of the H13 (1 MiB).
pub const L2_BYTES: u64 = 1 << 20;

/// Word 0x158: operand 1 broadcast along W, H and the third loop (depth); operand 2 along
/// W and C; operand 1 / 2 a packed vector of one value per channel (`softmax.md` §2).
pub const OPERAND1_ALONG_W: u32 = 0x1;
pub const OPERAND1_ALONG_H: u32 = 0x2;
pub const OPERAND1_ALONG_D: u32 = 0x4;
pub const OPERAND1_ALONG_C: u32 = 0x8;
pub const OPERAND2_ALONG_W: u32 = 0x10;
pub const OPERAND2_ALONG_C: u32 = 0x80;
pub const OPERAND1_PACKED: u32 = 0x100;
pub const OPERAND2_PACKED: u32 = 0x200;
/// Word 0x158: the result is written packed (the view's channels along W of one row).
pub const PACKED_RESULT: u32 = 0x400;

/// fp16 1.0.
pub const ONE_F16: u16 = 0x3C00;

/// A region in the standard layout.
pub fn standard(region: L2Region) -> L2Vector {
    L2Vector { form: L2Form::Standard, region }
}

/// L2.SourceCfg link bits of a step.
pub fn link(conv_result: bool, planar_result: bool, dependent: u8) -> L2Link {
    L2Link { conv_src: false, conv_result, planar_result, dependent, dma_fmt: false }
}

/// The link of a reader of a value kept for it (`chains.md` §3): Dependent naming the
/// writer's engine (1 NE, 2 planar engine) when one task, the one just before, wrote it
/// whole in the reader's shape; otherwise Dependent 0 aliasing the writer's result.
pub fn kept_link(k: &KeptValue) -> L2Link {
    let planar = k.writer == Engine::Pe;
    match k.whole {
        true => link(false, false, if planar { 2 } else { 1 }),
        false => link(!planar, planar, 0),
    }
}

/// Makes `t`'s first source the region an earlier step left in L2, linked by `l`.
pub fn read_in_place(t: &mut Task, region: L2Region, l: L2Link) {
    (t.residency, t.l2_source, t.l2_link) = (SourceResidency::Resident, Some(standard(region)), Some(l));
}

/// A scratch surface of `ty` (a result that stays in L2).
pub fn scratch(ty: &TensorType) -> Surface {
    Surface { bar: 0, ty: *ty, strides: Strides::of(ty, &Default::default()), offset: 0 }
}

/// A tensor's layout in L2 at `base`: rows of C channels of W values; with several rows,
/// 0x20 of padding after a row that fills whole 0x400 banks (the planar engine's rule).
pub fn x_region(base: u64, ty: &TensorType, rows: bool) -> L2Region {
    let plane = L2Region::unpadded_row(ty.c, ty.w, ty.dtype, u64::MAX);
    let pad = if rows && plane.is_multiple_of(0x400) { 0x20 } else { 0 };
    L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, u64::MAX, pad)
}

/// Every region of the plan must lie in L2; `what` names the op for the error.
pub fn check_fits(op: &Op, tasks: &[Task], what: &str) -> Result<(), BackendError> {
    let regions = tasks.iter().flat_map(|t| {
        [t.l2_source, t.l2_result, t.l2_operand.map(|o| o.vector)].into_iter().flatten().map(|v| v.region.end())
    });
    match regions.max() {
        Some(end) if end > L2_BYTES => Err(unsupported(
            op,
            &format!("{what} needs {end:#x} bytes of L2, more than the {L2_BYTES:#x} the engine has (no tiling yet)"),
        )),
        _ => Ok(()),
    }
}

/// The engine an alias bit names: the convolution engine (every NE path) or the planar
/// engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Conv,
    Planar,
}

impl Unit {
    fn of(e: Engine) -> Unit {
        if e == Engine::Pe {
            Unit::Planar
        } else {
            Unit::Conv
        }
    }

    fn other(self) -> Unit {
        match self {
            Unit::Conv => Unit::Planar,
            Unit::Planar => Unit::Conv,
        }
    }
}

/// A task's source(s) or its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Source,
    Result,
}

/// L2 bytes an earlier task may still be using.
#[derive(Debug, Clone)]
struct Live {
    task: usize,
    unit: Unit,
    part: Part,
    bytes: Range<u64>,
}

/// A task waited for (with every earlier task of its engine).
#[derive(Debug, Clone, Copy)]
struct Wait {
    task: usize,
    unit: Unit,
}

fn set(bits: &mut AliasBits, unit: Unit, part: Part) {
    match (unit, part) {
        (Unit::Conv, Part::Source) => bits.conv_src = true,
        (Unit::Conv, Part::Result) => bits.conv_result = true,
        (Unit::Planar, Part::Source) => bits.planar_src = true,
        (Unit::Planar, Part::Result) => bits.planar_result = true,
    }
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// The alias bits of the tasks after the first of `tasks` (in program order; the first
/// keeps all four, as a program's first task): `matmul-runtime.md` §6. A task's regions
/// stay live until a later task waits for it. For what a task writes into L2 (a source the
/// tile DMA loads, its result):
/// * the other engine's bits name its live regions the write overlaps: `Rslt` when it
///   overlaps the live result of a task of that engine, else `Src` when it overlaps a live
///   source (the live part of a result streamed to memory: its first two destination
///   rows); the result is checked after the waits of the sources read in place, and left
///   clear when the loaded source already names that engine's result;
/// * its own engine's two bits on both words when it opens a section (header SPL) and
///   loads its source, none otherwise;
/// * a bit waits, for the tasks after this one, for the tasks it names, and reading a
///   result in place for its writer; a wait for a task covers every earlier task of its
///   engine.
///
/// A source read in place keeps its recipe's link; its bits are not derived here.
pub fn hazard_aliases(tasks: &mut [Task], gen: &Generation) -> Result<(), BackendError> {
    let uses = tasks.iter().map(|t| l2_use(t, gen)).collect::<Result<Vec<_>, _>>()?;
    let mut live = Vec::new();
    for (i, (t, u)) in tasks.iter_mut().zip(&uses).enumerate() {
        if i > 0 {
            t.l2_aliases = Some(aliases(t, u, &mut live));
        }
        let unit = Unit::of(t.engine);
        let sources = u.loaded.iter().chain(&u.read);
        live.extend(sources.map(|b| Live { task: i, unit, part: Part::Source, bytes: b.clone() }));
        live.push(Live { task: i, unit, part: Part::Result, bytes: u.result.clone() });
    }
    Ok(())
}

/// Gives the tasks of a recipe that reads a runtime kernel `writer` wrote just before it
/// (the softmax's multiply writing P into BAR 3 for the matmul after it, `chains.md`
/// §2.8) the alias bits [`hazard_aliases`] derives with the writer's regions still live:
/// the first of them is then not a program's first task (Apple's P·V: SourceCfg 0x100172,
/// ResultCfg 0x40017a). Any other recipe keeps its bits.
pub fn after_kernel_writer(writer: &Task, tasks: &mut [Task], gen: &Generation) -> Result<(), BackendError> {
    let reads_it =
        tasks.iter().enumerate().any(|(i, t)| t.runtime_kernel.is_some_and(|k| k.producer_back == Some(i as u32 + 1)));
    if writer.kernel_write.is_none() || !reads_it {
        return Ok(());
    }
    let mut all: Vec<Task> = std::iter::once(writer.clone()).chain(tasks.iter().cloned()).collect();
    hazard_aliases(&mut all, gen)?;
    for (t, derived) in tasks.iter_mut().zip(all.iter().skip(1)) {
        t.l2_aliases = derived.l2_aliases;
    }
    Ok(())
}

/// The bits of `t` (using `u`) against the `live` regions, which lose what `t` waits for.
fn aliases(t: &Task, u: &L2Use, live: &mut Vec<Live>) -> L2Aliases {
    let own = Unit::of(t.engine);
    let other = own.other();
    let mut a = L2Aliases::default();
    if t.opens_section && !u.loaded.is_empty() {
        for part in [Part::Source, Part::Result] {
            set(&mut a.source, own, part);
            set(&mut a.result, own, part);
        }
    }
    let mut waits = Vec::new();
    if let Some((part, hit)) = first_hit(live, other, &u.loaded) {
        set(&mut a.source, other, part);
        waits.extend(hit.into_iter().map(|task| Wait { task, unit: other }));
    }
    let writers = live.iter().filter(|l| l.part == Part::Result && u.read.iter().any(|r| overlaps(r, &l.bytes)));
    let reads: Vec<Wait> = writers.map(|l| Wait { task: l.task, unit: l.unit }).collect();
    release(live, &reads);
    let source_names_result = match other {
        Unit::Conv => a.source.conv_result,
        Unit::Planar => a.source.planar_result,
    };
    if !source_names_result && !links_result(t, other) {
        if let Some((part, hit)) = first_hit(live, other, std::slice::from_ref(&u.result)) {
            set(&mut a.result, other, part);
            waits.extend(hit.into_iter().map(|task| Wait { task, unit: other }));
        }
    }
    release(live, &waits);
    a
}

/// The first part (results before sources) of `unit`'s live regions that `bytes` overlap,
/// and the tasks they belong to.
fn first_hit(live: &[Live], unit: Unit, bytes: &[Range<u64>]) -> Option<(Part, Vec<usize>)> {
    [Part::Result, Part::Source].into_iter().find_map(|part| {
        let hit: Vec<usize> = live
            .iter()
            .filter(|l| l.unit == unit && l.part == part && bytes.iter().any(|b| overlaps(b, &l.bytes)))
            .map(|l| l.task)
            .collect();
        (!hit.is_empty()).then_some((part, hit))
    })
}

/// True when `t`'s source read in place is linked as `unit`'s result (its recipe's link,
/// or 0x120 for a source an earlier task left where it reads it).
fn links_result(t: &Task, unit: Unit) -> bool {
    match (t.residency, t.l2_link) {
        (SourceResidency::Resident, Some(l)) => match unit {
            Unit::Conv => l.conv_result,
            Unit::Planar => l.planar_result,
        },
        (SourceResidency::Resident, None) => unit == Unit::Conv && t.l2_source.is_some(),
        _ => false,
    }
}

/// Drops what `waits` covers from `live`: a wait for a task covers every earlier task of
/// its engine.
fn release(live: &mut Vec<Live>, waits: &[Wait]) {
    live.retain(|l| !waits.iter().any(|w| w.unit == l.unit && l.task <= w.task));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::generation::Compat;
    use anec_ir::DType;

    fn surface(c: u32, w: u32) -> Surface {
        let ty = TensorType { n: 1, c, d: 1, h: 1, w, dtype: DType::F16 };
        Surface { bar: 5, ty, strides: Strides::of(&ty, &Default::default()), offset: 0 }
    }

    /// A runtime matmul's first two tasks for n x n matrices: the planar-engine copy of x
    /// into memory as a kernel of `b` interleaved channels (its L2 source at 0, its result
    /// streamed after it), then the NE pass writing yᵀ into L2 at 0 (channels padded by
    /// 0x10) with y staged after it, opening a section.
    fn copy_then_transposer(n: u32, b: u32) -> Vec<Task> {
        let scratch = surface(n / b, n * b);
        let mut copy = Task::new("mm", Engine::Pe, vec![surface(n, n)], Surface { ty: surface(n, n).ty, ..scratch });
        copy.kernel_write = Some(b);
        let y = surface(n, n);
        let mut transposer = Task::new("mm", Engine::NePass, vec![y], y);
        let channel = u64::from(n) * 2 + 0x10;
        let size = channel * u64::from(n);
        let region = L2Region { base: 0, channel, row: size, plane: size, size };
        transposer.l2_result = Some(L2Vector { form: L2Form::Transposed, region });
        transposer.opens_section = true;
        vec![copy, transposer]
    }

    fn bits(conv: bool, planar_src: bool, planar_result: bool) -> AliasBits {
        AliasBits { conv_src: conv, conv_result: conv, planar_src, planar_result }
    }

    #[test]
    fn the_first_write_over_the_copy_s_live_result_waits_for_it() {
        // 64 x 64 (kernel rows of 0x200): y staged at 0x2400 starts where the copy's two
        // live rows end, yᵀ at [0, 0x2400) covers them: ResultCfg 0x400170 (rrmm_r3rr_m64).
        let mut t = copy_then_transposer(64, 4);
        hazard_aliases(&mut t, Compat::Current.data()).unwrap();
        assert_eq!(t[0].l2_aliases, None);
        let a = t[1].l2_aliases.unwrap();
        assert_eq!((a.source, a.result), (bits(true, false, false), bits(true, false, true)));
        // 128 x 128 (rows of 0x800): y at 0x8800 overlaps the live rows [0x8000, 0x9000),
        // so the source waits and the result, over the copy's regions, says nothing
        // (SourceCfg 0x400172, ResultCfg 0x170: env_mm_r3rr_m128).
        let mut t = copy_then_transposer(128, 8);
        // A convolution reading yᵀ in place, its result streamed after it over the copy's
        // live rows: the transposer waited for the copy, so it names nothing.
        let mut slice = Task::new("mm", Engine::NeConv, vec![surface(128, 128)], surface(128, 128));
        let y_t = t[1].l2_result.unwrap();
        read_in_place(&mut slice, y_t.region, L2Link::default());
        t.push(slice);
        hazard_aliases(&mut t, Compat::Current.data()).unwrap();
        let a = t[1].l2_aliases.unwrap();
        assert_eq!((a.source, a.result), (bits(true, false, true), bits(true, false, false)));
        assert_eq!(t[2].l2_aliases, Some(L2Aliases::default()));
    }

    #[test]
    fn a_value_kept_for_its_reader_is_linked_by_its_writer_s_engine() {
        let region = L2Region { base: 0x80, channel: 0x80, row: 0x2000, plane: 0x2000, size: 0x2000 };
        let kept = |writer, whole| KeptValue { region, writer, read_by: Engine::Pe, whole };
        // Attention's scores: one NE convolution just before the maximum (SourceCfg 0x104).
        assert_eq!(kept_link(&kept(Engine::NeConv, true)), link(false, false, 1));
        assert_eq!(kept_link(&kept(Engine::Pe, true)), link(false, false, 2));
        // Several slices wrote it: no Dependent, the writer's result aliased (0x120).
        assert_eq!(kept_link(&kept(Engine::NeConv, false)), link(true, false, 0));
    }
}
