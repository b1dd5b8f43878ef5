//! Offsets in one buffer for values alive over intervals of the schedule.
//!
//! First fit in the order the values are first written (then by the caller's order): each
//! value takes the lowest aligned offset where it overlaps no value placed before it
//! whose interval overlaps its own. A value whose last reader ran before another's writer
//! leaves its bytes to it, so the buffer holds at most what is alive at once (plus the
//! fragmentation first fit leaves; on a chain it is the two largest neighbours).

use super::liveness::Interval;

/// Where a value went: its offset and the end of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// Byte offset in the buffer (a multiple of the alignment).
    pub offset: u64,
    /// Bytes it takes.
    pub size: u64,
}

/// A buffer being filled: values placed so far and the end of its bytes.
#[derive(Debug, Clone, Default)]
pub struct Packer {
    align: u64,
    placed: Vec<(Placed, Interval)>,
    /// Indices into `placed` of the values not dead before the latest first position
    /// placed so far (the only ones a value placed in order can overlap).
    alive: Vec<usize>,
    /// The latest first position placed so far.
    latest: usize,
    end: u64,
}

impl Packer {
    /// An empty buffer whose offsets are multiples of `align` (at least 1).
    pub fn new(align: u64) -> Self {
        Packer { align: align.max(1), placed: Vec::new(), alive: Vec::new(), latest: 0, end: 0 }
    }

    fn up(&self, v: u64) -> u64 {
        v.div_ceil(self.align).saturating_mul(self.align)
    }

    /// The lowest aligned offset where `size` bytes alive over `live` overlap no value
    /// placed before that is alive with it. Called in the order values are first written,
    /// this is first fit.
    pub fn place(&mut self, size: u64, live: Interval) -> Placed {
        // In order, a value dead before this one's first position is dead for every later
        // one too: only the others are looked at (a value out of order looks at all).
        let in_order = live.first >= self.latest;
        let busy: Vec<Placed> = if in_order {
            let placed = &self.placed;
            self.alive.retain(|&i| placed.get(i).is_some_and(|(_, l)| l.last >= live.first));
            self.latest = live.first;
            let alive = self.alive.iter().filter_map(|&i| self.placed.get(i));
            alive.filter(|(_, l)| l.overlaps(&live)).map(|(p, _)| *p).collect()
        } else {
            self.placed.iter().filter(|(_, l)| l.overlaps(&live)).map(|(p, _)| *p).collect()
        };
        let candidates = std::iter::once(0).chain(busy.iter().map(|p| self.up(p.offset.saturating_add(p.size))));
        let free = |at: u64| busy.iter().all(|p| at.saturating_add(size) <= p.offset || p.offset + p.size <= at);
        let offset = candidates.filter(|&at| free(at)).min().unwrap_or(0);
        let p = Placed { offset, size };
        self.alive.push(self.placed.len());
        self.placed.push((p, live));
        self.end = self.end.max(offset.saturating_add(size));
        p
    }

    /// The buffer's size: the end of the last byte placed, rounded up to the alignment.
    pub fn size(&self) -> u64 {
        self.up(self.end)
    }
}

/// The offset of each `(size, interval)` in `values`, in its order, placed first fit in
/// the order of their first positions (then of `values`), and the buffer's size.
pub fn pack(values: &[(u64, Interval)], align: u64) -> (Vec<Placed>, u64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by_key(|&i| (values[i].1.first, i));
    let mut packer = Packer::new(align);
    let mut placed = vec![Placed { offset: 0, size: 0 }; values.len()];
    for i in order {
        placed[i] = packer.place(values[i].0, values[i].1);
    }
    (placed, packer.size())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(first: usize, last: usize) -> Interval {
        Interval { first, last }
    }

    #[test]
    fn a_chain_alternates_between_two_places() {
        // v_i written by group i, read by group i + 1.
        let values: Vec<(u64, Interval)> = (0..64).map(|i| (1000, iv(i, i + 1))).collect();
        let (placed, size) = pack(&values, 64);
        assert_eq!(size, 2048);
        for (i, p) in placed.iter().enumerate() {
            assert_eq!(p.offset, if i % 2 == 0 { 0 } else { 1024 }, "value {i}");
        }
    }

    #[test]
    fn values_alive_together_never_overlap() {
        let values = [(100, iv(0, 5)), (300, iv(1, 2)), (200, iv(3, 4)), (50, iv(2, 3)), (400, iv(6, 7))];
        let (placed, size) = pack(&values, 64);
        for a in 0..values.len() {
            for b in a + 1..values.len() {
                let (pa, pb) = (placed[a], placed[b]);
                let disjoint = pa.offset + pa.size <= pb.offset || pb.offset + pb.size <= pa.offset;
                assert!(disjoint || !values[a].1.overlaps(&values[b].1), "{a} and {b}");
            }
            assert_eq!(placed[a].offset % 64, 0);
        }
        // The last value reuses the start once everything before it is dead.
        assert_eq!(placed[4].offset, 0);
        assert_eq!(size, 512);
    }

    #[test]
    fn a_value_placed_out_of_order_still_avoids_every_value_alive_with_it() {
        let mut p = Packer::new(64);
        let a = p.place(64, iv(0, 9));
        let b = p.place(64, iv(5, 6));
        let c = p.place(64, iv(8, 9)); // b is dead by now: c may take its place
        let d = p.place(64, iv(2, 6)); // out of order: alive with a and b
        assert_eq!((a.offset, b.offset, c.offset), (0, 64, 64));
        assert!(d.offset != a.offset && d.offset != b.offset, "{d:?}");
    }

    #[test]
    fn nothing_to_place_is_an_empty_buffer() {
        assert_eq!(pack(&[], 64), (vec![], 0));
    }
}
