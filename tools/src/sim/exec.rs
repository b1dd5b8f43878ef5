//! One task end to end: tile-DMA sources into L2 (or a source an earlier task left in
//! L2, possibly broadcast, or a source streamed to the NE), the operands an earlier task
//! left in L2, the engine (NE or PE) from the sources to the L2 result (C and W swapped
//! when the NE transposes; one value per channel for a reduction), the result out to
//! DRAM through the destination tile DMA unless it is kept in L2 (or streamed out in
//! pieces straight from the engine); once per repeat
//! (NumGroups: the planar engine's batch loop, a convolution's groups, a reduction's
//! groups, each reading its source in place one step further).

use super::dma;
use super::error::SimError;
use super::memory::{Dense, Dims, Memory, Region, L2};
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
    l2.check_region(t.index, &last, t.result_region_dims(), t.dest.fmt, "the L2 result region of the last group")?;
    // The coefficients, bias and scale vectors are read once for every group.
    let prepared = match &t.unit {
        Unit::Ne(n) => Some(ne::prepare(mem, t.index, n, t.out_dims.c.saturating_mul(t.repeats))?),
        Unit::Pe(_) | Unit::Reduce(_) => None,
    };
    for g in 0..t.repeats {
        let shift = |tile: &Tile| Tile { base: tile.base + tile.group * g as i64, ..*tile };
        let mut l2_sources = t.l2_sources.clone();
        if let Some(first) = l2_sources.first_mut() {
            first.base = first.base.saturating_add(step(t.source_step, g));
        }
        let step = Task {
            sources: t.sources.iter().map(shift).collect(),
            dest: shift(&t.dest),
            l2_sources,
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
            // Read as an earlier task left it; operand 1 may be a box broadcast to the
            // source dimensions (word 0x158 bits 0x1, 0x2, 0x8, 0x100).
            let what = "the L2 source region (SourceType 0: read as an earlier task left it)";
            l2.check_written(td, region, t.source_box, tile.fmt, what)?;
            let x = l2.read(td, region, t.source_box, tile.fmt, what)?;
            inputs.push(operand::broadcast(&x, t.in_dims));
            continue;
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
    l2.check_region(td, &t.l2_result, t.result_region_dims(), t.dest.fmt, result)?;
    let out = match (&t.unit, prepared) {
        (Unit::Ne(n), Some(p)) => ne::run(p, td, n, first, t.out_dims, group)?,
        (Unit::Pe(p), _) => pe::run(p, &inputs),
        (Unit::Reduce(p), _) => pe::reduce(p, &inputs),
        (Unit::Ne(_), None) => return Err(SimError::access(td, "internal: the NE's kernel was not read")),
    };
    // A transposed result: C and W swapped. A reduction's: one value per channel of the
    // view, in channel order (as a column, or along one packed row).
    let out = match t.transposed {
        true => transpose(&out),
        false => Dense { dims: t.result_dims(), data: out.data },
    };
    if t.result_streamed {
        // Streamed out in pieces: the staging area's bytes are not modelled.
        return dma::write(mem, td, &t.dest, &out);
    }
    l2.write(td, &t.l2_result, &out, t.dest.fmt, result)?;
    if !t.store {
        return Ok(());
    }
    dma::store(mem, l2, td, &t.dest, t.result_dims(), &t.l2_result)
}

/// `x` (`C x D x H x W`, D = 1) with C and W swapped: element `(c, h, w)` becomes
/// `(w, h, c)`.
fn transpose(x: &Dense) -> Dense {
    let d = x.dims;
    let dims = Dims { c: d.w, d: 1, h: d.h, w: d.c };
    let data = Dense::coords(dims).map(|(w, _, h, c)| x.at(c, 0, h, w)).collect();
    Dense { dims, data }
}

/// The L2 regions of the sources and the result (of every repeat) must not share bytes
/// (aliasing is not modelled), except a result written exactly where its source lies
/// (same base, strides, box and format: in place, as softmax's exp2 step); the results of
/// a reduction's successive groups must not overlap either.
pub(super) fn check_regions(t: &Task) -> Result<(), SimError> {
    let mut spans: Vec<(&str, u64, u64)> = Vec::new();
    let span = |r: &Region, dims, size| (r.base, r.end(dims, size));
    let last = |bytes: u64| step(bytes, t.repeats.saturating_sub(1));
    let in_place = t.l2_sources.first() == Some(&t.l2_result)
        && t.source_dims() == t.result_dims()
        && t.sources.first().map(|s| s.fmt) == Some(t.dest.fmt)
        && t.source_step == t.result_step;
    for (i, (r, tile)) in t.l2_sources.iter().zip(&t.sources).enumerate() {
        if i == 0 && in_place {
            continue;
        }
        let dims = if i == 0 { t.source_dims() } else { t.in_dims };
        let (a, b) = span(r, dims, tile.fmt.size());
        let b = if i == 0 { b.saturating_add(last(t.source_step)) } else { b };
        spans.push((if i == 0 { "source 1" } else { "source 2" }, a, b));
    }
    if let Some(op) = &t.operand {
        let regions = [(Some(op.region), "operand 2"), (op.third, "operand 3")];
        for (r, name) in regions.iter().filter_map(|(r, n)| r.map(|r| (r, *n))) {
            let (a, b) = span(&r, op.dims, op.fmt.size());
            spans.push((name, a, b));
        }
    }
    let (a, b) = span(&t.l2_result, t.result_region_dims(), t.dest.fmt.size());
    // A reduction's groups lie one after the other (a convolution's interleave theirs
    // channel by channel in the dense result, whose extent `run` checks).
    if matches!(t.unit, Unit::Reduce(_)) && t.repeats > 1 && t.result_step < b - a {
        let reason = format!(
            "the L2 results of successive repeats lie {:#x} bytes apart but each takes {:#x}; aliasing is not modelled",
            t.result_step,
            b - a
        );
        return Err(SimError::access(t.index, reason));
    }
    spans.push(("result", a, b.saturating_add(last(t.result_step))));
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
