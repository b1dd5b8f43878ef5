//! Shape rules of the hidden-layer ops: the result extents from operands and attributes.
//!
//! Extents are N, C, D, H, W. Rearrangements use `f = factor_x * factor_y * factor_z`:
//! `to_space` (pixel_shuffle, channel_to_space) is `C/f, D*fz, H*fy, W*fx`; `to_channel`
//! (pixel_unshuffle, space_to_channel) is `C*f, D/fz, H/fy, W/fx`; `to_batch`
//! (space_to_batch) is `N*f, D/fz, H/fy, W/fx`; `from_batch` (batch_to_space) is
//! `N/f, D*fz, H*fy, W*fx`. The other rules are documented on their variants and in
//! `docs/ops.md`. Attributes are read leniently (a missing or ill-typed one is an error
//! string); the verifier checks the schema first.

use super::check::{dims5, AXIS_NAMES};
use crate::attr::{Attr, Attrs};
use crate::types::TensorType;

/// How a hidden-layer op's result extents follow from its operands and attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The first operand's extents.
    Same,
    /// The first operand's, with the axis named by attribute `.0` set to attribute `.1`.
    AxisToAttr(&'static str, &'static str),
    /// The first operand's, with the axis named by the attribute set to 1.
    AxisToOne(&'static str),
    /// Depth-to-space by the three factors.
    ToSpace,
    /// Space-to-depth by the three factors.
    ToChannel,
    /// Space-to-batch by the three factors.
    ToBatch,
    /// Batch-to-space by the three factors.
    FromBatch,
    /// A stride-1 `kernel` window with `pad = [front, back, top, bottom, left, right]`;
    /// the channel modes reduce C to 1.
    ArgWindow,
    /// `N x (C*D*H*W) x 1 x 1 x 1`.
    Flatten,
    /// Each axis grows by its `pad` pair (`[before, after]` for N, C, D, H, W).
    Pad,
    /// Data with the `axis` extent replaced by the index operand's element count.
    Gather,
    /// H and W from `height`/`width`, else from `ratio_y`/`ratio_x` (floor).
    Resize,
    /// Valid correlation: `N x 1 x (D-td+1) x (H-th+1) x (W-tw+1)`.
    CrossCorrelation,
    /// Two equal shapes with C = 3.
    CrossProduct,
    /// `centroid_count` of the points on W.
    Sampling,
    /// Centroids `N x C x D x H x K`, points `N x C x D x H x P`: `N x P x D x H x K`.
    RadiusSearch,
    /// Two equal shapes; C becomes `disparity_range`.
    CostVolume,
    /// Each axis of `axis_order` becomes its `sizes` entry.
    DynamicSlice,
    /// One `height x width` crop per box: `boxes x C x D x height x width`.
    CropResize,
    /// `N x C x D x height x width`, one 2x3 matrix per batch entry.
    Affine,
    /// Sampled at the coordinates' H x W.
    Resample,
    /// The buffer (operand 0); the data fits in it along `axis`.
    RingBuffer,
    /// The operand's extents; `gamma`/`beta` hold one value per channel.
    PerChannelNorm,
    /// Not inferred (the result type states the shape).
    Free,
}

