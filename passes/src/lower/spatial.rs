//! Spatial MIL ops with a direct hidden-layer form: the rearrangements and the samplers.
//!
//! All take a rank-4 `x` (`[n, c, h, w]`, anec `n, c, 1, h, w`).
//! - `pixel_shuffle(x, upscale_factor)` / `pixel_unshuffle(x, downscale_factor)` are
//!   `anec.pixel_shuffle` / `anec.pixel_unshuffle` (PyTorch's channel-major order);
//!   `depth_to_space(x, block_size)` / `space_to_depth(x, block_size)` are
//!   `anec.channel_to_space` / `anec.space_to_channel` (TensorFlow's offset-major order);
//!   `space_to_batch(x, block_shape, paddings)` / `batch_to_space(x, block_shape, crops)`
//!   with zero paddings/crops are `anec.space_to_batch` / `anec.batch_to_space`. Factors:
//!   `factor_y` the height factor, `factor_x` the width factor, `factor_z = 1`.
//! - `upsample_bilinear(x, scale_factor_height, scale_factor_width, align_corners)` and
//!   `upsample_nearest_neighbor(x, scale_factor_height, scale_factor_width)` are
//!   `anec.resize` by `ratio_y`/`ratio_x` (`align_corners` true is `sampling_mode =
//!   "align_corners"`, false `"unalign_corners"`, MIL's half-pixel grid);
//!   `resize_bilinear(x, target_size_height, target_size_width, sampling_mode)` and
//!   `resize_nearest_neighbor(x, target_size_height, target_size_width)` are `anec.resize`
//!   to `height`/`width` (`sampling_mode` lower-cased).
//! - `crop_resize(x, roi, target_height, target_width, normalized_coordinates,
//!   spatial_scale, box_coordinate_mode, sampling_mode)` is `anec.crop_resize` (roi
//!   `[N, B, 4|5, 1, 1]`, or `[B, 4|5]` reshaped to `[1, B, 4|5, 1, 1]`), its
//!   `boxes x C x 1 x h x w` result reshaped to the declared shape.
//! - `affine(x, transform_matrix, output_height, output_width, sampling_mode,
//!   padding_mode, padding_value, coordinates_mode, align_corners)` is
//!   `anec.affine_transform`; `resample(x, coordinates, ...)` is `anec.resample` with the
//!   coordinates `[n, h, w, 2]` transposed to `n x 2 x 1 x h x w`.

use super::cx::{attrs, Cx, Fail, LResult, Rt, Val};
use super::shape::{permute, reshape_rt};
use anec_ir::{Attr, Attrs, OpCode};

/// The rank-4 runtime input `x`.
fn input4(cx: &mut Cx<'_, '_>) -> LResult<Rt> {
    let x = cx.input("x")?;
    if x.shape.len() != 4 {
        return Err(Fail::Msg(format!("`x` must have rank 4 ([n, c, h, w]), got {:?}", x.shape)));
    }
    Ok(x)
}

/// A required integer >= 1.
fn positive(cx: &Cx<'_, '_>, key: &str) -> LResult<i64> {
    match cx.int(key)? {
        Some(v) if v >= 1 => Ok(v),
        Some(v) => Err(Fail::Msg(format!("`{key}` = {v} must be >= 1"))),
        None => Err(Fail::Msg(format!("missing input `{key}`"))),
    }
}

/// The declared shape of the first result.
fn declared(cx: &Cx<'_, '_>) -> LResult<Vec<u64>> {
    cx.stmt
        .outputs
        .first()
        .and_then(|o| o.ty.static_shape())
        .ok_or_else(|| Fail::Msg("the result has no static shape".into()))
}

/// `factor_x`, `factor_y`, `factor_z = 1`.
fn factors(fy: i64, fx: i64) -> Attrs {
    attrs([("factor_x", Attr::Int(fx)), ("factor_y", Attr::Int(fy)), ("factor_z", Attr::Int(1))])
}

