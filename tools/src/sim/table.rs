//! The NE's table-driven nonlinear stage (NonlinearMode 2): a 0x80-byte table read through
//! the kernel DMA, evaluated by linear interpolation between its 33 knots exactly as
//! stored.
//!
//! Layout (64 little-endian 16-bit words, the same in both Apple compiler generations):
//! `[xL, xR, yL, yR]` (fp16), 33 knots (fp16), the lines `[mL, bL, mR, bR]` (fp16,
//! `y = m u + b`), word 41 `k` (integer: knot spacing `2^-k`), word 42 the mode byte
//! (integer), then zeros. The mode says how the table argument `u` is formed from `x`
//! and where knot 0 sits (`base`):
//!
//! | mode | argument | knot `i` at | result |
//! |---|---|---|---|
//! | 0x01 affine | `u = x` | `(i - 16) 2^-k` | `T(u)` |
//! | 0x60 odd | `u = abs(x)` | `i 2^-k` | `sign(x) T(u)` |
//! | 0x0a exp2 | `x = n + f`, `n` integer, `0 <= f < 1` | `i 2^-k` | `2^n T(f)` |
//! | 0xc5 sqrt | `x = m 4^e`, `m` in [0.5, 2) | `i 2^-k` | `T(m) 2^e` |
//! | 0xc6 rsqrt | as sqrt | `i 2^-k` | `T(m) 2^-e` |
//! | 0x67 reciprocal | `abs(x) = m 2^e`, `m` in [0.5, 1) | `0.5 + i 2^-k` | `sign(x) T(m) 2^-e` |
//! | 0xc9 log2 | `x = m 2^e`, `m` in [0.5, 1) | `0.5 + i 2^-k` | `e + T(m)` |
//!
//! Evaluation (f32 arithmetic, inferred from Apple's tables; no hardware trace behind the
//! details): the clamps come first, on `x` (on `abs(x)` in the odd and reciprocal modes):
//! at or below `xL` the value is `yL`, at or above `xR` it is `yR` (in the mantissa modes
//! this is also what 0 and infinity give). Otherwise `t = (arg - base) 2^k`; below 0 the
//! left line at the argument, above 32 the right line, else knot `floor(t)` (31 for
//! `t = 32`) interpolated towards the next by the fraction. The lines are not clamped
//! (the clamps end them). NaN stays NaN. A mode byte not in the table above, `k` above
//! 64 or a nonzero word after the mode is refused. No transcendental function is
//! evaluated here.
//!
//! This evaluation repeats, on purpose, the one in `anec_backend_h13::activation` (the
//! backend's error measurement): the simulator reads the table's bytes as a program holds
//! them, Apple's as well as ours, so a table the backend builds wrong, or a layout it
//! misreads, shows up as a disagreement instead of cancelling out.

use half::f16;

/// Bytes of a table.
pub const TABLE_BYTES: usize = 0x80;
/// Number of knots.
pub const KNOTS: usize = 33;
/// fp16 words before the knots.
const HEAD: usize = 4;
/// Word index of `k` (after the knots and lines).
const K_WORD: usize = HEAD + KNOTS + 4;
/// Word index of the mode byte.
const MODE_WORD: usize = K_WORD + 1;
/// The largest `k` modelled (the piecewise-linear tables' collapsed knot range).
const K_MAX: u16 = 64;

/// How the argument is formed from `x` (word 42).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 0x01: `u = x`, knots centred on 0.
    Affine,
    /// 0x60: `u = |x|`, the result takes the sign of `x`.
    Odd,
    /// 0x0a: `2^n T(f)`.
    Exp2,
    /// 0xc5: `T(m) 2^e`, `x = m 4^e`.
    Sqrt,
    /// 0xc6: `T(m) 2^-e`, `x = m 4^e`.
    Rsqrt,
    /// 0x67: `sign(x) T(m) 2^-e`, `|x| = m 2^e`.
    Reciprocal,
    /// 0xc9: `e + T(m)`, `x = m 2^e`.
    Log2,
}

impl Mode {
    fn from_word(w: u16) -> Result<Mode, String> {
        Ok(match w {
            0x01 => Mode::Affine,
            0x60 => Mode::Odd,
            0x0a => Mode::Exp2,
            0xc5 => Mode::Sqrt,
            0xc6 => Mode::Rsqrt,
            0x67 => Mode::Reciprocal,
            0xc9 => Mode::Log2,
            _ => {
                let known = "0x01, 0x60, 0x0a, 0xc5, 0xc6, 0x67, 0xc9";
                return Err(format!("table word {MODE_WORD} (mode) is {w:#06x}; only {known} are modelled"));
            }
        })
    }