/// Result extents of `rule` (see [`super::hidden::infer_extents`]).
pub(super) fn infer(rule: Rule, a: &Attrs, xs: &[TensorType]) -> Option<Result<[u32; 5], String>> {
    if rule == Rule::Free {
        return None;
    }
    let Some(x) = xs.first() else { return Some(Err("the op has no operand".into())) };
    let x5 = dims5(x);
    Some(match rule {
        Rule::Same => Ok(x5),
        Rule::AxisToAttr(axis, extent) => set_axis(a, x5, axis, int(a, extent)),
        Rule::AxisToOne(axis) => set_axis(a, x5, axis, Ok(1)),
        Rule::ToSpace | Rule::ToChannel | Rule::ToBatch | Rule::FromBatch => rearrange(rule, a, x5),
        Rule::ArgWindow => arg_window(a, x5),
        Rule::Flatten => flatten(x5),
        Rule::Pad => pad(a, x5),
        Rule::Gather => second(xs).and_then(|ix| gather(a, x5, ix)),
        Rule::Resize => resize(a, x5),
        Rule::CrossCorrelation => second(xs).and_then(|t| cross_correlation(x5, dims5(t))),
        Rule::CrossProduct => second(xs).and_then(|b| cross_product(x5, dims5(b))),
        Rule::Sampling => sampling(a, x5),
        Rule::RadiusSearch => second(xs).and_then(|p| radius_search(x5, dims5(p))),
        Rule::CostVolume => second(xs).and_then(|b| cost_volume(a, x5, dims5(b))),
        Rule::DynamicSlice => dynamic_slice(a, x5, xs.len()),
        Rule::CropResize => second(xs).and_then(|r| crop_resize(a, x5, dims5(r))),
        Rule::Affine => second(xs).and_then(|m| affine(a, x5, m)),
        Rule::Resample => second(xs).and_then(|c| resample(x5, dims5(c))),
        Rule::RingBuffer => second(xs).and_then(|d| ring_buffer(a, x5, dims5(d))),
        Rule::PerChannelNorm => per_channel_norm(a, x5),
        Rule::Free => return None,
    })
}

/// The second operand.
fn second(xs: &[TensorType]) -> Result<&TensorType, String> {
    xs.get(1).ok_or_else(|| "the op needs a second operand".to_string())
}

fn get<'a>(a: &'a Attrs, name: &str) -> Result<&'a Attr, String> {
    a.get(name).ok_or_else(|| format!("missing attribute `{name}`"))
}

fn int(a: &Attrs, name: &str) -> Result<i64, String> {
    get(a, name)?.as_int().ok_or_else(|| format!("attribute `{name}` must be an integer"))
}

fn opt_int(a: &Attrs, name: &str) -> Result<Option<i64>, String> {
    a.get(name).map(|_| int(a, name)).transpose()
}

fn opt_float(a: &Attrs, name: &str) -> Result<Option<f64>, String> {
    match a.get(name) {
        None => Ok(None),
        Some(Attr::Float(v)) => Ok(Some(*v)),
        Some(_) => Err(format!("attribute `{name}` must be a float")),
    }
}

fn ints(a: &Attrs, name: &str) -> Result<Vec<i64>, String> {
    get(a, name)?.as_int_array().ok_or_else(|| format!("attribute `{name}` must be an integer array"))
}

fn string<'a>(a: &'a Attrs, name: &str) -> Result<&'a str, String> {
    get(a, name)?.as_str().ok_or_else(|| format!("attribute `{name}` must be a string"))
}

fn axis_index(s: &str) -> Result<usize, String> {
    AXIS_NAMES.iter().position(|n| *n == s).ok_or_else(|| format!("{s:?} is not an axis name"))
}

fn axis(a: &Attrs, name: &str) -> Result<usize, String> {
    axis_index(string(a, name)?)
}

fn axes(a: &Attrs, name: &str) -> Result<Vec<usize>, String> {
    let items = get(a, name)?.as_array().ok_or_else(|| format!("attribute `{name}` must be an array"))?;
    items
        .iter()
        .map(|i| i.as_str().ok_or_else(|| format!("`{name}` holds a non-string")).and_then(axis_index))
        .collect()
}

/// An attribute value as an extent (1..=u32::MAX).
fn extent(v: i64, what: &str) -> Result<u32, String> {
    u32::try_from(v).ok().filter(|&e| e >= 1).ok_or_else(|| format!("{what} {v} is not a valid extent"))
}

/// `a * b`, an error naming `what` on overflow.
fn mul(a: u32, b: u32, what: &str) -> Result<u32, String> {
    a.checked_mul(b).ok_or_else(|| format!("the result {what} overflows 32 bits ({a} * {b})"))
}

