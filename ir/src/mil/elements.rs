//! Tensor elements as little-endian bytes, both ways: what a weight blob, an
//! `.mlpackage`'s byte-stored immediate value and an E5 CPU constant hold. Whole-byte
//! types are one element per 1, 2, 4 or 8 bytes (bool one byte); the sub-byte types
//! (int4, uint1 ... uint6) are packed low bits first.

use super::{Literal, ScalarType};
use half::{bf16, f16};

/// The elements of `dtype` stored little-endian in `b`: whole bytes each (bool one byte),
/// or, for the sub-byte types, `count` elements packed low bits first.
pub fn from_le_bytes(b: &[u8], dtype: ScalarType, count: usize) -> Result<Vec<Literal>, String> {
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

/// The little-endian bytes of `items` as elements of `dtype` (whole-byte types; a float
/// type rounds to nearest, an integer type keeps the low bytes).
pub fn to_le_bytes(items: &[&Literal], dtype: ScalarType) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for e in items {
        let float = || e.as_f64().ok_or_else(|| format!("{e:?} is not a number"));
        let int = || e.as_i64().ok_or_else(|| format!("{e:?} is not an integer"));
        match dtype {
            ScalarType::Fp16 => out.extend(f16::from_f64(float()?).to_le_bytes()),
            ScalarType::Bf16 => out.extend(bf16::from_f64(float()?).to_le_bytes()),
            ScalarType::Fp32 => out.extend((float()? as f32).to_le_bytes()),
            ScalarType::Fp64 => out.extend(float()?.to_le_bytes()),
            ScalarType::Bool | ScalarType::Int8 | ScalarType::Uint8 => out.push(int()? as u8),
            ScalarType::Int16 | ScalarType::Uint16 => out.extend((int()? as i16).to_le_bytes()),
            ScalarType::Int32 | ScalarType::Uint32 => out.extend((int()? as i32).to_le_bytes()),
            ScalarType::Int64 | ScalarType::Uint64 => out.extend(int()?.to_le_bytes()),
            other => return Err(format!("{other} elements as bytes")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn whole_byte_types_round_trip() {
        let cases: [(ScalarType, Vec<Literal>); 5] = [
            (ScalarType::Fp16, vec![Literal::Float(1.5), Literal::Float(-0.25)]),
            (ScalarType::Fp32, vec![Literal::Float(0.75), Literal::Float(-1024.5)]),
            (ScalarType::Int32, vec![Literal::Int(-7), Literal::Int(1 << 20)]),
            (ScalarType::Int8, vec![Literal::Int(-128), Literal::Int(127)]),
            (ScalarType::Bool, vec![Literal::Bool(true), Literal::Bool(false)]),
        ];
        for (dtype, items) in cases {
            let refs: Vec<&Literal> = items.iter().collect();
            let bytes = to_le_bytes(&refs, dtype).unwrap();
            assert_eq!(from_le_bytes(&bytes, dtype, items.len()).unwrap(), items, "{dtype}");
        }
    }
}
