//! `anec.sdpa` as Apple compiles attention (`chain_attn*`, `env_chain_attention*`): the
//! sequence `scores = q · kᵀ` (a runtime matmul), `× scale`, `+ mask` (broadcast over the
//! heads), `softmax` over the keys (which subtracts the row maximum: `subtract_max`), and
//! `scores · v`. The H13 has no attention unit, so before grouping every `anec.sdpa` of
//! the module is replaced by those ops, which the other families lower:
//!
//! | step | op | shape (`N x Sq x 1 x H x ·`) |
//! |---|---|---|
//! | 1 | `anec.matmul(q, k, transpose_rhs)` | `x Sk` |
//! | 2 | `anec.gain_offset_control` scale (a constant scale), or a broadcast multiply | `x Sk` |
//! | 3 | `anec.broadcast` of the mask over the heads, `anec.scaled_elementwise` add | `x Sk` |
//! | 4 | `anec.softmax` over W | `x Sk` |
//! | 5 | `anec.matmul(p, v)` | `x dk` (the sdpa's result) |

use anec_ir::{Attr, Attrs, Blob, DType, Module, Op, OpCode, TensorType, ValueId};
use half::f16;

/// The module with every `anec.sdpa` replaced by its steps; `None` when it has none.
pub fn expand(m: &Module) -> Option<Module> {
    if !m.ops.iter().any(|op| op.opcode == OpCode::Sdpa) {
        return None;
    }
    let mut out = Module { ops: Vec::with_capacity(m.ops.len() + 8), ..m.clone() };
    for op in &m.ops {
        if op.opcode == OpCode::Sdpa {
            steps(&mut out, op);
        } else {
            out.ops.push(op.clone());
        }
    }
    Some(out)
}

/// Appends the steps of one sdpa to `m`: one chain, or (several heads: the runtime
/// matmul runs one matrix per task) one chain per head on views of q, k and v along H,
/// concatenated along H.
fn steps(m: &mut Module, sdpa: &Op) {
    let [q, k, v, scale] = [0, 1, 2, 3].map(|i| sdpa.operands.get(i).copied().unwrap_or(ValueId(0)));
    let mask = sdpa.operands.get(4).copied();
    let heads = m.ty(q).map_or(1, |t| t.h);
    let mut b = Builder { m, sdpa };
    if heads <= 1 {
        let out = sdpa.results.first().copied();
        b.chain("", [q, k, v], scale, mask, out);
        return;
    }
    let mut slices: Vec<(ValueId, Vec<ValueId>)> = Vec::new();
    let mut parts = Vec::with_capacity(heads as usize);
    for h in 0..heads {
        let mut head = [q, k, v];
        for (x, what) in head.iter_mut().zip(["q", "k", "v"]) {
            *x = match slices.iter().find(|(v, _)| v == x) {
                Some((_, views)) => views[h as usize],
                None => {
                    let views: Vec<ValueId> = (0..heads).map(|i| b.head_view(&format!("{what}{i}"), *x, i)).collect();
                    slices.push((*x, views.clone()));
                    views[h as usize]
                }
            };
        }
        parts.push(b.chain(&format!("_h{h}"), head, scale, mask, None));
    }
    let mut concat = sdpa.clone();
    (concat.opcode, concat.operands) = (OpCode::Concat, parts);
    concat.attrs = [("axis".to_string(), Attr::Str("height".into()))].into_iter().collect();
    b.m.ops.push(concat);
}

/// Appends ops named after the sdpa.
struct Builder<'a> {
    m: &'a mut Module,
    sdpa: &'a Op,
}

