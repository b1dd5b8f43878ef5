//! Encoding of a [`Task`] into a TD register image, one file per register block.
//!
//! Each encoder derives its values from the task only (shapes, strides, BARs, kernel
//! chunks, engine path). Values Apple writes that no rule explains yet are named constants
//! in the file of their block, each with the evidence it comes from; `docs/conformance.md`
//! lists them.

mod common;
mod exe_cycles;
mod header;
mod kernel_dma;
pub(crate) mod l2;
mod ne;
mod pe;
mod tile_dma;

pub use common::{ne_count, PACKED_VECTOR_NES};
pub use header::CONST_BAR;
pub use kernel_dma::{CHANNELS as KERNEL_CHANNELS, STREAM_BASE_WORDS};

use crate::error::BackendError;
use crate::generation::Generation;
use crate::task::{Engine, Task};
use crate::td::TdImage;

/// Position of a TD in the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainPos {
    /// Index of this TD.
    pub index: u32,
    /// Number of TDs.
    pub count: u32,
}

impl ChainPos {
    /// True for the last TD (end of network).
    pub fn is_last(&self) -> bool {
        self.index + 1 == self.count
    }
}

/// Encodes one task at a position of the chain.
pub fn encode_task(task: &Task, pos: ChainPos, gen: &Generation) -> Result<TdImage, BackendError> {
    // The NE has no batch loop (the lowering splits NE copies per batch): a task of
    // several batches on it would run the first only.
    if task.engine != Engine::Pe && task.dest.ty.n > 1 {
        return Err(BackendError::Internal(format!(
            "NE task '{}' of {} batches reached the encoder (one NE task runs one batch)",
            task.layer, task.dest.ty.n
        )));
    }
    let mut td = TdImage::new(&task.layer);
    header::encode(&mut td, task, pos, gen)?;
    kernel_dma::encode(&mut td, task, gen)?;
    common::encode(&mut td, task, gen)?;
    tile_dma::encode_src(&mut td, task, gen)?;
    l2::encode(&mut td, task, gen)?;
    tile_dma::encode_l2_fmt(&mut td, task)?;
    pe::encode(&mut td, task)?;
    ne::encode(&mut td, task, gen)?;
    tile_dma::encode_dst(&mut td, task, gen)?;
    Ok(td)
}

/// Writes a byte quantity into a field counted in `unit`-byte units, checking alignment.
fn set_units(td: &mut TdImage, field: &str, bytes: u64, unit: u64) -> Result<(), BackendError> {
    if !bytes.is_multiple_of(unit) {
        return Err(BackendError::Internal(format!("{field}: {bytes:#x} is not a multiple of {unit}")));
    }
    td.set(field, bytes / unit)
}

/// Writes a byte quantity into an unnamed word that holds it at bit `shift` in
/// `1 << shift`-byte units with `width` bits (the raw word equals the byte count).
fn set_unnamed_units(td: &mut TdImage, offset: u16, bytes: u64, shift: u32, width: u32) -> Result<(), BackendError> {
    let unit = 1u64 << shift;
    let max = ((1u64 << width) - 1) * unit;
    if !bytes.is_multiple_of(unit) || bytes > max {
        return Err(BackendError::FieldOverflow {
            layer: String::new(),
            field: format!("word {offset:#x}"),
            value: bytes,
            width: width as u8,
            max,
        });
    }
    td.set_unnamed(offset, bytes as u32)
}

#[cfg(test)]
mod tests;