    /// The argument of knot 0.
    fn base(self, step: f32) -> f32 {
        match self {
            Mode::Affine => -16.0 * step,
            Mode::Reciprocal | Mode::Log2 => 0.5,
            Mode::Odd | Mode::Exp2 | Mode::Sqrt | Mode::Rsqrt => 0.0,
        }
    }
}

/// A parsed activation table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// An argument at or below `x_left` gives `y_left`.
    pub x_left: f32,
    /// An argument at or above `x_right` gives `y_right`.
    pub x_right: f32,
    /// See `x_left`.
    pub y_left: f32,
    /// See `x_right`.
    pub y_right: f32,
    /// The knot values.
    pub knots: [f32; KNOTS],
    /// Slope and intercept of the left line.
    pub left: (f32, f32),
    /// Slope and intercept of the right line.
    pub right: (f32, f32),
    /// The knot spacing is `2^-k`.
    pub k: u16,
    /// How the argument is formed.
    pub mode: Mode,
}

impl Table {
    /// Parses the table at the start of `bytes`; `k` must be at most 64, the mode one of
    /// those modelled and the words after it zero.
    pub fn parse(bytes: &[u8]) -> Result<Table, String> {
        let bytes =
            bytes.get(..TABLE_BYTES).ok_or_else(|| format!("{} bytes, a table is {TABLE_BYTES:#x}", bytes.len()))?;
        let words: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let word = |i: usize| words.get(i).copied().unwrap_or(0);
        let v = |i: usize| f16::from_bits(word(i)).to_f32();
        if let Some((i, w)) = words.iter().enumerate().skip(MODE_WORD + 1).find(|(_, &w)| w != 0) {
            return Err(format!("table word {i} is {w:#06x}; only 0 is modelled there"));
        }
        let k = word(K_WORD);
        if k > K_MAX {
            return Err(format!("table word {K_WORD} (k) is {k}; knot spacings 2^-k with k <= {K_MAX} are modelled"));
        }
        let lines = HEAD + KNOTS;
        Ok(Table {
            x_left: v(0),
            x_right: v(1),
            y_left: v(2),
            y_right: v(3),
            knots: std::array::from_fn(|i| v(HEAD + i)),
            left: (v(lines), v(lines + 1)),
            right: (v(lines + 2), v(lines + 3)),
            k,
            mode: Mode::from_word(word(MODE_WORD))?,
        })
    }

    /// The table's value at `x` (before the result is rounded to the output format).
    pub fn eval(&self, x: f32) -> f32 {
        if x.is_nan() {
            return x;
        }
        match self.mode {
            Mode::Affine => self.clamped(x, |u| self.lookup(u)),
            Mode::Odd => with_sign(x, self.clamped(x.abs(), |u| self.lookup(u))),
            Mode::Exp2 => self.clamped(x, |x| self.exp2(x)),
            Mode::Sqrt => self.clamped(x, |x| self.sqrt(x, 1)),
            Mode::Rsqrt => self.clamped(x, |x| self.sqrt(x, -1)),
            Mode::Reciprocal => with_sign(x, self.clamped(x.abs(), |u| self.reciprocal(u))),
            Mode::Log2 => self.clamped(x, |x| self.log2(x)),
        }
    }

    /// `y_left` at or below `x_left`, `y_right` at or above `x_right`, else `inside(u)`.
    fn clamped(&self, u: f32, inside: impl FnOnce(f32) -> f32) -> f32 {
        if u <= self.x_left {
            self.y_left
        } else if u >= self.x_right {
            self.y_right
        } else {
            inside(u)
        }
    }

    /// `T(u)`: the knots interpolated, the lines outside them.
    fn lookup(&self, u: f32) -> f32 {
        let scale = pow2(i32::from(self.k));
        let t = (u - self.mode.base(1.0 / scale)) * scale;
        if t < 0.0 {
            return self.left.0 * u + self.left.1;
        }
        if t > 32.0 {
            return self.right.0 * u + self.right.1;
        }
        // 0 <= t <= 32: the index is in 0..=31 (t = 32 uses the last segment).
        let i = (t.floor() as usize).min(KNOTS - 2);
        let f = t - i as f32;
        match (self.knots.get(i), self.knots.get(i + 1)) {
            (Some(&a), Some(&b)) => a + f * (b - a),
            _ => f32::NAN,
        }
    }

    fn exp2(&self, x: f32) -> f32 {
        let n = x.floor();
        ldexp(self.lookup(x - n), n as i32)
    }

