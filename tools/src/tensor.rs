//! A dense host tensor: what the simulator and the reference interpreter read and write.
//!
//! Values are `f32` in row-major order of `shape`. For programs, the shape is the logical
//! `[N, C, H, W]` of a bound tensor (`[N, C, D, H, W]` when depth > 1); for MIL models it is
//! the MIL shape. `.npy` files map to it one to one (`npy.rs`).

use std::fmt;

/// A dense `f32` tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// `shape.iter().product()` values, row-major.
    pub data: Vec<f32>,
}

impl Tensor {
    /// A tensor of zeros.
    pub fn zeros(shape: &[usize]) -> Self {
        Tensor { shape: shape.to_vec(), data: vec![0.0; shape.iter().product()] }
    }

    /// A tensor from its shape and data; `None` when the lengths disagree.
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Option<Self> {
        (shape.iter().product::<usize>() == data.len()).then_some(Tensor { shape, data })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The same data under another shape with the same element count.
    pub fn reshaped(&self, shape: &[usize]) -> Option<Tensor> {
        Tensor::new(shape.to_vec(), self.data.clone())
    }

    /// Largest absolute difference to `other` (`None` when the element counts differ).
    pub fn max_abs_diff(&self, other: &Tensor) -> Option<f32> {
        (self.len() == other.len())
            .then(|| self.data.iter().zip(&other.data).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max))
    }
}

impl fmt::Display for Tensor {
    /// `tensor[1x3x8x8]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(ToString::to_string).collect();
        write!(f, "tensor[{}]", dims.join("x"))
    }
}
