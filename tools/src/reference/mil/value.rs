//! MIL values during interpretation: typed tensors with float, integer or string elements,
//! decoded from inline literals and BLOBFILE weights.
//!
//! Floats are f32 (every fp16 / bf16 / fp32 value is exact; fp64 rounds), integers i64,
//! booleans integers 0 / 1 with dtype `bool`. Literals of a float type are rounded to that
//! type (an `fp16(0.1)` literal is the fp16 value nearest 0.1); blob bytes decode exactly,
//! sub-byte types unpacked from the least significant bit up (coremltools' packing).

use crate::reference::kernels::numel;
use crate::tensor::Tensor;
use anec_ir::mil::{BlobData, Literal, ScalarType};
use half::{bf16, f16};

/// The elements of a MIL tensor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Data {
    /// Floating-point elements.
    Float(Vec<f32>),
    /// Integer and boolean elements.
    Int(Vec<i64>),
    /// Strings.
    Str(Vec<String>),
}

/// A MIL tensor (rank 0 for scalars).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MTensor {
    /// Element type.
    pub dtype: ScalarType,
    /// Shape.
    pub shape: Vec<usize>,
    /// Row-major elements.
    pub data: Data,
}

impl MTensor {
    /// A float tensor of `dtype` from an f32 tensor.
    pub fn float(dtype: ScalarType, t: Tensor) -> MTensor {
        MTensor { dtype, shape: t.shape, data: Data::Float(t.data) }
    }

    /// The elements as an f32 tensor (integers convert); strings are an error.
    pub fn to_f32(&self) -> Result<Tensor, String> {
        let data = match &self.data {
            Data::Float(v) => v.clone(),
            Data::Int(v) => v.iter().map(|&x| x as f32).collect(),
            Data::Str(_) => return Err("a string tensor is not numeric".into()),
        };
        Ok(Tensor { shape: self.shape.clone(), data })
    }

    /// The elements as integers (floats only when integral).
    pub fn to_i64(&self) -> Result<Vec<i64>, String> {
        match &self.data {
            Data::Int(v) => Ok(v.clone()),
            Data::Float(v) => v
                .iter()
                .map(|&x| {
                    if x.fract() == 0.0 && x.abs() < 9.0e15 {
                        Ok(x as i64)
                    } else {
                        Err(format!("{x} is not an integer"))
                    }
                })
                .collect(),
            Data::Str(_) => Err("a string tensor is not numeric".into()),
        }
    }

    /// The only string element.
    pub fn to_str(&self) -> Result<&str, String> {
        match &self.data {
            Data::Str(v) if v.len() == 1 => Ok(&v[0]),
            _ => Err("expected one string".into()),
        }
    }

    /// The tensor converted to `dtype`: floats stay f32 (no rounding to fp16), integer types
    /// truncate toward zero, `bool` is `x != 0`.
    pub fn cast(&self, dtype: ScalarType) -> Result<MTensor, String> {
        let data = if dtype.is_float() {
            Data::Float(self.to_f32()?.data)
        } else if dtype == ScalarType::String {
            return Err("casting to string is not supported".into());
        } else if dtype == ScalarType::Bool {
            Data::Int(self.to_f32()?.data.iter().map(|&v| i64::from(v != 0.0)).collect())
        } else {
            match &self.data {
                Data::Int(v) => Data::Int(v.clone()),
                _ => Data::Int(self.to_f32()?.data.iter().map(|&v| v.trunc() as i64).collect()),
            }
        };
        Ok(MTensor { dtype, shape: self.shape.clone(), data })
    }

    /// The tensor with its float elements rounded to `dtype` (fp16, bf16), as a typed
    /// constant holds them.
    pub fn rounded_to(mut self, dtype: ScalarType) -> MTensor {
        if let Data::Float(v) = &mut self.data {
            for x in v.iter_mut() {
                *x = round_to(*x, dtype);
            }
        }
        self.dtype = dtype;
        self
    }
}

/// `v` rounded to the float type `dtype` (fp16 and bf16 round; others keep f32).
fn round_to(v: f32, dtype: ScalarType) -> f32 {
    match dtype {
        ScalarType::Fp16 => f16::from_f32(v).to_f32(),
        ScalarType::Bf16 => bf16::from_f32(v).to_f32(),
        _ => v,
    }
}