    /// `x = m 4^e`: `T(m) 2^(sign e)`.
    fn sqrt(&self, x: f32, sign: i32) -> f32 {
        let (m, e) = frexp(x);
        let (m, e) = if e % 2 == 0 { (m, e / 2) } else { (2.0 * m, (e - 1) / 2) };
        ldexp(self.lookup(m), sign * e)
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

/// `y` with the sign of `x` (negative for -0).
fn with_sign(x: f32, y: f32) -> f32 {
    if x.is_sign_negative() {
        -y
    } else {
        y
    }
}

/// `2^e` (0 or infinity outside f32).
fn pow2(e: i32) -> f32 {
    ldexp(1.0, e)
}

/// `v 2^e`, exact unless the result leaves the f32 range.
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

/// `x = m 2^e`, `m` in [0.5, 1) (sign kept), for finite nonzero `x`; else `(x, 0)`.
fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    if x.abs() < f32::MIN_POSITIVE {
        let (m, e) = frexp(x * pow2(32));
        return (m, e - 32);
    }
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xff) as i32 - 126;
    (f32::from_bits((bits & 0x807f_ffff) | (126 << 23)), e)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_backend_h13::activation::{layout, max_error, table, TableFn};

    /// A table of f(x) = x / 16 over the knots -8, -7.5, ..., 8 (k = 1, affine), lines of
    /// slope 0.
    fn ramp() -> Vec<u8> {
        let mut w: Vec<f32> = vec![-9.0, 9.0, -0.5, 0.5];
        w.extend((0..KNOTS).map(|i| (-8.0 + 0.5 * i as f32) / 16.0));
        w.extend([0.0, -0.5, 0.0, 0.5]);
        let mut bytes: Vec<u8> = w.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect();
        bytes.extend([1, 0, 1, 0]);
        bytes.resize(TABLE_BYTES, 0);
        bytes
    }

    /// Every table function, with parameters where it has some.
    fn every_fn() -> Vec<TableFn> {
        vec![
            TableFn::Sigmoid,
            TableFn::Tanh,
            TableFn::Gelu,
            TableFn::GeluSigmoid,
            TableFn::Silu,
            TableFn::Exp2,
            TableFn::Sqrt,
            TableFn::Rsqrt,
            TableFn::Reciprocal,
            TableFn::Log2,
            TableFn::Erf,
            TableFn::Elu(1.0),
            TableFn::Softplus,
            TableFn::LeakyRelu(0.125),
            TableFn::LeakyRelu(0.01),
            TableFn::Clip(-1.0, 6.0),
            TableFn::Clip(0.0, 6.0),
            TableFn::Clip(f64::NEG_INFINITY, 6.0),
            TableFn::Clip(-2.0, f64::INFINITY),
            TableFn::Sign,
        ]
    }

    /// Every finite fp16 value.
    fn finite_fp16() -> impl Iterator<Item = f32> {
        (0..=u16::MAX).map(f16::from_bits).filter(|h| h.is_finite()).map(f16::to_f32)
    }

    fn sim(f: TableFn) -> Table {
        Table::parse(&table(f)).unwrap()
    }

    #[test]
    fn interpolates_between_knots_and_follows_the_lines_outside() {
        let t = Table::parse(&ramp()).unwrap();
        assert_eq!((t.k, t.mode), (1, Mode::Affine));
        assert_eq!(t.eval(-8.0), -0.5);
        assert_eq!(t.eval(8.0), 0.5);
        assert_eq!(t.eval(1.25), 1.25 / 16.0);
        assert_eq!(t.eval(-8.5), -0.5);
        assert_eq!(t.eval(100.0), 0.5);
        assert!(t.eval(f32::NAN).is_nan());
    }

    #[test]
    fn interpolation_uses_the_stored_knots() {
        let mut bytes = ramp();
        // Knot 17 (x = 0.5) stored as 1.0 instead of 1/32: halfway to it is 0.5.
        bytes[2 * (HEAD + 17)..2 * (HEAD + 18)].copy_from_slice(&f16::from_f32(1.0).to_le_bytes());
        let t = Table::parse(&bytes).unwrap();
        assert_eq!(t.eval(0.25), 0.5);
        assert_eq!(t.eval(0.5), 1.0);
    }

    #[test]
    fn unknown_tail_words_and_short_tables_are_refused() {
        let mut bytes = ramp();
        bytes[2 * MODE_WORD] = 2;
        assert!(Table::parse(&bytes).unwrap_err().contains("word 42"));
        let mut bytes = ramp();
        bytes[2 * MODE_WORD + 2] = 1;
        assert!(Table::parse(&bytes).unwrap_err().contains("word 43"));
        let mut bytes = ramp();
        bytes[2 * K_WORD] = 65;
        assert!(Table::parse(&bytes).unwrap_err().contains("word 41"));
        assert!(Table::parse(&ramp()[..0x40]).is_err());
    }

