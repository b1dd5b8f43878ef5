//! The table format: 64 little-endian 16-bit words, typed ([`Layout`]), and the mode byte
//! ([`Mode`]).

use half::f16;

/// Size of a table in `__const`.
pub const TABLE_SIZE: usize = 0x80;
/// Number of knots.
pub const KNOTS: usize = 33;
/// Word index of the first knot.
const KNOT_WORD: usize = 4;
/// Word index of `mL` (after the knots).
const LINE_WORD: usize = KNOT_WORD + KNOTS;
/// Word index of `k`.
const K_WORD: usize = LINE_WORD + 4;
/// Word index of the mode byte.
const MODE_WORD: usize = K_WORD + 1;

/// How the engine forms the table argument `u` from `x`, and the result from `T(u)` (the
/// knots interpolated). The byte values are hardware constants, read from Apple's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `u = x`, knots at `(i - 16) 2^-k` (centred on 0), lines outside.
    Affine,
    /// `u = |x|`, knots at `i 2^-k`; the result takes the sign of `x`.
    Odd,
    /// `x = n + f` (`n` integer, `0 <= f < 1`): `y = 2^n T(f)`, knots at `i 2^-k`.
    Exp2,
    /// `x = m 4^e`, `m` in [0.5, 2): `y = T(m) 2^e`, knots at `i 2^-k`.
    Sqrt,
    /// As [`Mode::Sqrt`] with `y = T(m) 2^-e`.
    Rsqrt,
    /// `|x| = m 2^e`, `m` in [0.5, 1): `y = sign(x) T(m) 2^-e`, knots at `0.5 + i 2^-k`.
    Reciprocal,
    /// `x = m 2^e`, `m` in [0.5, 1): `y = e + T(m)`, knots at `0.5 + i 2^-k`.
    Log2,
}

impl Mode {
    /// The mode byte (table word 42).
    pub fn byte(self) -> u16 {
        match self {
            Mode::Affine => 0x01,
            Mode::Odd => 0x60,
            Mode::Exp2 => 0x0a,
            Mode::Sqrt => 0xc5,
            Mode::Rsqrt => 0xc6,
            Mode::Reciprocal => 0x67,
            Mode::Log2 => 0xc9,
        }
    }

    /// The argument of knot 0 when the spacing is `step`.
    pub fn base(self, step: f64) -> f64 {
        match self {
            Mode::Affine => -16.0 * step,
            Mode::Reciprocal | Mode::Log2 => 0.5,
            Mode::Odd | Mode::Exp2 | Mode::Sqrt | Mode::Rsqrt => 0.0,
        }
    }
}

/// A line `y = m u + b`, as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Slope.
    pub m: f16,
    /// Intercept at `u = 0`.
    pub b: f16,
}

impl Line {
    /// The line `y = 0`.
    pub const ZERO: Line = Line { m: f16::ZERO, b: f16::ZERO };

    /// The line `y = m u + b`, slope and intercept rounded to fp16.
    pub fn new(m: f64, b: f64) -> Line {
        Line { m: f16::from_f64(m), b: f16::from_f64(b) }
    }

    /// The constant line `y = c`.
    pub fn constant(c: f64) -> Line {
        Line::new(0.0, c)
    }
}

/// A table, typed: the values are exactly what the words hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// An argument at or below `x_left` gives `y_left`.
    pub x_left: f16,
    /// An argument at or above `x_right` gives `y_right`.
    pub x_right: f16,
    /// See `x_left`.
    pub y_left: f16,
    /// See `x_right`.
    pub y_right: f16,
    /// The knot values.
    pub knots: [f16; KNOTS],
    /// The line below the first knot.
    pub left: Line,
    /// The line above the last knot.
    pub right: Line,
    /// The knot spacing is `2^-k`.
    pub k: u16,
    /// How the argument is formed.
    pub mode: Mode,
}

impl Layout {
    /// A table of zeros in `mode` with spacing `2^-k` and no clamps (`xL = -inf`,
    /// `xR = inf`).
    pub fn blank(mode: Mode, k: u16) -> Layout {
        Layout {
            x_left: f16::NEG_INFINITY,
            x_right: f16::INFINITY,
            y_left: f16::ZERO,
            y_right: f16::ZERO,
            knots: [f16::ZERO; KNOTS],
            left: Line::ZERO,
            right: Line::ZERO,
            k,
            mode,
        }
    }

    /// The knot spacing `2^-k`.
    pub fn step(&self) -> f64 {
        (-f64::from(self.k)).exp2()
    }

    /// The argument of knot `i`.
    pub fn knot_arg(&self, i: usize) -> f64 {
        let step = self.step();
        self.mode.base(step) + step * i as f64
    }

    /// Sets every knot to `fp16(g(u_i))`.
    pub fn sample(&mut self, g: impl Fn(f64) -> f64) {
        let args: [f64; KNOTS] = std::array::from_fn(|i| self.knot_arg(i));
        for (knot, u) in self.knots.iter_mut().zip(args) {
            *knot = f16::from_f64(g(u));
        }
    }

    /// The 64 words.
    pub fn words(&self) -> [u16; TABLE_SIZE / 2] {
        let mut w = [0u16; TABLE_SIZE / 2];
        let head = [self.x_left, self.x_right, self.y_left, self.y_right];
        for (slot, v) in w.iter_mut().zip(head.iter().chain(&self.knots)) {
            *slot = v.to_bits();
        }
        let lines = [self.left.m, self.left.b, self.right.m, self.right.b];
        for (slot, v) in w[LINE_WORD..].iter_mut().zip(lines) {
            *slot = v.to_bits();
        }
        w[K_WORD] = self.k;
        w[MODE_WORD] = self.mode.byte();
        w
    }

    /// The 0x80 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words().iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
