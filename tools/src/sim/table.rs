//! The NE's table-driven nonlinear stage (NonlinearMode 2): a 0x80-byte fp16 table read
//! through kernel-DMA channel 0, evaluated by linear interpolation between its 33 knots
//! exactly as stored.
//!
//! Layout (64 fp16 words, as Apple's sigmoid.hwx holds it): `[xL, xR, ymin, ymax]`, the
//! 33 knots f(-8), f(-7.5), ..., f(8), the two extrapolation lines `[mL, bL, mR, bR]`,
//! two words of 1 (meaning unknown), then zeros. The knot domain [-8, 8] at step 0.5 is
//! not stored: it is the fixed domain of the hardware table (seed 003, "33-knot
//! piecewise-linear table over a fixed domain"); Apple's sigmoid knots are fp16(f(x)) at
//! exactly these points.
//!
//! Evaluation (f32 arithmetic, inferred from the layout): inside [-8, 8] the value is
//! interpolated between the two neighbouring knots; below -8 it follows the left line
//! y = mL x + bL down to xL and is ymin from there; above 8 the right line up to xR and
//! ymax from there; the lines are clamped to [ymin, ymax] (their fp16-rounded slope and
//! intercept may overshoot the limit by an ulp near xL / xR). NaN stays NaN. No
//! transcendental function is evaluated here.

use half::f16;

/// Bytes of a table.
pub const TABLE_BYTES: usize = 0x80;
/// Number of knots.
pub const KNOTS: usize = 33;
/// The first knot's input.
pub const X0: f32 = -8.0;
/// Distance between knots.
pub const STEP: f32 = 0.5;
/// fp16 words before the knots.
const HEAD: usize = 4;
/// Index of the first word after the knots and lines.
const TAIL: usize = HEAD + KNOTS + 4;

/// A parsed activation table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Where the left line reaches ymin, and the right one ymax.
    pub x_left: f32,
    /// See `x_left`.
    pub x_right: f32,
    /// The range limits.
    pub y_min: f32,
    /// See `y_min`.
    pub y_max: f32,
    /// The knot values.
    pub knots: [f32; KNOTS],
    /// Slope and intercept of the left line.
    pub left: (f32, f32),
    /// Slope and intercept of the right line.
    pub right: (f32, f32),
}

impl Table {
    /// Parses the table at the start of `bytes`; the words after the lines must be the
    /// two 1s and zeros Apple writes (other values are not modelled).
    pub fn parse(bytes: &[u8]) -> Result<Table, String> {
        let bytes =
            bytes.get(..TABLE_BYTES).ok_or_else(|| format!("{} bytes, a table is {TABLE_BYTES:#x}", bytes.len()))?;
        let words: Vec<u16> = bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let v = |i: usize| words.get(i).map_or(0.0, |&w| f16::from_bits(w).to_f32());
        for (i, &w) in words.iter().enumerate().skip(TAIL) {
            let want = if i < TAIL + 2 { 1 } else { 0 };
            if w != want {
                return Err(format!("table word {i} is {w:#06x}; only {want:#x} is modelled there"));
            }
        }
        let mut knots = [0.0; KNOTS];
        for (i, k) in knots.iter_mut().enumerate() {
            *k = v(HEAD + i);
        }
        let lines = HEAD + KNOTS;
        Ok(Table {
            x_left: v(0),
            x_right: v(1),
            y_min: v(2),
            y_max: v(3),
            knots,
            left: (v(lines), v(lines + 1)),
            right: (v(lines + 2), v(lines + 3)),
        })
    }

    /// The table's value at `x`.
    pub fn eval(&self, x: f32) -> f32 {
        let last = X0 + STEP * (KNOTS - 1) as f32;
        if x.is_nan() {
            return x;
        }
        if x <= self.x_left && x < X0 {
            return self.y_min;
        }
        if x >= self.x_right && x > last {
            return self.y_max;
        }
        if x < X0 {
            return self.line(self.left, x);
        }
        if x > last {
            return self.line(self.right, x);
        }
        let t = (x - X0) / STEP;
        // 0 <= t <= 32 here, so the index is in range; the last segment includes x = 8.
        let i = (t.floor() as usize).min(KNOTS - 2);
        let f = t - i as f32;
        let (a, b) = (self.knots[i], self.knots[i + 1]);
        a + f * (b - a)
    }

    fn line(&self, (m, b): (f32, f32), x: f32) -> f32 {
        (m * x + b).clamp(self.y_min.min(self.y_max), self.y_max.max(self.y_min))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A table of f(x) = x / 16 over the knots (a straight line), lines of slope 0.
    fn ramp() -> Vec<u8> {
        let mut w: Vec<f32> = vec![-9.0, 9.0, -0.5, 0.5];
        w.extend((0..KNOTS).map(|i| (X0 + STEP * i as f32) / 16.0));
        w.extend([0.0, -0.5, 0.0, 0.5]);
        let mut bytes: Vec<u8> = w.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect();
        bytes.extend([1, 0, 1, 0]);
        bytes.resize(TABLE_BYTES, 0);
        bytes
    }

    #[test]
    fn interpolates_between_knots_and_follows_the_lines_outside() {
        let t = Table::parse(&ramp()).unwrap();
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
        bytes[2 * TAIL] = 2;
        assert!(Table::parse(&bytes).unwrap_err().contains("word 41"));
        assert!(Table::parse(&ramp()[..0x40]).is_err());
    }

    #[test]
    fn the_backend_sigmoid_table_evaluates_to_its_knots() {
        use anec_backend_h13::activation::{table, TableFn};
        let t = Table::parse(&table(TableFn::Sigmoid)).unwrap();
        assert_eq!(t.eval(0.0), 0.5);
        assert_eq!(t.eval(-20.0), 0.0);
        assert_eq!(t.eval(20.0), 1.0);
        let (l, r) = (t.left, t.right);
        assert_eq!(t.eval(-9.0), (l.0 * -9.0 + l.1).max(0.0));
        assert_eq!(t.eval(8.25), (r.0 * 8.25 + r.1).min(1.0));
    }
}
