//! The Asahi Linux `.anec` form (eiln/anecc, eiln/ane): what the Linux ANE driver needs.
//!
//! Layout, little-endian, packed:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0x00 | u64 | `size` = round_up(`tsk_size`, 16) + `krn_size` |
//! | 0x08 | u32 | `td_size` (4 * (`td_words` + 1) = 0x274 on H13) |
//! | 0x0C | u32 | `td_count` |
//! | 0x10 | u64 | `tsk_size`: bytes of `__text` |
//! | 0x18 | u64 | `krn_size`: bytes of `__const` |
//! | 0x20 | u32 | `src_count`: inputs |
//! | 0x24 | u32 | `dst_count`: outputs |
//! | 0x28 | u32\[32\] | tiles per BAR in 16 KiB units (\[0\] = `size` rounded up) |
//! | 0xA8 | u64\[32\]\[6\] | per BAR: N, C, H, W, plane (C) stride, row (H) stride |
//!
//! The header uses 0x6A8 bytes and is zero-padded to 0x1000; then come `size` bytes:
//! the TDs, zeros up to a 16-byte boundary, the weights. The driver places the weights
//! at BAR 0 + round_up(`tsk_size`, 16), which equals their `.hwx` placement
//! (round_up(text, 0x40)) whenever the TD chain is 0x300*(n-1) + 0x274 bytes long.
//!
//! Tensors keep the BAR index the TDs name them by: tiles and N/C/H/W go to that index.
//! Intermediates get only their tiles, with N/C/H/W left zero, as eiln/anecc writes them
//! (`anect_print` lists `nchw` for destinations and sources only; libane allocates an
//! intermediate BAR from its tile count alone). They count in neither `src_count` nor
//! `dst_count`.

use crate::bytes::{add, fit_u32, len64, round_up, Input, Output};
use crate::hwx::file::BAR_COUNT;
use crate::hwx::model::{Hwx, TensorRole};
use crate::CodegenError;

/// Bytes reserved for the header; the data starts here.
pub const ANEC_HEADER_SIZE: u64 = 0x1000;
/// Bytes of the header actually used.
pub const ANEC_HEADER_USED: u64 = 0x6A8;
/// One tile: 16 KiB.
pub const ANEC_TILE: u64 = 0x4000;
/// Alignment of the weights after the TDs.
pub const ANEC_CMD_GRAN: u64 = 16;

/// An `.anec` file, every header field by name plus the two data blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnecFile {
    /// Bytes of data after the header: round_up(`tsk_size`, 16) + `krn_size`.
    pub size: u64,
    /// Bytes per TD.
    pub td_size: u32,
    /// Number of TDs.
    pub td_count: u32,
    /// Bytes of the TD chain.
    pub tsk_size: u64,
    /// Bytes of the weights.
    pub krn_size: u64,
    /// Number of inputs.
    pub src_count: u32,
    /// Number of outputs.
    pub dst_count: u32,
    /// Buffer size per BAR in 16 KiB tiles.
    pub tiles: [u32; BAR_COUNT],
    /// Per BAR: N, C, H, W, plane stride, row stride (zero for intermediates).
    pub nchw: [[u64; 6]; BAR_COUNT],
    /// The TD chain (`tsk_size` bytes).
    pub text: Vec<u8>,
    /// The weights (`krn_size` bytes).
    pub consts: Vec<u8>,
}

impl AnecFile {
    /// The `.anec` content of a program.
    ///
    /// # Errors
    /// A tensor BAR index that is 0, 1, out of range or taken twice; a size or count too
    /// wide for its field.
    pub fn from_hwx(h: &Hwx) -> Result<Self, CodegenError> {
        let tsk_size = len64(&h.text);
        let krn_size = len64(&h.consts);
        let size = add(round_up(tsk_size, ANEC_CMD_GRAN, "tsk_size")?, krn_size, "anec size")?;
        let td_size = add(u64::from(h.td_words), 1, "td_size").map(|w| w * 4)?;
        let mut f = Self {
            size,
            td_size: fit_u32(td_size, "td_size")?,
            td_count: h.td_count,
            tsk_size,
            krn_size,
            src_count: count(h, TensorRole::Input)?,
            dst_count: count(h, TensorRole::Output)?,
            tiles: [0; BAR_COUNT],
            nchw: [[0; 6]; BAR_COUNT],
            text: h.text.clone(),
            consts: h.consts.to_vec(),
        };
        f.tiles[0] = tiles(size, "program")?;
        for t in &h.tensors {
            let i = usize::from(t.bar);
            let tile = f.tiles.get_mut(i).filter(|n| i >= 2 && **n == 0).ok_or_else(|| {
                CodegenError::Invalid(format!(
                    "tensor {:?}: BAR index {} is reserved, out of range or taken",
                    t.name, t.bar
                ))
            })?;
            *tile = tiles(t.section_size, &t.name)?;
            if t.role == TensorRole::Intermediate {
                continue;
            }
            let [n, c, hh, w, _] = t.dims;
            if let Some(slot) = f.nchw.get_mut(i) {
                *slot = [n, c, hh, w, t.strides[1], t.strides[2]];
            }
        }
        Ok(f)
    }

