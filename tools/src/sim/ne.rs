//! The neural engine: the MAC stage (convolution with kernel size, step, padding, groups
//! and depthwise, the unity kernel's per-channel window sum or maximum, or its maximum or
//! sum over every input channel of a pixel), then the bias, the post-scale and the
//! nonlinear stage, for every output element.
//!
//! Arithmetic: products and sums in f32 (fp16 x fp16 products are exact in f32; the sum
//! runs over input channel, then kernel row, then kernel column, rounding at each add),
//! then bias, scale and activation in f32; the value is rounded once, to the result format,
//! when the L2 result is written. Stage order, per the register names (AccBias: a bias
//! into the accumulator; PostScale: a scale after it):
//! `y = act((acc + MatrixVectorBias + AccBias * bias[c] + kbias[c]) * PostScale * scale[c])`,
//! each term present when its enable (MatrixBiasEn, BiasMode with the bias stream,
//! BiasMode without it: `kbias` inline in the coefficient blocks, PostScaleMode) is set.
//!
//! A convolution with NumGroups > 1 runs once per group ([`run`]'s `group`): the source
//! holds the group's input channels and the result its output channels, whose kernel,
//! bias and scale are those of channels `group * Cout + c`.

use super::error::SimError;
use super::kernel::{self, Kernel};
use super::memory::{Dense, Dims, Memory};
use super::table::Table;
use super::td::{Mac, NeTask, Nonlinear, PadMode, Window};

/// The per-output-channel terms after the MAC stage.
#[derive(Debug, Clone)]
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

/// What an NE task reads from kernel memory, once for all its groups.
#[derive(Debug, Clone)]
pub struct Prepared {
    kernel: Option<Kernel>,
    post: Post,
}

/// Reads the coefficients, bias, scale and table of `ne` for `cout` output channels (of
/// every group).
pub fn prepare(mem: &Memory<'_>, td: usize, ne: &NeTask, cout: usize) -> Result<Prepared, SimError> {
    let kernel = match &ne.mac {
        Mac::Kernel { layout, .. } => Some(kernel::read(mem, td, ne.kbar, layout)?),
        _ => None,
    };
    let mut bias = vec![ne.matrix_bias.unwrap_or(0.0); cout];
    if let Some((mult, s)) = &ne.acc_bias {
        let v = kernel::vector(mem, td, ne.kbar, s, cout, "bias", 0x114)?;
        for (b, x) in bias.iter_mut().zip(v) {
            *b += mult * x;
        }
    }
    if let Some(k) = &kernel {
        for (b, x) in bias.iter_mut().zip(&k.bias) {
            *b += x;
        }
    }
    let mut scale = vec![ne.post_scale; cout];
    if let Some(s) = &ne.scale_stream {
        let v = kernel::vector(mem, td, ne.kbar, s, cout, "post-scale", 0x118)?;
        for (m, x) in scale.iter_mut().zip(v) {
            *m *= x;
        }
    }
    let table = match (&ne.nonlinear, &ne.mac) {
        (Nonlinear::Table(_), Mac::Kernel { layout, .. }) => Some(kernel::chunk_table(mem, td, ne.kbar, layout)?),
        (Nonlinear::Table(s), _) => Some(kernel::table(mem, td, ne.kbar, s)?),
        _ => None,
    };
    Ok(Prepared { kernel, post: Post { bias, scale, table, relu: ne.nonlinear == Nonlinear::Relu } })
}

/// The source position a window tap reads, or `None` in the padding.
fn source_pos(o: usize, step: usize, pad: usize, k: usize, extent: usize) -> Option<usize> {
    (o * step + k).checked_sub(pad).filter(|&i| i < extent)
}

