//! Tensor descriptors of the E5: a tensor as the caller holds it (the source model's
//! shape, densely packed, its own element type) and as a program binds it (the engine's
//! N, C, H, W, D surface with the program's strides, fp16).
//!
//! Both carry the source shape in `dim` with that storage's byte strides in `stride`, so
//! a Cast between them is a strided copy with an element conversion. Source axes land on
//! the engine's axes aligned at the last one (the lowering's rank rule: `[s, d]` is H, W;
//! `[b, s, d]` is C, H, W; rank 5 is N, C, D, H, W).

use anec_codegen::e5::{TensorDataType, TensorDescriptorT};
use anec_codegen::BoundTensor;

/// A tensor a caller or a CPU operation holds: name, source shape and element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTensor {
    /// The source model's name.
    pub name: String,
    /// The source shape.
    pub shape: Vec<u64>,
    /// The element type.
    pub dtype: TensorDataType,
}

impl HostTensor {
    /// Bytes of the densely packed tensor.
    pub fn byte_size(&self) -> u64 {
        self.shape.iter().fold(element_bytes(self.dtype), |acc, &d| acc.saturating_mul(d))
    }
}

/// Bytes per element (1 for the sub-byte and boolean types, which are stored a byte each).
pub fn element_bytes(dtype: TensorDataType) -> u64 {
    match dtype {
        TensorDataType::Float32 | TensorDataType::Int32 => 4,
        TensorDataType::Float16 | TensorDataType::Int16 => 2,
        _ => 1,
    }
}

/// Engine axis (0 N, 1 C, 2 H, 3 W, 4 D) of each source axis.
fn engine_axes(rank: usize) -> Vec<usize> {
    match rank {
        5 => vec![0, 1, 4, 2, 3],
        r => (4 - r.min(4)..4).collect(),
    }
}

/// The engine view fields set from extents and strides in N, C, H, W, D order.
fn view(d: &mut TensorDescriptorT, dims: [u64; 5], strides: [u64; 5]) {
    d.batch_number = dims[0];
    d.channels = dims[1];
    d.height = dims[2];
    d.width = dims[3];
    d.sequence_length = dims[4];
    d.stride_batch_number = strides[0];
    d.stride_channels = strides[1];
    d.stride_height = strides[2];
    d.stride_width = strides[3];
    d.stride_sequence_length = strides[4];
}

/// The descriptor of a densely packed host tensor.
pub fn host(t: &HostTensor) -> TensorDescriptorT {
    let e = element_bytes(t.dtype);
    let mut stride = vec![0u64; t.shape.len()];
    let mut acc = e;
    for (s, d) in stride.iter_mut().zip(&t.shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(*d);
    }
    let (mut dims, mut strides) = ([1u64; 5], [acc; 5]);
    for (axis, engine) in engine_axes(t.shape.len()).into_iter().enumerate() {
        dims[engine] = t.shape[axis];
        strides[engine] = stride[axis];
    }
    let mut d = TensorDescriptorT {
        dim: Some(t.shape.clone()),
        stride: Some(stride),
        storage_type: t.dtype,
        component_pack: 1,
        ..Default::default()
    };
    view(&mut d, dims, strides);
    d
}

/// The descriptor of `t` as program binding `b` holds it. The binding's extents must hold
/// the source shape.
pub fn engine(t: &HostTensor, b: &BoundTensor) -> Result<TensorDescriptorT, String> {
    // A binding's extents and strides are in N, C, H, W, D order, the view's order.
    let (dims, strides) = (b.dims, b.strides);
    let axes = engine_axes(t.shape.len());
    if t.shape.len() > 5 || axes.iter().zip(&t.shape).any(|(&a, &s)| dims[a] != s) {
        return Err(format!(
            "the program binds `{}` as N,C,H,W,D {:?}, which does not hold the source shape {:?}",
            b.name, b.dims, t.shape
        ));
    }
    let mut d = TensorDescriptorT {
        dim: Some(t.shape.clone()),
        stride: Some(axes.iter().map(|&a| strides[a]).collect()),
        storage_type: engine_dtype(b.dtype_code)?,
        component_pack: 1,
        ..Default::default()
    };
    view(&mut d, dims, strides);
    Ok(d)
}

/// The element type of a binding's type code (the stabs catalog: 5 fp16, 3 uint8, 2 int8).
fn engine_dtype(code: u32) -> Result<TensorDataType, String> {
    match code {
        5 => Ok(TensorDataType::Float16),
        3 => Ok(TensorDataType::UInt8),
        2 => Ok(TensorDataType::Int8),
        other => Err(format!("a bound tensor of element type code {other}, which the E5 cannot describe")),
    }
}
