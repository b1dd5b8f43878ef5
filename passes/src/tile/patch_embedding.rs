//! A patch embedding: a convolution over non-overlapping `K x K` patches (kernel = stride,
//! no dilation, one group) whose kernel exceeds the chip's limit (H13: 13 taps), as a ViT
//! writes it (16 x 16, stride 16), or a framing 1-D convolution (silero-vad's STFT: 256
//! taps, stride 256, 128 padded on each side). Padding becomes an `anec.pad` and the
//! rows and columns no patch covers are cut off (`anec.input_view`) first. The engine has no such kernel and no
//! stride above 3, so the patches are moved into channels and contracted by a 1 x 1
//! convolution (a matmul with the weights):
//!
//! per input channel `c` of `x` (`C x H x W`, `H = Ph·K`, `W = Pw·K`; `i, j` a patch's
//! row and column, `u, v` a pixel's inside it):
//! 1. the channel, `1 x (i,u) x (j,v)`, reshaped to `i x 1 x (u,j,v)` (a view: rows of
//!    `W` and of `K·W` elements are whole 64-byte units, `W` a multiple of 32);
//! 2. C and W exchanged: `(u,j,v) x 1 x i` (one NE pass);
//! 3. reshaped to `(u,j) x v x i` (a view), H and C exchanged: `v x (u,j) x i` (a copy
//!    reading with permuted strides), reshaped to `(v,u) x j x i` (a view);
//!
//! then the pieces concatenated along C (`(c,v,u) x j x i`), the 1 x 1 convolution with
//! the weights reordered to `O x (c,v,u)` (`O x j x i`), and H and W exchanged into the
//! convolution's result (`O x Ph x Pw`). The bias and activation after the convolution
//! are untouched. Every step is an op the chip runs; `tests/tests/networks.rs` checks the
//! program against the reference in the simulator.

use crate::rewrite::{self, Emitter};
use crate::target::Target;
use anec_ir::{Attr, Attrs, Blob, DType, Module, Op, OpCode, TensorType, ValueId};

/// Elements in a row that is a whole number of 64-byte units (fp16).
const ROW_UNIT: u32 = 32;

/// How a patch embedding is rewritten: the patch side and the convolution's padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Patches {
    kh: u32,
    kw: u32,
    /// `[top, bottom, left, right]`.
    pad: [u32; 4],
}

/// The patches when `op` is a patch embedding the chip cannot run directly and this
/// rewrite can.
fn patches(m: &Module, op: &Op, target: Target) -> Option<Patches> {
    if op.opcode != OpCode::Conv {
        return None;
    }
    let ints = |name: &str| op.attr(name).and_then(Attr::as_int_array);
    let (kernel, stride, pad) = (ints("kernel")?, ints("stride")?, ints("pad")?);
    let groups = op.attr("groups").and_then(Attr::as_int).unwrap_or(1);
    let (&[kh, kw], &[sy, sx]) = (kernel.as_slice(), stride.as_slice()) else { return None };
    let (kh, kw) = (u32::try_from(kh).ok()?, u32::try_from(kw).ok()?);
    let pad: [u32; 4] = pad.iter().map(|&p| u32::try_from(p).ok()).collect::<Option<Vec<_>>>()?.try_into().ok()?;
    let max = target.limits().conv_kernel_width.value.max;
    let patchy = kh == u32::try_from(sy).ok()? && kw == u32::try_from(sx).ok()? && (kh > max || kw > max);
    let (x, r) = (m.ty(*op.operands.first()?)?, m.ty(*op.results.first()?)?);
    let (h, w) = (x.h.checked_add(pad[0])?.checked_add(pad[1])?, x.w.checked_add(pad[2])?.checked_add(pad[3])?);
    let whole = x.n == 1 && x.d == 1 && r.h == h / kh && r.w == w / kw && r.h > 0 && r.w > 0;
    let rows = (r.w * kw) % ROW_UNIT == 0 && x.dtype == DType::F16;
    let weights = weights(m, op).is_some();
    (patchy && whole && rows && weights && groups == 1).then_some(Patches { kh, kw, pad })
}

/// The convolution's weight blob, when its elements are fp16 or fp32.
fn weights<'m>(m: &'m Module, op: &Op) -> Option<&'m Blob> {
    let (name, _) = op.attr("weights")?.as_resource()?;
    m.resources.get(name).filter(|b| matches!(b.dtype, DType::F16 | DType::F32))
}

/// `m` with every patch embedding rewritten, or `None` when it has none.
pub fn expand(m: &Module, target: Target) -> Option<Module> {
    rewrite::each(m, "patch", |m, op| patches(m, op, target), |e, p| Steps(e).embed(p))
}

/// The ops replacing one convolution.
struct Steps<'e, 'a>(&'e mut Emitter<'a>);

