//! A growing byte buffer whose room past its end is known to be zero: the `__const`
//! section under construction.
//!
//! The room is allocated zeroed at once (`vec![0; n]`: the system hands over zero pages
//! and touches none), so that extending the section by a weight bank's length writes no
//! zeros first: each page is touched once, by the thread that packs into it. A `Vec`'s
//! `resize` would zero the whole section on one thread before packing it, which was a
//! quarter of a large model's compile.

/// `len` bytes of content, then zeros up to the allocation's end.
#[derive(Debug, Clone, Default)]
pub struct Zeroed {
    buf: Vec<u8>,
    len: usize,
}

impl Zeroed {
    /// An empty buffer with `room` zero bytes ready.
    pub fn with_room(room: usize) -> Self {
        Zeroed { buf: vec![0; room], len: 0 }
    }

    /// The content.
    pub fn as_slice(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The content, to be changed in place.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.buf.get_mut(..self.len).unwrap_or_default()
    }

    /// The content's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no content.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Extends the content by `n` zero bytes and returns them, to be filled.
    pub fn grow(&mut self, n: usize) -> &mut [u8] {
        let start = self.len;
        let end = start.saturating_add(n);
        if end > self.buf.len() {
            // Past the room: grow (zeroing only what is new), at least doubling.
            self.buf.resize(end.max(self.buf.len().saturating_mul(2)), 0);
        }
        self.len = end;
        self.buf.get_mut(start..end).unwrap_or_default()
    }

    /// Appends `b`.
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        self.grow(b.len()).copy_from_slice(b);
    }

    /// Pads the content with zeros to a multiple of `align`.
    pub fn align(&mut self, align: usize) {
        let pad = self.len.next_multiple_of(align.max(1)) - self.len;
        self.grow(pad);
    }

    /// Cuts the content to `n` bytes, zeroing what is cut (the room must stay zero).
    pub fn truncate(&mut self, n: usize) {
        if n < self.len {
            if let Some(cut) = self.buf.get_mut(n..self.len) {
                cut.fill(0);
            }
            self.len = n;
        }
    }

    /// The content as a vector (the room past it stays allocated, untouched).
    pub fn into_vec(mut self) -> Vec<u8> {
        self.buf.truncate(self.len);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_stays_zero_through_growth_and_cuts() {
        let mut z = Zeroed::with_room(8);
        z.extend_from_slice(&[1, 2, 3]);
        z.align(4);
        assert_eq!(z.as_slice(), &[1, 2, 3, 0]);
        z.grow(2).copy_from_slice(&[9, 9]);
        z.truncate(2);
        assert_eq!(z.grow(4), &[0, 0, 0, 0], "cut bytes read back as zero");
        z.extend_from_slice(&[7; 10]);
        assert_eq!(z.len(), 16);
        assert_eq!(z.into_vec().len(), 16);
    }
}
