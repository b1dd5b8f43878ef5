//! Refusals of the multi-task recipes (reduction, softmax, layer_norm): a shape or axis
//! set without a plan is refused naming the layer and the reason, never emitted wrong.
//! The plans themselves are checked word for word against Apple's programs by
//! `tests/tests/oracles.rs` and run by the simulator's record tests.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::buffers;
use crate::generation::{BarOrder, CURRENT};
use anec_ir::{DType, Location, Port, TensorType};

/// `input x -> op -> output` with `attrs`.
fn single(opcode: OpCode, x: TensorType, out: TensorType, attrs: Vec<(&str, Attr)>) -> Module {
    let mut m = Module::new("net");
    let xv = m.add_value(x);
    m.inputs.push(Port { name: "x".into(), value: xv, layout: Default::default(), loc: Location::default() });
    let r = m.add_value(out);
    let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    m.ops.push(Op {
        opcode,
        name: "layer".into(),
        operands: vec![xv],
        results: vec![r],
        attrs,
        loc: Location::default(),
    });
    m.outputs.push(Port { name: "y@output".into(), value: r, layout: Default::default(), loc: Location::default() });
    m
}

fn names(v: &[&str]) -> Attr {
    Attr::Array(v.iter().map(|s| Attr::Str((*s).into())).collect())
}

/// The error of lowering the module's one op.
fn refusal(m: &Module) -> String {
    let groups = vec![anec_passes::Group { head: 0, goc: None, neuron: None }];
    let bufs = buffers::bind(m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
    let e = lower_group(m, &groups[0], &bufs, &mut ConstSection::default(), &CURRENT).unwrap_err();
    e.to_string()
}

fn f16(c: u32, h: u32, w: u32) -> TensorType {
    TensorType::nchw(1, c, h, w, DType::F16)
}

#[test]
fn a_reduction_over_height_alone_is_refused_naming_the_axes() {
    let attrs = vec![("kind", Attr::Str("sum".into())), ("axes", names(&["height"]))];
    let e = refusal(&single(OpCode::Reduction, f16(8, 4, 6), f16(8, 1, 6), attrs));
    assert!(e.contains("layer 'layer'") && e.contains("a reduction over height of a 8x4x6 tensor"), "{e}");
}

#[test]
fn a_softmax_larger_than_l2_is_refused_with_the_bytes_it_needs() {
    let e = refusal(&single(
        OpCode::Softmax,
        f16(64, 64, 128),
        f16(64, 64, 128),
        vec![("axis", Attr::Str("width".into()))],
    ));
    assert!(e.contains("softmax needs 0x") && e.contains("more than the 0x100000"), "{e}");
    let e = refusal(&single(OpCode::Softmax, f16(8, 4, 4), f16(8, 4, 4), vec![("axis", Attr::Str("height".into()))]));
    assert!(e.contains("softmax over height of a 1x8x4x4 tensor"), "{e}");
}

#[test]
fn a_layer_norm_with_gamma_or_over_other_axes_is_refused() {
    let base = vec![("axes", names(&["height"])), ("epsilon", Attr::Float(1e-5)), ("groups", Attr::Int(1))];
    let e = refusal(&single(OpCode::LayerNorm, f16(8, 4, 4), f16(8, 4, 4), base));
    assert!(e.contains("layer_norm over these axes of a 1x8x4x4 tensor"), "{e}");
    let mut m = single(OpCode::LayerNorm, f16(1, 1, 8), f16(1, 1, 8), vec![]);
    m.resources.insert("g".into(), anec_ir::Blob { dtype: DType::F16, bytes: vec![0; 16] });
    let gamma = Attr::Resource { name: "g".into(), ty: f16(1, 1, 8) };
    let attrs = [("axes", names(&["width"])), ("epsilon", Attr::Float(1e-5)), ("gamma", gamma)];
    m.ops[0].attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let e = refusal(&m);
    assert!(e.contains("layer_norm with gamma or beta"), "{e}");
}
