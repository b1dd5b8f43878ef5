//! Two constant-weight matmuls in a row, the product handed over in L2 (Apple's
//! `chain_pair_mm_mm_d256_s64`; `docs/rationale/current-compiler/chains.md` §1.5, §2.2).
//! The MIL lowering cancels the swap back after the first convolution against the swap
//! before the second, so the first product is already the second matmul's x^T. Apple's
//! recipe, three tasks:
//!
//! 1. **P**: as for one matmul (`matmul::prep`): x^T kept in L2 at 0, the BAR-3 token;
//! 2. **C1**: the first convolution reads x^T in place and keeps its result, untransposed
//!    (`N` channels of `M`), in L2 right after x^T, where x's staging was (ResultCfg
//!    0x140: no memory write, no alias bits);
//! 3. **C2**: the second convolution reads that result in place (SourceCfg 0x104:
//!    Dependent 1, the NE task just before produced it in the shape it reads, and C2's
//!    result, staged after it, overlaps nothing C1 still reads) and writes the product
//!    rows transposed to memory.
//!
//! `product` picks the hand-overs (`matmul::plan` keeps them), `region` places the kept
//! product, and `read_product` builds C2.

use super::conv;
use super::l2_chain::link;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{round_up, L2Region, Strides, L2_GRANULE};
use crate::task::{L2Form, Nonlinear};
use crate::task::{L2Vector, SourceResidency, Surface, Task};
use anec_ir::{Module, OpCode, TensorType, ValueId};
use anec_passes::Group;

/// The product of the compute group `conv` when the next group's convolution reads it in
/// L2: its only reader is a 1x1 convolution that writes its own result transposed (the
/// second matmul), and `conv` itself writes untransposed (its swap back cancelled).
pub(super) fn product(m: &Module, conv: &Group, next: Option<&Group>) -> Option<ValueId> {
    let next = next?;
    if conv.swap.is_some() || next.swap.is_none() {
        return None;
    }
    let r = *m.ops.get(conv.last())?.results.first()?;
    let reader = m.ops.get(next.head)?;
    let sole = m.users(r).count() == 1 && !m.outputs.iter().any(|o| o.value == r);
    let reads = reader.opcode == OpCode::Conv && reader.operands.first() == Some(&r);
    (sole && reads && super::matmul::pointwise(reader)).then_some(r)
}

/// The kept product of type `ty` (`N` channels of `M`) at `base`: channels of `r16(2M)`,
/// all `N` in one row.
pub(super) fn region(ty: &TensorType, base: u64) -> L2Region {
    let channel = round_up(u64::from(ty.w) * ty.dtype.size() as u64, L2_GRANULE);
    let row = channel * u64::from(ty.c);
    L2Region { base, channel, row, plane: row, size: row * u64::from(ty.h) }
}

/// The kept product's surface: no buffer of its own, its type in the dense layout.
pub(super) fn surface(ty: TensorType) -> Surface {
    Surface { bar: 0, offset: 0, ty, strides: Strides::of(&ty, &Default::default()) }
}

/// Keeps the result of C1's tasks in L2 at `kept` (each slice its channels).
pub(super) fn keep(tasks: &mut [Task], kept: L2Region) {
    for t in tasks {
        let first = t.dest.offset / t.dest.strides.plane.max(1);
        let region = L2Region { base: kept.base + first * kept.channel, ..kept };
        t.l2_result = Some(L2Vector { form: L2Form::Standard, region });
    }
}

/// Step C2: the convolution of group `g` reading C1's kept product `product` (C1 read
/// x^T at `xt`) and writing its result transposed to memory.
pub(super) fn read_product(
    m: &Module,
    g: &Group,
    product: ValueId,
    xt: &L2Region,
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    let (conv_op, goc) = super::matmul::conv_and_goc(m, g)?;
    let ty = *m.ty(product).ok_or_else(|| BackendError::Internal(format!("no type of '{}'", conv_op.name)))?;
    let kept = region(&ty, xt.end());
    let last = m.ops.get(g.last()).ok_or_else(|| BackendError::Internal(format!("no op {}", g.last())))?;
    let result =
        last.results.first().ok_or_else(|| BackendError::Internal(format!("'{}' has no result", last.name)))?;
    let dest = super::movement::as_channels(bufs.surface(*result)?);
    let out = conv::Output { dest, transposed: true, source: Some(surface(ty)), kept_transposed: false };
    let mut tasks = conv::lower_conv(m, conv_op, goc, bufs, out, consts, gen)?;
    for t in &mut tasks {
        if super::fuses_relu(m, g) {
            t.nonlinear = Nonlinear::Relu;
        }
        t.residency = SourceResidency::Resident;
        t.l2_source = Some(L2Vector { form: L2Form::Standard, region: kept });
        t.l2_link = Some(link(false, false, 1));
    }
    Ok(tasks)
}
