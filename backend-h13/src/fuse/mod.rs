//! What H13 runs in one task: the fusion rules of this chip, one per file, applied in
//! the order of [`RULES`] by `anec_passes::fuse::group_with`.
//!
//! | rule | joins | evidence |
//! |---|---|---|
//! | `conv_gain_offset` (`anec_passes::fuse::ConvGainOffset`) | a gain/offset (scalar or per channel) after a convolution | v4.2.1 Conv + GOC layers; `conv_*_bias1` records |
//! | [`conv_activation`] | an activation the convolution's NE applies: native ReLU, or a table at the head of each fp16 kernel chunk | `conv_*_relu`, `chain_pair_mm_relu`, `chain_pair_mm_gelu` |
//! | [`swapped_write`] | a channel<->width transpose of a one-group convolution's (or a packed reduction's) result, written transposed | every `linear` record's compute task; `reduce_*` rows |
//! | [`swapped_relu`] | a ReLU of a result written transposed | `chain_pair_mm_relu` |
//! | [`planar_relu`] | a ReLU of a planar-engine elementwise op (PE.Cfg bit 5) | `chain_add_relu_c512` |
//! | [`matmul_post_scale`] | a scalar gain/offset of a runtime matmul's product (its PostScale and bias) | `chain_attn_*`: the scores' 1/8 |
//!
//! Every op that joins no group starts one; the recipes of `lower/` lower each group.

pub mod conv_activation;
pub mod matmul_post_scale;
pub mod planar_relu;
pub mod swapped_relu;
pub mod swapped_write;

use anec_ir::{Attr, Module, Op, OpCode};
use anec_passes::fuse::{group_with, ConvGainOffset, Fused, Group, Rule};

/// H13's rules, first match wins.
pub const RULES: [&dyn Rule; 6] = [
    &ConvGainOffset,
    &conv_activation::ConvActivation,
    &swapped_write::SwappedWrite,
    &swapped_relu::SwappedRelu,
    &planar_relu::PlanarRelu,
    &matmul_post_scale::MatmulPostScale,
];

/// The groups of `m` as H13 runs them, with the rule behind each follower.
pub fn fused(m: &Module) -> Fused {
    group_with(m, &RULES)
}

/// The groups of `m` as H13 runs them.
pub fn groups(m: &Module) -> Vec<Group> {
    fused(m).groups
}

/// The group's head op.
fn head<'m>(m: &'m Module, g: &Group) -> Option<&'m Op> {
    m.ops.get(g.head)
}

/// Nothing fused into the group yet.
fn bare(g: &Group) -> bool {
    g.goc.is_none() && g.neuron.is_none() && g.swap.is_none()
}

/// A ReLU.
fn is_relu(op: &Op) -> bool {
    op.opcode == OpCode::Neuron && op.attr("mode").and_then(Attr::as_str) == Some("relu")
}

#[cfg(test)]
pub(crate) mod tests {
    //! Small modules for the rules' before/after tests.
    #![allow(clippy::unwrap_used)]

    use anec_ir::{Attr, Blob, DType, Location, Module, Op, OpCode, Port, TensorType, ValueId};

    /// A module under construction: each op reads the previous result unless told.
    pub struct Net {
        pub m: Module,
        pub last: ValueId,
    }

    impl Net {
        pub fn new(x: TensorType) -> Net {
            let mut m = Module::new("net");
            let last = m.add_value(x);
            m.inputs.push(Port { name: "x".into(), value: last, layout: Default::default(), loc: Location::default() });
            Net { m, last }
        }

        /// `name = opcode(last)` of type `ty` with `attrs`.
        pub fn op(&mut self, opcode: OpCode, name: &str, ty: TensorType, attrs: Vec<(&str, Attr)>) -> &mut Net {
            let r = self.m.add_value(ty);
            let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let op = Op {
                opcode,
                name: name.into(),
                operands: vec![self.last],
                results: vec![r],
                attrs,
                loc: Location::default(),
            };
            self.m.ops.push(op);
            self.last = r;
            self
        }

        /// A 1x1 convolution to `ty` with fp16 weights.
        pub fn conv(&mut self, name: &str, ty: TensorType) -> &mut Net {
            let cin = self.m.ty(self.last).unwrap().c;
            let wty = TensorType::nchw(ty.c, cin, 1, 1, DType::F16);
            let blob = format!("{name}.weights");
            self.m
                .resources
                .insert(blob.clone(), Blob { dtype: DType::F16, bytes: vec![0; wty.elements() as usize * 2].into() });
            let ints = |v: &[i64]| Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect());
            self.op(
                OpCode::Conv,
                name,
                ty,
                vec![
                    ("kernel", ints(&[1, 1])),
                    ("stride", ints(&[1, 1])),
                    ("pad", ints(&[0, 0, 0, 0])),
                    ("groups", Attr::Int(1)),
                    ("weights", Attr::Resource { name: blob, ty: wty }),
                    ("kernel_group_reuse", Attr::Bool(false)),
                ],
            )
        }

        /// An activation of `mode`.
        pub fn neuron(&mut self, name: &str, mode: &str) -> &mut Net {
            let ty = *self.m.ty(self.last).unwrap();
            self.op(OpCode::Neuron, name, ty, vec![("mode", Attr::Str(mode.into()))])
        }

        /// The C<->W transpose of the last result.
        pub fn swap(&mut self, name: &str) -> &mut Net {
            let t = *self.m.ty(self.last).unwrap();
            let perm = Attr::Array(
                ["batch", "width", "depth", "height", "channel"].iter().map(|s| Attr::Str((*s).into())).collect(),
            );
            self.op(OpCode::Transpose, name, TensorType { c: t.w, w: t.c, ..t }, vec![("perm", perm)])
        }

        /// The module, its last result an output.
        pub fn done(&mut self) -> Module {
            let port = Port {
                name: "y@output".into(),
                value: self.last,
                layout: Default::default(),
                loc: Location::default(),
            };
            self.m.outputs.push(port);
            self.m.clone()
        }
    }

    pub fn f16(c: u32, h: u32, w: u32) -> TensorType {
        TensorType::nchw(1, c, h, w, DType::F16)
    }

    /// The H13 grouping of `m`, as `anec_passes::fuse::describe` prints it.
    pub fn after(m: &Module) -> String {
        anec_passes::fuse::describe(m, &super::fused(m))
    }
}
