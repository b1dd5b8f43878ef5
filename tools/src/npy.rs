//! `.npy` files <-> [`Tensor`]: what `anec sim` and `anec run` read and write.
//!
//! Read: little-endian fp16 (`<f2`) and fp32 (`<f4`) arrays, and the one-byte bool
//! (`|b1`, values 0 and 1), uint8 (`|u1`) and int8 (`|i1`) arrays of 8-bit inputs, in C
//! order, any rank; every other dtype (`<f8`, wider integers, big-endian, records) and
//! Fortran-ordered arrays are an [`NpyError`] naming the file and what was found. Write:
//! fp16 (`<f2`) or fp32 (`<f4`) (and the one-byte types, for tests), C order, the tensor's
//! shape. The header is parsed and written by `npyz`; values convert through `half::f16`
//! (round to nearest even on write).

use crate::tensor::Tensor;
use half::f16;
use npyz::{DType, Order, TypeChar, WriterBuilder};
use std::path::Path;

/// Element types an `.npy` input may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyDtype {
    /// `<f2`, IEEE half precision.
    F16,
    /// `<f4`, IEEE single precision.
    F32,
    /// `|b1`, numpy's bool (one byte, 0 or 1).
    Bool,
    /// `|u1`, unsigned 8-bit integers.
    U8,
    /// `|i1`, signed 8-bit integers.
    I8,
}

impl NpyDtype {
    /// numpy's name for the type (`float16`, `float32`, `bool`, `uint8`, `int8`).
    pub fn numpy_name(self) -> &'static str {
        match self {
            NpyDtype::F16 => "float16",
            NpyDtype::F32 => "float32",
            NpyDtype::Bool => "bool",
            NpyDtype::U8 => "uint8",
            NpyDtype::I8 => "int8",
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, NpyDtype::F16 | NpyDtype::F32)
    }
}

/// An array read from an `.npy` file: its values as `f32` and the type they were stored in.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    /// The values, in the file's shape.
    pub tensor: Tensor,
    /// The stored element type.
    pub dtype: NpyDtype,
}

/// Why an `.npy` file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be opened, read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not an `.npy` file (bad magic, header or truncated data).
    #[error("{file}: not a readable .npy file: {reason}")]
    Malformed {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// The element type is not `<f2`, `<f4`, `|b1`, `|u1` or `|i1`.
    #[error(
        "{file}: unsupported dtype '{found}' (expected float16 '<f2' or float32 '<f4', or for an 8-bit input \
         bool '|b1', uint8 '|u1' or int8 '|i1')"
    )]
    Dtype {
        /// The file.
        file: String,
        /// The dtype descriptor as stored.
        found: String,
    },
    /// The array is stored in Fortran (column-major) order.
    #[error("{file}: Fortran-ordered arrays are not supported (save with numpy.ascontiguousarray)")]
    FortranOrder {
        /// The file.
        file: String,
    },
    /// The tensor's data length does not match its shape (a caller bug, reported not panicked).
    #[error("{file}: tensor has {len} values but shape {shape:?}")]
    Shape {
        /// The file.
        file: String,
        /// Number of values.
        len: usize,
        /// The shape.
        shape: Vec<usize>,
    },
}

impl NpyError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            NpyError::Io { file, .. }
            | NpyError::Malformed { file, .. }
            | NpyError::Dtype { file, .. }
            | NpyError::FortranOrder { file }
            | NpyError::Shape { file, .. } => file,
        }
    }
}

/// Reads the `.npy` file at `path`.
pub fn read_file(path: &Path) -> Result<NpyArray, NpyError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| NpyError::Io { file: file.clone(), source })?;
    read_bytes(&bytes, &file)
}

/// Reads `.npy` bytes; `file` names them in errors.
pub fn read_bytes(bytes: &[u8], file: &str) -> Result<NpyArray, NpyError> {
    let malformed = |e: std::io::Error| NpyError::Malformed { file: file.to_string(), reason: e.to_string() };
    let npy = npyz::NpyFile::new(bytes).map_err(malformed)?;
    let dtype = element_type(&npy.dtype(), file)?;
    if npy.order() == Order::Fortran && npy.shape().iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError::FortranOrder { file: file.to_string() });
    }
    let shape = dims(npy.shape(), file)?;
    let data: Vec<f32> = match dtype {
        NpyDtype::F16 => npy.into_vec::<f16>().map_err(malformed)?.into_iter().map(f32::from).collect(),
        NpyDtype::F32 => npy.into_vec::<f32>().map_err(malformed)?,
        NpyDtype::Bool => npy.into_vec::<bool>().map_err(malformed)?.into_iter().map(f32::from).collect(),
        NpyDtype::U8 => npy.into_vec::<u8>().map_err(malformed)?.into_iter().map(f32::from).collect(),
        NpyDtype::I8 => npy.into_vec::<i8>().map_err(malformed)?.into_iter().map(f32::from).collect(),
    };
    let len = data.len();
    let tensor = Tensor::new(shape.clone(), data).ok_or(NpyError::Shape { file: file.to_string(), len, shape })?;
    Ok(NpyArray { tensor, dtype })
}

