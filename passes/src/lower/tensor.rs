//! Compile-time tensors: the values of `const` and `constexpr_*` ops and of inline
//! arguments, decoded from MIL literals or weight blobs.
//!
//! Floating-point data is held as `f32` (every fp16, bf16 and fp32 value is exact; fp64
//! rounds), integers as `i64`. An fp16 or fp32 weight blob stays as it is stored
//! ([`Data::Raw`]: a window of the weight file, decoded only when an op needs the values),
//! so a weight the engine takes in that layout flows to the program without a copy; so do
//! unsigned-integer blobs (palette indices, quantized weights: [`Data::Packed`]), which
//! would take eight bytes per element as `i64`. Data is row-major in MIL order; `layout.rs` rearranges it for the engine when it becomes a
//! weight.

use super::layout::permute;
use anec_ir::mil::{BlobData, Literal, ScalarType, SharedBytes};
use half::{bf16, f16};

/// The elements of a tensor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Data {
    /// Floating-point elements.
    Float(Vec<f32>),
    /// Integer elements (any width, signed or not).
    Int(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings.
    Str(Vec<String>),
    /// fp16 or fp32 elements as stored, little-endian (the tensor's `dtype`).
    Raw(SharedBytes),
    /// Unsigned integers as stored: one byte each (`uint8`) or packed from the least
    /// significant bit up (`uint1`..`uint6`), the tensor's `dtype`.
    Packed(SharedBytes),
}

/// A tensor known at compile time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tensor {
    /// MIL element type.
    pub dtype: ScalarType,
    /// MIL shape (empty for a scalar).
    pub shape: Vec<u64>,
    /// Row-major elements.
    pub data: Data,
}

