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
    let rewrites = |op: &Op| op.opcode == OpCode::Resize && refusal(m, op).is_none();
    if !m.ops.iter().any(rewrites) {
        return None;
    }
    let mut out = Module { ops: Vec::with_capacity(m.ops.len() + 4), ..m.clone() };
    for op in &m.ops {
        match factors(m, op).filter(|_| rewrites(op)) {
            Some(f) => Steps { m: &mut out, op, n: 0 }.upsample(f),
            None => out.ops.push(op.clone()),
        }
    }
    Some(out)
}

/// The ops replacing one resize.
struct Steps<'a> {
    m: &'a mut Module,
    op: &'a Op,
    n: usize,
}

impl Steps<'_> {
    fn upsample(&mut self, (fy, fx): (u32, u32)) {
        let (Some(&x), Some(&r)) = (self.op.operands.first(), self.op.results.first()) else { return };
        let (Some(&t), Some(&rt)) = (self.m.ty(x), self.m.ty(r)) else { return };
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
        let r = out.unwrap_or_else(|| self.m.add_value(ty));
        let name = format!("{}_upsample_{}", self.op.name, self.n);
        self.n += 1;
        self.m.ops.push(Op { opcode, name, operands: vec![x], results: vec![r], attrs, loc: self.op.loc.clone() });
        r
    }
}
