//! The folded plan of a constant-weight matmul whose product is large
//! (`docs/rationale/current-compiler/matmul.md` §1, `chains.md` §2.4): `M` rows of x run
//! as `Mh` rows of 8, so the convolution works at W = 8, H = Mh, and its product stays in
//! L2 until a copy-out task writes it. Apple's recipes:
//!
//! - **one matmul** (`matmul_m64_k256_n1024`), P C Y: P reads x as `8 x Mh x K` and keeps
//!   x^T; C keeps the product rows (transposed write, rows of `2N`) at 0 when they are
//!   larger than x^T, else after it; Y copies them out;
//! - **two matmuls in a row** (`chain_ffn_d256_s64`), P C1 C2 Y: C1 keeps its result
//!   untransposed (`N1` channels of `Mh x 8`, x^T's layout, the second matmul's x^T) where
//!   the single plan keeps the product; C2 reads it in place and keeps its product rows
//!   right after it (over the dead x^T), Y copies them out. The fold is decided on the
//!   first product; the last is kept as rows even when small.
//!
//! [`fold`] decides the plan and its sizes, [`keep_product`] builds C's kept rows and Y,
//! [`second`] builds C2.

use super::conv;
use super::l2_chain::link;
use crate::buffers::Buffers;
use crate::consts::ConstSection;
use crate::error::BackendError;
use crate::generation::Generation;
use crate::layout::{L2Region, Strides, L2_GRANULE};
use crate::task::{Engine, L2Form, L2Vector, SourceResidency, Surface, Task};
use anec_ir::{Module, Op, OpCode, TensorType, ValueId};
use anec_passes::Group;

/// Rows of x per row of the folded plan (`matmul.md` §1: Mc = 8).
pub(super) const FOLD_ROWS: u32 = 8;
/// A product larger than this is kept in L2 and copied out by a third task (P C Y).
pub(super) const DIRECT_PRODUCT_MAX: u64 = 64 << 10;
/// So is one whose rows are wider than this, over more than one row of 8
/// (`rrmm_r2rb_m16_k2048_n2048`: 64 KiB in rows of 4 KiB, folded; `matmul_m64_k512_n512`:
/// 64 KiB in rows of 1 KiB, and `m8_k1024_n1024`, one row of 8, not).
const DIRECT_ROW_MAX: u64 = 0x400;
/// The x-source channel stride of a folded preparation task (three records; fitted).
pub(super) const FOLDED_SOURCE_CHANNEL: u64 = 0x40;
/// Row padding of that source (an NE pass reading narrow channels row after row).
pub(super) const FOLDED_SOURCE_PAD: u64 = 0x20;

/// The folded plan of a matmul, or of a chain of two.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fold {
    /// Rows of 8.
    pub mh: u32,
    /// Bytes of the first kept result: the product rows, or C1's untransposed result
    /// when the product goes on to a second matmul.
    pub kept: u64,
    /// Bytes of the last product (`M x N` fp16, rows of `2N`), and of one of its rows.
    pub product: u64,
    pub row: u64,
    /// The product goes on to a second matmul (C1 C2).
    pub chained: bool,
    /// Bytes below the plan's block: x's rows when a residual add reads x and the
    /// product (`matmul_residual`, no copy-out).
    pub below: u64,
}

/// The fold of the preparation op `prep`, when its matmul's product is over 64 KiB or its
/// rows over 1 KiB with more than 8 of them, and what the plan keeps fits L2.
pub(super) fn fold(m: &Module, prep: &Op) -> Option<Fold> {
    let v = *prep.results.first()?;
    let (x, xt) = (*m.ty(*prep.operands.first()?)?, *m.ty(v)?);
    let conv = first_conv(m, prep)?;
    let n1 = m.ty(*conv.results.first()?)?.c;
    let row1 = u64::from(n1) * xt.dtype.size() as u64;
    let wide = row1 > DIRECT_ROW_MAX && x.c > FOLD_ROWS;
    if !(u64::from(x.c) * row1 > DIRECT_PRODUCT_MAX || wide) || !x.c.is_multiple_of(FOLD_ROWS) {
        return None;
    }
    let mh = x.c / FOLD_ROWS;
    let second = next_matmul(m, conv);
    let n = match second {
        Some(c2) => m.ty(*c2.results.first()?)?.c,
        None => n1,
    };
    let row = u64::from(n) * xt.dtype.size() as u64;
    let product = u64::from(x.c) * row;
    let kept = match second {
        Some(_) => super::matmul::region(&TensorType { c: n1, h: mh, w: FOLD_ROWS, ..xt }).size,
        None => product,
    };
    let residual = second.and_then(|c2| super::matmul_residual::of(m, prep, c2));
    let below = residual.and_then(|r| Some(super::matmul_residual::x_rows(m.ty(r.x)?).size)).unwrap_or(0);
    let folded_xt = super::matmul::region(&TensorType { h: mh, w: FOLD_ROWS, ..xt }).size;
    // (P from memory stages x after x^T; C2's product rows lie over x^T, after C1's result.)
    let source = (FOLD_ROWS as u64 * FOLDED_SOURCE_CHANNEL + FOLDED_SOURCE_PAD) * u64::from(mh);
    let after = (folded_xt + source).max(if second.is_some() { product } else { 0 });
    let fits = below + kept + after <= super::l2_chain::L2_BYTES;
    let chained = second.is_some();
    (fits && row.is_multiple_of(L2_GRANULE)).then_some(Fold { mh, kept, product, row, chained, below })
}