    #[test]
    fn the_knot_spacing_is_read_from_word_41() {
        // k = 2: the same knots now sit at -4, -3.75, ..., 4.
        let mut bytes = ramp();
        bytes[2 * K_WORD] = 2;
        let t = Table::parse(&bytes).unwrap();
        assert_eq!(t.eval(0.25), 0.5 / 16.0);
        assert_eq!(t.eval(4.0), 0.5);
        assert_eq!(t.eval(5.0), 0.5);
    }

    #[test]
    fn the_backend_sigmoid_table_evaluates_to_its_knots() {
        let t = sim(TableFn::Sigmoid);
        assert_eq!(t.eval(0.0), 0.5);
        assert_eq!(t.eval(-20.0), 0.0);
        assert_eq!(t.eval(20.0), 1.0);
        let (l, r) = (t.left, t.right);
        assert_eq!(t.eval(-9.0), (l.0 * -9.0 + l.1).max(0.0));
        assert_eq!(t.eval(8.25), (r.0 * 8.25 + r.1).min(1.0));
    }

    #[test]
    fn every_mode_splits_its_argument() {
        let exp2 = sim(TableFn::Exp2);
        assert_eq!(exp2.mode, Mode::Exp2);
        assert_eq!(exp2.eval(3.5), 8.0 * exp2.knots[16]);
        assert_eq!(exp2.eval(-2.0), 0.25);
        assert_eq!((exp2.eval(-30.0), exp2.eval(20.0)), (0.0, f32::INFINITY));
        let sqrt = sim(TableFn::Sqrt);
        assert_eq!((sqrt.eval(4.0), sqrt.eval(0.25), sqrt.eval(0.0)), (2.0, 0.5, 0.0));
        assert_eq!(sqrt.eval(8.0), 2.0 * sqrt.knots[32]);
        let rsqrt = sim(TableFn::Rsqrt);
        assert_eq!((rsqrt.eval(0.25), rsqrt.eval(16.0), rsqrt.eval(0.0)), (2.0, 0.25, f32::INFINITY));
        let recip = sim(TableFn::Reciprocal);
        assert_eq!((recip.eval(-4.0), recip.eval(1.5)), (-0.25, recip.knots[16] / 2.0));
        assert_eq!((recip.eval(0.0), recip.eval(-0.0)), (f32::INFINITY, f32::NEG_INFINITY));
        let log2 = sim(TableFn::Log2);
        assert_eq!((log2.eval(8.0), log2.eval(0.5), log2.eval(0.0)), (3.0, -1.0, f32::NEG_INFINITY));
        let tanh = sim(TableFn::Tanh);
        assert_eq!((tanh.mode, tanh.eval(-0.5)), (Mode::Odd, -tanh.knots[4]));
        assert_eq!((tanh.eval(-5.0), tanh.eval(5.0)), (-1.0, 1.0));
    }

    #[test]
    fn the_piecewise_linear_tables_are_exact() {
        let leaky = sim(TableFn::LeakyRelu(0.125));
        assert_eq!((leaky.eval(-8.0), leaky.eval(3.0), leaky.eval(0.0)), (-1.0, 3.0, 0.0));
        let clip = sim(TableFn::Clip(-1.0, 6.0));
        assert_eq!((clip.eval(-3.0), clip.eval(2.5), clip.eval(9.0)), (-1.0, 2.5, 6.0));
        let sign = sim(TableFn::Sign);
        assert_eq!((sign.eval(-1e-3), sign.eval(0.0), sign.eval(6e-8)), (-1.0, 0.0, 1.0));
    }

    /// The simulator and the backend's model of the engine agree bit for bit on every
    /// finite fp16 input, and the simulated table is within `max_error` of the function
    /// wherever that is real and finite in fp16.
    #[test]
    fn every_table_simulates_within_its_max_error() {
        for f in every_fn() {
            let (t, model, bound) = (sim(f), layout(f), max_error(f));
            assert!(bound.is_finite(), "{f:?}: {bound}");
            let mut worst = 0.0f64;
            for x in finite_fp16() {
                let got = t.eval(x);
                assert_eq!(got.to_bits(), model.eval(x).to_bits(), "{f:?} at {x}");
                let want = f.eval(f64::from(x));
                if want.is_nan() || !f16::from_f64(want).is_finite() {
                    continue;
                }
                worst = worst.max((f16::from_f32(got).to_f64() - want).abs());
            }
            assert!(worst <= bound, "{f:?}: {worst} > {bound}");
            assert_eq!(worst, bound, "{f:?}: the simulator reaches the backend's max_error");
        }
    }
}
