//! Refusals of the multi-task recipes (reduction, softmax, layer_norm): a shape or axis
//! set without a plan is refused naming the layer and the reason, never emitted wrong;
//! and the grouping of a task with the channel<->width transpose it writes through.
//! The plans themselves are checked word for word against Apple's programs by
//! `tests/tests/oracles.rs` and run by the simulator's record tests.

#![allow(clippy::unwrap_used, clippy::panic)]

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
    let groups = vec![anec_passes::Group { head: 0, goc: None, neuron: None, swap: None }];
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
    m.resources.insert("g".into(), anec_ir::Blob { dtype: DType::F16, bytes: vec![0; 16].into() });
    let gamma = Attr::Resource { name: "g".into(), ty: f16(1, 1, 8) };
    let attrs = [("axes", names(&["width"])), ("epsilon", Attr::Float(1e-5)), ("gamma", gamma)];
    m.ops[0].attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let e = refusal(&m);
    assert!(e.contains("layer_norm with gamma or beta"), "{e}");
}

/// `x (1 x 4 x 1 x 1 x 3) -> 1x1 conv to 2 channels -> transpose C <-> W -> output`: the
/// linear layer's convolution and its swap back.
fn conv_then_swap() -> Module {
    let mut m = single(OpCode::Conv, f16(4, 1, 3), f16(2, 1, 3), vec![]);
    m.resources.insert("w".into(), anec_ir::Blob { dtype: DType::F16, bytes: vec![0; 16].into() });
    let ints = |v: &[i64]| Attr::Array(v.iter().map(|&i| Attr::Int(i)).collect());
    let attrs = [
        ("weights", Attr::Resource { name: "w".into(), ty: TensorType::nchw(2, 4, 1, 1, DType::F16) }),
        ("kernel", ints(&[1, 1])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[0, 0, 0, 0])),
        ("groups", Attr::Int(1)),
    ];
    m.ops[0].attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let conv_out = m.ops[0].results[0];
    let r = m.add_value(f16(3, 1, 2));
    let perm = names(&["batch", "width", "depth", "height", "channel"]);
    m.ops.push(Op {
        opcode: OpCode::Transpose,
        name: "swap".into(),
        operands: vec![conv_out],
        results: vec![r],
        attrs: [("perm".to_string(), perm)].into_iter().collect(),
        loc: Location::default(),
    });
    m.outputs[0].value = r;
    m
}

#[test]
fn a_convolution_writes_through_the_swap_after_it() {
    let m = conv_then_swap();
    let groups = crate::fuse::groups(&m);
    assert_eq!(groups, vec![anec_passes::Group { head: 0, goc: None, neuron: None, swap: Some(1) }]);
    let bufs = buffers::bind(&m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
    let tasks = lower_group(&m, &groups[0], &bufs, &mut ConstSection::default(), &CURRENT).unwrap();
    let [t] = tasks.as_slice() else { panic!("{tasks:?}") };
    // The destination is the swapped tensor; the Common block states the convolution's.
    assert!(t.transposed_write);
    assert_eq!((t.dest.ty.c, t.dest.ty.w), (3, 2));
    assert_eq!((t.out_view().c, t.out_view().w), (2, 3));
    // Without the convolution, the swap is a pass writing transposed.
    let alone = lowered_alone(&m, 1);
    assert!(alone.transposed_write && alone.engine == Engine::NePass, "{alone:?}");
}

/// The one task of group `{head}` lowered alone.
fn lowered_alone(m: &Module, head: usize) -> Task {
    let groups = vec![
        anec_passes::Group { head: 0, goc: None, neuron: None, swap: None },
        anec_passes::Group { head, goc: None, neuron: None, swap: None },
    ];
    let bufs = buffers::bind(m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
    let mut tasks = lower_group(m, &groups[1], &bufs, &mut ConstSection::default(), &CURRENT).unwrap();
    tasks.remove(0)
}

/// A ReLU of the swapped result joins the convolution's task: the NE applies it before
/// the transposed write.
#[test]
fn a_relu_after_the_swap_joins_the_convolution() {
    let mut m = conv_then_swap();
    let swapped = m.ops[1].results[0];
    let r = m.add_value(f16(3, 1, 2));
    let mode = [("mode".to_string(), Attr::Str("relu".into()))].into_iter().collect();
    m.ops.push(Op {
        opcode: OpCode::Neuron,
        name: "relu".into(),
        operands: vec![swapped],
        results: vec![r],
        attrs: mode,
        loc: Location::default(),
    });
    m.outputs[0].value = r;
    let groups = crate::fuse::groups(&m);
    assert_eq!(groups, vec![anec_passes::Group { head: 0, goc: None, neuron: Some(2), swap: Some(1) }]);
    assert_eq!(groups[0].last(), 2);
    let bufs = buffers::bind(&m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
    let tasks = lower_group(&m, &groups[0], &bufs, &mut ConstSection::default(), &CURRENT).unwrap();
    assert!(tasks.iter().all(|t| t.transposed_write && t.nonlinear == Nonlinear::Relu), "{tasks:?}");
}

/// The cast of an 8-bit input: a gain/offset with scale 1 and bias 0 from a u8 (or i8)
/// operand to an fp16 result is the planar engine's identity reading the 8-bit surface,
/// a batch of 2 included (the planar engine loops over it).
#[test]
fn a_converting_gain_offset_is_a_planar_identity_over_the_eight_bit_surface() {
    for (n, dtype) in [(1, DType::U8), (2, DType::I8)] {
        let attrs = vec![("scale", Attr::Float(1.0)), ("bias", Attr::Float(0.0))];
        let m = single(
            OpCode::GainOffsetControl,
            TensorType::nchw(n, 3, 4, 40, dtype),
            TensorType::nchw(n, 3, 4, 40, DType::F16),
            attrs,
        );
        let groups = vec![anec_passes::Group { head: 0, goc: None, neuron: None, swap: None }];
        let bufs =
            buffers::bind(&m, &groups, BarOrder::SortedByName, &Default::default(), &Default::default()).unwrap();
        let tasks = lower_group(&m, &groups[0], &bufs, &mut ConstSection::default(), &CURRENT).unwrap();
        let [t] = tasks.as_slice() else { panic!("one task: {tasks:?}") };
        assert_eq!((t.engine, t.sources[0].ty.dtype, t.dest.ty.dtype), (Engine::Pe, dtype, DType::F16));
        let pe = t.pe.unwrap();
        assert_eq!((pe.mode, pe.bias, pe.scale, pe.negate), (0, 0, 0x3C00, false));
    }
}