/// `[n, c, h, w]` rearranged: `(c, h, w)` multiplied (`up`) or divided by the factors.
fn rearranged(x: &Rt, fy: u64, fx: u64, up: bool, into_batch: bool) -> LResult<Vec<u64>> {
    let [n, c, h, w] = x.shape[..] else { return Err(Fail::Msg("`x` must have rank 4".into())) };
    let f = fy * fx;
    let div = |a: u64, b: u64, what: &str| {
        if a.is_multiple_of(b) {
            Ok(a / b)
        } else {
            Err(Fail::Msg(format!("the {what} {a} is not divisible by {b}")))
        }
    };
    Ok(match (up, into_batch) {
        (true, false) => vec![n, div(c, f, "channel count")?, h * fy, w * fx],
        (false, false) => vec![n, c * f, div(h, fy, "height")?, div(w, fx, "width")?],
        (false, true) => vec![n * f, c, div(h, fy, "height")?, div(w, fx, "width")?],
        (true, true) => vec![div(n, f, "batch")?, c, h * fy, w * fx],
    })
}

/// `pixel_shuffle`, `pixel_unshuffle`, `depth_to_space`, `space_to_depth`.
pub(crate) fn depth_space(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let (key, opcode, up) = match cx.op() {
        "pixel_shuffle" => ("upscale_factor", OpCode::PixelShuffle, true),
        "pixel_unshuffle" => ("downscale_factor", OpCode::PixelUnshuffle, false),
        "depth_to_space" => ("block_size", OpCode::ChannelToSpace, true),
        _ => ("block_size", OpCode::SpaceToChannel, false),
    };
    let f = positive(cx, key)?;
    let shape = rearranged(&x, f as u64, f as u64, up, false)?;
    Ok(vec![Val::Rt(cx.emit_rt(opcode, &[x.id], shape, factors(f, f))?)])
}

/// `space_to_batch`, `batch_to_space`.
pub(crate) fn space_batch(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let to_batch = cx.op() == "space_to_batch";
    let block = cx.ints("block_shape")?.ok_or("missing input `block_shape`")?;
    let [fy, fx] = block[..] else {
        return Err(Fail::Msg(format!("`block_shape` {block:?} must hold 2 factors (height, width)")));
    };
    if fy < 1 || fx < 1 {
        return Err(Fail::Msg(format!("`block_shape` {block:?} must be >= 1")));
    }
    let edges = if to_batch { "paddings" } else { "crops" };
    if cx.ints(edges)?.is_some_and(|p| p.iter().any(|&v| v != 0)) {
        return Err(Fail::Msg(format!("nonzero `{edges}` are not supported")));
    }
    let (opcode, up) = if to_batch { (OpCode::SpaceToBatch, false) } else { (OpCode::BatchToSpace, true) };
    let shape = rearranged(&x, fy as u64, fx as u64, up, true)?;
    Ok(vec![Val::Rt(cx.emit_rt(opcode, &[x.id], shape, factors(fy, fx))?)])
}

/// The upsampling and resize ops.
pub(crate) fn resize(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let op = cx.op();
    let mode = if op.contains("bilinear") { "bilinear" } else { "nearest" };
    let mut a = attrs([("mode", Attr::Str(mode.into()))]);
    if op.starts_with("upsample") {
        for (key, attr) in [("scale_factor_height", "ratio_y"), ("scale_factor_width", "ratio_x")] {
            let r = cx.float(key)?.unwrap_or(1.0);
            a.insert(attr.into(), Attr::Float(f64::from(r)));
        }
        if op == "upsample_bilinear" {
            let aligned = cx.boolean("align_corners")?.unwrap_or(false);
            let m = if aligned { "align_corners" } else { "unalign_corners" };
            a.insert("sampling_mode".into(), Attr::Str(m.into()));
        }
    } else {
        for (key, attr) in [("target_size_height", "height"), ("target_size_width", "width")] {
            a.insert(attr.into(), Attr::Int(positive(cx, key)?));
        }
        if let Some(m) = cx.string("sampling_mode")? {
            a.insert("sampling_mode".into(), Attr::Str(m.to_ascii_lowercase()));
        }
    }
    let shape = declared(cx)?;
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Resize, &[x.id], shape, a)?)])
}