/// Number of elements of a shape, if it fits `usize`.
pub(crate) fn count(shape: &[u64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
}

impl Tensor {
    /// A float tensor.
    pub fn floats(dtype: ScalarType, shape: Vec<u64>, data: Vec<f32>) -> Tensor {
        Tensor { dtype, shape, data: Data::Float(data) }
    }

    /// The elements as floats (integers and booleans convert); `None` for strings.
    pub fn as_f32(&self) -> Option<Vec<f32>> {
        match &self.data {
            Data::Float(v) => Some(v.clone()),
            Data::Int(v) => Some(v.iter().map(|&x| x as f32).collect()),
            Data::Bool(v) => Some(v.iter().map(|&b| f32::from(u8::from(b))).collect()),
            Data::Str(_) => None,
            Data::Raw(b) => Some(raw_floats(self.dtype, b)),
            Data::Packed(b) => Some(self.unpacked(b).iter().map(|&x| x as f32).collect()),
        }
    }

    /// The elements of packed unsigned integers.
    fn unpacked(&self, b: &[u8]) -> Vec<i64> {
        let n = count(&self.shape).unwrap_or(0);
        unpack_bits(b, self.dtype.bits() as usize, n, false)
    }

    /// The elements as integers (floats only when integral).
    pub fn as_i64(&self) -> Option<Vec<i64>> {
        match &self.data {
            Data::Int(v) => Some(v.clone()),
            Data::Float(v) => floats_as_i64(v),
            Data::Bool(v) => Some(v.iter().map(|&b| i64::from(b)).collect()),
            Data::Str(_) => None,
            Data::Raw(b) => floats_as_i64(&raw_floats(self.dtype, b)),
            Data::Packed(b) => Some(self.unpacked(b)),
        }
    }

    /// The stored bytes of unsigned integers that have not been decoded ([`Data::Packed`]).
    pub fn packed(&self) -> Option<&SharedBytes> {
        match &self.data {
            Data::Packed(b) => Some(b),
            _ => None,
        }
    }

    /// The stored bytes of an fp16 or fp32 weight that has not been decoded.
    pub fn raw(&self) -> Option<&SharedBytes> {
        match &self.data {
            Data::Raw(b) => Some(b),
            _ => None,
        }
    }

    /// The only element as a float.
    pub fn scalar(&self) -> Option<f32> {
        match self.as_f32()?.as_slice() {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// The only element as a string.
    pub fn string(&self) -> Option<&str> {
        match &self.data {
            Data::Str(v) if v.len() == 1 => v.first().map(String::as_str),
            _ => None,
        }
    }

    /// True when every element is the same float (or the tensor has one element).
    pub fn uniform(&self) -> Option<f32> {
        let v = self.as_f32()?;
        let first = *v.first()?;
        v.iter().all(|&x| x.to_bits() == first.to_bits()).then_some(first)
    }

    /// The same elements under another shape.
    pub fn reshaped(&self, shape: Vec<u64>) -> Tensor {
        Tensor { dtype: self.dtype, shape, data: self.data.clone() }
    }

    /// The tensor transposed so that axis `i` is the old axis `perm[i]`.
    pub fn permuted(&self, perm: &[usize]) -> Tensor {
        let shape = perm.iter().map(|&p| self.shape[p]).collect();
        let data = match &self.data {
            Data::Float(v) => Data::Float(permute(v, &self.shape, perm)),
            Data::Raw(b) => Data::Float(permute(&raw_floats(self.dtype, b), &self.shape, perm)),
            Data::Packed(b) => Data::Int(permute(&self.unpacked(b), &self.shape, perm)),
            Data::Int(v) => Data::Int(permute(v, &self.shape, perm)),
            Data::Bool(v) => Data::Bool(permute(v, &self.shape, perm)),
            Data::Str(v) => Data::Str(permute(v, &self.shape, perm)),
        };
        Tensor { dtype: self.dtype, shape, data }
    }

    /// Decodes an inline literal of type `dtype` and `shape` (floats rounded to `dtype`).
    pub fn from_literal(dtype: ScalarType, shape: Vec<u64>, lit: &Literal) -> Result<Tensor, String> {
        let items = lit.flatten();
        let want = count(&shape).ok_or("the shape is too large")?;
        if items.len() != want {
            return Err(format!("the literal has {} elements, the type {shape:?} needs {want}", items.len()));
        }
        let bad = |l: &Literal| format!("literal {l:?} is not a {dtype} value");
        let data = if dtype.is_float() {
            let round = |v: f64| match dtype {
                ScalarType::Fp16 => f16::from_f64(v).to_f32(),
                ScalarType::Bf16 => bf16::from_f64(v).to_f32(),
                _ => v as f32,
            };
            let values = items.iter().map(|l| l.as_f64().map(round).ok_or_else(|| bad(l)));
            Data::Float(values.collect::<Result<_, _>>()?)
        } else if dtype == ScalarType::Bool {
            let b = |l: &Literal| match l {
                Literal::Bool(b) => Ok(*b),
                other => other.as_i64().map(|v| v != 0).ok_or_else(|| bad(other)),
            };
            Data::Bool(items.iter().map(|l| b(l)).collect::<Result<_, _>>()?)
        } else if dtype == ScalarType::String {
            let s = |l: &Literal| match l {
                Literal::Str(s) => Ok(s.clone()),
                other => Err(bad(other)),
            };
            Data::Str(items.iter().map(|l| s(l)).collect::<Result<_, _>>()?)
        } else {
            Data::Int(items.iter().map(|l| l.as_i64().ok_or_else(|| bad(l))).collect::<Result<_, _>>()?)
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// Decodes a weight blob declared as `dtype` and `shape`.
    pub fn from_blob(dtype: ScalarType, shape: Vec<u64>, blob: &BlobData) -> Result<Tensor, String> {
        if blob.dtype != dtype {
            return Err(format!("the blob holds {} data but the value is declared {dtype}", blob.dtype));
        }
        let n = count(&shape).ok_or("the shape is too large")?;
        let data = decode(dtype, n, blob.bytes.as_slice())?;
        let data = match (dtype, data) {
            (ScalarType::Fp16 | ScalarType::Fp32, Data::Raw(_)) => Data::Raw(blob.bytes.clone()),
            (_, Data::Packed(_)) => Data::Packed(blob.bytes.clone()),
            (_, data) => data,
        };
        Ok(Tensor { dtype, shape, data })
    }
}

/// The values of stored fp16 or fp32 elements.
fn raw_floats(dtype: ScalarType, b: &[u8]) -> Vec<f32> {
    match dtype {
        ScalarType::Fp32 => b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        _ => b.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
    }
}

/// Integral floats as integers; `None` when one is not.
fn floats_as_i64(v: &[f32]) -> Option<Vec<i64>> {
    v.iter().map(|&x| (x.fract() == 0.0).then_some(x as i64)).collect()
}

/// Decodes `n` little-endian elements of `dtype`.
fn decode(dtype: ScalarType, n: usize, bytes: &[u8]) -> Result<Data, String> {
    use ScalarType::*;
    let bits = dtype.bits() as usize;
    let need = n.checked_mul(bits).map(|b| b.div_ceil(8)).ok_or("the blob is too large")?;
    let exact = bits.is_multiple_of(8);
    if bytes.len() < need || (exact && bytes.len() != need) {
        return Err(format!("the blob holds {} bytes, {n} {dtype} elements need {need}", bytes.len()));
    }
    let words = |size: usize| bytes.chunks_exact(size).take(n);
    let u16s = || words(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    let data = match dtype {
        // Kept as stored: `from_blob` puts the blob's own window in.
        Fp16 | Fp32 => Data::Raw(SharedBytes::default()),
        Bf16 => Data::Float(u16s().map(|v| bf16::from_bits(v).to_f32()).collect()),
        Fp64 => Data::Float(words(8).map(|c| f64::from_le_bytes(arr8(c)) as f32).collect()),
        Int8 => Data::Int(bytes.iter().take(n).map(|&b| i64::from(b as i8)).collect()),
        // Kept as stored, as the floats are.
        Uint8 | Uint1 | Uint2 | Uint3 | Uint4 | Uint6 => Data::Packed(SharedBytes::default()),
        Int16 => Data::Int(u16s().map(|v| i64::from(v as i16)).collect()),
        Uint16 => Data::Int(u16s().map(i64::from).collect()),
        Int32 => Data::Int(words(4).map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect()),
        Uint32 => Data::Int(words(4).map(|c| i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect()),
        Int64 => Data::Int(words(8).map(|c| i64::from_le_bytes(arr8(c))).collect()),
        Int4 => Data::Int(unpack_bits(bytes, bits, n, true)),
        other => return Err(format!("{other} blobs are not supported")),
    };
    Ok(data)
}

fn arr8(c: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&c[..8]);
    a
}

/// Unpacks `n` elements of `bits` bits each, packed from the least significant bit of
/// the first byte upward (coremltools' sub-byte packing); `signed` sign-extends.
pub(crate) fn unpack_bits(bytes: &[u8], bits: usize, n: usize, signed: bool) -> Vec<i64> {
    (0..n)
        .map(|i| {
            let mut v = 0i64;
            for b in 0..bits {
                let pos = i * bits + b;
                let bit = bytes.get(pos / 8).map_or(0, |byte| (byte >> (pos % 8)) & 1);
                v |= i64::from(bit) << b;
            }
            if signed && bits > 0 && v >> (bits - 1) & 1 == 1 {
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
    fn unpacks_lsb_first() {
        // 0xA1 = 1010_0001: 4-bit elements 0x1, 0xA.
        assert_eq!(unpack_bits(&[0xA1, 0x0F], 4, 3, false), vec![1, 10, 15]);
        assert_eq!(unpack_bits(&[0xA1], 4, 2, true), vec![1, -6]);
        assert_eq!(unpack_bits(&[0b1110_0100], 2, 4, false), vec![0, 1, 2, 3]);
        assert_eq!(unpack_bits(&[0b0000_0101], 1, 3, false), vec![1, 0, 1]);
    }

    #[test]
    fn decodes_fp16_blob_and_checks_size() {
        let bytes = [0x00, 0x3C, 0x00, 0xC0].to_vec(); // 1.0, -2.0
        let blob = BlobData { dtype: ScalarType::Fp16, bytes: SharedBytes::from_vec(bytes) };
        let t = Tensor::from_blob(ScalarType::Fp16, vec![2], &blob).unwrap();
        assert_eq!(t.as_f32(), Some(vec![1.0, -2.0]));
        assert_eq!(t.raw().map(|b| b.to_vec()), Some(vec![0x00, 0x3C, 0x00, 0xC0]), "kept as stored");
        let err = Tensor::from_blob(ScalarType::Fp16, vec![3], &blob).unwrap_err();
        assert!(err.contains("holds 4 bytes, 3 fp16 elements need 6"), "{err}");
        let err = Tensor::from_blob(ScalarType::Fp32, vec![1], &blob).unwrap_err();
        assert!(err.contains("holds fp16 data but the value is declared fp32"), "{err}");
    }

    #[test]
    fn decodes_literals() {
        let lit = Literal::List(vec![Literal::Int(1), Literal::Float(2.5)]);
        let t = Tensor::from_literal(ScalarType::Fp32, vec![2], &lit);
        assert_eq!(t.map(|t| t.data), Ok(Data::Float(vec![1.0, 2.5])));
        let err = Tensor::from_literal(ScalarType::Fp32, vec![3], &lit).unwrap_err();
        assert!(err.contains("has 2 elements"), "{err}");
        let t = Tensor::from_literal(ScalarType::Fp16, vec![], &Literal::Float(0.001));
        assert_eq!(t.map(|t| t.data), Ok(Data::Float(vec![f16::from_f64(0.001).to_f32()])));
        let t = Tensor::from_literal(ScalarType::Int32, vec![], &Literal::Int(-3));
        assert_eq!(t.map(|t| t.data), Ok(Data::Int(vec![-3])));
    }
}