impl Builder<'_> {
    /// The chain of one head (`tag` in its names) of `[q, k, v]`; its result is `out`
    /// when given (the sdpa's own value), else a new one.
    fn chain(
        &mut self,
        tag: &str,
        [q, k, v]: [ValueId; 3],
        scale: ValueId,
        mask: Option<ValueId>,
        out: Option<ValueId>,
    ) -> ValueId {
        let ty = |m: &Module, v: ValueId| m.ty(v).copied().unwrap_or_else(|| TensorType::nchw(1, 1, 1, 1, DType::F16));
        let (qt, kt, vt) = (ty(self.m, q), ty(self.m, k), ty(self.m, v));
        let scores_ty = TensorType { w: kt.c, ..qt };
        let mut cur = self.op(&format!("scores{tag}"), OpCode::Matmul, vec![q, k], scores_ty, flags(false, true));
        cur = match constant_scalar(self.m, scale) {
            Some(s) => {
                self.op(&format!("scaled{tag}"), OpCode::GainOffsetControl, vec![cur], scores_ty, scalar_scale(s))
            }
            None => {
                let s = self.broadcast(&format!("scale{tag}"), scale, scores_ty);
                self.op(&format!("scaled{tag}"), OpCode::ScaledElementwise, vec![cur, s], scores_ty, kind("mul"))
            }
        };
        if let Some(mask) = mask {
            let mask = self.broadcast(&format!("mask{tag}"), mask, scores_ty);
            cur = self.op(&format!("masked{tag}"), OpCode::ScaledElementwise, vec![cur, mask], scores_ty, kind("add"));
        }
        let axis: Attrs = [("axis".to_string(), Attr::Str("width".into()))].into_iter().collect();
        let p = self.op(&format!("weights{tag}"), OpCode::Softmax, vec![cur], scores_ty, axis);
        let out_ty = TensorType { w: vt.w, ..qt };
        match out {
            Some(r) => {
                let mut last = self.sdpa.clone();
                (last.opcode, last.operands, last.attrs, last.results) =
                    (OpCode::Matmul, vec![p, v], flags(false, false), vec![r]);
                self.m.ops.push(last);
                r
            }
            None => self.op(&format!("out{tag}"), OpCode::Matmul, vec![p, v], out_ty, flags(false, false)),
        }
    }

    /// Head `h` of `x` (its rows along H): a view of one row per sequence position.
    fn head_view(&mut self, what: &str, x: ValueId, h: u32) -> ValueId {
        let Some(&t) = self.m.ty(x) else { return x };
        let attrs: Attrs = [
            ("axis".to_string(), Attr::Str("height".into())),
            ("offset".to_string(), Attr::Int(i64::from(h))),
            ("size".to_string(), Attr::Int(1)),
            ("step".to_string(), Attr::Int(1)),
        ]
        .into_iter()
        .collect();
        self.op(&format!("head_{what}"), OpCode::InputView, vec![x], TensorType { h: 1, ..t }, attrs)
    }

    /// Appends the step `what` and returns its result.
    fn op(&mut self, what: &str, opcode: OpCode, operands: Vec<ValueId>, ty: TensorType, attrs: Attrs) -> ValueId {
        let r = self.m.add_value(ty);
        let name = format!("{}_{what}", self.sdpa.name);
        self.m.ops.push(Op { opcode, name, operands, results: vec![r], attrs, loc: self.sdpa.loc.clone() });
        r
    }

    /// `x` broadcast to `to` along every axis where it has extent 1 and `to` does not.
    fn broadcast(&mut self, what: &str, x: ValueId, to: TensorType) -> ValueId {
        let Some(&from) = self.m.ty(x) else { return x };
        let (f, t) = (dims(&from), dims(&to));
        let axes: Vec<usize> = (0..5).filter(|&a| f[a] == 1 && t[a] > 1).collect();
        if axes.is_empty() {
            return x;
        }
        let attrs: Attrs = [
            ("axes".to_string(), Attr::Array(axes.iter().map(|&a| Attr::Str(super::AXES[a].into())).collect())),
            ("sizes".to_string(), Attr::Array(axes.iter().map(|&a| Attr::Int(i64::from(t[a]))).collect())),
        ]
        .into_iter()
        .collect();
        self.op(what, OpCode::Broadcast, vec![x], TensorType { dtype: from.dtype, ..to }, attrs)
    }
}

fn dims(t: &TensorType) -> [u32; 5] {
    [t.n, t.c, t.d, t.h, t.w]
}

fn flags(lhs: bool, rhs: bool) -> Attrs {
    [("transpose_lhs".to_string(), Attr::Bool(lhs)), ("transpose_rhs".to_string(), Attr::Bool(rhs))]
        .into_iter()
        .collect()
}

fn kind(k: &str) -> Attrs {
    [("kind".to_string(), Attr::Str(k.into())), ("scale".to_string(), Attr::Float(1.0))].into_iter().collect()
}

fn scalar_scale(s: f64) -> Attrs {
    [("scale".to_string(), Attr::Float(s))].into_iter().collect()
}