/// Copies the optional string argument `key` lower-cased, and the optional numbers and
/// flags, into `a`.
fn sampler_args(cx: &Cx<'_, '_>, a: &mut Attrs, strings: &[&str]) -> LResult<()> {
    for &key in strings {
        if let Some(v) = cx.string(key)? {
            a.insert(key.into(), Attr::Str(v.to_ascii_lowercase()));
        }
    }
    if let Some(v) = cx.float("padding_value")? {
        a.insert("padding_value".into(), Attr::Float(f64::from(v)));
    }
    if let Some(v) = cx.boolean("align_corners")? {
        a.insert("align_corners".into(), Attr::Bool(v));
    }
    Ok(())
}

/// `crop_resize`.
pub(crate) fn crop_resize(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let roi = cx.input("roi")?;
    let roi = match roi.shape[..] {
        [_, _, 4 | 5, 1, 1] => roi,
        [b, k @ (4 | 5)] => reshape_rt(cx, &roi, vec![1, b, k, 1, 1])?,
        _ => return Err(Fail::Msg(format!("`roi` {:?} must be [N, B, 4|5, 1, 1] or [B, 4|5]", roi.shape))),
    };
    let (h, w) = (positive(cx, "target_height")?, positive(cx, "target_width")?);
    let mut a = attrs([("height", Attr::Int(h)), ("width", Attr::Int(w))]);
    for key in ["sampling_mode", "box_coordinate_mode"] {
        if let Some(v) = cx.string(key)? {
            a.insert(key.into(), Attr::Str(v.to_ascii_lowercase().replace("conrners", "corners")));
        }
    }
    if let Some(v) = cx.boolean("normalized_coordinates")? {
        a.insert("normalized_coordinates".into(), Attr::Bool(v));
    }
    if let Some(v) = cx.float("spatial_scale")? {
        a.insert("spatial_scale".into(), Attr::Float(f64::from(v)));
    }
    let boxes = roi.shape[0] * roi.shape[1];
    let out = cx.emit_rt(OpCode::CropResize, &[x.id, roi.id], vec![boxes, x.shape[1], 1, h as u64, w as u64], a)?;
    Ok(vec![Val::Rt(reshape_rt(cx, &out, declared(cx)?)?)])
}

/// `affine`.
pub(crate) fn affine(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let m = cx.input("transform_matrix")?;
    let (h, w) = (positive(cx, "output_height")?, positive(cx, "output_width")?);
    let mut a = attrs([("height", Attr::Int(h)), ("width", Attr::Int(w))]);
    sampler_args(cx, &mut a, &["sampling_mode", "padding_mode", "coordinates_mode"])?;
    let shape = vec![x.shape[0], x.shape[1], h as u64, w as u64];
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::AffineTransform, &[x.id, m.id], shape, a)?)])
}

/// `resample`.
pub(crate) fn resample(cx: &mut Cx<'_, '_>) -> LResult<Vec<Val>> {
    let x = input4(cx)?;
    let coords = cx.input("coordinates")?;
    let [n, h, w, 2] = coords.shape[..] else {
        return Err(Fail::Msg(format!("`coordinates` {:?} must be [n, h, w, 2]", coords.shape)));
    };
    // anec (n, h, 1, w, 2) -> (n, 2, 1, h, w).
    let moved = permute(cx, (coords.id, coords.ty), [0, 4, 2, 1, 3]);
    let mut a = Attrs::new();
    sampler_args(cx, &mut a, &["sampling_mode", "padding_mode", "coordinates_mode"])?;
    if n != x.shape[0] {
        return Err(Fail::Msg(format!("`coordinates` batch {n} differs from `x`'s {}", x.shape[0])));
    }
    let shape = vec![n, x.shape[1], h, w];
    Ok(vec![Val::Rt(cx.emit_rt(OpCode::Resample, &[x.id, moved.0], shape, a)?)])
}
