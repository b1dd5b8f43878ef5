//! Where a MIL tensor lives in a compiled program: the lowering's rank mapping
//! (`passes/src/lower/layout.rs`), applied to data.
//!
//! | MIL shape | program shape | element order |
//! |---|---|---|
//! | `[]` | `[1, 1, 1, 1]` | same |
//! | `[d]` | `[1, 1, 1, d]` | same |
//! | `[s, d]` | `[1, 1, s, d]` | same |
//! | `[b, s, d]` | `[1, b, s, d]` | same |
//! | `[n, c, h, w]` | same | same |
//!
//! Ranks up to 4 are aligned at the last axis, which lands on W (Apple's mapping, see
//! `docs/rationale/current-compiler/rank-mapping.md`), so the element order never changes.
//! | `[n, c, d, h, w]` | same (`[n, c, h, w]` when d = 1) | same |

use super::kernels::shape::{reshape, transpose};
use super::RefError;
use crate::tensor::Tensor;

/// The program shape of a MIL shape and the permutation that takes MIL data to it.
fn mapping(shape: &[usize]) -> Result<(Vec<usize>, Vec<usize>), RefError> {
    let m = match *shape {
        [] => (vec![1, 1, 1, 1], vec![]),
        [d] => (vec![1, 1, 1, d], vec![0]),
        [s, d] => (vec![1, 1, s, d], vec![0, 1]),
        [b, s, d] => (vec![1, b, s, d], vec![0, 1, 2]),
        [n, c, h, w] => (vec![n, c, h, w], vec![0, 1, 2, 3]),
        [n, c, 1, h, w] => (vec![n, c, h, w], vec![0, 1, 2, 3, 4]),
        [_, _, _, _, _] => (shape.to_vec(), vec![0, 1, 2, 3, 4]),
        _ => {
            return Err(RefError::Input(format!(
                "a rank-{} MIL tensor has no program layout (ranks 0 to 5)",
                shape.len()
            )))
        }
    };
    Ok(m)
}

/// A MIL tensor in the program layout the lowering gives it (see the module header).
pub fn mil_to_program(t: &Tensor) -> Result<Tensor, RefError> {
    let (target, perm) = mapping(&t.shape)?;
    let moved = transpose(t, &perm).map_err(RefError::Input)?;
    reshape(&moved, &target).map_err(RefError::Input)
}

/// The inverse of [`mil_to_program`]: a program tensor back in the MIL shape `mil_shape`.
pub fn program_to_mil(t: &Tensor, mil_shape: &[usize]) -> Result<Tensor, RefError> {
    let (target, perm) = mapping(mil_shape)?;
    let mut five = target.clone();
    if five.len() == 4 {
        five.insert(2, 1);
    }
    if t.shape != target && t.shape != five {
        return Err(RefError::Input(format!(
            "a program tensor of shape {:?} does not hold the MIL shape {mil_shape:?} (expected {target:?})",
            t.shape
        )));
    }
    let moved_shape: Vec<usize> = perm.iter().map(|&p| mil_shape[p]).collect();
    let moved = reshape(t, &moved_shape).map_err(RefError::Input)?;
    let mut inverse = vec![0usize; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    transpose(&moved, &inverse).map_err(RefError::Input)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rank_two_is_rows_of_the_last_axis() {
        // MIL [[0, 1, 2], [3, 4, 5]] (s = 2, d = 3) is stored as 2 rows of width 3.
        let t = Tensor { shape: vec![2, 3], data: vec![0., 1., 2., 3., 4., 5.] };
        let p = mil_to_program(&t).unwrap();
        assert_eq!(p.shape, vec![1, 1, 2, 3]);
        assert_eq!(p.data, t.data);
        assert_eq!(program_to_mil(&p, &[2, 3]).unwrap(), t);
    }

    #[test]
    fn other_ranks() {
        let t3 = Tensor { shape: vec![2, 1, 3], data: vec![1., 2., 3., 4., 5., 6.] };
        let p3 = mil_to_program(&t3).unwrap();
        assert_eq!((p3.shape.clone(), p3.data.clone()), (vec![1, 2, 1, 3], t3.data.clone()));
        assert_eq!(program_to_mil(&p3, &[2, 1, 3]).unwrap(), t3);
        let t1 = Tensor { shape: vec![4], data: vec![1., 2., 3., 4.] };
        assert_eq!(mil_to_program(&t1).unwrap().shape, vec![1, 1, 1, 4]);
        let t0 = Tensor { shape: vec![], data: vec![7.] };
        assert_eq!(mil_to_program(&t0).unwrap().shape, vec![1, 1, 1, 1]);
        let t5 = Tensor { shape: vec![1, 2, 1, 1, 2], data: vec![1., 2., 3., 4.] };
        assert_eq!(mil_to_program(&t5).unwrap().shape, vec![1, 2, 1, 2]);
        let bad = Tensor { shape: vec![1; 6], data: vec![0.] };
        assert!(mil_to_program(&bad).is_err());
        assert!(program_to_mil(&p3, &[3, 2]).is_err());
    }
}
