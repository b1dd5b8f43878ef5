//! Hazards on DRAM between the tasks of a program.
//!
//! Read-after-write: a task whose tile DMA loads bytes the task just before it wrote waits
//! for that writer ([`Task::waits_for_writer`], TileDMASrc.DMAConfig.DependencyMode 1):
//! Apple's regime-B matmul sets it on the first slice after the task writing x^T, and on
//! none of the later slices reading it (`matmul.md` §3); no other task of the 150 records
//! loads what the task before it wrote.
//!
//! Write-after-read. A task whose destination DMA
//! writes bytes that an earlier task read (a source through the tile DMA, or a runtime
//! kernel through the kernel DMA) is marked ([`Task::overwrites_read`]); its
//! TileDMADst.DMAConfig then carries bits 19 and 24. Apple's attention records set them on
//! exactly such a task, the softmax's multiply writing P as P·V's kernel over Q·Kᵀ's
//! kernel at BAR 3 offset 0, and on no other task of the 150 records, none of which
//! overwrites DRAM an earlier task read (`docs/rationale/current-compiler/chains.md`
//! §1.1). Bit 19 sits where the source DMA has its DependencyMode: we read the pair as the
//! writer waiting for the earlier readers. The simulator runs tasks in order, so the bits
//! change no value there.

use crate::task::Task;
use std::ops::Range;

/// Marks every task whose DRAM write overlaps what an earlier task read.
pub fn mark_overwrites(tasks: &mut [Task]) {
    let mut read: Vec<(u8, Range<u64>)> = Vec::new();
    for t in tasks.iter_mut() {
        if let Some((bar, bytes)) = written(t) {
            t.overwrites_read = read.iter().any(|(b, r)| *b == bar && r.start < bytes.end && bytes.start < r.end);
        }
        read.extend(reads(t));
    }
}

/// Marks every task whose loaded first source overlaps what the task before it wrote.
pub fn mark_waits(tasks: &mut [Task]) {
    let mut before: Option<(u8, Range<u64>)> = None;
    for t in tasks.iter_mut() {
        let loads = t.residency != crate::task::SourceResidency::Resident && t.token.is_none();
        let source = t.sources.first().filter(|s| s.bar != 0 && loads);
        t.waits_for_writer = match (source, &before) {
            (Some(s), Some((bar, w))) => {
                let r = s.offset..s.offset + s.strides.extent(&s.ty);
                *bar == s.bar && r.start < w.end && w.start < r.end
            }
            _ => false,
        };
        before = written(t);
    }
}

/// The BAR and bytes a task's destination DMA writes, if it writes DRAM.
fn written(t: &Task) -> Option<(u8, Range<u64>)> {
    if t.l2_result.is_some() || t.dest.bar == 0 {
        return None;
    }
    let d = &t.dest;
    Some((d.bar, d.offset..d.offset + d.strides.extent(&d.ty)))
}

/// The DRAM a task reads: its sources in memory (BAR 0 stands for a value kept in L2)
/// and a runtime kernel's chunks.
fn reads(t: &Task) -> Vec<(u8, Range<u64>)> {
    let sources =
        t.sources.iter().filter(|s| s.bar != 0).map(|s| (s.bar, s.offset..s.offset + s.strides.extent(&s.ty)));
    let kernel =
        t.runtime_kernel.iter().flat_map(|k| t.kernel.iter().map(move |c| (k.bar, c.offset..c.offset + c.size)));
    sources.chain(kernel).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Strides;
    use crate::task::{Engine, KernelChunk, RuntimeKernel, Surface};
    use anec_ir::{DType, TensorType};

    fn surface(bar: u8, offset: u64) -> Surface {
        let ty = TensorType::nchw(1, 4, 1, 32, DType::F16);
        Surface { bar, ty, strides: Strides::of(&ty, &Default::default()), offset }
    }

    /// A task reading BAR 3 from `kernel_at` as its runtime kernel, writing BAR 5.
    fn kernel_reader(kernel_at: u64) -> Task {
        let mut t = Task::new("mm", Engine::NeConv, vec![surface(4, 0)], surface(5, 0));
        t.kernel = vec![KernelChunk { offset: kernel_at, size: 0x100 }];
        t.runtime_kernel = Some(RuntimeKernel { bar: 3, producer_back: None });
        t
    }

    #[test]
    fn a_write_over_an_earlier_kernel_read_is_marked_and_others_are_not() {
        let over = Task::new("p", Engine::Pe, vec![surface(6, 0)], surface(3, 0x80));
        let beside = Task::new("q", Engine::Pe, vec![surface(6, 0)], surface(3, 0x100));
        let mut tasks = vec![kernel_reader(0), over, beside];
        mark_overwrites(&mut tasks);
        assert_eq!(tasks.iter().map(|t| t.overwrites_read).collect::<Vec<_>>(), [false, true, false]);
    }

    #[test]
    fn a_write_before_the_read_or_into_l2_is_not_marked() {
        let first = Task::new("w", Engine::Pe, vec![surface(6, 0)], surface(4, 0));
        let mut tasks = vec![first, kernel_reader(0)];
        mark_overwrites(&mut tasks);
        assert!(tasks.iter().all(|t| !t.overwrites_read));
        // The source of task 0 (BAR 6) is overwritten by a later task writing BAR 6.
        let mut tasks = vec![Task::new("a", Engine::Pe, vec![surface(6, 0)], surface(4, 0))];
        tasks.push(Task::new("b", Engine::Pe, vec![surface(4, 0)], surface(6, 0x40)));
        mark_overwrites(&mut tasks);
        assert!(tasks[1].overwrites_read);
    }
}
