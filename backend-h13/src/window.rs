//! Window geometry of convolution and pooling: kernel, stride and padding read from the
//! op and checked against the H13 limits before the Common block encodes them.
//!
//! The registers take the kernel size (Kh, Kw), the stride (Sy, Sx) and the leading
//! padding (Py = top, Px = left); the trailing padding is implied by the output size
//! (Hout, Wout), which the verifier has already checked against all four pads.

use crate::error::BackendError;
use anec_ir::{Attr, Op};

/// Largest kernel side the M1 compiler accepts: 13 (chip-features.md §"numeric limits":
/// conv kernel width <= 13 on A13/A14; formats-hwx.md §4: the compiler rejects kernels
/// above 13 on M1), although Kw/Kh are 5-bit fields.
pub const MAX_KERNEL: u32 = 13;
/// Largest stride: Sx and Sy are 2-bit fields holding the stride itself.
pub const MAX_STRIDE: u32 = 3;
/// Largest leading pad: Px and Py are 5-bit fields.
pub const MAX_PAD: u32 = 31;

/// Kernel, stride and leading padding of a windowed op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Kernel height.
    pub kh: u32,
    /// Kernel width.
    pub kw: u32,
    /// Vertical stride.
    pub sy: u32,
    /// Horizontal stride.
    pub sx: u32,
    /// Top padding.
    pub pad_top: u32,
    /// Left padding.
    pub pad_left: u32,
    /// True when any of the four pads is nonzero.
    pub padded: bool,
}

/// Why an op cannot be placed, naming it.
pub fn unsupported(op: &Op, reason: &str) -> BackendError {
    BackendError::Unsupported {
        line: op.loc.line,
        layer: op.name.clone(),
        op: op.opcode.name().to_string(),
        reason: reason.to_string(),
    }
}

/// The verified integer array `name` of `op`, as unsigned values.
fn ints<const N: usize>(op: &Op, name: &str) -> Result<[u32; N], BackendError> {
    let v = op.attr(name).and_then(Attr::as_int_array).unwrap_or_default();
    let v: Vec<u32> = v.iter().map(|&x| u32::try_from(x).unwrap_or(u32::MAX)).collect();
    v.try_into().map_err(|_| {
        BackendError::Internal(format!("verified {} '{}' lacks a {N}-element `{name}`", op.opcode, op.name))
    })
}

/// Reads and checks the window of a convolution or pooling op.
pub fn window(op: &Op) -> Result<Window, BackendError> {
    let [kh, kw] = ints::<2>(op, "kernel")?;
    let [sy, sx] = ints::<2>(op, "stride")?;
    let [top, bottom, left, right] = ints::<4>(op, "pad")?;
    if kh > MAX_KERNEL || kw > MAX_KERNEL {
        let reason = format!("kernel {kh}x{kw} exceeds the H13 limit of {MAX_KERNEL} per side");
        return Err(unsupported(op, &reason));
    }
    if sy > MAX_STRIDE || sx > MAX_STRIDE {
        let reason = format!("stride [{sy}, {sx}] exceeds the H13 limit of {MAX_STRIDE} (2-bit Sx/Sy fields)");
        return Err(unsupported(op, &reason));
    }
    if top > MAX_PAD || left > MAX_PAD {
        let reason = format!("leading padding top {top}, left {left} exceeds the 5-bit Py/Px limit of {MAX_PAD}");
        return Err(unsupported(op, &reason));
    }
    if top >= kh || bottom >= kh || left >= kw || right >= kw {
        let reason = format!(
            "padding [{top}, {bottom}, {left}, {right}] must be smaller than the {kh}x{kw} kernel on every side \
             (the compiler's \"pad below kernel\" rule)"
        );
        return Err(unsupported(op, &reason));
    }
    let padded = top + bottom + left + right > 0;
    Ok(Window { kh, kw, sy, sx, pad_top: top, pad_left: left, padded })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Location, OpCode};

    fn ints_attr(v: &[i64]) -> Attr {
        Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
    }

    fn op(kernel: &[i64], stride: &[i64], pad: &[i64]) -> Op {
        let mut o = Op {
            opcode: OpCode::Conv,
            name: "c".into(),
            operands: vec![],
            results: vec![],
            attrs: Default::default(),
            loc: Location { file: "net.mlir".into(), line: 4, col: 1 },
        };
        o.attrs.insert("kernel".into(), ints_attr(kernel));
        o.attrs.insert("stride".into(), ints_attr(stride));
        o.attrs.insert("pad".into(), ints_attr(pad));
        o
    }

    #[test]
    fn reads_kernel_stride_and_leading_pads() {
        let w = window(&op(&[5, 3], &[2, 1], &[2, 1, 1, 0])).unwrap();
        assert_eq!((w.kh, w.kw, w.sy, w.sx, w.pad_top, w.pad_left, w.padded), (5, 3, 2, 1, 2, 1, true));
        assert!(!window(&op(&[4, 4], &[1, 1], &[0, 0, 0, 0])).unwrap().padded);
    }

    #[test]
    fn limits_name_the_layer_and_the_limit() {
        let e = window(&op(&[15, 15], &[1, 1], &[0, 0, 0, 0])).unwrap_err().to_string();
        assert!(e.contains("layer 'c'") && e.contains("limit of 13"), "{e}");
        let e = window(&op(&[3, 3], &[4, 1], &[0, 0, 0, 0])).unwrap_err().to_string();
        assert!(e.contains("limit of 3"), "{e}");
        let e = window(&op(&[3, 3], &[1, 1], &[0, 3, 0, 0])).unwrap_err().to_string();
        assert!(e.contains("pad below kernel"), "{e}");
    }
}
