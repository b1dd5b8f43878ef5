//! Gain/offset (`anec.gain_offset_control`) as the NE's affine stage.
//!
//! Scalars go to registers: the scale to NE.PostScale, the bias to MatrixVectorBias.
//! Per-channel `scale_data` / `bias_data` become fp16 vectors (fp32 blobs rounded to
//! nearest even), one value per output channel, each in its own 64-byte-aligned `__const`
//! chunk read through the kernel DMA's bias and post-scale streams (see
//! `encode/kernel_dma.rs`); the registers then act as multipliers of the streamed values
//! (1.0 unless a scalar scale is also given).

use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{ChannelVectors, KernelChunk, NeAffine};
use crate::window::unsupported;
use anec_ir::{Attr, DType, Module, Op};
use half::f16;

/// The fp16 bits of float attribute `name`, or of `default`.
fn fp16_bits(op: &Op, name: &str, default: f64) -> u16 {
    let v = op.attr(name).and_then(Attr::as_float).unwrap_or(default);
    f16::from_f64(v).to_bits()
}

/// The per-channel resource `name` of `op` as little-endian fp16 bytes, if present.
fn vector(m: &Module, op: &Op, name: &str, channels: u32) -> Result<Option<Vec<u8>>, BackendError> {
    let Some(attr) = op.attr(name) else { return Ok(None) };
    let (key, _) = attr
        .as_resource()
        .ok_or_else(|| BackendError::Internal(format!("`{name}` of '{}' is not a resource", op.name)))?;
    let blob = m.resources.get(key).ok_or_else(|| BackendError::Internal(format!("no blob {key}")))?;
    let bytes: Vec<u8> = match blob.dtype {
        DType::F16 => blob.bytes.clone(),
        DType::F32 => blob
            .bytes
            .chunks_exact(4)
            .flat_map(|c| f16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes())
            .collect(),
        other => {
            let reason = format!("per-channel `{name}` of element type {other} (only f16 and f32 are supported)");
            return Err(unsupported(op, &reason));
        }
    };
    if bytes.len() != 2 * channels as usize {
        let values = bytes.len() / 2;
        return Err(BackendError::Internal(format!(
            "`{name}` of '{}' holds {values} values for {channels} channels",
            op.name
        )));
    }
    Ok(Some(bytes))
}

/// Lowers a gain/offset over `channels` channels: its scalar registers and its
/// per-channel streams (added to `consts`).
pub fn gain_offset(
    m: &Module,
    op: &Op,
    channels: u32,
    consts: &mut ConstSection,
) -> Result<(NeAffine, ChannelVectors), BackendError> {
    let scalar = NeAffine { scale: fp16_bits(op, "scale", 1.0), bias: fp16_bits(op, "bias", 0.0) };
    let mut add = |name: &str, suffix: &str| -> Result<Option<KernelChunk>, BackendError> {
        Ok(vector(m, op, name, channels)?.map(|bytes| consts.add_vector(&bytes, suffix)))
    };
    let vectors = ChannelVectors { bias: add("bias_data", "bias")?, scale: add("scale_data", "scale")? };
    Ok((scalar, vectors))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Blob, Location, OpCode, TensorType};

    fn goc(m: &mut Module, bias: Blob) -> Op {
        let ty = TensorType::nchw(1, 3, 1, 1, bias.dtype);
        m.resources.insert("g.bias_data".into(), bias);
        let mut op = Op {
            opcode: OpCode::GainOffsetControl,
            name: "g".into(),
            operands: vec![],
            results: vec![],
            attrs: Default::default(),
            loc: Location::default(),
        };
        op.attrs.insert("bias_data".into(), Attr::Resource { name: "g.bias_data".into(), ty });
        op.attrs.insert("scale".into(), Attr::Float(2.0));
        op
    }

    #[test]
    fn fp32_bias_becomes_a_padded_fp16_stream() {
        let mut m = Module::new("net");
        let bytes = [1.0f32, -2.0, 0.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let op = goc(&mut m, Blob { dtype: DType::F32, bytes });
        let mut consts = ConstSection::default();
        let (scalar, v) = gain_offset(&m, &op, 3, &mut consts).unwrap();
        assert_eq!((scalar.scale, scalar.bias), (0x4000, 0));
        assert_eq!(v.bias, Some(KernelChunk { offset: 0, size: 64 }));
        assert_eq!(v.scale, None);
        let (bytes, symbols) = consts.finish();
        assert_eq!(&bytes[..6], &[0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38]);
        assert!(bytes[6..].iter().all(|&b| b == 0) && bytes.len() == 64);
        assert!(symbols[0].name.ends_with("_bias"), "{}", symbols[0].name);
    }

    #[test]
    fn wrong_count_or_type_is_an_error() {
        let mut m = Module::new("net");
        let op = goc(&mut m, Blob { dtype: DType::F16, bytes: vec![0; 4] });
        assert!(gain_offset(&m, &op, 3, &mut ConstSection::default()).is_err());
        let op = goc(&mut m, Blob { dtype: DType::U8, bytes: vec![0; 3] });
        let e = gain_offset(&m, &op, 3, &mut ConstSection::default()).unwrap_err().to_string();
        assert!(e.contains("only f16 and f32"), "{e}");
    }
}
