//! The neural engine: the MAC stage (convolution with kernel size, step, padding and
//! groups, or the unity kernel's per-channel window sum or maximum), then the bias, the
//! post-scale and the nonlinear stage, for every output element.
//!
//! Arithmetic: products and sums in f32 (fp16 x fp16 products are exact in f32; the sum
//! runs over input channel, then kernel row, then kernel column, rounding at each add),
//! then bias, scale and activation in f32; the value is rounded once, to the result format,
//! when the L2 result is written. Stage order, per the register names (AccBias: a bias
//! into the accumulator; PostScale: a scale after it):
//! `y = act((acc + MatrixVectorBias + AccBias * bias[c]) * PostScale * scale[c])`,
//! each term present when its enable (MatrixBiasEn, BiasMode, PostScaleMode) is set.

use super::error::SimError;
use super::kernel::{self, KernelShape, Weights};
use super::memory::{Dense, Dims, Memory};
use super::table::Table;
use super::td::{Mac, NeTask, Nonlinear, PadMode};

/// The per-output-channel terms after the MAC stage.
struct Post {
    bias: Vec<f32>,
    scale: Vec<f32>,
    table: Option<Table>,
    relu: bool,
}

impl Post {
    fn apply(&self, c: usize, acc: f32) -> f32 {
        let v = (acc + self.bias.get(c).copied().unwrap_or(0.0)) * self.scale.get(c).copied().unwrap_or(1.0);
        match (&self.table, self.relu) {
            (Some(t), _) => t.eval(v),
            (None, true) => v.max(0.0),
            (None, false) => v,
        }
    }
}

/// Loads the bias, scale and table of `ne` for `cout` channels.
fn post(mem: &Memory<'_>, td: usize, ne: &NeTask, cout: usize) -> Result<Post, SimError> {
    let mut bias = vec![ne.matrix_bias.unwrap_or(0.0); cout];
    if let Some((mult, s)) = &ne.acc_bias {
        let v = kernel::vector(mem, td, ne.kbar, s, cout, "bias", 0x114)?;
        for (b, x) in bias.iter_mut().zip(v) {
            *b += mult * x;
        }
    }
    let mut scale = vec![ne.post_scale; cout];
    if let Some(s) = &ne.scale_stream {
        let v = kernel::vector(mem, td, ne.kbar, s, cout, "post-scale", 0x118)?;
        for (m, x) in scale.iter_mut().zip(v) {
            *m *= x;
        }
    }
    let table = match &ne.nonlinear {
        Nonlinear::Table(s) => Some(kernel::table(mem, td, ne.kbar, s)?),
        _ => None,
    };
    Ok(Post { bias, scale, table, relu: ne.nonlinear == Nonlinear::Relu })
}

/// The source position a window tap reads, or `None` in the padding.
fn source_pos(o: usize, step: usize, pad: usize, k: usize, extent: usize) -> Option<usize> {
    (o * step + k).checked_sub(pad).filter(|&i| i < extent)
}

/// Runs the NE of task `td` on source `x`, giving the `out` result.
pub fn run(mem: &Memory<'_>, td: usize, ne: &NeTask, x: &Dense, out: Dims) -> Result<Dense, SimError> {
    let post = post(mem, td, ne, out.c)?;
    let weights = match &ne.mac {
        Mac::Kernel { fmt, ocg_size, chunks } => {
            let shape =
                KernelShape { cout: out.c, cin_g: x.dims.c / ne.groups.max(1), kh: ne.window.kh, kw: ne.window.kw };
            Some(kernel::weights(mem, td, ne.kbar, *fmt, *ocg_size, chunks, shape)?)
        }
        _ => None,
    };
    let mut y = Dense::zeros(out);
    for (v, (c, d, h, w)) in y.data.iter_mut().zip(Dense::coords(out)) {
        let acc = match &weights {
            Some(k) => conv_at(ne, k, x, out.c, (c, d, h, w)),
            None => window_at(td, ne, x, (c, d, h, w))?,
        };
        *v = post.apply(c, acc);
    }
    Ok(y)
}

