//! The TD header: task id, end of network, buffer BARs, engine enable. The links to the
//! next task (NextSize, NextPointer) depend on its serialized size and are written when
//! the chain is laid out (`program::chain`).

use super::ChainPos;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{SourceResidency, Task, Token};
use crate::td::TdImage;

/// LogEvents of every task; the first task adds the generation's first-task bit, the last
/// [`LOG_EVENTS_LAST`] (current corpus: 0x408 first, 0x400 middle, 0x422 last, 0x42a single).
const LOG_EVENTS: u64 = 0x400;
const LOG_EVENTS_LAST: u64 = 0x22;
/// DebugLogEvents: a low byte by chain position (0x68 first, 0x6a last or single, 0 in
/// between) and a high part by what the task computes (below); 0xfff86a for a single task
/// in both generations.
const DEBUG_LOG_FIRST: u64 = 0x68;
const DEBUG_LOG_LAST: u64 = 0x6A;
/// High part of DebugLogEvents: 0xfff8 for a task that computes, 0 for an NE pure pass
/// (a copy or layout change), 0xffd8 for the square-root family (sqrt, rsqrt, reciprocal).
const DEBUG_LOG_COMPUTE: u64 = 0xFFF8 << 8;
const DEBUG_LOG_SQRT: u64 = 0xFFD8 << 8;
const DEBUG_LOG_COPY: u64 = 0;

/// The high part of DebugLogEvents: what the task computes.
fn debug_class(t: &Task) -> u64 {
    use crate::activation::TableFn;
    match t.table {
        Some(TableFn::Sqrt | TableFn::Rsqrt | TableFn::Reciprocal) => DEBUG_LOG_SQRT,
        _ if t.engine == crate::task::Engine::NePass && is_copy(t) => DEBUG_LOG_COPY,
        _ => DEBUG_LOG_COMPUTE,
    }
}

/// An NE pass that only moves data: no activation, no affine stage, no channel maximum.
fn is_copy(t: &Task) -> bool {
    !t.channel_max
        && t.nonlinear == crate::task::Nonlinear::None
        && t.affine == crate::task::NeAffine::default()
        && !t.vectors.any()
}
/// BAR of `__const`, which holds kernels and activation tables.
pub const CONST_BAR: u64 = 1;

/// Writes header words 0x00..0x28.
pub fn encode(td: &mut TdImage, t: &Task, pos: ChainPos, gen: &Generation) -> Result<(), BackendError> {
    let (first, last) = (pos.index == 0, pos.is_last());
    td.set("aneTD.Header[0].TID", u64::from(pos.index))?;
    td.set("aneTD.Header[0].LNID", u64::from(!first))?;
    td.set("aneTD.Header[0].EON", u64::from(last))?;
    let log = LOG_EVENTS | if first { gen.log_events_first } else { 0 } | if last { LOG_EVENTS_LAST } else { 0 };
    td.set("aneTD.Header[2].LogEvents", log)?;
    let position = if last {
        DEBUG_LOG_LAST
    } else if first {
        DEBUG_LOG_FIRST
    } else {
        0
    };
    td.set("aneTD.Header[4].DebugLogEvents", debug_class(t) | position)?;
    td.set("aneTD.Header[8].TBE", u64::from(!last))?;
    td.set("aneTD.Header[1].ExeCycles", exe_cycles(t))?;
    // SPL on the first task, TSR and TSE on the last; SrcLoc when the task reads its
    // source from memory, DstLoc when it writes memory (every chain of the current
    // corpus; a single task sets all five).
    let reads = t.residency != SourceResidency::Resident;
    let writes = t.l2_result.is_none();
    // A task standing for writing a scratch surface also ends a section (TSR, TSE) and
    // sets DPC; one standing for reading it starts one (SPL) and sets SPC.
    let (token_w, token_r) = match t.token {
        Some(Token::Writes(_)) => (true, false),
        Some(Token::Reads(_)) => (false, true),
        None => (false, false),
    };
    // A task writing a runtime kernel for a later task ends a section too; the task after
    // it opens one (`matmul-runtime.md` §4).
    let ends = last || token_w || t.kernel_write.is_some();
    let flags = [
        ("SPL", first || token_r || t.opens_section),
        ("TSR", ends),
        ("TSE", ends),
        ("SrcLoc", reads),
        ("DstLoc", writes),
        ("DPC", token_w),
        ("SPC", token_r),
    ];
    for (flag, on) in flags {
        td.set(&format!("aneTD.Header[6].{flag}"), u64::from(on))?;
    }
    // A planar-engine result kept for a later planar-engine task (softmax's statistics).
    td.set("aneTD.Header[6].DisallowAbort", u64::from(t.pe_links.feeds_pe))?;
    encode_kernel_producer(td, t, pos)?;
    encode_bars(td, t)
}

/// A kernel an earlier task of the program wrote: header TDE and the eleventh word, that
/// task's TID (`matmul-runtime.md` §4).
fn encode_kernel_producer(td: &mut TdImage, t: &Task, pos: ChainPos) -> Result<(), BackendError> {
    let Some(back) = t.runtime_kernel.and_then(|k| k.producer_back) else { return Ok(()) };
    let tid = pos.index.checked_sub(back).ok_or_else(|| {
        BackendError::Internal(format!(
            "'{}': its kernel's producer is {back} tasks before task {}",
            t.layer, pos.index
        ))
    })?;
    td.set_extra_header(Some(tid));
    Ok(())
}

