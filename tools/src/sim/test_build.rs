//! Builders the simulator's hand-made tests share (`pair_tests`, `chain_tests`,
//! `reduce_tests`, the unit tests of `ne.rs`): dimensions, buffers, the NE's unity task
//! and a one-source task whose fields a test then overrides.

use super::memory::{Buffer, Dims, Region};
use super::td::{Mac, NeTask, Nonlinear, PadMode, Task, Tile, Unit, Window};
use std::borrow::Cow;

/// `c x 1 x h x w`.
pub fn dims(c: usize, h: usize, w: usize) -> Dims {
    Dims { c, d: 1, h, w }
}

/// A buffer holding `bytes`.
pub fn buffer(name: &str, bytes: Vec<u8>, writable: bool) -> Buffer<'static> {
    Buffer { name: name.into(), bytes: Cow::Owned(bytes), writable }
}

/// An NE task of `mac` over `window` with `pad`, no kernel memory, bias or table, the
/// post-scale `post_scale`.
pub fn ne_task(mac: Mac, window: Window, pad: PadMode, post_scale: f32) -> NeTask {
    NeTask {
        window,
        pad,
        mac,
        kbar: None,
        matrix_bias: None,
        acc_bias: None,
        post_scale,
        scale_stream: None,
        nonlinear: Nonlinear::None,
    }
}

/// The NE's unity pass: a copy scaled by `post_scale`.
pub fn ne_pass(post_scale: f32) -> Unit {
    let window = Window { kh: 1, kw: 1, sy: 1, sx: 1, py: 0, px: 0 };
    Unit::Ne(ne_task(Mac::Sum, window, PadMode::Zero, post_scale))
}

/// A task of `unit` over `d`: its source loaded through `src` into L2 `at`, its result at
/// `result` stored through `dest`, run once.
pub fn task(unit: Unit, d: Dims, src: Tile, dest: Tile, at: Region, result: Region) -> Task {
    Task {
        index: 0,
        in_dims: d,
        out_dims: d,
        sources: vec![src],
        resident: false,
        source_step: 0,
        source_box: d,
        dest,
        l2_sources: vec![at],
        l2_result: result,
        result_step: 0,
        unit,
        repeats: 1,
        store: true,
        transposed: false,
        streamed: false,
        result_streamed: false,
        operand: None,
    }
}
