//! Weight banks: convolution kernels converted and chunked the way Apple lays them out.
//!
//! Each output channel's coefficients (Cin/groups x Kh x Kw, in that order) are converted
//! to the kernel format (fp32 becomes fp16, round to nearest even; fp16 and u8 stay) and
//! padded to 64 bytes. Output channels are grouped 2^OCGSize per kernel-DMA channel, with
//! OCGSize the smallest value that fits every channel into the 16 DMA channels; each group
//! is one contiguous chunk (conv 3->3: three 64-byte chunks; 512x512: OCGSize 5, sixteen
//! 0x8000-byte chunks).

use crate::encode::KERNEL_CHANNELS;
use crate::error::BackendError;
use crate::layout::round_up;
use anec_ir::{Blob, DType};
use half::f16;

/// A converted, chunked weight bank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightBank {
    /// Element type of the stored coefficients.
    pub fmt: DType,
    /// log2 of output channels per chunk.
    pub ocg_size: u32,
    /// The chunks' bytes, one per kernel-DMA channel used.
    pub chunks: Vec<Vec<u8>>,
}

/// The OCGSize that spreads `cout` channels over at most 16 DMA channels.
pub fn ocg_size(cout: u32) -> u32 {
    let mut k = 0;
    while u64::from(cout).div_ceil(1 << k) > KERNEL_CHANNELS as u64 {
        k += 1;
    }
    k
}

/// Converts the blob to the engine's kernel format.
fn convert(blob: &Blob) -> Result<(DType, Vec<u8>), BackendError> {
    match blob.dtype {
        DType::F16 | DType::U8 | DType::I8 => Ok((blob.dtype, blob.bytes.clone())),
        DType::F32 => {
            let out = blob
                .bytes
                .chunks_exact(4)
                .flat_map(|c| f16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes())
                .collect();
            Ok((DType::F16, out))
        }
    }
}

/// Builds the bank of a `cout`-channel kernel stored output-channel-major in `blob`.
pub fn bank(blob: &Blob, cout: u32) -> Result<WeightBank, BackendError> {
    let (fmt, bytes) = convert(blob)?;
    if cout == 0 || bytes.len() % cout as usize != 0 {
        return Err(BackendError::Internal(format!("{} weight bytes for {cout} output channels", bytes.len())));
    }
    let per_channel = bytes.len() / cout as usize;
    let padded = round_up(per_channel as u64, 64) as usize;
    let ocg = ocg_size(cout);
    let chunks = bytes
        .chunks(per_channel * (1 << ocg))
        .map(|group| {
            group
                .chunks(per_channel)
                .flat_map(|ch| {
                    let mut v = ch.to_vec();
                    v.resize(padded, 0);
                    v
                })
                .collect()
        })
        .collect();
    Ok(WeightBank { fmt, ocg_size: ocg, chunks })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn conv_3_to_3_is_three_padded_chunks() {
        let blob = Blob { dtype: DType::F16, bytes: [0x00, 0x40].repeat(9) };
        let b = bank(&blob, 3).unwrap();
        assert_eq!(b.ocg_size, 0);
        assert_eq!(b.chunks.len(), 3);
        assert!(b.chunks.iter().all(|c| c.len() == 64 && c[..6] == [0, 0x40, 0, 0x40, 0, 0x40]));
    }

    #[test]
    fn gemm_512_uses_ocg_5() {
        assert_eq!(ocg_size(512), 5);
        assert_eq!(ocg_size(16), 0);
        assert_eq!(ocg_size(17), 1);
    }

    #[test]
    fn fp32_converts_to_fp16() {
        let blob = Blob { dtype: DType::F32, bytes: 3.0f32.to_le_bytes().to_vec() };
        let b = bank(&blob, 1).unwrap();
        assert_eq!(b.fmt, DType::F16);
        assert_eq!(&b.chunks[0][..2], &[0x00, 0x42]);
    }
}