fn encode_bars(td: &mut TdImage, t: &Task) -> Result<(), BackendError> {
    let names = [("RBase0", "RBE0"), ("RBase1", "RBE1")];
    let skip = usize::from(t.residency == SourceResidency::Resident);
    for (src, (base, enable)) in t.sources.iter().zip(names).skip(skip) {
        td.set(&format!("aneTD.Header[8].{base}"), u64::from(src.bar))?;
        td.set(&format!("aneTD.Header[8].{enable}"), 1)?;
    }
    match t.token {
        Some(Token::Reads(s)) => {
            td.set("aneTD.Header[8].RBase0", u64::from(s.bar))?;
            td.set("aneTD.Header[8].RBE0", 1)?;
        }
        Some(Token::Writes(s)) => {
            td.set("aneTD.Header[8].WBase", u64::from(s.bar))?;
            td.set("aneTD.Header[8].WBE", 1)?;
        }
        None => {}
    }
    if t.l2_result.is_none() {
        td.set("aneTD.Header[8].WBase", u64::from(t.dest.bar))?;
        td.set("aneTD.Header[8].WBE", 1)?;
    }
    td.set("aneTD.Header[8].ENE", super::common::engine_enable(t))?;
    if let Some(k) = t.runtime_kernel {
        td.set("aneTD.Header[9].KBase0", u64::from(k.bar))?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    } else if t.reads_kernel_memory() {
        td.set("aneTD.Header[9].KBase0", CONST_BAR)?;
        td.set("aneTD.Header[9].KBE0", 1)?;
    }
    Ok(())
}

/// ExeCycles: Apple's estimate of a task's cost. No exact rule is known.
/// - A convolution costs its DRAM traffic: kernel bytes plus the rows of its input and
///   output padded to 64 bytes, at [`CONV_BYTES_PER_CYCLE`] (rationale §3 of
///   `docs/rationale/current-compiler/convolution.md`: one constant fits all 25
///   convolution tasks of the current corpus; v4.2.1's conv 3->3 gives 0 as Apple wrote).
/// - Other tasks follow a cost model fitted to every task of the elementwise, broadcast,
///   unary and activation records of the current corpus (44 tasks, all reproduced, at
///   the centre of the feasible region; leaving one case out, 3 of 44 miss by 1): per
///   memory read a term per plane (N·C) and per row (N·C·H), per memory write a term per
///   row, and a term per byte moved (reads and writes, unpadded rows). Every v4.2.1
///   program is small enough for 0, as Apple wrote. See `docs/conformance.md`.
///   - Reads count memory only; a source already in L2 costs nothing except to a
///     reduction (softmax 64x8x8's subtract 0, its grouped maximum 1).
/// - An NE task keeping its result in L2 costs its bytes as a convolution does (matmul's
///   preparation task, the transposers, softmax's copy), and any other NE task at least
///   its bytes (the 768000-byte transpose of `encoder_transpose_r4_0213`: 45).
fn exe_cycles(t: &Task) -> u64 {
    if t.engine.is_conv() || (t.engine.uses_ne() && t.l2_result.is_some() && !t.channel_max) {
        return conv_cycles(t);
    }
    // An NE task moving long rows costs at least its bytes (the transpose of
    // `encoder_transpose_r4_0213`: 45 by bytes, 18 by the per-row model).
    let bytes = if t.engine.uses_ne() && !t.channel_max { conv_cycles(t) } else { 0 };
    const READ_PLANE: f64 = 0.001_825_37;
    const READ_ROW: f64 = 0.001_808_48;
    const WRITE_ROW: f64 = 0.001_553_73;
    const BYTE: f64 = 0.000_004_790_83;
    let ty = t.traffic_view();
    let planes = f64::from(ty.n) * f64::from(ty.c);
    let rows = planes * f64::from(ty.h);
    let row_bytes = (u64::from(ty.w) * ty.dtype.size() as u64) as f64;
    // Sources read from memory; a source already in L2 costs nothing, except to a
    // reduction (softmax 64x8x8: the L2-only subtract 0, its grouped maximum 1).
    let resident = t.residency == SourceResidency::Resident && t.reduce.is_none();
    let reads = (t.sources.len() - usize::from(resident)) as f64;
    let writes = if t.l2_result.is_some() { 0.0 } else { 1.0 };
    let cost = reads * (READ_PLANE * planes + READ_ROW * rows)
        + writes * WRITE_ROW * rows
        + BYTE * (reads + writes) * rows * row_bytes;
    (cost.floor().clamp(0.0, f64::from(u16::MAX)) as u64).max(bytes)
}

/// Bytes of DRAM traffic per cycle of a convolution: any value in (34044.7, 34192.7]
/// reproduces every convolution task of the current corpus.
const CONV_BYTES_PER_CYCLE: f64 = 1_024_000.0 / 30.0;

/// The convolution term: (kernel + input + output bytes) / [`CONV_BYTES_PER_CYCLE`]; a
/// source already in L2 or a result kept there costs nothing. NE tasks that write into L2
/// follow it too (the matmul preparation task, the reduction transposer, softmax's copy:
/// 64x8x8 0, 8x64x64 1, 12x64x64 2, 8x128x128 7).
fn conv_cycles(t: &Task) -> u64 {
    let rows = |s: &crate::task::Surface| {
        let ty = s.ty;
        u64::from(ty.n)
            * u64::from(ty.c)
            * u64::from(ty.h)
            * crate::layout::round_up(u64::from(ty.w) * ty.dtype.size() as u64, 64)
    };
    let kernel: u64 = t.kernel.iter().map(|c| c.size).sum();
    let input = match (t.residency, t.sources.first()) {
        (SourceResidency::Resident, _) | (_, None) => 0,
        (_, Some(s)) => rows(s),
    };
    // A result kept in L2 is not written to memory.
    let output = if t.l2_result.is_some() { 0 } else { rows(&t.dest) };
    let bytes = kernel + input + output;
    ((bytes as f64 / CONV_BYTES_PER_CYCLE).floor() as u64).min(u64::from(u16::MAX))
}
