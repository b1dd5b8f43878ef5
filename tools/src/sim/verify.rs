//! The static check of a decoded program, without running it: what the compiler runs on
//! every program before writing it (`anec::compile_module`). Decoding (`td::decode`)
//! already refuses a field outside the modelled values, a chain or BAR table that does
//! not hold together and an L2 result box past the L2; this adds, per task:
//!
//! - every L2 region (sources, operand, result of every repeat) inside the L2 and
//!   disjoint from the others unless in place (`exec::check_regions`);
//! - every tile-DMA box (each loaded source, the destination when written, each repeat's
//!   group step) inside its BAR's buffer, and a written buffer writable;
//! - every kernel chunk inside the buffer the kernel DMA reads.
//!
//! The data are not touched: the boxes' first and last bytes follow from base, strides
//! and extents (`extent`).

use super::error::SimError;
use super::memory::{Dims, Memory, L2};
use super::td::{Mac, Task, Tile, Unit};

/// Checks `t` against the buffers of `mem` and the L2 `l2` (its bounds only: nothing is
/// read or written).
pub fn task(mem: &Memory<'_>, l2: &L2, t: &Task) -> Result<(), SimError> {
    super::exec::check_regions(t)?;
    let last = super::memory::Region {
        base: t.l2_result.base.saturating_add(t.result_step.saturating_mul(t.repeats.saturating_sub(1) as u64)),
        ..t.l2_result
    };
    l2.check_region(t.index, &last, t.result_region_dims(), t.dest.fmt, "the L2 result region of the last repeat")?;
    for (i, (tile, region)) in t.sources.iter().zip(&t.l2_sources).enumerate() {
        if i == 0 && t.resident {
            continue;
        }
        let dims = if i == 0 { t.source_dims() } else { t.in_dims };
        l2.check_region(t.index, region, dims, tile.fmt, "an L2 source region")?;
        within(mem, t, tile, t.in_dims, false, if i == 0 { "TileDMASrc" } else { "the second source" })?;
    }
    if t.store || t.result_streamed {
        within(mem, t, &t.dest, t.result_dims(), true, "TileDMADst")?;
    }
    kernel(mem, t)
}

/// The tile's box of `dims`, over every repeat, lies inside its BAR's buffer (a
/// destination's buffer writable).
fn within(mem: &Memory<'_>, t: &Task, tile: &Tile, dims: Dims, write: bool, what: &str) -> Result<(), SimError> {
    let (lo, hi) = extent(tile, dims, t.repeats);
    let buf = mem.buffer(t.index, tile.bar, what)?;
    if write && !buf.writable {
        return Err(SimError::access(
            t.index,
            format!("{what} writes BAR {} ({}), which is read-only", tile.bar, buf.name),
        ));
    }
    let size = buf.bytes.len() as i64;
    if lo < 0 || hi > size {
        let sign = if lo < 0 { "-" } else { "" };
        let reason = format!(
            "{what} reaches bytes [{sign}{:#x}, {hi:#x}) of BAR {} ({}), a {size:#x}-byte buffer",
            lo.unsigned_abs(),
            tile.bar,
            buf.name
        );
        return Err(SimError::access(t.index, reason));
    }
    Ok(())
}

/// The first byte and the byte after the last of `tile`'s box of `dims` over `repeats`
/// group steps (element `(c, d, h, w)` at `base + d·depth + (c / B)·plane + h·row +
/// (w·B + c % B)·size`, `dma::address`).
fn extent(tile: &Tile, dims: Dims, repeats: usize) -> (i64, i64) {
    let b = tile.interleave.max(1);
    let size = tile.fmt.size() as i64;
    let span = |n: usize, s: i64| i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX).saturating_mul(s);
    let terms = [
        span(dims.d, tile.depth),
        span(dims.c.div_ceil(b), tile.plane),
        span(dims.h, tile.row),
        span(dims.w, size.saturating_mul(b as i64)),
        span(b.min(dims.c), size),
        span(repeats, tile.group),
    ];
    let lo = terms.iter().filter(|&&v| v < 0).fold(tile.base, |a, &v| a.saturating_add(v));
    let hi = terms.iter().filter(|&&v| v > 0).fold(tile.base, |a, &v| a.saturating_add(v));
    (lo, hi.saturating_add(size))
}

/// Every kernel chunk a convolution reads lies inside the kernel DMA's buffer.
fn kernel(mem: &Memory<'_>, t: &Task) -> Result<(), SimError> {
    let Unit::Ne(ne) = &t.unit else { return Ok(()) };
    let (Mac::Kernel { layout, .. }, Some(bar)) = (&ne.mac, ne.kbar) else { return Ok(()) };
    for c in layout.chunks.iter().flatten() {
        let addr = i64::try_from(c.addr).unwrap_or(i64::MAX);
        let len = usize::try_from(c.size).unwrap_or(usize::MAX);
        mem.bytes(t.index, bar, addr, len, "a kernel chunk (CoeffBaseAddr, CoeffBfrSize)")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::sim::memory::{Fmt, Region};
    use crate::sim::test_build::{self as build, buffer, dims, ne_pass};

    /// A copy of 2 x 4 x 8 fp16 from BAR 4 to BAR 5 (rows 0x40, planes 0x100), each buffer
    /// `len` bytes, BAR 5 writable when `writable`.
    fn copy(len: usize, writable: bool) -> (Memory<'static>, Task) {
        let d = dims(2, 4, 8);
        let tile =
            |bar| Tile { bar, base: 0, row: 0x40, plane: 0x100, depth: 0x200, fmt: Fmt::F16, group: 0, interleave: 1 };
        let at = Region { base: 0, channel: 0x10, row: 0x20, depth: 0 };
        let result = Region { base: 0x100, ..at };
        let t = build::task(ne_pass(1.0), d, tile(4), tile(5), at, result);
        let mem = Memory::new(vec![(4, buffer("x", vec![0; len], false)), (5, buffer("y", vec![0; len], writable))]);
        (mem, t)
    }

    #[test]
    fn a_task_inside_its_buffers_passes() {
        // The last element: plane 1, row 3, column 7: 0x100 + 0xc0 + 0xe, 2 bytes.
        let (mem, t) = copy(0x1d0, true);
        task(&mem, &L2::default(), &t).unwrap();
    }

    #[test]
    fn a_box_past_its_buffer_or_a_read_only_destination_is_refused() {
        let (mem, t) = copy(0x1cf, true);
        let e = task(&mem, &L2::default(), &t).unwrap_err().to_string();
        assert!(e.contains("TileDMASrc reaches bytes [0x0, 0x1d0)"), "{e}");
        let (mem, t) = copy(0x1d0, false);
        let e = task(&mem, &L2::default(), &t).unwrap_err().to_string();
        assert!(e.contains("TileDMADst writes BAR 5"), "{e}");
        // A negative stride reaching before the buffer.
        let (mem, mut t) = copy(0x1d0, true);
        t.sources[0].row = -0x40;
        assert!(task(&mem, &L2::default(), &t).unwrap_err().to_string().contains("[-0xc0,"));
    }

    #[test]
    fn an_l2_region_past_the_l2_or_over_another_is_refused() {
        let (mem, mut t) = copy(0x1d0, true);
        t.l2_result.base = (2 << 20) - 0x40;
        assert!(task(&mem, &L2::default(), &t).unwrap_err().to_string().contains("past the"));
        let (mem, mut t) = copy(0x1d0, true);
        t.l2_result.base = 0x40;
        assert!(task(&mem, &L2::default(), &t).unwrap_err().to_string().contains("overlaps"));
    }
}
