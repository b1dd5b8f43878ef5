//! What the engine presumably computes from a table, in f32 (the model the rules are
//! scored with; the simulator, `anec-tools`' `sim::table`, implements the same model from
//! the bytes, independently).
//!
//! The argument `u` is formed from `x` by the mode; `u <= xL` gives `yL` and `u >= xR`
//! gives `yR`; otherwise `t = (u - base) 2^k`: below 0 the left line `mL u + bL`, above 32
//! the right line, else linear interpolation between knots `floor(t)` and the next (knot
//! 31..32 for t = 32). The mantissa modes split `x` into mantissa and exponent first and
//! scale or offset the interpolated value by the exponent. NaN stays NaN.

use super::layout::{Layout, Line, Mode};

impl Layout {
    /// The table's value at `x`, before the result is rounded to the output format.
    pub fn eval(&self, x: f32) -> f32 {
        if x.is_nan() {
            return x;
        }
        match self.mode {
            Mode::Affine => self.clamped(x, |u| self.lookup(u)),
            Mode::Odd => odd(x, self.clamped(x.abs(), |u| self.lookup(u))),
            Mode::Exp2 => self.clamped(x, |x| self.exp2(x)),
            Mode::Sqrt => self.clamped(x, |x| self.sqrt(x, 1)),
            Mode::Rsqrt => self.clamped(x, |x| self.sqrt(x, -1)),
            Mode::Reciprocal => odd(x, self.clamped(x.abs(), |u| self.reciprocal(u))),
            Mode::Log2 => self.clamped(x, |x| self.log2(x)),
        }
    }

    /// `yL` at or below `xL`, `yR` at or above `xR`, else `inside(u)`.
    fn clamped(&self, u: f32, inside: impl FnOnce(f32) -> f32) -> f32 {
        if u <= self.x_left.to_f32() {
            self.y_left.to_f32()
        } else if u >= self.x_right.to_f32() {
            self.y_right.to_f32()
        } else {
            inside(u)
        }
    }

    /// `T(u)`: the knots interpolated, the lines outside them.
    fn lookup(&self, u: f32) -> f32 {
        let base = self.mode.base(self.step()) as f32;
        let t = (u - base) * pow2(i32::from(self.k));
        if t < 0.0 {
            return line(self.left, u);
        }
        if t > 32.0 {
            return line(self.right, u);
        }
        // 0 <= t <= 32: the index is in 0..=31 (t = 32 uses the last segment).
        let i = (t.floor() as usize).min(31);
        let fr = t - i as f32;
        let (a, b) = match (self.knots.get(i), self.knots.get(i + 1)) {
            (Some(a), Some(b)) => (a.to_f32(), b.to_f32()),
            _ => return f32::NAN,
        };
        a + fr * (b - a)
    }

    fn exp2(&self, x: f32) -> f32 {
        let n = x.floor();
        ldexp(self.lookup(x - n), n as i32)
    }

    /// `x = m 4^e`: `T(m) 2^(dir e)`.
    fn sqrt(&self, x: f32, dir: i32) -> f32 {
        let (m, e) = frexp(x);
        let (m, e) = if e % 2 == 0 { (m, e / 2) } else { (2.0 * m, (e - 1) / 2) };
        ldexp(self.lookup(m), dir * e)
    }

    fn reciprocal(&self, u: f32) -> f32 {
        let (m, e) = frexp(u);
        ldexp(self.lookup(m), -e)
    }

    fn log2(&self, x: f32) -> f32 {
        let (m, e) = frexp(x);
        e as f32 + self.lookup(m)
    }
}

/// `y` with the sign of `x`.
fn odd(x: f32, y: f32) -> f32 {
    if x.is_sign_negative() {
        -y
    } else {
        y
    }
}

fn line(l: Line, u: f32) -> f32 {
    l.m.to_f32() * u + l.b.to_f32()
}

/// `2^e` as f32 (0 or infinity beyond the range).
fn pow2(e: i32) -> f32 {
    ldexp(1.0, e)
}

/// `v 2^e`, exact unless it leaves the f32 range.
fn ldexp(v: f32, e: i32) -> f32 {
    let (mut v, mut e) = (v, e);
    while e > 127 {
        v *= f32::from_bits(254 << 23);
        e -= 127;
    }
    while e < -126 {
        v *= f32::from_bits(1 << 23);
        e += 126;
    }
    v * f32::from_bits(((e + 127) as u32) << 23)
}

/// `x = m 2^e` with `m` in [0.5, 1), for finite nonzero `x > 0`.
fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    if x < f32::MIN_POSITIVE {
        let (m, e) = frexp(x * pow2(32));
        return (m, e - 32);
    }
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xff) as i32 - 126;
    (f32::from_bits((bits & 0x807f_ffff) | (126 << 23)), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frexp_and_ldexp_invert() {
        for x in [1.0f32, 0.75, 3.0, 1e-40, 6e-8, 65504.0] {
            let (m, e) = frexp(x);
            assert!((0.5..1.0).contains(&m), "{x}: {m}");
            assert_eq!(ldexp(m, e), x);
        }
        assert_eq!(pow2(-64), 2f32.powi(-64));
        assert_eq!(pow2(64), 2f32.powi(64));
    }
}