    /// The file bytes, after checking that the sizes agree with the blobs.
    ///
    /// # Errors
    /// [`CodegenError::Invalid`] if `size`, `tsk_size` or `krn_size` disagree with the
    /// blobs.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CodegenError> {
        self.check_sizes()?;
        let mut out = Output::new();
        out.u64(self.size);
        out.u32(self.td_size);
        out.u32(self.td_count);
        out.u64(self.tsk_size);
        out.u64(self.krn_size);
        out.u32(self.src_count);
        out.u32(self.dst_count);
        self.tiles.iter().for_each(|&t| out.u32(t));
        self.nchw.iter().flatten().for_each(|&v| out.u64(v));
        out.pad_to(ANEC_HEADER_SIZE, "anec header")?;
        out.bytes(&self.text);
        out.align(ANEC_CMD_GRAN)?;
        out.bytes(&self.consts);
        Ok(out.finish())
    }

    /// `size`, `tsk_size` and `krn_size` must describe `text` and `consts`.
    fn check_sizes(&self) -> Result<(), CodegenError> {
        let expected = add(round_up(self.tsk_size, ANEC_CMD_GRAN, "tsk_size")?, self.krn_size, "size")?;
        if self.tsk_size != len64(&self.text) || self.krn_size != len64(&self.consts) || self.size != expected {
            return Err(CodegenError::Invalid(format!(
                "anec sizes disagree: size {:#x} (expected {expected:#x}), tsk_size {:#x} for {:#x} TD bytes, \
                 krn_size {:#x} for {:#x} weight bytes",
                self.size,
                self.tsk_size,
                self.text.len(),
                self.krn_size,
                self.consts.len()
            )));
        }
        Ok(())
    }
}

/// Number of tensors of `role`.
fn count(h: &Hwx, role: TensorRole) -> Result<u32, CodegenError> {
    let n = h.tensors.iter().filter(|t| t.role == role).count() as u64;
    fit_u32(n, "tensor count")
}

/// `bytes` in 16 KiB tiles, rounded up.
fn tiles(bytes: u64, what: &str) -> Result<u32, CodegenError> {
    fit_u32(round_up(bytes, ANEC_TILE, what)? / ANEC_TILE, &format!("tiles of {what}"))
}

/// Writes the `.anec` form of a program.
///
/// # Errors
/// As [`AnecFile::from_hwx`].
pub fn write_anec(h: &Hwx) -> Result<Vec<u8>, CodegenError> {
    AnecFile::from_hwx(h)?.to_bytes()
}

/// Reads an `.anec` file. Non-zero padding or bytes after the data are errors, so that
/// `read_anec(b)?.to_bytes()? == b` for every accepted `b`.
///
/// # Errors
/// A truncated input, sizes that disagree, non-zero padding, trailing bytes.
pub fn read_anec(bytes: &[u8]) -> Result<AnecFile, CodegenError> {
    let inp = Input::new(bytes);
    let mut f = read_header(inp)?;
    let gap = round_up(f.tsk_size, ANEC_CMD_GRAN, "tsk_size")?;
    let expected = add(gap, f.krn_size, "size")?;
    if f.size != expected {
        return Err(CodegenError::bad(
            "anec size",
            0,
            f.size,
            format!("{expected:#x} = round_up(tsk_size, 16) + krn_size"),
        ));
    }
    zeros(inp, ANEC_HEADER_USED, ANEC_HEADER_SIZE - ANEC_HEADER_USED, "header padding")?;
    f.text = inp.slice(ANEC_HEADER_SIZE, f.tsk_size, "anec TDs")?.to_vec();
    let text_end = ANEC_HEADER_SIZE + f.tsk_size;
    zeros(inp, text_end, gap - f.tsk_size, "padding after the TDs")?;
    f.consts = inp.slice(ANEC_HEADER_SIZE + gap, f.krn_size, "anec weights")?.to_vec();
    let end = add(ANEC_HEADER_SIZE, f.size, "file size")?;
    if inp.len() != end {
        return Err(CodegenError::bad("anec file length", 0, inp.len(), format!("{end:#x} = 0x1000 + size")));
    }
    Ok(f)
}

/// The header fields (blobs left empty).
fn read_header(inp: Input<'_>) -> Result<AnecFile, CodegenError> {
    let mut tiles = [0u32; BAR_COUNT];
    for (i, t) in (0u64..).zip(tiles.iter_mut()) {
        *t = inp.u32(0x28 + 4 * i, "anec tiles")?;
    }
    let mut nchw = [[0u64; 6]; BAR_COUNT];
    for (i, v) in (0u64..).zip(nchw.iter_mut().flatten()) {
        *v = inp.u64(0xA8 + 8 * i, "anec nchw")?;
    }
    Ok(AnecFile {
        size: inp.u64(0x00, "anec size")?,
        td_size: inp.u32(0x08, "anec td_size")?,
        td_count: inp.u32(0x0C, "anec td_count")?,
        tsk_size: inp.u64(0x10, "anec tsk_size")?,
        krn_size: inp.u64(0x18, "anec krn_size")?,
        src_count: inp.u32(0x20, "anec src_count")?,
        dst_count: inp.u32(0x24, "anec dst_count")?,
        tiles,
        nchw,
        text: Vec::new(),
        consts: Vec::new(),
    })
}

/// Requires `len` zero bytes at `offset`.
fn zeros(inp: Input<'_>, offset: u64, len: u64, what: &str) -> Result<(), CodegenError> {
    let bytes = inp.slice(offset, len, what)?;
    match bytes.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(i) => Err(CodegenError::bad(what, offset + i as u64, bytes.get(i).copied().unwrap_or(0).into(), "0")),
    }
}