/// The convolution sum of output element `(co, d, oy, ox)`.
fn conv_at(ne: &NeTask, k: &Weights, x: &Dense, cout: usize, (co, d, oy, ox): (usize, usize, usize, usize)) -> f32 {
    let w = &ne.window;
    let groups = ne.groups.max(1);
    let group = co / (cout / groups).max(1);
    let mut acc = 0.0f32;
    for ci in 0..k.cin_g {
        let c = group * k.cin_g + ci;
        for ky in 0..w.kh {
            let Some(iy) = source_pos(oy, w.sy, w.py, ky, x.dims.h) else { continue };
            for kx in 0..w.kw {
                if let Some(ix) = source_pos(ox, w.sx, w.px, kx, x.dims.w) {
                    acc += k.at(co, ci, ky, kx) * x.at(c, d, iy, ix);
                }
            }
        }
    }
    acc
}

/// The unity kernel's window sum or maximum of output element `(c, d, oy, ox)`.
fn window_at(td: usize, ne: &NeTask, x: &Dense, (c, d, oy, ox): (usize, usize, usize, usize)) -> Result<f32, SimError> {
    let w = &ne.window;
    let mut taps = Vec::with_capacity(w.kh * w.kw);
    for ky in 0..w.kh {
        for kx in 0..w.kw {
            let pos = source_pos(oy, w.sy, w.py, ky, x.dims.h).zip(source_pos(ox, w.sx, w.px, kx, x.dims.w));
            match (pos, ne.pad) {
                (Some((iy, ix)), _) => taps.push(x.at(c, d, iy, ix)),
                (None, PadMode::Zero) => taps.push(0.0),
                (None, PadMode::Skip) => {}
            }
        }
    }
    match ne.mac {
        Mac::Max => taps.into_iter().reduce(f32::max).ok_or_else(|| {
            SimError::access(
                td,
                format!("the pooling window of output ({oy}, {ox}) lies wholly in the padding (ConvCfg.Py/Px)"),
            )
        }),
        _ => Ok(taps.into_iter().sum()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::sim::td::Window;

    fn task(mac: Mac, window: Window, pad: PadMode) -> NeTask {
        NeTask {
            window,
            groups: 1,
            pad,
            mac,
            kbar: None,
            matrix_bias: None,
            acc_bias: None,
            post_scale: 1.0,
            scale_stream: None,
            nonlinear: Nonlinear::None,
        }
    }

    fn dense(c: usize, h: usize, w: usize, f: impl Fn(usize, usize, usize) -> f32) -> Dense {
        let dims = Dims { c, d: 1, h, w };
        let data = Dense::coords(dims).map(|(c, _, h, w)| f(c, h, w)).collect();
        Dense { dims, data }
    }

    #[test]
    fn max_pool_with_skipped_padding_and_average_with_zero_padding() {
        // 1 channel 3x3 of -1..-9; 2x2 window, step 2, one row/column of top-left padding.
        let x = dense(1, 3, 3, |_, h, w| -((3 * h + w + 1) as f32));
        let win = Window { kh: 2, kw: 2, sy: 2, sx: 2, py: 1, px: 1 };
        let out = Dims { c: 1, d: 1, h: 2, w: 2 };
        let max = run(&Memory::new(vec![]), 0, &task(Mac::Max, win, PadMode::Skip), &x, out).unwrap();
        // Windows: {-1}, {-2,-3}, {-4,-7}, {-5,-6,-8,-9}.
        assert_eq!(max.data, vec![-1.0, -2.0, -4.0, -5.0]);
        let mut avg = task(Mac::Sum, win, PadMode::Zero);
        avg.post_scale = 0.25;
        let y = run(&Memory::new(vec![]), 0, &avg, &x, out).unwrap();
        assert_eq!(y.data, vec![-0.25, -1.25, -2.75, -7.0]);
    }

    #[test]
    fn bias_then_scale_then_relu() {
        let x = dense(2, 1, 1, |c, _, _| c as f32 + 1.0);
        let win = Window { kh: 1, kw: 1, sy: 1, sx: 1, py: 0, px: 0 };
        let mut t = task(Mac::Sum, win, PadMode::Zero);
        t.matrix_bias = Some(-1.5);
        t.post_scale = 2.0;
        t.nonlinear = Nonlinear::Relu;
        let y = run(&Memory::new(vec![]), 0, &t, &x, Dims { c: 2, d: 1, h: 1, w: 1 }).unwrap();
        assert_eq!(y.data, vec![0.0, 1.0]);
    }
}
