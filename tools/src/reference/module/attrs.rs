//! Reading an anec op's attributes and weight resources, each failure a reason string.

use super::dims5;
use crate::tensor::Tensor;
use anec_ir::{Attr, DType, Module, Op};
use half::f16;

/// Axis names in N, C, D, H, W order.
pub(crate) const AXIS_NAMES: [&str; 5] = ["batch", "channel", "depth", "height", "width"];

/// The op being evaluated and its module.
pub(crate) struct OpCx<'a> {
    /// The module (for resources).
    pub m: &'a Module,
    /// The op.
    pub op: &'a Op,
}

impl OpCx<'_> {
    /// A required attribute.
    fn req(&self, name: &str) -> Result<&Attr, String> {
        self.op.attr(name).ok_or_else(|| format!("missing attribute `{name}`"))
    }

    /// A required integer.
    pub fn int(&self, name: &str) -> Result<i64, String> {
        self.req(name)?.as_int().ok_or_else(|| format!("attribute `{name}` must be an integer"))
    }

    /// An optional float (integers widen).
    pub fn float(&self, name: &str) -> Result<Option<f32>, String> {
        match self.op.attr(name) {
            None => Ok(None),
            Some(a) => {
                a.as_float().map(|v| Some(v as f32)).ok_or_else(|| format!("attribute `{name}` must be a float"))
            }
        }
    }

    /// A required boolean.
    pub fn bool(&self, name: &str) -> Result<bool, String> {
        self.req(name)?.as_bool().ok_or_else(|| format!("attribute `{name}` must be a bool"))
    }

    /// An optional boolean.
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, String> {
        match self.op.attr(name) {
            None => Ok(None),
            Some(_) => self.bool(name).map(Some),
        }
    }

    /// A required string.
    pub fn str(&self, name: &str) -> Result<&str, String> {
        self.req(name)?.as_str().ok_or_else(|| format!("attribute `{name}` must be a string"))
    }

    /// A required array of `len` non-negative integers.
    pub fn usizes(&self, name: &str, len: usize) -> Result<Vec<usize>, String> {
        let v = self.req(name)?.as_int_array().ok_or_else(|| format!("attribute `{name}` must be an integer array"))?;
        if v.len() != len {
            return Err(format!("attribute `{name}` must hold {len} integers, got {}", v.len()));
        }
        v.iter()
            .map(|&x| usize::try_from(x).map_err(|_| format!("attribute `{name}` holds a negative value {x}")))
            .collect()
    }

    /// A required array of integers of any length.
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, String> {
        self.req(name)?.as_int_array().ok_or_else(|| format!("attribute `{name}` must be an integer array"))
    }

    /// A required axis name, as an index into N, C, D, H, W.
    pub fn axis(&self, name: &str) -> Result<usize, String> {
        axis_of(self.req(name)?).ok_or_else(|| format!("attribute `{name}` must be an axis name"))
    }

    /// A required array of axis names.
    pub fn axes(&self, name: &str) -> Result<Vec<usize>, String> {
        let arr =
            self.req(name)?.as_array().ok_or_else(|| format!("attribute `{name}` must be an array of axis names"))?;
        arr.iter().map(|a| axis_of(a).ok_or_else(|| format!("attribute `{name}` holds a non-axis {a:?}"))).collect()
    }

    /// An optional `dense_resource` decoded into a 5-D tensor of its declared type.
    pub fn resource(&self, name: &str) -> Result<Option<Tensor>, String> {
        let Some(attr) = self.op.attr(name) else { return Ok(None) };
        let (key, ty) = attr.as_resource().ok_or_else(|| format!("attribute `{name}` must be a dense_resource"))?;
        let blob =
            self.m.resources.get(key).ok_or_else(|| format!("resource `{key}` of `{name}` is not in the module"))?;
        if blob.dtype != ty.dtype {
            return Err(format!("resource `{key}` holds {} data but `{name}` declares {}", blob.dtype, ty.dtype));
        }
        let data = decode(blob.dtype, &blob.bytes);
        if data.len() as u64 != ty.elements() || blob.bytes.len() % blob.dtype.size() != 0 {
            return Err(format!(
                "resource `{key}` holds {} bytes, `{name}` ({ty}) needs {}",
                blob.bytes.len(),
                ty.elements() * blob.dtype.size() as u64
            ));
        }
        Ok(Some(Tensor { shape: dims5(ty), data }))
    }
}

/// The axis index named by a string attribute.
fn axis_of(a: &Attr) -> Option<usize> {
    let s = a.as_str()?;
    AXIS_NAMES.iter().position(|n| *n == s)
}

/// Little-endian elements of `dtype` as f32 (a trailing partial element is dropped; the
/// caller checks the length).
pub(crate) fn decode(dtype: DType, bytes: &[u8]) -> Vec<f32> {
    match dtype {
        DType::F16 => bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        DType::F32 => bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        DType::U8 => bytes.iter().map(|&b| f32::from(b)).collect(),
        DType::I8 => bytes.iter().map(|&b| f32::from(b as i8)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_each_dtype() {
        assert_eq!(decode(DType::F16, &[0x00, 0x3C, 0x00, 0xC0]), vec![1.0, -2.0]);
        assert_eq!(decode(DType::F32, &0.25f32.to_le_bytes()), vec![0.25]);
        assert_eq!(decode(DType::U8, &[255, 3]), vec![255.0, 3.0]);
        assert_eq!(decode(DType::I8, &[255, 3]), vec![-1.0, 3.0]);
    }
}
