//! Pieces every recipe that keeps its intermediates in L2 uses (softmax, layer_norm):
//! regions in Apple's layouts, the SourceCfg link of a step, scratch surfaces for results
//! that never reach memory, and the check that a plan fits the L2.

use crate::error::BackendError;
use crate::layout::{L2Region, Strides};
use crate::task::{L2Form, L2Link, L2Vector, SourceResidency, Surface, Task};
use crate::window::unsupported;
use anec_ir::{Op, TensorType};

/// The L2 of the H13 (1 MiB).
pub const L2_BYTES: u64 = 1 << 20;

/// Word 0x158: operand 1 broadcast along W, H and the third loop (depth); operand 2 along
/// W and C; operand 1 / 2 a packed vector of one value per channel (`softmax.md` §2).
pub const OPERAND1_ALONG_W: u32 = 0x1;
pub const OPERAND1_ALONG_H: u32 = 0x2;
pub const OPERAND1_ALONG_D: u32 = 0x4;
pub const OPERAND1_ALONG_C: u32 = 0x8;
pub const OPERAND2_ALONG_W: u32 = 0x10;
pub const OPERAND2_ALONG_C: u32 = 0x80;
pub const OPERAND1_PACKED: u32 = 0x100;
pub const OPERAND2_PACKED: u32 = 0x200;
/// Word 0x158: the result is written packed (the view's channels along W of one row).
pub const PACKED_RESULT: u32 = 0x400;

/// fp16 1.0.
pub const ONE_F16: u16 = 0x3C00;

/// A region in the standard layout.
pub fn standard(region: L2Region) -> L2Vector {
    L2Vector { form: L2Form::Standard, region }
}

/// L2.SourceCfg link bits of a step.
pub fn link(conv_result: bool, planar_result: bool, dependent: u8) -> L2Link {
    L2Link { conv_src: false, conv_result, planar_result, dependent, dma_fmt: false }
}

/// Makes `t`'s first source the region an earlier step left in L2, linked by `l`.
pub fn read_in_place(t: &mut Task, region: L2Region, l: L2Link) {
    (t.residency, t.l2_source, t.l2_link) = (SourceResidency::Resident, Some(standard(region)), Some(l));
}

/// A scratch surface of `ty` (a result that stays in L2).
pub fn scratch(ty: &TensorType) -> Surface {
    Surface { bar: 0, ty: *ty, strides: Strides::of(ty, &Default::default()), offset: 0 }
}

/// A tensor's layout in L2 at `base`: rows of C channels of W values; with several rows,
/// 0x20 of padding after a row that fills whole 0x400 banks (the planar engine's rule).
pub fn x_region(base: u64, ty: &TensorType, rows: bool) -> L2Region {
    let plane = L2Region::unpadded_row(ty.c, ty.w, ty.dtype, u64::MAX);
    let pad = if rows && plane.is_multiple_of(0x400) { 0x20 } else { 0 };
    L2Region::new(base, ty.c, ty.h, ty.w, ty.dtype, u64::MAX, pad)
}

/// Every region of the plan must lie in L2; `what` names the op for the error.
pub fn check_fits(op: &Op, tasks: &[Task], what: &str) -> Result<(), BackendError> {
    let regions = tasks.iter().flat_map(|t| {
        [t.l2_source, t.l2_result, t.l2_operand.map(|o| o.vector)].into_iter().flatten().map(|v| v.region.end())
    });
    match regions.max() {
        Some(end) if end > L2_BYTES => Err(unsupported(
            op,
            &format!("{what} needs {end:#x} bytes of L2, more than the {L2_BYTES:#x} the engine has (no tiling yet)"),
        )),
        _ => Ok(()),
    }
}
