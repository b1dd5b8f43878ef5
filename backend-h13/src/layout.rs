//! Memory layout of bound tensors in DRAM and of task sources and results in L2.
//!
//! DRAM (tile DMA): W is contiguous; the row stride is round_up(W * elem, 64), the plane
//! (channel) stride round_up(row * H, 64), the depth stride C * plane and the batch stride
//! D * depth, unless the network description states a stride. All strides are multiples of
//! 64 bytes. L2 (on-chip): a source is stored row-major by H, then channel, then W, with a
//! channel stride of round_up(W * elem, 16).

use anec_ir::{DType, Layout, TensorType};

/// Rounds `v` up to a multiple of `to` (a power of two or any positive number).
pub fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to) * to
}

/// Byte strides of a tensor in DRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strides {
    /// Between rows (H).
    pub row: u64,
    /// Between channels (planes).
    pub plane: u64,
    /// Between depth slices.
    pub depth: u64,
    /// Between batches.
    pub batch: u64,
}

impl Strides {
    /// Strides of `ty`, taking any stride the source states.
    pub fn of(ty: &TensorType, layout: &Layout) -> Strides {
        let elem = ty.dtype.size() as u64;
        let row = layout.row_stride.unwrap_or_else(|| round_up(u64::from(ty.w) * elem, 64));
        let plane = layout.plane_stride.unwrap_or_else(|| round_up(row * u64::from(ty.h), 64));
        let depth = layout.depth_stride.unwrap_or(plane * u64::from(ty.c));
        let batch = layout.batch_stride.unwrap_or(depth * u64::from(ty.d));
        Strides { row, plane, depth, batch }
    }

    /// Bytes the whole buffer spans: the batch stride times N, or the depth stride times D
    /// when the depth slices are outermost (a netplist may lay batches inside each slice).
    pub fn buffer_size(&self, ty: &TensorType) -> u64 {
        (self.batch * u64::from(ty.n)).max(self.depth * u64::from(ty.d))
    }

    /// Bytes from the first element to the end of the last one.
    pub fn extent(&self, ty: &TensorType) -> u64 {
        let elem = ty.dtype.size() as u64;
        let last = |n: u32| u64::from(n.saturating_sub(1));
        last(ty.n) * self.batch
            + last(ty.d) * self.depth
            + last(ty.c) * self.plane
            + last(ty.h) * self.row
            + last(ty.w) * elem
            + elem
    }
}

/// Layout of one source or result region in L2, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Region {
    /// Offset of the region in L2.
    pub base: u64,
    /// Between channels.
    pub channel: u64,
    /// Between rows (all channels of one row).
    pub row: u64,
    /// One unpadded row: the C channels of one H position.
    pub plane: u64,
    /// Bytes the region occupies.
    pub size: u64,
}

/// Bytes of one L2 granule: channel strides are whole granules.
pub const L2_GRANULE: u64 = 16;

impl L2Region {
    /// The L2 region of a `c` x `h` x `w` tensor starting at `base`, with the channel
    /// stride of its rows capped at `cap` bytes (a streamed row is cut into pieces of at
    /// most `cap`) and `pad` bytes after each row (so that successive rows start in other
    /// L2 banks; the rules are in `encode/l2.rs`). `plane` is one unpadded row: C channels.
    pub fn new(base: u64, c: u32, h: u32, w: u32, dtype: DType, cap: u64, pad: u64) -> L2Region {
        let channel = round_up(u64::from(w) * dtype.size() as u64, L2_GRANULE).min(cap);
        let plane = channel * u64::from(c);
        let row = plane + pad;
        L2Region { base, channel, row, plane, size: row * u64::from(h) }
    }

    /// The unpadded row (C channels) of a `c` x `w` tensor with the channel cap.
    pub fn unpadded_row(c: u32, w: u32, dtype: DType, cap: u64) -> u64 {
        round_up(u64::from(w) * dtype.size() as u64, L2_GRANULE).min(cap) * u64::from(c)
    }

    /// First byte after the region.
    pub fn end(&self) -> u64 {
        self.base + self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_strides_match_apple() {
        let t = TensorType::nchw(1, 1, 1, 77, DType::F16);
        let s = Strides::of(&t, &Layout::default());
        assert_eq!((s.row, s.plane, s.depth, s.batch), (0xc0, 0xc0, 0xc0, 0xc0));
        assert_eq!(s.extent(&t), 0x9a);
        let t = TensorType::nchw(1, 64, 1, 1, DType::F16);
        let s = Strides::of(&t, &Layout::default());
        assert_eq!((s.plane, s.batch, s.extent(&t)), (0x40, 0x1000, 0xfc2));
    }

    #[test]
    fn l2_regions_match_apple() {
        let r = L2Region::new(0, 1, 1, 77, DType::F16, u64::MAX, 0);
        assert_eq!((r.channel, r.row, r.end()), (0xa0, 0xa0, 0xa0));
        let r = L2Region::new(0, 64, 1, 1, DType::F16, u64::MAX, 0x20);
        assert_eq!((r.channel, r.row, r.plane, r.end()), (0x10, 0x420, 0x400, 0x420));
        let r = L2Region::new(0, 64, 8, 256, DType::F16, 0x100, 0);
        assert_eq!((r.channel, r.plane, r.size), (0x100, 0x4000, 0x20000));
    }
}