/// Runs the NE of task `td` on source `x` for group `group`, giving the `out` result.
pub fn run(p: &Prepared, td: usize, ne: &NeTask, x: &Dense, out: Dims, group: usize) -> Result<Dense, SimError> {
    let depthwise = matches!(ne.mac, Mac::Kernel { depthwise: true, .. });
    let first = group * out.c;
    let mut y = Dense::zeros(out);
    for (v, (c, d, h, w)) in y.data.iter_mut().zip(Dense::coords(out)) {
        let acc = match (&p.kernel, &ne.mac) {
            (Some(k), _) => conv_at(&ne.window, k, x, first + c, depthwise.then_some(c), (d, h, w)),
            (None, Mac::ChannelMax) => channel_max_at(x, (d, h, w)),
            (None, Mac::ChannelSum) => (0..x.dims.c).map(|c| x.at(c, d, h, w)).sum(),
            (None, _) => window_at(td, ne, x, (c, d, h, w))?,
        };
        *v = p.post.apply(first + c, acc);
    }
    Ok(y)
}

/// The convolution sum of output channel `co` (of every group) at `(d, oy, ox)`: over the
/// source's channels, or only over channel `only` (depthwise).
fn conv_at(
    w: &Window,
    k: &Kernel,
    x: &Dense,
    co: usize,
    only: Option<usize>,
    (d, oy, ox): (usize, usize, usize),
) -> f32 {
    let mut acc = 0.0f32;
    for ci in 0..k.cin {
        let c = only.unwrap_or(ci);
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

/// The maximum over every channel of the source at `(d, y, x)` (OpMode 3).
fn channel_max_at(x: &Dense, (d, y, w): (usize, usize, usize)) -> f32 {
    (0..x.dims.c).map(|c| x.at(c, d, y, w)).fold(f32::NEG_INFINITY, f32::max)
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

    fn task(mac: Mac, window: Window, pad: PadMode) -> NeTask {
        crate::sim::test_build::ne_task(mac, window, pad, 1.0)
    }

    /// Runs `t` (no kernel memory) on `x`.
    fn sim(t: &NeTask, x: &Dense, out: Dims) -> Dense {
        let p = prepare(&Memory::new(vec![]), 0, t, out.c).unwrap();
        run(&p, 0, t, x, out, 0).unwrap()
    }

    fn dense(c: usize, h: usize, w: usize, f: impl Fn(usize, usize, usize) -> f32) -> Dense {
        let dims = Dims { c, d: 1, h, w };
        let data = Dense::coords(dims).map(|(c, _, h, w)| f(c, h, w)).collect();
        Dense { dims, data }
    }

    /// Our encoder's pooling (conformance.md).
    #[test]
    fn max_pool_with_skipped_padding_and_average_with_zero_padding() {
        // 1 channel 3x3 of -1..-9; 2x2 window, step 2, one row/column of top-left padding.
        let x = dense(1, 3, 3, |_, h, w| -((3 * h + w + 1) as f32));
        let win = Window { kh: 2, kw: 2, sy: 2, sx: 2, py: 1, px: 1 };
        let out = Dims { c: 1, d: 1, h: 2, w: 2 };
        let max = sim(&task(Mac::Max, win, PadMode::Skip), &x, out);
        // Windows: {-1}, {-2,-3}, {-4,-7}, {-5,-6,-8,-9}.
        assert_eq!(max.data, vec![-1.0, -2.0, -4.0, -5.0]);
        let mut avg = task(Mac::Sum, win, PadMode::Zero);
        avg.post_scale = 0.25;
        let y = sim(&avg, &x, out);
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
        let y = sim(&t, &x, Dims { c: 2, d: 1, h: 1, w: 1 });
        assert_eq!(y.data, vec![0.0, 1.0]);
    }

    /// OpMode 3: one output channel, the maximum over the channels of each pixel, then
    /// the post-scale.
    #[test]
    fn channel_max_takes_the_maximum_over_the_channels_of_each_pixel() {
        let x =
            dense(5, 1, 3, |c, _, w| [[-3.0, 1.0, -0.5, 2.0, -7.0], [-4.0, -2.0, -1.0, -8.0, -3.0], [0.0; 5]][w][c]);
        let win = Window { kh: 1, kw: 1, sy: 1, sx: 1, py: 0, px: 0 };
        let mut t = task(Mac::ChannelMax, win, PadMode::Zero);
        let out = Dims { c: 1, d: 1, h: 1, w: 3 };
        assert_eq!(sim(&t, &x, out).data, vec![2.0, -1.0, 0.0]);
        t.post_scale = 0.5;
        assert_eq!(sim(&t, &x, out).data, vec![1.0, -0.5, 0.0]);
    }

    /// The unity kernel without UnicastEn on the multiply-accumulate path: one output
    /// channel, the sum over the channels of each pixel, then the post stages.
    #[test]
    fn channel_sum_adds_the_channels_of_each_pixel() {
        let x = dense(4, 1, 2, |c, _, w| (c + 1) as f32 * if w == 0 { 1.0 } else { -0.5 });
        let win = Window { kh: 1, kw: 1, sy: 1, sx: 1, py: 0, px: 0 };
        let mut t = task(Mac::ChannelSum, win, PadMode::Zero);
        let out = Dims { c: 1, d: 1, h: 1, w: 2 };
        assert_eq!(sim(&t, &x, out).data, vec![10.0, -5.0]);
        t.post_scale = 0.5;
        assert_eq!(sim(&t, &x, out).data, vec![5.0, -2.5]);
    }

    fn kernel_task(depthwise: bool) -> NeTask {
        let layout = kernel::Layout {
            fmt: crate::sim::memory::Fmt::F16,
            ocg_size: 0,
            chunks: [None; kernel::NES],
            sparse: false,
            bias: true,
            groups: if depthwise { 1 } else { 2 },
            cin: if depthwise { 1 } else { 2 },
            cout: 2,
            kh: 1,
            kw: 1,
            table: false,
        };
        task(
            Mac::Kernel { layout: Box::new(layout), depthwise },
            Window { kh: 1, kw: 1, sy: 1, sx: 1, py: 0, px: 0 },
            PadMode::Zero,
        )
    }

    /// NumGroups 2, 2 -> 2 channels per group: group 1's result uses the kernel and the
    /// inline bias of channels 2 and 3 on the group's own two source channels (records
    /// `env_conv_k3_c64_n64_s16_st1_g4_bias1`: Cin = Cout = 16 per group, GroupStride =
    /// 16 planes).
    #[test]
    fn a_group_uses_its_own_channels_kernel_and_bias() {
        let t = kernel_task(false);
        // W[co][ci] = 10 co + ci, bias[co] = 100 co.
        let w = (0..4).flat_map(|co| (0..2).map(move |ci| (10 * co + ci) as f32)).collect();
        let k = Kernel { cin: 2, kh: 1, kw: 1, w, bias: (0..4).map(|c| 100.0 * c as f32).collect() };
        let post = Post { bias: k.bias.clone(), scale: vec![1.0; 4], table: None, relu: false };
        let p = Prepared { kernel: Some(k), post };
        let x = dense(2, 1, 1, |c, _, _| [1.0, 2.0][c]);
        let y = run(&p, 0, &t, &x, Dims { c: 2, d: 1, h: 1, w: 1 }, 1).unwrap();
        // Channel 2: 20 * 1 + 21 * 2 + 200; channel 3: 30 + 62 + 300.
        assert_eq!(y.data, vec![262.0, 392.0]);
    }

    /// Depthwise: output channel c reads source channel c only (records
    /// `env_conv_k3_c64_n64_s16_st1_g64_bias1`: UnicastEn, NumGroups 1, Cin = Cout = 64).
    #[test]
    fn depthwise_reads_its_own_channel() {
        let t = kernel_task(true);
        let k = Kernel { cin: 1, kh: 1, kw: 1, w: vec![3.0, 5.0], bias: vec![0.5, -0.5] };
        let post = Post { bias: k.bias.clone(), scale: vec![1.0; 2], table: None, relu: false };
        let p = Prepared { kernel: Some(k), post };
        let x = dense(2, 1, 2, |c, _, w| (10 * c + w) as f32);
        let y = run(&p, 0, &t, &x, Dims { c: 2, d: 1, h: 1, w: 2 }, 0).unwrap();
        assert_eq!(y.data, vec![0.5, 3.5, 49.5, 54.5]);
    }
}