/// The convolution reading P's x^T (past a scale on it, `matmul_source`).
fn first_conv<'m>(m: &'m Module, prep: &Op) -> Option<&'m Op> {
    let mut conv = m.users(*prep.results.first()?).next()?;
    if conv.opcode == OpCode::GainOffsetControl {
        conv = m.users(*conv.results.first()?).next()?;
    }
    Some(conv)
}

/// The second matmul's convolution after P `prep`: P -> C1 (with its fused activation)
/// -> C2, C1's result read by C2 alone ([`next_matmul`]).
pub(super) fn second_conv<'m>(m: &'m Module, prep: &Op) -> Option<&'m Op> {
    next_matmul(m, first_conv(m, prep).filter(|c| c.opcode == OpCode::Conv)?)
}

/// The second matmul's convolution when `conv`'s result (through the activation it
/// applies) is its x and nothing else reads it: the chain the MIL lowering leaves when it
/// cancels the swap back after `conv` against the swap before the next convolution.
fn next_matmul<'m>(m: &'m Module, conv: &Op) -> Option<&'m Op> {
    let mut v = *conv.results.first()?;
    loop {
        let [user] = m.users(v).collect::<Vec<_>>()[..] else { return None };
        if m.outputs.iter().any(|o| o.value == v) {
            return None;
        }
        match user.opcode {
            OpCode::Neuron | OpCode::GainOffsetControl => v = *user.results.first()?,
            OpCode::Conv if user.operands.first() == Some(&v) && super::matmul::pointwise(user) => return Some(user),
            _ => return None,
        }
    }
}

impl Fold {
    /// Where x^T lies: after the first kept result when that is larger (`matmul.md` §3).
    pub fn xt_base(&self, xt: &L2Region) -> u64 {
        if self.kept > xt.size {
            self.below + self.kept
        } else {
            self.below
        }
    }

    /// Where the first kept result lies: at 0 when larger than x^T, else after it.
    pub fn kept_base(&self, xt: &L2Region) -> u64 {
        if self.kept > xt.size {
            self.below
        } else {
            self.below + xt.size
        }
    }

    /// Where the last product's rows lie: the first kept result's place, or, in a chain,
    /// right after C1's result (C2 puts its result after its source).
    pub fn product_base(&self, xt: &L2Region) -> u64 {
        match self.chained {
            true => self.kept_base(xt) + self.kept,
            false => self.kept_base(xt),
        }
    }

    /// A residual add reads x and the product in L2: no copy-out.
    pub fn residual(&self) -> bool {
        self.below > 0
    }

    /// The type a folded convolution computes: `c` channels of `Mh` rows of 8.
    pub fn computed(&self, ty: TensorType, c: u32) -> TensorType {
        TensorType { c, h: self.mh, w: FOLD_ROWS, ..ty }
    }
}

/// Step C1 of a folded chain: `tasks` (one convolution of `dest`'s type, `N1` channels of
/// `M`) keep their result untransposed at the fold's kept place, in x^T's layout.
pub(super) fn keep_untransposed(op: &Op, tasks: &mut [Task], f: Fold, xt: &L2Region) -> Result<(), BackendError> {
    let [c1] = tasks else {
        return Err(crate::window::unsupported(op, "a folded chain whose first convolution splits into slices"));
    };
    let region = L2Region { base: f.kept_base(xt), ..super::matmul::region(&c1.dest.ty) };
    c1.l2_result = Some(L2Vector { form: L2Form::Standard, region });
    Ok(())
}

