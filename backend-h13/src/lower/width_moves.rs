//! Movement along the width that the tile DMA cannot address, run with C and W exchanged
//! (rewritten before grouping, as `axis_moves` does). The tile DMA reads and writes from
//! 64-byte units and a row is contiguous, so along W a copy can neither start inside a
//! unit nor step over elements nor repeat one by a zero stride. Along C each element of a
//! row is a plane of its own, on a unit of its own. So these ops run between two NE passes
//! exchanging C and W (`movement`'s transposing pass), the op itself along C:
//! - a slice (`input_view`) along W starting inside a unit, or with a step above 1;
//! - a concatenation along W whose parts start inside a unit (every part is exchanged);
//! - a constant pad whose left pad along W does not fill whole units (when the channels'
//!   left pad, which moves onto W, does);
//! - a broadcast along W, unless the planar engine reads it from L2 (`l2_pair`); along
//!   other axes too, those first (a copy with zero strides), then W exchanged.
//!
//! Two tasks more than the op (one per concatenated part more), each of a kind the engine
//! runs. No program of Apple's shows these cases (the corpus slices and concatenates on
//! whole units); the simulator checks the plan against the reference (`movement`, `pad`
//! and `concat` property families).

use super::axis_moves::{chain, moved_axes, permuted, SWAP};
use super::movement::DMA_UNIT;
use super::AXES;
use anec_ir::{Attr, Module, Op, OpCode, TensorType};

const C: usize = 1;
const W: usize = 4;

/// True when `op` addresses the width in a way only its exchanged form runs.
pub fn needed(m: &Module, op: &Op) -> bool {
    let types: Vec<&TensorType> = op.operands.iter().chain(&op.results).filter_map(|&v| m.ty(v)).collect();
    if types.len() != op.operands.len() + op.results.len() || types.iter().any(|t| t.d > 1) {
        return false;
    }
    let Some(elem) = types.first().map(|t| t.dtype.size() as u64) else { return false };
    let inside_unit = |elements: u64| !(elements * elem).is_multiple_of(DMA_UNIT);
    match op.opcode {
        OpCode::InputView if axis(op) == Some(W) => {
            let int = |k: &str| op.attr(k).and_then(Attr::as_int).unwrap_or(0).max(0) as u64;
            inside_unit(int("offset")) || int("step") > 1
        }
        OpCode::Concat if axis(op) == Some(W) => {
            let mut start = 0;
            types[..op.operands.len()].iter().any(|t| {
                let inside = inside_unit(start);
                start += u64::from(t.w);
                inside
            })
        }
        OpCode::Pad => {
            let pads = op.attr("pad").and_then(Attr::as_int_array).unwrap_or_default();
            let before = |a: usize| pads.get(2 * a).copied().unwrap_or(0).max(0) as u64;
            let constant = op.attr("mode").and_then(Attr::as_str) == Some("constant");
            constant && inside_unit(before(W)) && !inside_unit(before(C))
        }
        // (A broadcast read by the planar engine as its second operand is left to
        // `l2_pair`: the PE repeats it along W in L2.)
        OpCode::Broadcast => {
            let axes = super::axis_list(op, "axes").unwrap_or_default();
            let planar = op.results.first().is_some_and(|r| super::l2_pair::plan_ops(m).kept.contains_key(r));
            axes.contains(&W) && !planar
        }
        _ => false,
    }
}

/// Appends `op` between C <-> W passes: each operand exchanged, the op along C, its result
/// exchanged back (a broadcast along other axes as well: those first).
pub fn exchanged(m: &mut Module, op: &Op) {
    if let Some((others, along_w)) = split_broadcast(m, op) {
        m.ops.push(others);
        exchanged(m, &along_w);
        return;
    }
    let (Some(&r), Some(&rt)) = (op.results.first(), op.results.first().and_then(|&v| m.ty(v))) else {
        m.ops.push(op.clone());
        return;
    };
    let operands =
        op.operands.iter().enumerate().map(|(i, &x)| chain(m, op, &format!("_in{i}"), x, SWAP, None)).collect();
    let moved_r = m.add_value(permuted(&rt, SWAP));
    let mut moved = op.clone();
    (moved.operands, moved.results) = (operands, vec![moved_r]);
    moved.attrs = moved_axes(&op.attrs, SWAP);
    if let Some(pads) = op.attr("pad").and_then(Attr::as_int_array) {
        moved.attrs.insert("pad".into(), Attr::Array(swapped_pads(&pads).into_iter().map(Attr::Int).collect()));
    }
    m.ops.push(moved);
    chain(m, op, "_out", moved_r, SWAP, Some(r));
}

/// A broadcast along W and other axes as two: along the others, then along W.
fn split_broadcast(m: &mut Module, op: &Op) -> Option<(Op, Op)> {
    let axes = super::axis_list(op, "axes").unwrap_or_default();
    if op.opcode != OpCode::Broadcast || axes == [W] {
        return None;
    }
    let (&x, &r) = (op.operands.first()?, op.results.first()?);
    let (xt, rt) = (*m.ty(x)?, *m.ty(r)?);
    let mid = m.add_value(TensorType { w: xt.w, ..rt });
    let names = |keep: &dyn Fn(usize) -> bool| {
        let v = axes.iter().filter(|&&a| keep(a)).map(|&a| Attr::Str(AXES[a].into())).collect();
        Attr::Array(v)
    };
    let mut others = op.clone();
    others.name = format!("{}_others", op.name);
    others.results = vec![mid];
    others.attrs.insert("axes".into(), names(&|a| a != W));
    let mut along_w = op.clone();
    along_w.operands = vec![mid];
    along_w.attrs.insert("axes".into(), names(&|a| a == W));
    Some((others, along_w))
}

/// The (before, after) pads of C and W exchanged.
fn swapped_pads(pads: &[i64]) -> Vec<i64> {
    let mut p = pads.to_vec();
    if p.len() == 2 * AXES.len() {
        p.swap(2 * C, 2 * W);
        p.swap(2 * C + 1, 2 * W + 1);
    }
    p
}

fn axis(op: &Op) -> Option<usize> {
    op.attr("axis").and_then(Attr::as_str).and_then(|n| AXES.iter().position(|a| *a == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_of_channels_and_width_exchange() {
        assert_eq!(swapped_pads(&[0, 0, 1, 2, 0, 0, 3, 4, 5, 6]), vec![0, 0, 5, 6, 0, 0, 3, 4, 1, 2]);
    }
}
