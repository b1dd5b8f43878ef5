//! One task end to end: tile-DMA sources into L2, the engine (NE or PE) from the L2
//! sources to the L2 result, the result out to DRAM through the destination tile DMA.

use super::dma;
use super::error::SimError;
use super::memory::{Memory, Region, L2};
use super::ne;
use super::pe;
use super::td::{Task, Tile, Unit};

/// Runs `t` on `mem`, using `l2` as the on-chip buffer, once per repeat (the planar
/// engine's batch loop), each repeat one group stride further in every tile.
pub fn run(mem: &mut Memory<'_>, l2: &mut L2, t: &Task) -> Result<(), SimError> {
    check_regions(t)?;
    for g in 0..t.repeats {
        let shift = |tile: &Tile| Tile { base: tile.base + tile.group * g as i64, ..*tile };
        let step =
            Task { sources: t.sources.iter().map(shift).collect(), dest: shift(&t.dest), repeats: 1, ..t.clone() };
        run_once(mem, l2, &step)?;
    }
    Ok(())
}

fn run_once(mem: &mut Memory<'_>, l2: &mut L2, t: &Task) -> Result<(), SimError> {
    let td = t.index;
    let names = ["TileDMASrc", "the second tile-DMA source (words 0x188..0x1a8)"];
    let mut inputs = Vec::with_capacity(t.sources.len());
    for ((tile, region), what) in t.sources.iter().zip(&t.l2_sources).zip(names) {
        dma::load(mem, l2, td, tile, t.in_dims, region, what)?;
        inputs.push(l2.read(td, region, t.in_dims, tile.fmt, "an L2 source region")?);
    }
    let first = inputs.first().ok_or_else(|| SimError::access(td, "no source"))?;
    // Checked before the engine allocates its result: the region bounds its size.
    let result = "the L2 result region (ResultBase and strides)";
    l2.check_region(td, &t.l2_result, t.out_dims, t.dest.fmt, result)?;
    let out = match &t.unit {
        Unit::Ne(n) => ne::run(mem, td, n, first, t.out_dims)?,
        Unit::Pe(p) => pe::run(p, &inputs),
    };
    l2.write(td, &t.l2_result, &out, t.dest.fmt, result)?;
    dma::store(mem, l2, td, &t.dest, t.out_dims, &t.l2_result)
}

/// The L2 regions of the sources and the result must not share bytes (aliasing is not
/// modelled).
fn check_regions(t: &Task) -> Result<(), SimError> {
    let mut spans: Vec<(&str, u64, u64)> = Vec::new();
    let span = |r: &Region, dims, size| (r.base, r.end(dims, size));
    for (i, (r, tile)) in t.l2_sources.iter().zip(&t.sources).enumerate() {
        let (a, b) = span(r, t.in_dims, tile.fmt.size());
        spans.push((if i == 0 { "source 1" } else { "source 2" }, a, b));
    }
    let (a, b) = span(&t.l2_result, t.out_dims, t.dest.fmt.size());
    spans.push(("result", a, b));
    for (i, x) in spans.iter().enumerate() {
        for y in spans.iter().skip(i + 1) {
            if x.1 < y.2 && y.1 < x.2 {
                let reason = format!(
                    "the L2 {} region [{:#x}, {:#x}) overlaps the {} region [{:#x}, {:#x}); aliasing is not modelled",
                    x.0, x.1, x.2, y.0, y.1, y.2
                );
                return Err(SimError::access(t.index, reason));
            }
        }
    }
    Ok(())
}
