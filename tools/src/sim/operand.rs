//! The operands a planar-engine task reads from L2 where an earlier task of the run left
//! them (Common.Cfg 0x31 / 0x41): every byte read must have been written in this run, and
//! the box (extent 1 along each broadcast axis of word 0x158) is repeated along those
//! axes to the source's dimensions. The same operands serve every repeat of the task
//! (NumGroups, the batch loop).

use super::error::SimError;
use super::memory::{Dense, Dims, L2};
use super::td::L2Operand;

/// Operand 2 (and operand 3), each broadcast to `to`.
pub fn read(l2: &L2, td: usize, op: &L2Operand, to: Dims) -> Result<Vec<Dense>, SimError> {
    let regions = [
        (Some(op.region), "operand 2 in L2 (words 0x1fc..0x204)"),
        (op.third, "operand 3 in L2 (words 0x1fc..0x204, one row stride further)"),
    ];
    let mut out = Vec::with_capacity(2);
    for (region, what) in regions {
        let Some(region) = region else { continue };
        l2.check_written(td, &region, op.dims, op.fmt, what)?;
        out.push(broadcast(&l2.read(td, &region, op.dims, op.fmt, what)?, to));
    }
    Ok(out)
}

/// `v` repeated along each axis where it has extent 1 (its other extents equal `to`'s).
pub fn broadcast(v: &Dense, to: Dims) -> Dense {
    let d = v.dims;
    let pick = |i: usize, n: usize| if n == 1 { 0 } else { i };
    let data =
        Dense::coords(to).map(|(c, z, h, w)| v.at(pick(c, d.c), pick(z, d.d), pick(h, d.h), pick(w, d.w))).collect();
    Dense { dims: to, data }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::sim::memory::{Fmt, Region};

    fn dims(c: usize, h: usize, w: usize) -> Dims {
        Dims { c, d: 1, h, w }
    }

    #[test]
    fn broadcast_repeats_the_extent_one_axes() {
        let v = Dense { dims: dims(2, 1, 1), data: vec![1.0, 2.0] };
        assert_eq!(broadcast(&v, dims(2, 1, 3)).data, vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        let v = Dense { dims: dims(1, 2, 1), data: vec![5.0, 7.0] };
        assert_eq!(broadcast(&v, dims(2, 2, 2)).data, vec![5.0, 5.0, 7.0, 7.0, 5.0, 5.0, 7.0, 7.0]);
    }

    /// An operand no earlier task wrote is a run-time error naming it.
    #[test]
    fn unwritten_operands_are_errors() {
        let mut l2 = L2::default();
        let region = Region { base: 0x40, channel: 2, row: 0x20, depth: 0 };
        let op = L2Operand { region, dims: dims(4, 1, 1), fmt: Fmt::F16, broadcast: 0x200, third: None };
        let e = read(&l2, 3, &op, dims(4, 2, 2)).unwrap_err().to_string();
        assert!(e.starts_with("TD 3: operand 2 in L2") && e.contains("was not written"), "{e}");
        let v = Dense { dims: dims(1, 1, 4), data: vec![1.0, 2.0, 3.0, 4.0] };
        l2.write(0, &Region { base: 0x40, channel: 0x10, row: 0x10, depth: 0 }, &v, Fmt::F16, "r").unwrap();
        let got = read(&l2, 3, &op, dims(4, 1, 2)).unwrap();
        assert_eq!(got[0].data, vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]);
        let third = Some(Region { base: 0x60, ..region });
        let e = read(&l2, 3, &L2Operand { third, ..op }, dims(4, 1, 1)).unwrap_err().to_string();
        assert!(e.starts_with("TD 3: operand 3 in L2"), "{e}");
    }
}