/// The element type of a plain little-endian float descriptor or a one-byte bool or
/// integer one (which has no byte order: `|`).
fn element_type(dtype: &DType, file: &str) -> Result<NpyDtype, NpyError> {
    let unsupported =
        || NpyError::Dtype { file: file.to_string(), found: dtype.descr().trim_matches('\'').to_string() };
    let DType::Plain(ts) = dtype else { return Err(unsupported()) };
    let little = ts.endianness() == npyz::Endianness::Little;
    match (ts.type_char(), ts.size_field(), little) {
        (TypeChar::Float, 2, true) => Ok(NpyDtype::F16),
        (TypeChar::Float, 4, true) => Ok(NpyDtype::F32),
        (TypeChar::Bool, 1, _) => Ok(NpyDtype::Bool),
        (TypeChar::Uint, 1, _) => Ok(NpyDtype::U8),
        (TypeChar::Int, 1, _) => Ok(NpyDtype::I8),
        _ => Err(unsupported()),
    }
}

/// The shape as `usize`s (an error on a 32-bit host for absurd sizes).
fn dims(shape: &[u64], file: &str) -> Result<Vec<usize>, NpyError> {
    shape
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| NpyError::Malformed {
                file: file.to_string(),
                reason: format!("dimension {d} is too large"),
            })
        })
        .collect()
}

/// The `.npy` bytes of `tensor` as fp16 (`<f2`), C order; `file` names them in errors.
pub fn write_f16_bytes(tensor: &Tensor, file: &str) -> Result<Vec<u8>, NpyError> {
    write_bytes(tensor, file, NpyDtype::F16)
}

/// The `.npy` bytes of `tensor` as `dtype` (`<f2`, `<f4`, or `|b1`, `|u1`, `|i1` with
/// integer rounding and saturation), C order; `file` names them in errors.
pub fn write_bytes(tensor: &Tensor, file: &str, dtype: NpyDtype) -> Result<Vec<u8>, NpyError> {
    if tensor.shape.iter().product::<usize>() != tensor.data.len() {
        return Err(NpyError::Shape { file: file.to_string(), len: tensor.data.len(), shape: tensor.shape.clone() });
    }
    match dtype {
        NpyDtype::F16 => encode(tensor, file, "<f2", f16::from_f32),
        NpyDtype::F32 => encode(tensor, file, "<f4", |v| v),
        NpyDtype::Bool => encode(tensor, file, "|b1", |v| v != 0.0),
        // Integers round to nearest (ties to even) and saturate, as the engine stores them.
        NpyDtype::U8 => encode(tensor, file, "|u1", |v| v.round_ties_even().clamp(0.0, 255.0) as u8),
        NpyDtype::I8 => encode(tensor, file, "|i1", |v| v.round_ties_even().clamp(-128.0, 127.0) as i8),
    }
}

/// Encodes the values of `tensor` converted by `convert` under the numpy type `descr`.
fn encode<T: npyz::Serialize + npyz::AutoSerialize>(
    tensor: &Tensor,
    file: &str,
    descr: &str,
    convert: impl Fn(f32) -> T,
) -> Result<Vec<u8>, NpyError> {
    let io = |source| NpyError::Io { file: file.to_string(), source };
    let shape: Vec<u64> = tensor.shape.iter().map(|&d| d as u64).collect();
    let dtype =
        DType::Plain(descr.parse().map_err(|e: npyz::ParseTypeStrError| NpyError::Malformed {
            file: file.to_string(),
            reason: e.to_string(),
        })?);
    let mut out = Vec::new();
    let mut writer =
        npyz::WriteOptions::<T>::new().dtype(dtype).shape(&shape).writer(&mut out).begin_nd().map_err(io)?;
    writer.extend(tensor.data.iter().map(|&v| convert(v))).map_err(io)?;
    writer.finish().map_err(io)?;
    Ok(out)
}

#[cfg(test)]
#[path = "npy_tests.rs"]
mod tests;