/// A literal number as the float type `dtype` holds it (rounded once from f64).
fn literal_float(v: f64, dtype: ScalarType) -> f32 {
    match dtype {
        ScalarType::Fp16 => f16::from_f64(v).to_f32(),
        ScalarType::Bf16 => bf16::from_f64(v).to_f32(),
        _ => v as f32,
    }
}

/// Decodes an inline literal of `dtype` and `shape`.
pub(crate) fn from_literal(dtype: ScalarType, shape: Vec<usize>, lit: &Literal) -> Result<MTensor, String> {
    let items = lit.flatten();
    let want = numel(&shape)?;
    if items.len() != want {
        return Err(format!("the literal has {} elements, the type {shape:?} needs {want}", items.len()));
    }
    let bad = |l: &Literal| format!("literal {l:?} is not a {dtype} value");
    let data = if dtype.is_float() {
        let f = |l: &&Literal| l.as_f64().map(|v| literal_float(v, dtype)).ok_or_else(|| bad(l));
        Data::Float(items.iter().map(f).collect::<Result<_, _>>()?)
    } else if dtype == ScalarType::String {
        let s = |l: &&Literal| match l {
            Literal::Str(s) => Ok(s.clone()),
            other => Err(bad(other)),
        };
        Data::Str(items.iter().map(s).collect::<Result<_, _>>()?)
    } else {
        Data::Int(items.iter().map(|l| l.as_i64().ok_or_else(|| bad(l))).collect::<Result<_, _>>()?)
    };
    Ok(MTensor { dtype, shape, data })
}

/// Decodes a weight blob declared as `dtype` and `shape`.
pub(crate) fn from_blob(dtype: ScalarType, shape: Vec<usize>, blob: &BlobData) -> Result<MTensor, String> {
    if blob.dtype != dtype {
        return Err(format!("the blob holds {} data but the value is declared {dtype}", blob.dtype));
    }
    let n = numel(&shape)?;
    let bytes = blob.bytes.as_slice();
    let bits = dtype.bits() as usize;
    let need = n.checked_mul(bits).map(|b| b.div_ceil(8)).ok_or("the blob is too large")?;
    if bytes.len() < need {
        return Err(format!("the blob holds {} bytes, {n} {dtype} elements need {need}", bytes.len()));
    }
    let data = decode(dtype, n, bytes)?;
    Ok(MTensor { dtype, shape, data })
}

