//! Tile DMA: a source box read from DRAM into its L2 region (or straight to the NE when
//! it is streamed), and the L2 result written back to DRAM (or the engine's result
//! straight to DRAM when it streams out). Element `(c, d, h, w)` sits at `BAR + base + d * depth + c * plane +
//! h * row + w * element size` (W contiguous, interleave 1), every address checked
//! against the BAR's buffer. A destination with Fmt.Interleave B (a runtime kernel,
//! `docs/rationale/current-compiler/matmul-runtime.md` §1) puts channel c at element
//! `w * B + c % B` of plane `c / B`. Source and DRAM format are the engine format (the decoder
//! refuses conversions), so values move unchanged.

use super::error::SimError;
use super::memory::{check_disjoint, Dense, Dims, Memory, Region, L2};
use super::td::Tile;

fn address(t: &Tile, c: usize, d: usize, h: usize, w: usize) -> i64 {
    let m = |n: usize, s: i64| i64::try_from(n).unwrap_or(i64::MAX).saturating_mul(s);
    // B channels interleaved: channel c is element c % B of each group of B in plane c / B.
    let b = t.interleave.max(1);
    t.base
        .saturating_add(m(d, t.depth))
        .saturating_add(m(c / b, t.plane))
        .saturating_add(m(h, t.row))
        .saturating_add(m(w * b + c % b, t.fmt.size() as i64))
}

/// Reads the `dims` box of `tile` from DRAM; `what` names the block.
pub fn read(mem: &Memory<'_>, td: usize, tile: &Tile, dims: Dims, what: &str) -> Result<Dense, SimError> {
    let mut x = Dense::zeros(dims);
    let ctx = format!("{what} (BaseAddr and strides)");
    for (v, (c, d, h, w)) in x.data.iter_mut().zip(Dense::coords(dims)) {
        *v = mem.read(td, tile.bar, address(tile, c, d, h, w), tile.fmt, &ctx)?;
    }
    Ok(x)
}

/// Reads the `dims` box of `tile` from DRAM into L2 region `r`; `what` names the block.
pub fn load(
    mem: &Memory<'_>,
    l2: &mut L2,
    td: usize,
    tile: &Tile,
    dims: Dims,
    r: &Region,
    what: &str,
) -> Result<(), SimError> {
    let region = format!("the L2 region {what} fills");
    l2.check_region(td, r, dims, tile.fmt, &region)?;
    let x = read(mem, td, tile, dims, what)?;
    l2.write(td, r, &x, tile.fmt, &region)
}

/// Writes the `dims` box of L2 region `r` to DRAM through `tile`.
pub fn store(mem: &mut Memory<'_>, l2: &L2, td: usize, tile: &Tile, dims: Dims, r: &Region) -> Result<(), SimError> {
    let x = l2.read(td, r, dims, tile.fmt, "the L2 result region")?;
    write(mem, td, tile, &x)
}

/// Writes the box `x` to DRAM through `tile` (rounded to its format).
pub fn write(mem: &mut Memory<'_>, td: usize, tile: &Tile, x: &Dense) -> Result<(), SimError> {
    let dims = x.dims;
    let (b, size) = (tile.interleave.max(1), tile.fmt.size() as u64);
    let strides = [(dims.c.div_ceil(b), tile.plane), (dims.h, tile.row), (dims.d, tile.depth)];
    // Interleaved: B channels element by element, W groups of B elements.
    let lanes = [(dims.w, size * b as u64), (b.min(dims.c), size)];
    let layout: Vec<(usize, u64)> = strides.iter().map(|&(n, s)| (n, s.unsigned_abs())).chain(lanes).collect();
    check_disjoint(&layout, tile.fmt.size())
        .map_err(|e| SimError::access(td, format!("TileDMADst strides make result elements overlap: {e}")))?;
    for (&v, (c, d, h, w)) in x.data.iter().zip(Dense::coords(dims)) {
        mem.write(td, tile.bar, address(tile, c, d, h, w), tile.fmt, v, "TileDMADst (BaseAddr and strides)")?;
    }
    Ok(())
}