/// `a / b`, an error unless it divides exactly.
fn div(a: u32, b: u32, what: &str, factor: &str) -> Result<u32, String> {
    if b == 0 || !a.is_multiple_of(b) {
        return Err(format!("{what} {a} is not divisible by {factor} = {b}"));
    }
    Ok(a / b)
}

fn set_axis(a: &Attrs, mut x: [u32; 5], name: &str, value: Result<i64, String>) -> Result<[u32; 5], String> {
    let ax = axis(a, name)?;
    x[ax] = extent(value?, &format!("the {} extent", AXIS_NAMES[ax]))?;
    Ok(x)
}

/// The three factors `[fx, fy, fz]`.
fn factors(a: &Attrs) -> Result<[u32; 3], String> {
    let f = |name: &str| int(a, name).and_then(|v| extent(v, name));
    Ok([f("factor_x")?, f("factor_y")?, f("factor_z")?])
}

fn rearrange(rule: Rule, a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    let [fx, fy, fz] = factors(a)?;
    let [n, c, d, h, w] = x;
    let f = mul(mul(fx, fy, "factor")?, fz, "factor")?;
    let all = "factor_x * factor_y * factor_z";
    let grow =
        || -> Result<[u32; 3], String> { Ok([mul(d, fz, "depth")?, mul(h, fy, "height")?, mul(w, fx, "width")?]) };
    let shrink = || -> Result<[u32; 3], String> {
        Ok([div(d, fz, "depth", "factor_z")?, div(h, fy, "height", "factor_y")?, div(w, fx, "width", "factor_x")?])
    };
    match rule {
        Rule::ToSpace => {
            let [d, h, w] = grow()?;
            Ok([n, div(c, f, "channel", all)?, d, h, w])
        }
        Rule::ToChannel => {
            let [d, h, w] = shrink()?;
            Ok([n, mul(c, f, "channel")?, d, h, w])
        }
        Rule::ToBatch => {
            let [d, h, w] = shrink()?;
            Ok([mul(n, f, "batch")?, c, d, h, w])
        }
        _ => {
            let [d, h, w] = grow()?;
            Ok([div(n, f, "batch", all)?, c, d, h, w])
        }
    }
}

/// Extent of a stride-1 window of `k` over `e` padded by `lo + hi`.
fn window(e: u32, lo: i64, hi: i64, k: i64, what: &str) -> Result<u32, String> {
    let padded = i64::from(e).saturating_add(lo).saturating_add(hi);
    if k > padded {
        return Err(format!("kernel {what} {k} exceeds the padded input {what} {padded}"));
    }
    extent(padded - k + 1, &format!("the result {what}"))
}

fn arg_window(a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    let (kernel, p) = (ints(a, "kernel")?, ints(a, "pad")?);
    let ([kh, kw], [front, back, top, bottom, left, right]) = (kernel.as_slice(), p.as_slice()) else {
        return Err("`kernel` must hold 2 integers and `pad` 6".into());
    };
    let channel_mode = string(a, "mode")?.starts_with("channel");
    let [n, c, d, h, w] = x;
    let c = if channel_mode { 1 } else { c };
    let d = window(d, *front, *back, 1, "depth")?;
    Ok([n, c, d, window(h, *top, *bottom, *kh, "height")?, window(w, *left, *right, *kw, "width")?])
}

fn flatten(x: [u32; 5]) -> Result<[u32; 5], String> {
    let [n, c, d, h, w] = x;
    Ok([n, mul(mul(mul(c, d, "channel")?, h, "channel")?, w, "channel")?, 1, 1, 1])
}

