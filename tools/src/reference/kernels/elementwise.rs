//! Elementwise maps: unary, and binary with numpy broadcasting.

use super::shape::{broadcast_to, check};
use super::{make, KResult};
use crate::tensor::Tensor;

/// The numpy broadcast of two shapes (aligned at the last axis).
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> KResult<Vec<usize>> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], i: usize| if i + s.len() >= rank { s[i + s.len() - rank] } else { 1 };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(format!("shapes {a:?} and {b:?} do not broadcast")),
        })
        .collect()
}

/// `f(x)` for every element.
pub fn unary(x: &Tensor, f: impl Fn(f32) -> f32) -> KResult<Tensor> {
    check(x)?;
    make(x.shape.clone(), x.data.iter().map(|&v| f(v)).collect())
}

/// `f(a, b)` with numpy broadcasting.
pub fn binary(a: &Tensor, b: &Tensor, f: impl Fn(f32, f32) -> f32) -> KResult<Tensor> {
    let shape = broadcast_shapes(&a.shape, &b.shape)?;
    let a = if a.shape == shape { a.clone() } else { broadcast_to(a, &shape)? };
    let b = if b.shape == shape { b.clone() } else { broadcast_to(b, &shape)? };
    check(&a)?;
    check(&b)?;
    make(shape, a.data.iter().zip(&b.data).map(|(&x, &y)| f(x, y)).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_rules() {
        assert_eq!(broadcast_shapes(&[1, 8, 28, 28], &[8, 1, 1]), Ok(vec![1, 8, 28, 28]));
        assert_eq!(broadcast_shapes(&[4, 1], &[3]), Ok(vec![4, 3]));
        assert_eq!(broadcast_shapes(&[], &[2]), Ok(vec![2]));
        assert!(broadcast_shapes(&[4, 2], &[3]).is_err());
    }

    #[test]
    fn binary_broadcasts_both_sides() {
        let a = Tensor { shape: vec![2, 1], data: vec![10., 20.] };
        let b = Tensor { shape: vec![3], data: vec![1., 2., 3.] };
        let c = binary(&a, &b, |x, y| x + y).unwrap();
        assert_eq!(c.shape, vec![2, 3]);
        assert_eq!(c.data, vec![11., 12., 13., 21., 22., 23.]);
        let d = binary(&b, &a, |x, y| x - y).unwrap();
        assert_eq!(d.data, vec![-9., -8., -7., -19., -18., -17.]);
        let u = unary(&b, |x| x * x).unwrap();
        assert_eq!(u.data, vec![1., 4., 9.]);
    }
}
