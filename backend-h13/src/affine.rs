//! Gain/offset (`anec.gain_offset_control`) as the NE's affine stage.
//!
//! The op computes `y = x * S[c] + B[c]` with `S[c] = scale * scale_data[c]` and
//! `B[c] = bias + bias_data[c]` (missing parts are 1 and 0). The engine's post stage adds
//! the bias to the accumulator before the post-scale (`(acc + bias) * scale`: AccBias is
//! an accumulator bias, PostScale comes after it; inferred, see docs/conformance.md), so
//! the bias the engine is given is `B[c] / S[c]`:
//!
//! - no per-channel data: NE.PostScale = `S`, NE.MatrixVectorBias = `B / S`;
//! - per-channel data: NE.PostScale = `scale`, the post-scale stream holds `scale_data`,
//!   and the bias stream holds `B[c] / S[c]` (AccBias 1.0) whenever any `B[c]` is nonzero.
//!
//! Streams are fp16 vectors, one value per output channel, each in its own
//! 64-byte-aligned `__const` chunk read through the kernel DMA's bias and post-scale streams
//! (`encode/kernel_dma.rs`). A zero scale with a nonzero bias has no such form and is
//! rejected.

use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::task::{ChannelVectors, NeAffine};
use crate::window::unsupported;
use anec_ir::{Attr, DType, Module, Op};
use half::f16;

/// The float attribute `name`, or `default`.
fn scalar(op: &Op, name: &str, default: f64) -> f64 {
    op.attr(name).and_then(Attr::as_float).unwrap_or(default)
}

/// The per-channel resource `name` of `op` as values, if present.
fn vector(m: &Module, op: &Op, name: &str, channels: u32) -> Result<Option<Vec<f64>>, BackendError> {
    let Some(attr) = op.attr(name) else { return Ok(None) };
    let (key, _) = attr
        .as_resource()
        .ok_or_else(|| BackendError::Internal(format!("`{name}` of '{}' is not a resource", op.name)))?;
    let blob = m.resources.get(key).ok_or_else(|| BackendError::Internal(format!("no blob {key}")))?;
    let values: Vec<f64> = match blob.dtype {
        DType::F16 => blob.bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64()).collect(),
        DType::F32 => {
            blob.bytes.chunks_exact(4).map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect()
        }
        other => {
            let reason = format!("per-channel `{name}` of element type {other} (only f16 and f32 are supported)");
            return Err(unsupported(op, &reason));
        }
    };
    if values.len() != channels as usize {
        let n = values.len();
        return Err(BackendError::Internal(format!(
            "`{name}` of '{}' holds {n} values for {channels} channels",
            op.name
        )));
    }
    Ok(Some(values))
}

/// fp16 bits of a value.
fn bits(v: f64) -> u16 {
    f16::from_f64(v).to_bits()
}

/// Little-endian fp16 bytes of values.
fn fp16_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|&v| f16::from_f64(v).to_le_bytes()).collect()
}

/// `b / s`, the engine's pre-scale bias; an error when `s` is 0 and `b` is not.
fn pre_scale_bias(op: &Op, b: f64, s: f64) -> Result<f64, BackendError> {
    match (b == 0.0, s == 0.0) {
        (true, _) => Ok(0.0),
        (false, true) => {
            Err(unsupported(op, "a zero scale with a nonzero bias (the engine adds the bias before scaling)"))
        }
        (false, false) => Ok(b / s),
    }
}

/// A gain/offset as values: `y = x * scale * gains[c] + bias + bias_data[c]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelAffine {
    /// The scalar scale.
    pub scale: f64,
    /// The scalar bias.
    pub bias: f64,
    /// Per-channel gains (`scale_data`), when given.
    pub gains: Option<Vec<f64>>,
    /// Per-channel biases (`bias_data`), when given.
    pub bias_data: Option<Vec<f64>>,
    /// Channels.
    pub channels: usize,
}

impl ChannelAffine {
    /// True when neither part has per-channel data.
    pub fn is_scalar(&self) -> bool {
        self.gains.is_none() && self.bias_data.is_none()
    }

    /// `scale * gains[c]` per channel.
    pub fn scales(&self) -> Vec<f64> {
        (0..self.channels).map(|c| self.scale * self.gains.as_ref().map_or(1.0, |v| v[c])).collect()
    }

