//! Nearest-neighbour upsampling by whole factors (`anec.resize`, mode `nearest`, the
//! result's H and W multiples of the input's: MIL `upsample_nearest_neighbor` and
//! `resize_nearest_neighbor`), rewritten before grouping as what the engine runs:
//!
//! 1. columns repeated `fx` times (skipped when `fx = 1`): `x` (`C x H x W`) with C and W
//!    exchanged (`W x H x C`, one NE pass), each channel repeated `fx` times by a 1x1
//!    convolution of W groups whose weights are ones (`W·fx x H x C`, exact), exchanged
//!    back (written transposed by a second pass);
//! 2. rows repeated `fy` times (skipped when `fy = 1`): the rows read as channels of one
//!    row (`CH x 1 x W·fx`, a view), broadcast along H (`CH x fy x W·fx`, one task) and
//!    read as the result `C x H·fy x W·fx` (a view).
//!
//! A 2x2 upsampling is four tasks (an earlier plan, which broadcast each element viewed
//! as a column, took nine and held every element in a 64-byte row of its own). No record
//! of Apple's shows an upsampling, so this is anec's plan, checked by the simulator
//! against the reference (the `upsample` property family). Bilinear resizing and factors
//! that are not whole numbers stay refused by name ([`refusal`]).

use anec_ir::{Attr, Attrs, Blob, DType, Module, Op, OpCode, TensorType, ValueId};
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
        let wide = match fx {
            1 => x,
            _ => {
                let columns = self.transpose(x, shaped(t.w, t.h, t.c));
                let repeated = self.repeat_channels(columns, fx, shaped(t.w * fx, t.h, t.c));
                self.transpose(repeated, shaped(t.c, t.h, t.w * fx))
            }
        };
        match fy {
            1 => self.reshape(wide, rt, Some(r)),
            _ => {
                let rows = t.c * t.h;
                let flat = self.reshape(wide, shaped(rows, 1, t.w * fx), None);
                let tall = self.broadcast(flat, "height", fy, shaped(rows, fy, t.w * fx));
                self.reshape(tall, rt, Some(r))
            }
        };
    }

    /// C and W exchanged.
    fn transpose(&mut self, x: ValueId, ty: TensorType) -> ValueId {
        self.0.transpose(x, [0, 4, 2, 3, 1], ty, None)
    }

    /// Each channel of `x` repeated `f` times: a 1x1 convolution with one group per input
    /// channel and weights of ones.
    fn repeat_channels(&mut self, x: ValueId, f: u32, ty: TensorType) -> ValueId {
        let groups = ty.c / f;
        let wty = TensorType::nchw(ty.c, 1, 1, 1, DType::F16);
        let key = format!("{}.upsample_weights", self.0.op.name);
        let one = half::f16::from_f32(1.0).to_le_bytes();
        let bytes = (0..ty.c).flat_map(|_| one).collect();
        self.0.m.resources.insert(key.clone(), Blob { dtype: DType::F16, bytes });
        let ints = |v: &[i64]| Attr::Array(v.iter().map(|&i| Attr::Int(i)).collect());
        let attrs = [
            ("kernel", ints(&[1, 1])),
            ("stride", ints(&[1, 1])),
            ("pad", ints(&[0, 0, 0, 0])),
            ("groups", Attr::Int(i64::from(groups))),
            ("weights", Attr::Resource { name: key, ty: wty }),
            ("kernel_group_reuse", Attr::Bool(false)),
        ];
        self.push(OpCode::Conv, attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(), x, ty, None)
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