/// The folded product `ty` as the convolution computes it, on no buffer of its own.
pub(super) fn computed_surface(ty: TensorType) -> Surface {
    Surface { bar: 0, offset: 0, ty, strides: Strides::of(&ty, &Default::default()) }
}

/// The folded plan's compute task keeping the product in L2 written transposed (one row
/// of `2N` per product row: channel `2N`, row `8 x 2N`, word 0x220 the whole product), and
/// step Y: an NE pass copying it out to `dest`, the product rows read as channels.
pub(super) fn keep_product(
    op: &Op,
    mut tasks: Vec<Task>,
    f: Fold,
    xt: &L2Region,
    dest: Surface,
) -> Result<Vec<Task>, BackendError> {
    let kept = keep_rows(op, &mut tasks, f, xt)?;
    let read = L2Region { row: f.product, ..kept };
    let mut copy = Task::new(&op.name, Engine::NePass, vec![computed_surface(dest.ty)], dest);
    copy.residency = SourceResidency::Resident;
    copy.l2_source = Some(L2Vector { form: L2Form::Standard, region: read });
    tasks.push(copy);
    Ok(tasks)
}

/// The compute task of `tasks` keeping the product rows in L2 (written transposed), and
/// where.
fn keep_rows(op: &Op, tasks: &mut [Task], f: Fold, xt: &L2Region) -> Result<L2Region, BackendError> {
    let [compute] = tasks else {
        let reason = "a folded matmul whose convolution splits into slices (the kept product is one region)";
        return Err(crate::window::unsupported(op, reason));
    };
    let base = f.product_base(xt);
    let kept = L2Region { base, channel: f.row, row: f.row * u64::from(FOLD_ROWS), plane: f.product, size: f.product };
    compute.l2_result = Some(L2Vector { form: L2Form::Transposed, region: kept });
    Ok(kept)
}

/// Step C2 of a folded chain, and Y: the convolution of group `g` reading C1's result
/// `x` where C1 kept it (C1 read x^T at `xt`), keeping its product rows after it, and the
/// copy-out, unless a residual add reads the rows (`matmul_residual`). Dependent 0: C2's
/// result lies over x^T, which C1 read (`chains.md` §3).
pub(super) fn second(
    m: &Module,
    g: &Group,
    x: ValueId,
    (f, xt): (Fold, &L2Region),
    bufs: &Buffers,
    consts: &mut ConstSection,
    gen: &Generation,
) -> Result<Vec<Task>, BackendError> {
    let (conv_op, goc) = super::matmul::conv_and_goc(m, g)?;
    let ty =
        |v: ValueId| m.ty(v).copied().ok_or_else(|| BackendError::Internal(format!("no type in '{}'", conv_op.name)));
    let source = ty(x)?;
    let source = f.computed(source, source.c);
    let result =
        *conv_op.results.first().ok_or_else(|| BackendError::Internal(format!("'{}': no result", conv_op.name)))?;
    let computed = computed_surface(f.computed(ty(result)?, ty(result)?.c));
    let out = conv::Output {
        dest: computed,
        transposed: false,
        source: Some(computed_surface(source)),
        kept_transposed: true,
    };
    let mut tasks = conv::lower_conv(m, conv_op, goc, bufs, out, consts, gen)?;
    if f.residual() {
        keep_rows(conv_op, &mut tasks, f, xt)?;
    } else {
        let last = m.ops.get(g.last()).and_then(|l| l.results.first());
        let last = last.ok_or_else(|| BackendError::Internal(format!("no result of group {}", g.head)))?;
        let dest = super::movement::as_channels(bufs.surface(*last)?);
        tasks = keep_product(conv_op, tasks, f, xt, dest)?;
    }
    let c1 = L2Region { base: f.kept_base(xt), ..super::matmul::region(&source) };
    for t in tasks.iter_mut().filter(|t| t.engine == Engine::NeConv) {
        if super::fuses_relu(m, g) {
            t.nonlinear = crate::task::Nonlinear::Relu;
        }
        t.residency = SourceResidency::Resident;
        t.l2_source = Some(L2Vector { form: L2Form::Standard, region: c1 });
        t.l2_link = Some(link(true, false, 0));
    }
    Ok(tasks)
}
