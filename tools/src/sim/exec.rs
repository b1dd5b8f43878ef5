//! One task end to end: tile-DMA sources into L2 (or a source an earlier task left in
//! L2, or a source streamed to the NE), the operands an earlier task left in L2, the
//! engine (NE or PE) from the sources to the L2 result (packed into one row when the NE
//! writes a packed vector), the result out to DRAM through the destination tile DMA
//! unless it is kept in L2; once per repeat (NumGroups: the planar engine's batch loop, a
//! convolution's groups).

use super::dma;
use super::error::SimError;
use super::memory::{Dense, Memory, Region, L2};
use super::ne;
use super::operand;
use super::pe;
use super::td::{Task, Tile, Unit};

/// Runs `t` on `mem`, using `l2` as the on-chip buffer, once per repeat, each repeat one
/// group stride further in every tile and one result step further in the L2 result.
pub fn run(mem: &mut Memory<'_>, l2: &mut L2, t: &Task) -> Result<(), SimError> {
    check_regions(t)?;
    // The last repeat's result must lie in L2 too; this also bounds the channels below.
    let last = Region {
        base: t.l2_result.base.saturating_add(step(t.result_step, t.repeats.saturating_sub(1))),
        ..t.l2_result
    };
    l2.check_region(t.index, &last, t.result_dims(), t.dest.fmt, "the L2 result region of the last group")?;
    // The coefficients, bias and scale vectors are read once for every group.
    let prepared = match &t.unit {
        Unit::Ne(n) => Some(ne::prepare(mem, t.index, n, t.out_dims.c.saturating_mul(t.repeats))?),
        Unit::Pe(_) => None,
    };
    for g in 0..t.repeats {
        let shift = |tile: &Tile| Tile { base: tile.base + tile.group * g as i64, ..*tile };
        let step = Task {
            sources: t.sources.iter().map(shift).collect(),
            dest: shift(&t.dest),
            l2_result: Region { base: t.l2_result.base.saturating_add(step(t.result_step, g)), ..t.l2_result },
            repeats: 1,
            ..t.clone()
        };
        run_once(mem, l2, &step, prepared.as_ref(), g)?;
    }
    Ok(())
}

/// `n` steps of `bytes`.
fn step(bytes: u64, n: usize) -> u64 {
    bytes.saturating_mul(n as u64)
}

fn run_once(
    mem: &mut Memory<'_>,
    l2: &mut L2,
    t: &Task,
    prepared: Option<&ne::Prepared>,
    group: usize,
) -> Result<(), SimError> {
    let td = t.index;
    let names = ["TileDMASrc", "the second tile-DMA source (words 0x188..0x1a8)"];
    let mut inputs = Vec::with_capacity(3);
    for (i, ((tile, region), what)) in t.sources.iter().zip(&t.l2_sources).zip(names).enumerate() {
        if i == 0 && t.resident {
            let what = "the L2 source region (SourceType 0: read as an earlier task left it)";
            l2.check_written(td, region, t.in_dims, tile.fmt, what)?;
        } else if i == 0 && t.streamed {
            // The values go to the NE as the DMA delivers them; the staging area (one
            // piece per row and channel) must lie in L2, its bytes are not modelled.
            let staging = "the L2 staging area of the streamed source (SourceBase and strides)";
            l2.check_region(td, region, t.source_dims(), tile.fmt, staging)?;
            inputs.push(dma::read(mem, td, tile, t.in_dims, what)?);
            continue;
        } else {
            dma::load(mem, l2, td, tile, t.in_dims, region, what)?;
        }
        inputs.push(l2.read(td, region, t.in_dims, tile.fmt, "an L2 source region")?);
    }
    if let Some(op) = &t.operand {
        inputs.extend(operand::read(l2, td, op, t.in_dims)?);
    }
    let first = inputs.first().ok_or_else(|| SimError::access(td, "no source"))?;
    // Checked before the engine allocates its result: the region bounds its size.
    let result = "the L2 result region (ResultBase and strides)";
    l2.check_region(td, &t.l2_result, t.result_dims(), t.dest.fmt, result)?;
    let out = match (&t.unit, prepared) {
        (Unit::Ne(n), Some(p)) => ne::run(p, td, n, first, t.out_dims, group)?,
        (Unit::Pe(p), _) => pe::run(p, &inputs),
        (Unit::Ne(_), None) => return Err(SimError::access(td, "internal: the NE's kernel was not read")),
    };
    // A packed result: the Cout x 1 x 1 values, in channel order, as one row.
    let out = Dense { dims: t.result_dims(), data: out.data };
    l2.write(td, &t.l2_result, &out, t.dest.fmt, result)?;
    if !t.store {
        return Ok(());
    }
    dma::store(mem, l2, td, &t.dest, t.out_dims, &t.l2_result)
}

/// The L2 regions of the sources and the result (of every repeat) must not share bytes
/// (aliasing is not modelled).
fn check_regions(t: &Task) -> Result<(), SimError> {
    let mut spans: Vec<(&str, u64, u64)> = Vec::new();
    let span = |r: &Region, dims, size| (r.base, r.end(dims, size));
    for (i, (r, tile)) in t.l2_sources.iter().zip(&t.sources).enumerate() {
        let dims = if i == 0 { t.source_dims() } else { t.in_dims };
        let (a, b) = span(r, dims, tile.fmt.size());
        spans.push((if i == 0 { "source 1" } else { "source 2" }, a, b));
    }
    if let Some(op) = &t.operand {
        let regions = [(Some(op.region), "operand 2"), (op.third, "operand 3")];
        for (r, name) in regions.iter().filter_map(|(r, n)| r.map(|r| (r, *n))) {
            let (a, b) = span(&r, op.dims, op.fmt.size());
            spans.push((name, a, b));
        }
    }
    let (a, b) = span(&t.l2_result, t.result_dims(), t.dest.fmt.size());
    spans.push(("result", a, b.saturating_add(step(t.result_step, t.repeats.saturating_sub(1)))));
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
