//! ExeCycles (header word 1, bits 0..15): Apple's estimate of what a task costs
//! (`docs/rationale/current-compiler/exe-cycles.md`).
//!
//! The estimate is the largest of three costs, rounded down:
//! - **memory**: every byte the task moves between DRAM and the engine (kernel stream,
//!   tile-DMA sources, destination; rows padded to 64 bytes) at 30 units per 1024000 bytes;
//! - **narrow reads**: each plane of one-element rows the tile DMA reads costs
//!   [`NARROW_PLANE`], more than its 64 bytes do (a vector stored one value per row);
//! - **engine work**: an elementwise pass per element of its result ([`ELEMENT`], or
//!   [`TABLE_ELEMENT`] through the NE's activation table) and per plane of its source
//!   ([`PLANE`]); a planar-engine reduction per tile of its work unit ([`REDUCE_TILE`], or
//!   [`REDUCE_COLUMN`] per column of a wider tile).
//!
//! Fitted on Apple's own register words of the 150 current-compiler records
//! (`scripts/corpus/exe/model.py`): 352 of their 355 tasks. The three others: the exp2
//! table of `chain_base_softmax_d256_s64` (and `chain_pair_softmax_mm`) on one NE costs 1,
//! at least 1.6 times what the tables on 8 or 16 NEs allow per element; the NE transposer of
//! `rrmm_r2rb_m16_k2048_n2048_tx1_ty1` reading 2048 planes of 16 values costs 4 (3.84 by
//! its bytes).

use super::common::REDUCE_TILE_COLS;
use crate::task::{Engine, Nonlinear, PeReduce, Surface, Task};

/// DRAM traffic: [`MEMORY_UNITS`] units per [`MEMORY_BYTES`] bytes (1024000 / 30, about
/// 34133 bytes per unit). Any number of bytes per unit in (34100.0, 34133.3] reproduces
/// every task of the corpus whose cost is its memory traffic; the upper end is exact
/// (`encoder_slice_lastdim`'s 4608000 bytes cost 135), so the term is computed in integers.
const MEMORY_BYTES: u64 = 1_024_000;
const MEMORY_UNITS: u64 = 30;

/// Cost of one plane of one-element rows read from DRAM: [0.004425, 0.004456) (the add of
/// two 16384-channel vectors, 145, bounds it from both sides).
const NARROW_PLANE: f64 = 0.00444;

/// An elementwise pass: per element of its result [`ELEMENT`], in [2.02e-5, 2.28e-5], or
/// [`TABLE_ELEMENT`], in [3.05e-5, 3.81e-5), through the NE's activation table; and per
/// plane of its source [`PLANE`], in [0.00049, 0.00071] (softmax's subtract over
/// 8 x 128 x 128 and over 4096 channels, its exp2 over 8 x 128 x 128, its channel sum of 4096).
const ELEMENT: f64 = 0.000_021_5;
const TABLE_ELEMENT: f64 = 0.000_034;
const PLANE: f64 = 0.000_59;

/// Planar-engine reduction: per tile of the work unit at least [`REDUCE_TILE`], in
/// [0.00244, 0.00293], or [`REDUCE_COLUMN`] per column of the tile, in [8.14e-5, 9.15e-5]
/// (the grouped maximum over 16 x 128 rows of 16, the grouped reductions over 64 x 12 rows
/// of 64 and over 128 x 8 tiles of 4 x 32).
const REDUCE_TILE: f64 = 0.0027;
const REDUCE_COLUMN: f64 = 0.000_086_5;

/// log2 of the planar engine's tile: 16 to 512 columns (at most 64 for a reduction of a
/// split row, [`REDUCE_TILE_COLS`]), and rows while the tile holds at most 512 elements
/// (256 with two operands), as `common.rs` writes a reduction's tile in word 0x154.
const TILE_COLS: (u32, u32) = (4, 9);
const TILE_BUDGET: [u32; 2] = [9, 8];

/// ExeCycles of a task.
pub fn exe_cycles(t: &Task) -> u64 {
    let memory = memory_bytes(t) * MEMORY_UNITS / MEMORY_BYTES;
    let narrow = NARROW_PLANE * narrow_planes(t) as f64;
    let compute = narrow.max(engine_work(t)).floor().clamp(0.0, f64::from(u16::MAX)) as u64;
    memory.max(compute).min(u64::from(u16::MAX))
}

/// Bytes of a surface in memory, each row padded to 64 bytes.
fn padded_bytes(s: &Surface) -> u64 {
    let ty = s.ty;
    let row = crate::layout::round_up(u64::from(ty.w) * ty.dtype.size() as u64, 64);
    planes(s) * u64::from(ty.h) * row
}

/// Planes (batch x channels x depth) of a surface.
fn planes(s: &Surface) -> u64 {
    u64::from(s.ty.n) * u64::from(s.ty.c) * u64::from(s.ty.d)
}

/// Bytes the task moves between DRAM and the engine: its kernel stream (weights, table,
/// channel vectors), the sources the tile DMA reads and the destination it writes.
fn memory_bytes(t: &Task) -> u64 {
    let kernel: u64 = t.kernel.iter().chain(t.vectors.streams().iter().flatten()).map(|c| c.size).sum();
    let reads: u64 = t.memory_sources().map(padded_bytes).sum();
    let write = if t.writes_memory() { padded_bytes(&t.dest) } else { 0 };
    kernel + reads + write
}

/// Planes of one-element rows among the sources read from DRAM.
fn narrow_planes(t: &Task) -> u64 {
    t.memory_sources().filter(|s| s.ty.w == 1).map(planes).sum()
}

/// The engine's work on a view: an elementwise pass (either engine) per element of its
/// result and per plane of its source, a planar-engine reduction per tile of its view.
fn engine_work(t: &Task) -> f64 {
    if let Some(reduce) = t.reduce.filter(|_| t.engine == Engine::Pe) {
        return reduction(t, reduce);
    }
    let out = t.out_view();
    let elements = f64::from(out.n) * f64::from(out.c) * f64::from(out.d) * f64::from(out.h) * f64::from(out.w);
    let per_element = if t.engine.uses_ne() && t.nonlinear == Nonlinear::Table { TABLE_ELEMENT } else { ELEMENT };
    let source_planes = t.sources.first().map_or(0, planes);
    per_element * elements + PLANE * source_planes as f64
}

/// A planar-engine reduction: per tile of the work unit, the tile's columns at
/// [`REDUCE_COLUMN`] each but at least [`REDUCE_TILE`] (the tile's rows cost nothing more:
/// softmax 1x8x128x128's 1024 tiles of 4 x 32 cost 2).
fn reduction(t: &Task, reduce: PeReduce) -> f64 {
    let view = t.traffic_view();
    let log2_ceil = |v: u32| v.max(1).next_power_of_two().trailing_zeros();
    let widest = if reduce.split { REDUCE_TILE_COLS } else { TILE_COLS.1 };
    let cols = log2_ceil(view.w).clamp(TILE_COLS.0, widest);
    let budget = TILE_BUDGET[usize::from(t.operands() > 1)];
    let rows = log2_ceil(view.h).min(budget.saturating_sub(cols));
    let tiles = u64::from(view.n)
        * u64::from(view.c)
        * u64::from(view.d)
        * u64::from(view.h.div_ceil(1 << rows))
        * u64::from(view.w.div_ceil(1 << cols));
    tiles as f64 * REDUCE_TILE.max(REDUCE_COLUMN * f64::from(1u32 << cols))
}
