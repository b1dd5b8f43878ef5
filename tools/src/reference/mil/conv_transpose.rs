//! `conv_transpose` on `[N, Cin, H, W]` with `weight` `[Cin, Cout/groups, kh, kw]`: every
//! input value scatters its kernel times itself into the output, input pixel `i` reaching
//! output `i·s + k·d - pad_before` (the transpose of a convolution's gather). Output
//! size: `output_shape`'s H and W when given, else `(in - 1)·s + d·(k - 1) + 1` less the
//! pads (`valid`: none; `custom`: `pad`), or `in·s` (`same`: any excess of the full
//! extent split, the odd unit after; a shorter full extent leaves the last outputs
//! without contributions).

use super::args::Sx;
use super::value::MTensor;
use crate::tensor::Tensor;

/// `conv_transpose`.
pub(crate) fn conv_transpose(sx: &Sx<'_>) -> Result<Vec<MTensor>, String> {
    let x = sx.x("x")?;
    let w = sx.x("weight")?;
    let ([n, cin, ih, iw], [wc, cog, kh, kw]) = (dims4(&x.shape)?, dims4(&w.shape)?);
    let groups = usize::try_from(sx.int("groups")?.unwrap_or(1))
        .ok()
        .filter(|&g| g >= 1 && cin % g == 0)
        .ok_or("`groups` must divide the input channels")?;
    if wc != cin {
        return Err(format!("`weight` {:?} does not fit `x` {:?}", w.shape, x.shape));
    }
    let pair = |key: &str| -> Result<[usize; 2], String> {
        match sx.ints(key)?.as_deref() {
            None => Ok([1, 1]),
            Some([a, b]) if *a >= 1 && *b >= 1 => Ok([*a as usize, *b as usize]),
            Some(v) => Err(format!("`{key}` {v:?} must hold 2 values >= 1")),
        }
    };
    let (s, d) = (pair("strides")?, pair("dilations")?);
    let full = [(ih - 1) * s[0] + d[0] * (kh - 1) + 1, (iw - 1) * s[1] + d[1] * (kw - 1) + 1];
    let pad_type = sx.string("pad_type")?.unwrap_or_else(|| "valid".into());
    let p = sx.ints("pad")?.unwrap_or_default();
    let given = sx.ints("output_shape")?;
    let mut out = [0; 2];
    let mut before = [0; 2];
    for i in 0..2 {
        let (a, b) = match pad_type.as_str() {
            "custom" => (
                p.get(2 * i).copied().unwrap_or(0).max(0) as usize,
                p.get(2 * i + 1).copied().unwrap_or(0).max(0) as usize,
            ),
            "same" => {
                let excess = full[i].saturating_sub([ih, iw][i] * s[i]);
                (excess / 2, excess - excess / 2)
            }
            "valid" => (0, 0),
            other => return Err(format!("`pad_type` `{other}` is not supported")),
        };
        before[i] = a;
        out[i] = match given.as_deref() {
            Some([.., h, w]) => [*h, *w][i].max(1) as usize,
            _ if pad_type == "same" => [ih, iw][i] * s[i],
            _ => full[i].checked_sub(a + b).filter(|&v| v > 0).ok_or("the pads remove the whole output")?,
        };
    }
    let bias = sx.opt_x("bias")?;
    let cout = cog * groups;
    let mut y = Tensor::zeros(&[n, cout, out[0], out[1]]);
    let cig = cin / groups;
    for b in 0..n {
        for ci in 0..cin {
            let g = ci / cig;
            for iy in 0..ih {
                for ix in 0..iw {
                    let v = x.data[((b * cin + ci) * ih + iy) * iw + ix];
                    for col in 0..cog {
                        let co = g * cog + col;
                        for ky in 0..kh {
                            let Some(oy) = (iy * s[0] + ky * d[0]).checked_sub(before[0]).filter(|&o| o < out[0])
                            else {
                                continue;
                            };
                            for kx in 0..kw {
                                let Some(ox) = (ix * s[1] + kx * d[1]).checked_sub(before[1]).filter(|&o| o < out[1])
                                else {
                                    continue;
                                };
                                y.data[((b * cout + co) * out[0] + oy) * out[1] + ox] +=
                                    v * w.data[((ci * cog + col) * kh + ky) * kw + kx];
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        for (i, v) in y.data.iter_mut().enumerate() {
            *v += bias.data.get((i / (out[0] * out[1])) % cout).copied().unwrap_or(0.0);
        }
    }
    Ok(sx.one(y))
}

fn dims4(s: &[usize]) -> Result<[usize; 4], String> {
    match s {
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(format!("{s:?} must have rank 4 (2-D transposed convolution)")),
    }
}
