//! `upsample_nearest_neighbor(x, scale_factor_height, scale_factor_width)` and
//! `resize_nearest_neighbor(x, target_size_height, target_size_width)` on the last two
//! axes of `x` (rank 3 or more): output extent `floor(in · scale)` or the target size;
//! output element `i` of an axis reads input element `floor(i · in / out)` (for a whole
//! factor `s`, each input element repeated `s` times).

use super::args::Sx;
use super::value::MTensor;
use crate::tensor::Tensor;

/// Either op.
pub(crate) fn nearest(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let r = x.shape.len();
    if r < 3 {
        return Err(format!("`x` {:?} must have rank 3 or more", x.shape));
    }
    let (h, w) = (x.shape[r - 2], x.shape[r - 1]);
    let (oh, ow) = match sx.op() {
        "upsample_nearest_neighbor" => {
            let scaled = |n: usize, key: &str| -> Result<usize, String> {
                let s = sx.float_or(key, 1.0)?;
                let out = (n as f64 * f64::from(s)).floor();
                (s > 0.0 && out >= 1.0 && out <= (1u64 << 28) as f64)
                    .then_some(out as usize)
                    .ok_or_else(|| format!("`{key}` {s} gives no output rows"))
            };
            (scaled(h, "scale_factor_height")?, scaled(w, "scale_factor_width")?)
        }
        _ => {
            let size = |key: &str| -> Result<usize, String> {
                let v = sx.int(key)?.ok_or_else(|| format!("missing input `{key}`"))?;
                usize::try_from(v)
                    .ok()
                    .filter(|&v| (1..=1 << 28).contains(&v))
                    .ok_or_else(|| format!("`{key}` {v} must be >= 1"))
            };
            (size("target_size_height")?, size("target_size_width")?)
        }
    };
    Ok(sx.one(sample(&x, oh, ow)))
}

/// `x` resampled to `oh x ow` on its last two axes by the nearest rule.
fn sample(x: &Tensor, oh: usize, ow: usize) -> Tensor {
    let r = x.shape.len();
    let (h, w) = (x.shape[r - 2], x.shape[r - 1]);
    let mut shape = x.shape.clone();
    (shape[r - 2], shape[r - 1]) = (oh, ow);
    let planes = x.data.len() / (h * w).max(1);
    let mut data = Vec::with_capacity(planes * oh * ow);
    for p in 0..planes {
        for i in 0..oh {
            let si = (i * h / oh).min(h - 1);
            for j in 0..ow {
                let sj = (j * w / ow).min(w - 1);
                data.push(x.data[p * h * w + si * w + sj]);
            }
        }
    }
    Tensor { shape, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_factors_repeat_each_element_and_others_take_the_floor() {
        let x = Tensor { shape: vec![1, 1, 2, 2], data: vec![1.0, 2.0, 3.0, 4.0] };
        let y = sample(&x, 4, 6);
        assert_eq!(y.shape, [1, 1, 4, 6]);
        assert_eq!(&y.data[..6], &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        assert_eq!(&y.data[18..], &[3.0, 3.0, 3.0, 4.0, 4.0, 4.0]);
        // 2 -> 3: rows 0, 0, 1.
        let z = sample(&x, 3, 2);
        assert_eq!(z.data, [1.0, 2.0, 1.0, 2.0, 3.0, 4.0]);
    }
}