    /// `bias + bias_data[c]` per channel.
    pub fn biases(&self) -> Vec<f64> {
        (0..self.channels).map(|c| self.bias + self.bias_data.as_ref().map_or(0.0, |v| v[c])).collect()
    }

    /// The engine's bias before a per-channel scale `s[c]`: `biases[c] / s[c]`.
    pub fn pre_scale_biases(&self, op: &Op, s: &[f64]) -> Result<Vec<f64>, BackendError> {
        self.biases().iter().zip(s).map(|(&b, &s)| pre_scale_bias(op, b, s)).collect()
    }
}

/// The values of a gain/offset over `channels` channels.
pub fn channel_affine(m: &Module, op: &Op, channels: u32) -> Result<ChannelAffine, BackendError> {
    Ok(ChannelAffine {
        scale: scalar(op, "scale", 1.0),
        bias: scalar(op, "bias", 0.0),
        gains: vector(m, op, "scale_data", channels)?,
        bias_data: vector(m, op, "bias_data", channels)?,
        channels: channels as usize,
    })
}

/// Lowers a gain/offset over `channels` channels: its scalar registers and its
/// per-channel streams (added to `consts`).
pub fn gain_offset(
    m: &Module,
    op: &Op,
    channels: u32,
    consts: &mut ConstSection,
) -> Result<(NeAffine, ChannelVectors), BackendError> {
    let a = channel_affine(m, op, channels)?;
    if a.is_scalar() {
        let affine = NeAffine { scale: bits(a.scale), bias: bits(pre_scale_bias(op, a.bias, a.scale)?) };
        return Ok((affine, ChannelVectors::default()));
    }
    let pre = a.pre_scale_biases(op, &a.scales())?;
    let bias_stream = pre.iter().any(|&v| v != 0.0).then(|| consts.add_vector(&fp16_bytes(&pre), "bias"));
    let scale_stream = a.gains.as_ref().map(|v| consts.add_vector(&fp16_bytes(v), "scale"));
    Ok((NeAffine { scale: bits(a.scale), bias: 0 }, ChannelVectors { bias: bias_stream, scale: scale_stream }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::task::KernelChunk;
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
        let (bytes, symbols) = consts.finish().unwrap();
        // (x + b/s) * s: the stream holds bias_data / scale = [0.5, -1, 0.25].
        assert_eq!(&bytes[..6], &[0x00, 0x38, 0x00, 0xbc, 0x00, 0x34]);
        assert!(bytes[6..].iter().all(|&b| b == 0) && bytes.len() == 64);
        assert!(symbols[0].name.ends_with("_bias"), "{}", symbols[0].name);
    }

    #[test]
    fn scalar_bias_is_divided_by_the_scale() {
        let mut m = Module::new("net");
        let op = goc(&mut m, Blob { dtype: DType::F16, bytes: vec![0; 6].into() });
        let mut op = Op { attrs: Default::default(), ..op };
        op.attrs.insert("scale".into(), Attr::Float(4.0));
        op.attrs.insert("bias".into(), Attr::Float(2.0));
        let (scalar, v) = gain_offset(&m, &op, 3, &mut ConstSection::default()).unwrap();
        assert_eq!((scalar.scale, scalar.bias), (0x4400, 0x3800), "scale 4, bias 2/4");
        assert_eq!(v, ChannelVectors::default());
        op.attrs.insert("scale".into(), Attr::Float(0.0));
        let e = gain_offset(&m, &op, 3, &mut ConstSection::default()).unwrap_err().to_string();
        assert!(e.contains("zero scale with a nonzero bias"), "{e}");
    }

    #[test]
    fn wrong_count_or_type_is_an_error() {
        let mut m = Module::new("net");
        let op = goc(&mut m, Blob { dtype: DType::F16, bytes: vec![0; 4].into() });
        assert!(gain_offset(&m, &op, 3, &mut ConstSection::default()).is_err());
        let op = goc(&mut m, Blob { dtype: DType::U8, bytes: vec![0; 3].into() });
        let e = gain_offset(&m, &op, 3, &mut ConstSection::default()).unwrap_err().to_string();
        assert!(e.contains("only f16 and f32"), "{e}");
    }
}