fn pad(a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    let p = ints(a, "pad")?;
    if p.len() != 10 {
        return Err(format!("`pad` must hold 10 integers (before, after for N, C, D, H, W), got {}", p.len()));
    }
    let mode = string(a, "mode")?;
    let mut out = x;
    for axis in 0..5 {
        let (lo, hi, e) = (p[2 * axis], p[2 * axis + 1], i64::from(x[axis]));
        let name = AXIS_NAMES[axis];
        let limit = match mode {
            "reflect" => e - 1,
            "symmetric" => e,
            _ => i64::MAX,
        };
        if lo > limit || hi > limit {
            return Err(format!("{mode} padding of {lo}, {hi} on {name} needs at most {limit} (extent {e})"));
        }
        out[axis] = extent(e.saturating_add(lo).saturating_add(hi), &format!("the padded {name}"))?;
    }
    Ok(out)
}

fn gather(a: &Attrs, x: [u32; 5], indices: &TensorType) -> Result<[u32; 5], String> {
    let ax = axis(a, "axis")?;
    let count = i64::try_from(indices.elements()).unwrap_or(i64::MAX);
    let mut out = x;
    out[ax] = extent(count, "the index count")?;
    Ok(out)
}

fn resize(a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    let (h, w) = (opt_int(a, "height")?, opt_int(a, "width")?);
    let (ry, rx) = (opt_float(a, "ratio_y")?, opt_float(a, "ratio_x")?);
    let mut out = x;
    match (h, w, ry, rx) {
        (Some(h), Some(w), _, _) => {
            out[3] = extent(h, "height")?;
            out[4] = extent(w, "width")?;
        }
        (None, None, Some(ry), Some(rx)) => {
            let scaled = |e: u32, r: f64, what: &str| {
                let v = (f64::from(e) * r).floor();
                if v >= 1.0 && v <= f64::from(u32::MAX) {
                    Ok(v as u32)
                } else {
                    Err(format!("{what} {e} scaled by {r} is not a valid extent"))
                }
            };
            out[3] = scaled(x[3], ry, "height")?;
            out[4] = scaled(x[4], rx, "width")?;
        }
        _ => return Err("needs both `height` and `width`, or both `ratio_y` and `ratio_x`".into()),
    }
    Ok(out)
}

fn cross_correlation(x: [u32; 5], t: [u32; 5]) -> Result<[u32; 5], String> {
    let [n, c, d, h, w] = x;
    let [tn, tc, td, th, tw] = t;
    if (tn != 1 && tn != n) || tc != c {
        return Err(format!("the template's batch {tn} and channel {tc} must be (1 or {n}) and {c}"));
    }
    let valid = |e: u32, k: u32, what: &str| {
        e.checked_sub(k).map(|v| v + 1).ok_or_else(|| format!("template {what} {k} exceeds the map's {e}"))
    };
    Ok([n, 1, valid(d, td, "depth")?, valid(h, th, "height")?, valid(w, tw, "width")?])
}

fn cross_product(x: [u32; 5], y: [u32; 5]) -> Result<[u32; 5], String> {
    if x != y {
        return Err(format!("operands must have the same shape, got {x:?} and {y:?}"));
    }
    if x[1] != 3 {
        return Err(format!("the vectors live on the channel axis, which must be 3, got {}", x[1]));
    }
    Ok(x)
}

fn sampling(a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    let k = extent(int(a, "centroid_count")?, "centroid_count")?;
    if k > x[4] {
        return Err(format!("cannot sample {k} centroids from {} points (width)", x[4]));
    }
    Ok([x[0], x[1], x[2], x[3], k])
}

fn radius_search(centroids: [u32; 5], points: [u32; 5]) -> Result<[u32; 5], String> {
    let [n, _, d, h, k] = centroids;
    if points[..4] != centroids[..4] {
        return Err(format!("centroids {centroids:?} and points {points:?} must agree on N, C, D and H"));
    }
    Ok([n, points[4], d, h, k])
}