impl Steps<'_, '_> {
    fn embed(&mut self, p: Patches) {
        let (Some(&x), Some(&r)) = (self.0.op.operands.first(), self.0.op.results.first()) else { return };
        let Some(&rt) = self.0.m.ty(r) else { return };
        let (kh, kw) = (p.kh, p.kw);
        let Some((x, t)) = self.whole_patches(x, p, (rt.h * kh, rt.w * kw)) else { return };
        let (ph, pw) = (t.h / kh, t.w / kw);
        let shaped = |c: u32, h: u32, w: u32| TensorType { c, h, w, ..t };
        let pieces: Vec<ValueId> = (0..t.c)
            .map(|c| {
                let channel = self.0.input_view(x, "channel", c, 1, shaped(1, t.h, t.w));
                let rows = self.0.push(OpCode::Reshape, Attrs::new(), vec![channel], shaped(ph, 1, kh * t.w), None);
                let swapped = self.transpose(rows, [0, 4, 2, 3, 1], shaped(kh * t.w, 1, ph));
                let split = self.0.push(OpCode::Reshape, Attrs::new(), vec![swapped], shaped(kh * pw, kw, ph), None);
                let moved = self.transpose(split, [0, 3, 2, 1, 4], shaped(kw, kh * pw, ph));
                self.0.push(OpCode::Reshape, Attrs::new(), vec![moved], shaped(kw * kh, pw, ph), None)
            })
            .collect();
        let depth = kw * kh * t.c;
        let cat = match pieces.as_slice() {
            [one] => *one,
            _ => {
                let axis = [("axis".to_string(), Attr::Str("channel".into()))].into_iter().collect();
                self.0.push(OpCode::Concat, axis, pieces.clone(), shaped(depth, pw, ph), None)
            }
        };
        let conv = self.conv(cat, (kh, kw), depth, TensorType { h: pw, w: ph, ..rt });
        self.0.transpose(conv, [0, 1, 2, 4, 3], rt, Some(r));
    }

    /// `x` padded as the convolution pads it and cut to the `h x w` its patches cover.
    fn whole_patches(&mut self, x: ValueId, p: Patches, (h, w): (u32, u32)) -> Option<(ValueId, TensorType)> {
        let mut cur = (x, *self.0.m.ty(x)?);
        if p.pad.iter().any(|&v| v > 0) {
            let [top, bottom, left, right] = p.pad.map(i64::from);
            let pads = Attr::Array([0, 0, 0, 0, 0, 0, top, bottom, left, right].map(Attr::Int).to_vec());
            let attrs = [
                ("mode".to_string(), Attr::Str("constant".into())),
                ("pad".to_string(), pads),
                ("value".to_string(), Attr::Float(0.0)),
            ];
            let t = cur.1;
            let ty = TensorType { h: t.h + p.pad[0] + p.pad[1], w: t.w + p.pad[2] + p.pad[3], ..t };
            cur = (self.0.push(OpCode::Pad, attrs.into_iter().collect(), vec![cur.0], ty, None), ty);
        }
        for (axis, size) in [("height", h), ("width", w)] {
            let t = cur.1;
            if (axis == "height" && t.h == size) || (axis == "width" && t.w == size) {
                continue;
            }
            let ty = if axis == "height" { TensorType { h: size, ..t } } else { TensorType { w: size, ..t } };
            cur = (self.0.input_view(cur.0, axis, 0, size, ty), ty);
        }
        Some(cur)
    }

    /// The 1 x 1 convolution over `(c, v, u)`, its weights reordered from `O x C x kh x kw`.
    fn conv(&mut self, x: ValueId, (kh, kw): (u32, u32), depth: u32, ty: TensorType) -> ValueId {
        let mut attrs = self.0.op.attrs.clone();
        let ints = |v: &[i64]| Attr::Array(v.iter().map(|&i| Attr::Int(i)).collect());
        attrs.insert("kernel".into(), ints(&[1, 1]));
        attrs.insert("stride".into(), ints(&[1, 1]));
        attrs.insert("pad".into(), ints(&[0, 0, 0, 0]));
        if let Some((key, wty, blob)) = self.reordered(kh, kw, depth, ty.c) {
            self.0.m.resources.insert(key.clone(), blob);
            attrs.insert("weights".into(), Attr::Resource { name: key, ty: wty });
        }
        self.0.push(OpCode::Conv, attrs, vec![x], ty, None)
    }

    /// The weights as `O x (c, v, u) x 1 x 1`, under a key of their own.
    fn reordered(&self, kh: u32, kw: u32, depth: u32, o: u32) -> Option<(String, TensorType, Blob)> {
        let blob = weights(self.0.m, self.0.op)?;
        let size = blob.dtype.size();
        let (kh, kw) = (kh as usize, kw as usize);
        let cin = depth as usize / (kh * kw);
        let mut bytes = Vec::with_capacity(blob.bytes.len());
        for oc in 0..o as usize {
            for c in 0..cin {
                for v in 0..kw {
                    for u in 0..kh {
                        let at = (((oc * cin + c) * kh + u) * kw + v) * size;
                        bytes.extend_from_slice(blob.bytes.get(at..at + size)?);
                    }
                }
            }
        }
        let key = format!("{}.patch_weights", self.0.op.name);
        Some((key, TensorType::nchw(o, depth, 1, 1, blob.dtype), Blob { dtype: blob.dtype, bytes: bytes.into() }))
    }

