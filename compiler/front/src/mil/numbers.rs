//! Exact conversion of hex float literals and unescaping of strings.

/// Significant hex digits kept (64 bits); further digits only set a sticky bit.
const MAX_DIGITS: u32 = 16;

/// The value of a hex float without its `0x` prefix (`1.77540ap-4`), rounded to nearest
/// even like C's `strtod`. The lexer has checked the form; malformed text gives NaN.
pub fn parse_hex_float(text: &str) -> f64 {
    let Some((mantissa, exp)) = text.split_once(['p', 'P']) else { return f64::NAN };
    let Ok(exp) = parse_exponent(exp) else { return f64::NAN };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut m: u64 = 0;
    let mut digits = 0u32;
    let mut sticky = false;
    // Binary exponent adjustment: -4 per kept fraction digit, +4 per dropped integer digit.
    let mut shift: i64 = 0;
    for (c, is_frac) in int.chars().map(|c| (c, false)).chain(frac.chars().map(|c| (c, true))) {
        let Some(d) = c.to_digit(16) else { return f64::NAN };
        if digits < MAX_DIGITS {
            m = (m << 4) | u64::from(d);
            if m != 0 {
                digits += 1;
            }
            shift -= 4 * i64::from(is_frac);
        } else {
            sticky |= d != 0;
            shift += 4 * i64::from(!is_frac);
        }
    }
    if m == 0 {
        return 0.0;
    }
    let (m, e) = normalize(m, sticky, exp.saturating_add(shift));
    scale(m, e)
}

/// The exponent after `p`, clamped far outside the f64 range.
fn parse_exponent(text: &str) -> Result<i64, ()> {
    let (neg, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    let v = digits.bytes().fold(0i64, |acc, b| (acc * 10 + i64::from(b - b'0')).min(1 << 20));
    Ok(if neg { -v } else { v })
}

/// Keeps 62 significant bits of `m` with a sticky lowest bit (so that converting to f64
/// rounds correctly) and returns the adjusted exponent.
fn normalize(mut m: u64, mut sticky: bool, mut e: i64) -> (u64, i64) {
    while m >> 62 != 0 {
        sticky |= m & 1 != 0;
        m >>= 1;
        e += 1;
    }
    if sticky {
        m |= 1;
    }
    (m, e)
}

/// `m * 2^e` with one rounding. Results in the subnormal range are computed from a value
/// shifted to keep exact rounding in the common case.
fn scale(m: u64, e: i64) -> f64 {
    let bits = 64 - i64::from(m.leading_zeros());
    let top = bits - 1 + e;
    if top > 1023 {
        return f64::INFINITY;
    }
    if top < -1075 {
        return 0.0;
    }
    if top >= -1022 {
        // Normal: the integer-to-float conversion rounds once, scaling is exact.
        return mul_pow2(m as f64, e);
    }
    // Subnormal: shift the mantissa right so that its lowest kept bit is 2^-1074, with a
    // sticky bit, then scale exactly.
    let drop = (-1074 - e).clamp(0, 63) as u32;
    let kept = m >> drop;
    let lost = m & ((1u64 << drop) - 1);
    let half = if drop == 0 { 0 } else { 1u64 << (drop - 1) };
    let round_up = lost > half || (lost == half && half != 0 && kept & 1 == 1);
    mul_pow2((kept + u64::from(round_up)) as f64, e + i64::from(drop))
}

/// `v * 2^e` by exact steps.
fn mul_pow2(mut v: f64, mut e: i64) -> f64 {
    while e > 0 {
        let step = e.min(1000);
        v *= f64::from_bits(((1023 + step) as u64) << 52);
        e -= step;
    }
    while e < 0 {
        let step = (-e).min(1000);
        v *= f64::from_bits(((1023 - step) as u64) << 52);
        e += step;
    }
    v
}

/// Resolves `\" \\ \n \t \r \' \0 \xNN` (the lexer has checked them).
pub fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).map_or('\u{fffd}', char::from));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_floats_are_exact() {
        assert_eq!(parse_hex_float("1p+0"), 1.0);
        assert_eq!(parse_hex_float("0p+0"), 0.0);
        assert_eq!(parse_hex_float("1.8p-3"), 0.1875);
        assert_eq!(parse_hex_float("1.388p+13"), 10000.0);
        assert_eq!(parse_hex_float("1p-149"), f64::from(f32::from_bits(1)));
        assert_eq!(parse_hex_float("1p-1074"), f64::from_bits(1));
        assert_eq!(parse_hex_float("0.0000000000001p-1022"), f64::from_bits(1));
        assert_eq!(parse_hex_float("1.fffffffffffffp+1023"), f64::MAX);
        assert_eq!(parse_hex_float("1p+1024"), f64::INFINITY);
        assert_eq!(parse_hex_float("1p-1076"), 0.0);
        assert_eq!(parse_hex_float("10p-4"), 1.0);
        assert_eq!(parse_hex_float(".8p1"), 1.0);
        // 1 + 2^-53 is a tie: rounds to even (1.0); one more sticky bit rounds up.
        assert_eq!(parse_hex_float("1.00000000000008p+0"), 1.0);
        assert_eq!(parse_hex_float("1.000000000000080000001p+0"), 1.0 + f64::EPSILON);
        assert_eq!(parse_hex_float("123456789abcdef0123p+0"), 0x0123_4567_89ab_cdef_0123_u128 as f64);
    }

    #[test]
    fn every_f32_bit_pattern_sample_round_trips() {
        for bits in (0u32..0x7f80_0000).step_by(7919) {
            let v = f64::from(f32::from_bits(bits));
            let text = anec_ir::mil::print::hex_float(v);
            assert_eq!(parse_hex_float(&text[2..]), v, "{text}");
        }
    }

    #[test]
    fn unescapes() {
        assert_eq!(unescape(r#"a\"b\\c\nd\x41"#), "a\"b\\c\ndA");
    }
}
