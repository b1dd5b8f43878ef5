//! A Cast: the tensor in its source shape, its values rounded to the destination's element
//! type. (The layout change a Cast stands for, densely packed to a program's strides, is
//! the simulator's binding of the program's ports; here tensors are always in their
//! source shape.)

use super::{descriptor, name, BundleError};
use crate::Tensor;
use anec_codegen::e5::{ArgFrameT, CastAttrsT, OperationT, TensorDataType};
use half::f16;

/// Runs a Cast of one tensor.
pub(super) fn run(
    op: &OperationT,
    frame: &ArgFrameT,
    a: &CastAttrsT,
    inputs: &[&Tensor],
) -> Result<Vec<Tensor>, BundleError> {
    let [x] = inputs else { return Err(descriptor(format!("{} casts {} tensors, not one", name(op), inputs.len()))) };
    let dims = |list: &Option<Vec<anec_codegen::e5::OperandT>>| {
        list.iter().flatten().next().and_then(|o| o.descriptor.as_ref()).and_then(|d| d.dim.clone())
    };
    if dims(&frame.inputs) != dims(&frame.outputs) {
        return Err(descriptor(format!("{} changes the tensor's shape", name(op))));
    }
    let data = x.data.iter().map(|&v| round(v, a.dst_dtype)).collect::<Result<_, _>>();
    let data =
        data.map_err(|t: TensorDataType| descriptor(format!("{} casts to {t:?}, which anec does not run", name(op))))?;
    Ok(vec![Tensor { shape: x.shape.clone(), data }])
}

/// `v` as stored in an element of type `t`.
fn round(v: f32, t: TensorDataType) -> Result<f32, TensorDataType> {
    Ok(match t {
        TensorDataType::Float16 => f16::from_f32(v).to_f32(),
        TensorDataType::Float32 => v,
        TensorDataType::Int8 => v.trunc().clamp(-128.0, 127.0),
        TensorDataType::UInt8 => v.trunc().clamp(0.0, 255.0),
        TensorDataType::Int16 => v.trunc().clamp(-32768.0, 32767.0),
        TensorDataType::Int32 => v.trunc(),
        TensorDataType::Bool => f32::from(u8::from(v != 0.0)),
        other => return Err(other),
    })
}