    fn transpose(&mut self, x: ValueId, p: [usize; 5], ty: TensorType) -> ValueId {
        self.0.transpose(x, p, ty, None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use anec_ir::{Location, Port};

    fn h13g() -> Target {
        crate::target::lookup("h13g").unwrap()
    }

    /// `x (1 x c x h x w) -> conv k x k, stride s -> y`, weights `o*c*k*k` counting up.
    fn conv(c: u32, (h, w): (u32, u32), k: u32, s: u32, o: u32) -> Module {
        let mut m = Module::new("net");
        let x = m.add_value(TensorType::nchw(1, c, h, w, DType::F16));
        let loc = Location::default();
        m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: loc.clone() });
        let out = |n: u32| (n - k) / s + 1;
        let y = m.add_value(TensorType::nchw(1, o, out(h), out(w), DType::F16));
        let wty = TensorType::nchw(o, c, k, k, DType::F16);
        let bytes = (0..wty.elements()).flat_map(|i| half::f16::from_f32(i as f32).to_le_bytes()).collect();
        m.resources.insert("p.weights".into(), Blob { dtype: DType::F16, bytes });
        let ints = |v: &[i64]| Attr::Array(v.iter().map(|&i| Attr::Int(i)).collect());
        let attrs = [
            ("kernel", ints(&[k.into(), k.into()])),
            ("stride", ints(&[s.into(), s.into()])),
            ("pad", ints(&[0, 0, 0, 0])),
            ("groups", Attr::Int(1)),
            ("weights", Attr::Resource { name: "p.weights".into(), ty: wty }),
            ("kernel_group_reuse", Attr::Bool(false)),
        ];
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        m.ops.push(Op {
            opcode: OpCode::Conv,
            name: "p".into(),
            operands: vec![x],
            results: vec![y],
            attrs,
            loc: loc.clone(),
        });
        m.outputs.push(Port { name: "y@output".into(), value: y, layout: Default::default(), loc });
        m
    }

    #[test]
    fn a_16_by_16_patch_embedding_becomes_moves_per_channel_and_a_1x1_convolution() {
        let m = conv(2, (32, 64), 16, 16, 3);
        let out = expand(&m, h13g()).unwrap();
        anec_ir::verify::verify_module(&out).unwrap();
        let ops: Vec<String> = out.ops.iter().map(|op| op.opcode.to_string()).collect();
        let per_channel =
            ["anec.input_view", "anec.reshape", "anec.transpose", "anec.reshape", "anec.transpose", "anec.reshape"];
        let expected: Vec<String> = per_channel
            .iter()
            .chain(&per_channel)
            .chain(&["anec.concat", "anec.conv", "anec.transpose"])
            .map(ToString::to_string)
            .collect();
        assert_eq!(ops, expected);
        // The last op writes the convolution's result; the 1 x 1 convolution reads
        // (c, v, u) = 2 x 16 x 16 channels of 4 x 2 (j x i).
        assert_eq!(out.ops.last().unwrap().results, m.ops[0].results);
        let conv = &out.ops[out.ops.len() - 2];
        assert_eq!(out.ty(conv.operands[0]).unwrap().c, 512);
        assert_eq!((out.ty(conv.results[0]).unwrap().h, out.ty(conv.results[0]).unwrap().w), (4, 2));
    }

    #[test]
    fn the_weights_are_reordered_to_channel_column_row() {
        let m = conv(2, (32, 32), 16, 16, 3);
        let out = expand(&m, h13g()).unwrap();
        let conv = &out.ops[out.ops.len() - 2];
        let (key, ty) = conv.attr("weights").and_then(Attr::as_resource).unwrap();
        assert_eq!((ty.n, ty.c, ty.h, ty.w), (3, 512, 1, 1));
        let blob = &out.resources[key];
        let at = |i: usize| half::f16::from_le_bytes([blob.bytes[2 * i], blob.bytes[2 * i + 1]]).to_f32();
        // Output 1, channel 1, column v = 2, row u = 5 holds W[1][1][5][2] (weights count up).
        let (o, c, v, u) = (1, 1, 2, 5);
        let original = ((o * 2 + c) * 16 + u) * 16 + v;
        assert_eq!(at(((o * 2 + c) * 16 + v) * 16 + u), original as f32);
    }

    #[test]
    fn kernels_the_chip_runs_overlapping_kernels_and_unaligned_widths_are_left_alone() {
        for m in [conv(2, (32, 32), 3, 3, 3), conv(2, (32, 32), 16, 8, 3), conv(2, (48, 48), 16, 16, 3)] {
            assert!(expand(&m, h13g()).is_none());
        }
    }
}
