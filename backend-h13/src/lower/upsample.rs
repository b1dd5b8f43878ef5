//! Nearest-neighbour upsampling by whole factors (`anec.resize`, mode `nearest`, the
//! result's H and W multiples of the input's: MIL `upsample_nearest_neighbor` and
//! `resize_nearest_neighbor`), rewritten before grouping as what the engine runs: each
//! element repeated `fx` times along W is a broadcast of the values viewed as columns, and
//! each row repeated `fy` times a broadcast of the rows viewed as channels:
//!
//! 1. `x` (`C x H x W`) reshaped to `CH x W x 1`, broadcast along W to `CH x W x fx`,
//!    reshaped to `CH x 1 x W·fx` (skipped when `fx = 1`);
//! 2. broadcast along H to `CH x fy x W·fx`, reshaped to the result `C x H·fy x W·fx`.
//!
//! The reshapes that move rows become views and transposes (`regroup`), the broadcast
//! along W runs with C and W exchanged (`width_moves`), as for any model that wrote these
//! ops. No record of Apple's shows an upsampling, so this is anec's plan, checked by the
//! simulator against the reference (the `upsample` property family). Bilinear resizing
//! and factors that are not whole numbers stay refused by name ([`refusal`]).

use anec_ir::{Attr, Attrs, Module, Op, OpCode, TensorType, ValueId};
use anec_passes::rewrite::{self, Emitter};

/// Why `op` (a resize) has no H13 lowering, or `None` when [`expand`] rewrites it.
pub fn refusal(m: &Module, op: &Op) -> Option<String> {
    let mode = op.attr("mode").and_then(Attr::as_str).unwrap_or("nearest");
    if mode != "nearest" {
        return Some(format!("a {mode} resize has no H13 lowering yet (nearest-neighbour by whole factors has)"));
    }
    if op.attr("sampling_mode").is_some() {
        return Some("a nearest resize with a sampling mode has no H13 lowering yet".into());
    }
    match factors(m, op) {
        Some(_) => None,
        None => Some(
            "a nearest resize whose output H and W are not whole multiples of the input's has no H13 lowering yet"
                .into(),
        ),
    }
}

/// `(fy, fx)` of a nearest resize of one batch and depth slice by whole factors.
fn factors(m: &Module, op: &Op) -> Option<(u32, u32)> {
    let (x, r) = (m.ty(*op.operands.first()?)?, m.ty(*op.results.first()?)?);
    let whole = x.n == 1 && x.d == 1 && r.n == 1 && r.d == 1 && x.c == r.c && x.dtype == r.dtype;
    let divides = x.h > 0 && x.w > 0 && r.h % x.h == 0 && r.w % x.w == 0;
    (whole && divides).then(|| (r.h / x.h, r.w / x.w))
}

/// `m` with every nearest resize by whole factors rewritten, or `None` when it has none.
pub fn expand(m: &Module) -> Option<Module> {
    let plan = |m: &Module, op: &Op| factors(m, op).filter(|_| op.opcode == OpCode::Resize && refusal(m, op).is_none());
    rewrite::each(m, "upsample", plan, |e, f| Steps(e).upsample(f))
}

/// The ops replacing one resize.
struct Steps<'e, 'a>(&'e mut Emitter<'a>);

impl Steps<'_, '_> {
    fn upsample(&mut self, (fy, fx): (u32, u32)) {
        let (Some(&x), Some(&r)) = (self.0.op.operands.first(), self.0.op.results.first()) else { return };
        let (Some(&t), Some(&rt)) = (self.0.m.ty(x), self.0.m.ty(r)) else { return };
        let shaped = |c: u32, h: u32, w: u32| TensorType { c, h, w, ..t };
        let rows = t.c * t.h;
        let wide = match fx {
            1 => self.reshape(x, shaped(rows, 1, t.w), None),
            _ => {
                let columns = self.reshape(x, shaped(rows, t.w, 1), None);
                let repeated = self.broadcast(columns, "width", fx, shaped(rows, t.w, fx));
                self.reshape(repeated, shaped(rows, 1, t.w * fx), None)
            }
        };
        let tall = match fy {
            1 => wide,
            _ => self.broadcast(wide, "height", fy, shaped(rows, fy, t.w * fx)),
        };
        self.reshape(tall, rt, Some(r));
    }

    fn reshape(&mut self, x: ValueId, ty: TensorType, out: Option<ValueId>) -> ValueId {
        self.push(OpCode::Reshape, Attrs::new(), x, ty, out)
    }

    fn broadcast(&mut self, x: ValueId, axis: &str, size: u32, ty: TensorType) -> ValueId {
        let attrs = [
            ("axes".to_string(), Attr::Array(vec![Attr::Str(axis.into())])),
            ("sizes".to_string(), Attr::Array(vec![Attr::Int(i64::from(size))])),
        ];
        self.push(OpCode::Broadcast, attrs.into_iter().collect(), x, ty, None)
    }

    /// Appends one op from `x` to a new value of type `ty` (or to `out`).
    fn push(&mut self, opcode: OpCode, attrs: Attrs, x: ValueId, ty: TensorType, out: Option<ValueId>) -> ValueId {
        self.0.push(opcode, attrs, vec![x], ty, out)
    }
}
