//! The flat elements of an immediate tensor, decoded from whichever storage field holds
//! them and typed by the declared element type.
//!
//! coremltools stores fp32 as `floats`, fp64 as `doubles`, int16/int32 as `ints`,
//! int64/uint64 as `longInts`, bool as `bools`, strings as `strings`, and fp16, int8,
//! uint8 and uint32 as little-endian `bytes`. Other byte-stored types are decoded the same
//! way (bf16, fp8, 16/32/64-bit integers); sub-byte types are packed low bits first.

use super::proto::tensor_value::Value as Storage;
use anec_ir::mil::{Literal, ScalarType};
use half::{bf16, f16};

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
        Storage::Bytes(v) => from_bytes(&v.values, dtype, count),
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

/// Little-endian packed elements of `dtype`.
fn from_bytes(b: &[u8], dtype: ScalarType, count: usize) -> Result<Vec<Literal>, String> {
    let bits = dtype.bits() as usize;
    if dtype == ScalarType::String || (bits < 8 && dtype != ScalarType::Bool) {
        return sub_byte(b, dtype, count);
    }
    let width = bits.max(8) / 8;
    let chunks = b.chunks_exact(width);
    if !chunks.remainder().is_empty() {
        return Err(format!("a {dtype} tensor value has {} bytes, not a multiple of {width}", b.len()));
    }
    Ok(chunks.map(|c| decode(c, dtype)).collect())
}

/// One little-endian element of 1, 2, 4 or 8 bytes.
fn decode(c: &[u8], dtype: ScalarType) -> Literal {
    let mut w = [0u8; 8];
    w[..c.len()].copy_from_slice(c);
    let raw = u64::from_le_bytes(w);
    use ScalarType as S;
    match dtype {
        S::Fp16 => Literal::Float(f16::from_bits(raw as u16).to_f64()),
        S::Bf16 => Literal::Float(bf16::from_bits(raw as u16).to_f64()),
        S::Fp32 => Literal::Float(f64::from(f32::from_bits(raw as u32))),
        S::Fp64 => Literal::Float(f64::from_bits(raw)),
        S::Fp8E5M2 => Literal::Float(f16::from_bits((raw as u16) << 8).to_f64()),
        S::Fp8E4M3 => Literal::Float(fp8_e4m3fn(raw as u8)),
        S::Bool => Literal::Bool(raw != 0),
        S::Int8 => Literal::Int(i128::from(raw as u8 as i8)),
        S::Int16 => Literal::Int(i128::from(raw as u16 as i16)),
        S::Int32 => Literal::Int(i128::from(raw as u32 as i32)),
        S::Int64 => Literal::Int(i128::from(raw as i64)),
        _ => Literal::Int(i128::from(raw)),
    }
}

/// `count` sub-byte elements packed low bits first.
fn sub_byte(b: &[u8], dtype: ScalarType, count: usize) -> Result<Vec<Literal>, String> {
    let bits = dtype.bits() as usize;
    let need = count.checked_mul(bits).map(|n| n.div_ceil(8));
    if bits == 0 || need != Some(b.len()) {
        return Err(format!("a {dtype} tensor value of {count} elements cannot be stored in {} bytes", b.len()));
    }
    let field = |i: usize| (0..bits).fold(0u32, |acc, k| acc | (u32::from(bit(b, i * bits + k)) << k));
    let signed = dtype == ScalarType::Int4;
    Ok((0..count)
        .map(|i| {
            let v = i128::from(field(i));
            Literal::Int(if signed && v >= 8 { v - 16 } else { v })
        })
        .collect())
}

fn bit(b: &[u8], i: usize) -> bool {
    b.get(i / 8).is_some_and(|byte| byte >> (i % 8) & 1 == 1)
}

/// fp8 e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, `S.1111.111`
/// is NaN.
fn fp8_e4m3fn(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 3) & 0xf);
    let man = f64::from(b & 7);
    if exp == 15 && b & 7 == 7 {
        return f64::NAN;
    }
    let v = if exp == 0 { man / 8.0 * 2f64.powi(-6) } else { (1.0 + man / 8.0) * 2f64.powi(exp - 7) };
    sign * v
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