/// The one value of `v` when an `anec.constant` of one element produces it.
fn constant_scalar(m: &Module, v: ValueId) -> Option<f64> {
    let op = m.producer(v).filter(|op| op.opcode == OpCode::Constant)?;
    let Some(Attr::Resource { name, .. }) = op.attr("value") else { return None };
    let blob: &Blob = m.resources.get(name)?;
    match blob.dtype {
        DType::F16 if blob.bytes.len() == 2 => Some(f64::from(f16::from_le_bytes([blob.bytes[0], blob.bytes[1]]))),
        DType::F32 if blob.bytes.len() == 4 => {
            Some(f64::from(f32::from_le_bytes([blob.bytes[0], blob.bytes[1], blob.bytes[2], blob.bytes[3]])))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Location, Port};

    /// `sdpa(q, q, q, scale, mask)` of 3 queries, 2 heads, head size 4; the scale a
    /// constant 0.5 or an input, the mask `3 x 1 x 3` (one per query row, shared by heads).
    fn sdpa(constant_scale: bool) -> Module {
        let mut m = Module::new("net");
        let port =
            |name: &str, value| Port { name: name.into(), value, layout: Default::default(), loc: Location::default() };
        let q = m.add_value(TensorType { n: 1, c: 3, d: 1, h: 2, w: 4, dtype: DType::F16 });
        let mask = m.add_value(TensorType { n: 1, c: 3, d: 1, h: 1, w: 3, dtype: DType::F16 });
        let scale = m.add_value(TensorType::nchw(1, 1, 1, 1, DType::F16));
        m.inputs.extend([port("q", q), port("mask", mask)]);
        if constant_scale {
            m.resources.insert(
                "s".into(),
                Blob { dtype: DType::F16, bytes: f16::from_f32(0.5).to_le_bytes().to_vec().into() },
            );
            let ty = TensorType::nchw(1, 1, 1, 1, DType::F16);
            let value = [("value".to_string(), Attr::Resource { name: "s".into(), ty })].into_iter().collect();
            m.ops.push(Op {
                opcode: OpCode::Constant,
                name: "s".into(),
                operands: vec![],
                results: vec![scale],
                attrs: value,
                loc: Location::default(),
            });
        } else {
            m.inputs.push(port("scale", scale));
        }
        let r = m.add_value(TensorType { n: 1, c: 3, d: 1, h: 2, w: 4, dtype: DType::F16 });
        let attrs = [("subtract_max".to_string(), Attr::Bool(true))].into_iter().collect();
        let operands = vec![q, q, q, scale, mask];
        m.ops.push(Op {
            opcode: OpCode::Sdpa,
            name: "attn".into(),
            operands,
            results: vec![r],
            attrs,
            loc: Location::default(),
        });
        m.outputs.push(port("attn@output", r));
        m
    }

    #[test]
    fn attention_becomes_matmul_scale_mask_softmax_matmul_per_head() {
        let m = expand(&sdpa(true)).unwrap();
        assert_eq!(anec_ir::verify_module(&m), Ok(()));
        let ops: Vec<(OpCode, &str)> = m.ops.iter().map(|o| (o.opcode, o.name.as_str())).collect();
        use OpCode::*;
        // q = k = v: viewed once per head; each head's chain; the heads concatenated.
        let head = |h: &'static str| {
            [
                (Matmul, "scores"),
                (GainOffsetControl, "scaled"),
                (ScaledElementwise, "masked"),
                (Softmax, "weights"),
                (Matmul, "out"),
            ]
            .map(|(op, step)| (op, format!("attn_{step}_h{h}")))
        };
        let mut want: Vec<(OpCode, String)> =
            vec![(Constant, "s".into()), (InputView, "attn_head_q0".into()), (InputView, "attn_head_q1".into())];
        want.extend(head("0"));
        want.extend(head("1"));
        want.push((Concat, "attn".into()));
        assert_eq!(ops.iter().map(|(o, n)| (*o, n.to_string())).collect::<Vec<_>>(), want);
        // Each head's scores are 3 queries x 3 keys; the result is the sdpa's own value.
        let scores = m.ty(m.ops[3].results[0]).unwrap();
        assert_eq!((scores.c, scores.h, scores.w), (3, 1, 3));
        assert_eq!(m.ops[4].attr("scale"), Some(&Attr::Float(0.5)));
        assert_eq!(m.ops.last().unwrap().results, sdpa(true).ops[1].results);
    }

    #[test]
    fn a_runtime_scale_is_a_broadcast_multiply() {
        let m = expand(&sdpa(false)).unwrap();
        assert_eq!(anec_ir::verify_module(&m), Ok(()));
        let kinds: Vec<OpCode> = m.ops.iter().map(|o| o.opcode).collect();
        assert_eq!(&kinds[2..5], [OpCode::Matmul, OpCode::Broadcast, OpCode::ScaledElementwise]);
        assert!(expand(&Module::new("empty")).is_none());
    }
}
