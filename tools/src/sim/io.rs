//! Program inputs and outputs: [`IoSpec`]s of the bound tensors, input checking, and the
//! copy between host tensors (`[N, C, H, W]`, or `[N, C, D, H, W]` when D > 1, row-major)
//! and the buffers, through the byte strides of each tensor's thread state.

use super::error::SimError;
use super::program::Bound;
use crate::tensor::Tensor;
use std::collections::BTreeMap;

/// One program input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoSpec {
    /// The name as the program binds it (`probs@output`).
    pub name: String,
    /// The name without `@output`: the key of the input/output maps and the file stem.
    pub key: String,
    /// `[N, C, H, W]`, or `[N, C, D, H, W]` when D > 1.
    pub shape: Vec<usize>,
    /// `fp16`, `uint8` or `int8`.
    pub dtype: String,
}

impl IoSpec {
    /// The spec of a bound tensor.
    pub fn of(b: &Bound) -> IoSpec {
        let [n, c, h, w, d] = b.dims;
        let shape = if d > 1 { vec![n, c, d, h, w] } else { vec![n, c, h, w] };
        let key = b.name.strip_suffix("@output").unwrap_or(&b.name).to_string();
        IoSpec { name: b.name.clone(), key, shape, dtype: b.fmt.name().to_string() }
    }
}

/// `image [1, 3, 1, 1] fp16, image2 [...] ...`.
pub fn listing(specs: &[IoSpec]) -> String {
    let items: Vec<String> = specs.iter().map(|s| format!("{} {:?} {}", s.key, s.shape, s.dtype)).collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Checks that `given` has exactly the inputs of `specs`, each with its shape.
pub fn check_inputs(specs: &[IoSpec], given: &BTreeMap<String, Tensor>) -> Result<(), SimError> {
    let fail = |reason: String| SimError::Input { reason, expected: listing(specs) };
    if let Some(k) = given.keys().find(|k| !specs.iter().any(|s| &s.key == *k)) {
        return Err(fail(format!("the program has no input named {k:?}")));
    }
    for s in specs {
        let t = given.get(&s.key).ok_or_else(|| fail(format!("input {:?} is missing", s.key)))?;
        if t.shape != s.shape || t.data.len() != s.shape.iter().product::<usize>() {
            return Err(fail(format!("input {:?} has shape {:?}, the program's is {:?}", s.key, t.shape, s.shape)));
        }
    }
    Ok(())
}

/// Byte offsets of every element of `b`, in the host tensor's row-major order.
fn offsets(b: &Bound) -> impl Iterator<Item = usize> + '_ {
    let [n, c, h, w, d] = b.dims;
    let [sn, sc, sh, sw, sd] = b.strides.map(|s| usize::try_from(s).unwrap_or(usize::MAX));
    (0..n).flat_map(move |i| {
        (0..c).flat_map(move |j| {
            (0..d).flat_map(move |k| {
                (0..h).flat_map(move |y| {
                    (0..w).map(move |x| {
                        i.saturating_mul(sn)
                            .saturating_add(j.saturating_mul(sc))
                            .saturating_add(k.saturating_mul(sd))
                            .saturating_add(y.saturating_mul(sh))
                            .saturating_add(x.saturating_mul(sw))
                    })
                })
            })
        })
    })
}

/// A zeroed buffer of `b` holding `t`'s values rounded to the tensor's format.
pub fn input_buffer(b: &Bound, t: &Tensor) -> Vec<u8> {
    let mut bytes = vec![0u8; b.size];
    for (&v, at) in t.data.iter().zip(offsets(b)) {
        if let Some(slot) = bytes.get_mut(at..) {
            b.fmt.encode(v, slot);
        }
    }
    bytes
}

/// The values of `b` in `bytes`, as a host tensor of `spec`'s shape.
pub fn output_tensor(b: &Bound, spec: &IoSpec, bytes: &[u8]) -> Tensor {
    let data = offsets(b).map(|at| bytes.get(at..).map_or(0.0, |s| b.fmt.decode(s))).collect();
    Tensor { shape: spec.shape.clone(), data }
}