fn cost_volume(a: &Attrs, x: [u32; 5], y: [u32; 5]) -> Result<[u32; 5], String> {
    if x != y {
        return Err(format!("reference {x:?} and target {y:?} must have the same shape"));
    }
    let range = extent(int(a, "disparity_range")?, "disparity_range")?;
    Ok([x[0], range, x[2], x[3], x[4]])
}

fn dynamic_slice(a: &Attrs, x: [u32; 5], operands: usize) -> Result<[u32; 5], String> {
    let (order, sizes, offsets) = (axes(a, "axis_order")?, ints(a, "sizes")?, ints(a, "offsets")?);
    if sizes.len() != order.len() || offsets.len() != order.len() {
        let (n, s, o) = (order.len(), sizes.len(), offsets.len());
        return Err(format!("`axis_order` lists {n} axes but `sizes` has {s} and `offsets` {o}"));
    }
    let runtime = string(a, "coordinate_info")? == "runtime";
    if runtime != (operands == 2) {
        return Err(format!(
            "coordinate_info {:?} needs {} operands, got {operands}",
            string(a, "coordinate_info")?,
            1 + usize::from(runtime)
        ));
    }
    let padded = string(a, "padding_info")? != "none";
    let mut out = x;
    for ((&ax, &size), &offset) in order.iter().zip(&sizes).zip(&offsets) {
        let name = AXIS_NAMES[ax];
        let end = offset.saturating_add(size);
        if !runtime && !padded && end > i64::from(x[ax]) {
            return Err(format!("window {offset}..{end} leaves the {name} extent {}", x[ax]));
        }
        out[ax] = extent(size, &format!("the {name} size"))?;
    }
    Ok(out)
}

fn crop_resize(a: &Attrs, x: [u32; 5], roi: [u32; 5]) -> Result<[u32; 5], String> {
    let [rn, boxes, coords, rh, rw] = roi;
    if !(coords == 4 || coords == 5) || rh != 1 || rw != 1 {
        return Err(format!("roi {roi:?} must be N x boxes x (4 or 5) x 1 x 1"));
    }
    let (h, w) = (extent(int(a, "height")?, "height")?, extent(int(a, "width")?, "width")?);
    Ok([mul(rn, boxes, "batch")?, x[1], x[2], h, w])
}

fn affine(a: &Attrs, x: [u32; 5], m: &TensorType) -> Result<[u32; 5], String> {
    if m.elements() != 6 * u64::from(x[0]) {
        return Err(format!(
            "the matrix operand {m} must hold 6 values per batch entry ({} in all)",
            6 * u64::from(x[0])
        ));
    }
    let (h, w) = (extent(int(a, "height")?, "height")?, extent(int(a, "width")?, "width")?);
    Ok([x[0], x[1], x[2], h, w])
}

fn resample(x: [u32; 5], coords: [u32; 5]) -> Result<[u32; 5], String> {
    if coords[0] != x[0] {
        return Err(format!("coordinates batch {} differs from the input's {}", coords[0], x[0]));
    }
    Ok([x[0], x[1], x[2], coords[3], coords[4]])
}

fn ring_buffer(a: &Attrs, buf: [u32; 5], data: [u32; 5]) -> Result<[u32; 5], String> {
    let ax = axis(a, "axis")?;
    for i in 0..5 {
        let fits = if i == ax { data[i] <= buf[i] } else { data[i] == buf[i] };
        if !fits {
            return Err(format!("data {data:?} does not fit the buffer {buf:?} along {}", AXIS_NAMES[i]));
        }
    }
    Ok(buf)
}

fn per_channel_norm(a: &Attrs, x: [u32; 5]) -> Result<[u32; 5], String> {
    for name in ["gamma", "beta"] {
        if let Some((_, ty)) = a.get(name).and_then(Attr::as_resource) {
            if ty.elements() != u64::from(x[1]) {
                return Err(format!("`{name}` ({ty}) must hold one value per channel ({})", x[1]));
            }
        }
    }
    Ok(x)
}