/// `n` little-endian elements of `dtype` from `bytes` (long enough).
fn decode(dtype: ScalarType, n: usize, bytes: &[u8]) -> Result<Data, String> {
    use ScalarType::*;
    let w2 = || bytes.chunks_exact(2).take(n).map(|c| u16::from_le_bytes([c[0], c[1]]));
    let w4 = || bytes.chunks_exact(4).take(n).map(|c| [c[0], c[1], c[2], c[3]]);
    let w8 = || bytes.chunks_exact(8).take(n).map(|c| [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    Ok(match dtype {
        Fp16 => Data::Float(w2().map(|v| f16::from_bits(v).to_f32()).collect()),
        Bf16 => Data::Float(w2().map(|v| bf16::from_bits(v).to_f32()).collect()),
        Fp32 => Data::Float(w4().map(f32::from_le_bytes).collect()),
        Fp64 => Data::Float(w8().map(|b| f64::from_le_bytes(b) as f32).collect()),
        Int8 => Data::Int(bytes.iter().take(n).map(|&b| i64::from(b as i8)).collect()),
        Uint8 => Data::Int(bytes.iter().take(n).map(|&b| i64::from(b)).collect()),
        Int16 => Data::Int(w2().map(|v| i64::from(v as i16)).collect()),
        Uint16 => Data::Int(w2().map(i64::from).collect()),
        Int32 => Data::Int(w4().map(|b| i64::from(i32::from_le_bytes(b))).collect()),
        Uint32 => Data::Int(w4().map(|b| i64::from(u32::from_le_bytes(b))).collect()),
        Int64 => Data::Int(w8().map(i64::from_le_bytes).collect()),
        Int4 | Uint1 | Uint2 | Uint3 | Uint4 | Uint6 => {
            Data::Int(unpack_bits(bytes, dtype.bits() as usize, n, dtype == Int4))
        }
        other => return Err(format!("{other} weights are not supported")),
    })
}

/// `n` elements of `bits` bits each, packed from the least significant bit of the first
/// byte upward; `signed` sign-extends (int4).
pub(crate) fn unpack_bits(bytes: &[u8], bits: usize, n: usize, signed: bool) -> Vec<i64> {
    (0..n)
        .map(|i| {
            let mut v = 0i64;
            for b in 0..bits {
                let pos = i * bits + b;
                let bit = bytes.get(pos / 8).map_or(0, |byte| (byte >> (pos % 8)) & 1);
                v |= i64::from(bit) << b;
            }
            if signed && bits > 0 && (v >> (bits - 1)) & 1 == 1 {
                v - (1i64 << bits)
            } else {
                v
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use anec_ir::mil::SharedBytes;

    #[test]
    fn unpacking_matches_the_coremltools_example() {
        // n_bits = 2, shape (5,): byte 0 = 01 10 11 00 (i3 i2 i1 i0), byte 1 = xx xx xx 11.
        let v = unpack_bits(&[0b0110_1100, 0b0000_0011], 2, 5, false);
        assert_eq!(v, vec![0, 3, 2, 1, 3]);
        assert_eq!(unpack_bits(&[0xA1], 4, 2, true), vec![1, -6]);
        // 3-bit values 5, 6 span bits 0..6: 0b110_101.
        assert_eq!(unpack_bits(&[0b0011_0101], 3, 2, false), vec![5, 6]);
    }

    #[test]
    fn literals_round_to_their_type() {
        let lit = Literal::List(vec![Literal::Float(0.1), Literal::Int(2)]);
        let t = from_literal(ScalarType::Fp16, vec![2], &lit).unwrap();
        assert_eq!(t.data, Data::Float(vec![f16::from_f64(0.1).to_f32(), 2.0]));
        let t = from_literal(ScalarType::Fp32, vec![2], &lit).unwrap();
        assert_eq!(t.data, Data::Float(vec![0.1, 2.0]));
        assert!(from_literal(ScalarType::Fp32, vec![3], &lit).is_err());
        let s = from_literal(ScalarType::String, vec![], &Literal::Str("same".into())).unwrap();
        assert_eq!(s.to_str(), Ok("same"));
    }

    #[test]
    fn blobs_decode_exactly() {
        let blob = BlobData { dtype: ScalarType::Fp16, bytes: SharedBytes::from_vec(vec![0x00, 0x3C, 0x00, 0xC0]) };
        assert_eq!(from_blob(ScalarType::Fp16, vec![2], &blob).unwrap().data, Data::Float(vec![1.0, -2.0]));
        assert!(from_blob(ScalarType::Fp16, vec![3], &blob).is_err());
        assert!(from_blob(ScalarType::Fp32, vec![1], &blob).is_err());
        let u4 = BlobData { dtype: ScalarType::Uint4, bytes: SharedBytes::from_vec(vec![0x21, 0x03]) };
        assert_eq!(from_blob(ScalarType::Uint4, vec![3], &u4).unwrap().data, Data::Int(vec![1, 2, 3]));
    }

    #[test]
    fn casts() {
        let t = MTensor { dtype: ScalarType::Fp32, shape: vec![3], data: Data::Float(vec![-1.7, 0.0, 2.5]) };
        assert_eq!(t.cast(ScalarType::Int32).unwrap().data, Data::Int(vec![-1, 0, 2]));
        assert_eq!(t.cast(ScalarType::Bool).unwrap().data, Data::Int(vec![1, 0, 1]));
        assert_eq!(t.cast(ScalarType::Fp16).unwrap().data, Data::Float(vec![-1.7, 0.0, 2.5]));
        assert_eq!(t.rounded_to(ScalarType::Fp16).data, Data::Float(vec![f16::from_f32(-1.7).to_f32(), 0.0, 2.5]));
    }
}
