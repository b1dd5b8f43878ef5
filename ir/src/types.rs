//! Element and tensor types of the anec dialect.
//!
//! Every value is a 5-D tensor in the engine's logical order N, C, D, H, W (depth is 1 for
//! ordinary 4-D tensors). Types print in MLIR's builtin form: `tensor<1x3x1x77xf16>` for
//! N x C x H x W when depth is 1, `tensor<NxCxDxHxWxf16>` (rank 5) otherwise.

use std::fmt;

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE half precision.
    F16,
    /// IEEE single precision.
    F32,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
}

impl DType {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::F16 => 2,
            DType::F32 => 4,
            DType::U8 | DType::I8 => 1,
        }
    }

    /// MLIR spelling (`f16`, `f32`, `ui8`, `si8`).
    pub fn mlir_name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::U8 => "ui8",
            DType::I8 => "si8",
        }
    }

    /// Parses the MLIR spelling; `i8` is accepted as `si8`.
    pub fn from_mlir_name(s: &str) -> Option<DType> {
        match s {
            "f16" => Some(DType::F16),
            "f32" => Some(DType::F32),
            "ui8" => Some(DType::U8),
            "si8" | "i8" => Some(DType::I8),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mlir_name())
    }
}

/// Shape and element type of a tensor value, in the engine's N, C, D, H, W order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Batch.
    pub n: u32,
    /// Channels.
    pub c: u32,
    /// Depth (1 for 4-D tensors).
    pub d: u32,
    /// Height.
    pub h: u32,
    /// Width.
    pub w: u32,
    /// Element type.
    pub dtype: DType,
}

impl TensorType {
    /// A 4-D tensor (depth 1).
    pub fn nchw(n: u32, c: u32, h: u32, w: u32, dtype: DType) -> Self {
        TensorType { n, c, d: 1, h, w, dtype }
    }

    /// Number of elements.
    pub fn elements(&self) -> u64 {
        [self.n, self.c, self.d, self.h, self.w].iter().map(|&x| u64::from(x)).product()
    }

    /// Dimensions as printed: `[n, c, h, w]` for depth 1, `[n, c, d, h, w]` otherwise.
    pub fn dims(&self) -> Vec<u32> {
        if self.d == 1 {
            vec![self.n, self.c, self.h, self.w]
        } else {
            vec![self.n, self.c, self.d, self.h, self.w]
        }
    }

    /// Builds a type from printed dimensions (rank 4 or 5).
    pub fn from_dims(dims: &[u32], dtype: DType) -> Option<Self> {
        match *dims {
            [n, c, h, w] => Some(TensorType { n, c, d: 1, h, w, dtype }),
            [n, c, d, h, w] => Some(TensorType { n, c, d, h, w, dtype }),
            _ => None,
        }
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tensor<")?;
        for d in self.dims() {
            write!(f, "{d}x")?;
        }
        write!(f, "{}>", self.dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_rank4_and_rank5() {
        let t = TensorType::nchw(1, 3, 1, 77, DType::F16);
        assert_eq!(t.to_string(), "tensor<1x3x1x77xf16>");
        let t5 = TensorType { d: 4, ..t };
        assert_eq!(t5.to_string(), "tensor<1x3x4x1x77xf16>");
        assert_eq!(TensorType::from_dims(&t5.dims(), DType::F16), Some(t5));
    }
}
