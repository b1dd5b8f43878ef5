//! The flat elements of an immediate tensor, decoded from whichever storage field holds
//! them and typed by the declared element type.
//!
//! coremltools stores fp32 as `floats`, fp64 as `doubles`, int16/int32 as `ints`,
//! int64/uint64 as `longInts`, bool as `bools`, strings as `strings`, and fp16, int8,
//! uint8 and uint32 as little-endian `bytes`. Other byte-stored types are decoded the same
//! way (bf16, fp8, 16/32/64-bit integers); sub-byte types are packed low bits first.

use super::proto::tensor_value::Value as Storage;
use anec_ir::mil::elements::from_le_bytes;
use anec_ir::mil::{Literal, ScalarType};

/// Decodes `storage` as elements of `dtype`; `count` is what the shape needs (used for
/// packed sub-byte data).
pub fn elements(storage: &Storage, dtype: ScalarType, count: usize) -> Result<Vec<Literal>, String> {
    let kind = Kind::of(dtype);
    match storage {
        Storage::Floats(v) => numbers(kind, dtype, v.values.iter().map(|x| f64::from(*x)), "floats"),
        Storage::Doubles(v) => numbers(kind, dtype, v.values.iter().copied(), "doubles"),
        Storage::Ints(v) => integers(kind, dtype, v.values.iter().map(|x| i128::from(*x)), "ints"),
        Storage::LongInts(v) => integers(kind, dtype, v.values.iter().map(|x| i128::from(*x)), "longInts"),
        Storage::Bools(v) if kind == Kind::Bool => Ok(v.values.iter().map(|b| Literal::Bool(*b)).collect()),
        Storage::Strings(v) if kind == Kind::Str => Ok(v.values.iter().map(|s| Literal::Str(s.clone())).collect()),
        Storage::Bytes(v) => from_le_bytes(&v.values, dtype, count),
        Storage::Bools(_) => Err(mismatch(dtype, "bools")),
        Storage::Strings(_) => Err(mismatch(dtype, "strings")),
    }
}

/// What literal an element type takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Int,
    Bool,
    Str,
}

impl Kind {
    fn of(t: ScalarType) -> Kind {
        match t {
            ScalarType::Bool => Kind::Bool,
            ScalarType::String => Kind::Str,
            t if t.is_float() => Kind::Float,
            _ => Kind::Int,
        }
    }
}

fn mismatch(dtype: ScalarType, field: &str) -> String {
    format!("a {dtype} tensor value is stored as {field}")
}

fn numbers(kind: Kind, dtype: ScalarType, v: impl Iterator<Item = f64>, field: &str) -> Result<Vec<Literal>, String> {
    match kind {
        Kind::Float => Ok(v.map(Literal::Float).collect()),
        _ => Err(mismatch(dtype, field)),
    }
}

fn integers(kind: Kind, dtype: ScalarType, v: impl Iterator<Item = i128>, field: &str) -> Result<Vec<Literal>, String> {
    match kind {
        Kind::Int => Ok(v.map(Literal::Int).collect()),
        Kind::Float => Ok(v.map(|x| Literal::Float(x as f64)).collect()),
        Kind::Bool => Ok(v.map(|x| Literal::Bool(x != 0)).collect()),
        Kind::Str => Err(mismatch(dtype, field)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::mlpackage::proto::tensor_value::RepeatedBytes;

    fn bytes(b: &[u8], dtype: ScalarType, count: usize) -> Result<Vec<Literal>, String> {
        elements(&Storage::Bytes(RepeatedBytes { values: b.to_vec() }), dtype, count)
    }

    fn floats(v: &[f64]) -> Vec<Literal> {
        v.iter().map(|x| Literal::Float(*x)).collect()
    }

    fn ints(v: &[i128]) -> Vec<Literal> {
        v.iter().map(|x| Literal::Int(*x)).collect()
    }

    #[test]
    fn byte_stored_numbers_decode_little_endian() {
        assert_eq!(bytes(&[0x00, 0x3c, 0x00, 0xc0], ScalarType::Fp16, 2).unwrap(), floats(&[1.0, -2.0]));
        assert_eq!(bytes(&[0x80, 0x3f], ScalarType::Bf16, 1).unwrap(), floats(&[1.0]));
        assert_eq!(bytes(&[0xff, 0x7f], ScalarType::Int8, 2).unwrap(), ints(&[-1, 127]));
        assert_eq!(bytes(&[0xff, 0xff, 0xff, 0xff], ScalarType::Uint32, 1).unwrap(), ints(&[0xffff_ffff]));
        assert_eq!(bytes(&[0xfe, 0xff], ScalarType::Int16, 1).unwrap(), ints(&[-2]));
        assert!(bytes(&[1, 2, 3], ScalarType::Fp16, 2).is_err());
    }

    #[test]
    fn fp8_values() {
        // e4m3fn: 0x38 = 1.0, 0x7e = 448 (max), 0x01 = 2^-9, 0xff = NaN.
        let v = bytes(&[0x38, 0x7e, 0x01, 0xb8], ScalarType::Fp8E4M3, 4).unwrap();
        assert_eq!(v, floats(&[1.0, 448.0, 2f64.powi(-9), -1.0]));
        assert!(matches!(bytes(&[0xff], ScalarType::Fp8E4M3, 1).unwrap()[0], Literal::Float(x) if x.is_nan()));
        // e5m2: 0x3c = 1.0, 0x7b = 57344 (max), 0x7c = inf.
        let v = bytes(&[0x3c, 0x7b, 0x7c], ScalarType::Fp8E5M2, 3).unwrap();
        assert_eq!(v, floats(&[1.0, 57344.0, f64::INFINITY]));
    }

    #[test]
    fn sub_byte_values_are_packed_low_bits_first() {
        assert_eq!(bytes(&[0x21, 0x0f], ScalarType::Uint4, 3).unwrap(), ints(&[1, 2, 15]));
        assert_eq!(bytes(&[0x8f], ScalarType::Int4, 2).unwrap(), ints(&[-1, -8]));
        assert_eq!(bytes(&[0b1110_0100], ScalarType::Uint2, 4).unwrap(), ints(&[0, 1, 2, 3]));
        assert_eq!(bytes(&[0b0000_0101, 0x01], ScalarType::Uint1, 9).unwrap(), ints(&[1, 0, 1, 0, 0, 0, 0, 0, 1]));
        assert!(bytes(&[0x21, 0x0f], ScalarType::Uint4, 5).is_err());
        assert!(bytes(&[0x00], ScalarType::Uint4, usize::MAX).is_err());
    }

    #[test]
    fn storage_must_fit_the_element_kind() {
        let f = Storage::Floats(crate::mlpackage::proto::tensor_value::RepeatedFloats { values: vec![1.5] });
        assert_eq!(elements(&f, ScalarType::Fp32, 1).unwrap(), floats(&[1.5]));
        assert_eq!(elements(&f, ScalarType::Int32, 1).unwrap_err(), "a int32 tensor value is stored as floats");
        let i = Storage::Ints(crate::mlpackage::proto::tensor_value::RepeatedInts { values: vec![3] });
        assert_eq!(elements(&i, ScalarType::Fp32, 1).unwrap(), floats(&[3.0]));
        assert_eq!(elements(&i, ScalarType::Bool, 1).unwrap(), vec![Literal::Bool(true)]);
    }
}
