//! Test helpers: small hand-built modules, one valid sample per opcode with realistic
//! attributes from `docs/ops.md`.

#![allow(clippy::panic)]

use crate::attr::{Attr, Attrs};
use crate::module::{Blob, Layout, Location, Module, Op, Port, ValueId};
use crate::opcode::OpCode;
use crate::types::{DType, TensorType};

/// A 4-D f16 type.
pub(crate) fn f16(n: u32, c: u32, h: u32, w: u32) -> TensorType {
    TensorType::nchw(n, c, h, w, DType::F16)
}

/// A 5-D type.
pub(crate) fn t5(dims: [u32; 5], dtype: DType) -> TensorType {
    let [n, c, d, h, w] = dims;
    TensorType { n, c, d, h, w, dtype }
}

/// A location in `net.plist`.
pub(crate) fn loc(line: u32) -> Location {
    Location { file: "net.plist".into(), line, col: 7 }
}

/// An integer array attribute.
pub(crate) fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

/// A string attribute.
pub(crate) fn s(v: &str) -> Attr {
    Attr::Str(v.into())
}

/// A module named `net` with one input per type, named `in0`, `in1`, ...
pub(crate) fn with_inputs(tys: &[TensorType]) -> (Module, Vec<ValueId>) {
    let mut m = Module::new("net");
    let mut ids = Vec::new();
    for (i, ty) in tys.iter().enumerate() {
        let id = m.add_value(*ty);
        let layout = Layout { row_stride: Some(64), ..Layout::default() };
        m.inputs.push(Port { name: format!("in{i}"), value: id, layout, loc: loc(1 + i as u32) });
        ids.push(id);
    }
    (m, ids)
}

/// Appends an op and returns its result ids.
pub(crate) fn add_op(
    m: &mut Module,
    opcode: OpCode,
    name: &str,
    operands: &[ValueId],
    results: &[TensorType],
    attrs: Vec<(&str, Attr)>,
) -> Vec<ValueId> {
    let results: Vec<ValueId> = results.iter().map(|t| m.add_value(*t)).collect();
    let attrs: Attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let line = 10 + m.ops.len() as u32;
    m.ops.push(Op {
        opcode,
        name: name.into(),
        operands: operands.to_vec(),
        results: results.clone(),
        attrs,
        loc: loc(line),
    });
    results
}

/// Adds a blob `<layer>.<attr>` of type `ty` with deterministic bytes; returns the
/// `dense_resource` attribute referring to it.
pub(crate) fn blob(m: &mut Module, key: &str, ty: TensorType) -> Attr {
    let len = ty.elements() as usize * ty.dtype.size();
    let bytes = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    m.resources.insert(key.into(), Blob { dtype: ty.dtype, bytes });
    Attr::Resource { name: key.into(), ty }
}

/// Marks values as module outputs `out0`, `out1`, ...
pub(crate) fn outputs(m: &mut Module, ids: &[ValueId]) {
    for (i, &id) in ids.iter().enumerate() {
        let layout = Layout { interleave: Some(1), ..Layout::default() };
        m.outputs.push(Port { name: format!("out{i}@output"), value: id, layout, loc: loc(90) });
    }
}

/// A valid one-op module for `opcode`.
pub(crate) fn sample(opcode: OpCode) -> Module {
    match opcode {
        OpCode::Conv => conv(),
        OpCode::Neuron => unary(opcode, f16(1, 4, 8, 8), f16(1, 4, 8, 8), neuron_attrs()),
        OpCode::GainOffsetControl => gain_offset_control(),
        OpCode::ScaledElementwise => scaled_elementwise(),
        OpCode::Concat => concat(),
        OpCode::Reshape => unary(opcode, f16(1, 4, 2, 8), f16(1, 8, 2, 4), vec![]),
        OpCode::InputView => unary(opcode, f16(1, 8, 4, 4), f16(1, 3, 4, 4), view_attrs()),
        OpCode::Broadcast => unary(opcode, f16(1, 1, 4, 1), f16(1, 3, 4, 5), bcast_attrs()),
        OpCode::Matmul => matmul(),
        OpCode::Sdpa => sdpa(),
        OpCode::LayerNorm => layer_norm(),
        OpCode::Pooling => unary(opcode, f16(1, 8, 28, 28), f16(1, 8, 14, 14), pool_attrs()),
        OpCode::Softmax => unary(opcode, f16(1, 4, 8, 8), f16(1, 4, 8, 8), vec![("axis", s("channel"))]),
        OpCode::Transpose => unary(opcode, f16(1, 4, 2, 3), f16(1, 3, 2, 4), transpose_attrs()),
        OpCode::Reduction => unary(opcode, f16(1, 4, 8, 8), f16(1, 1, 8, 8), reduction_attrs()),
        OpCode::Constant => constant(),
    }
}

/// One input, one op, one output.
fn unary(opcode: OpCode, inp: TensorType, out: TensorType, attrs: Vec<(&str, Attr)>) -> Module {
    let (mut m, ins) = with_inputs(&[inp]);
    let r = add_op(&mut m, opcode, "layer", &ins, &[out], attrs);
    outputs(&mut m, &r);
    m
}

fn pool_attrs() -> Vec<(&'static str, Attr)> {
    vec![("kind", s("max")), ("kernel", ints(&[2, 2])), ("stride", ints(&[2, 2])), ("pad", ints(&[0, 0, 0, 0]))]
}

fn transpose_attrs() -> Vec<(&'static str, Attr)> {
    let perm = ["batch", "width", "depth", "height", "channel"].map(s).to_vec();
    vec![("perm", Attr::Array(perm))]
}

fn reduction_attrs() -> Vec<(&'static str, Attr)> {
    vec![("kind", s("mean")), ("axes", Attr::Array(vec![s("channel")]))]
}

/// A scalar constant as the only output (the module's input is unused).
fn constant() -> Module {
    let (mut m, _) = with_inputs(&[f16(1, 4, 2, 2)]);
    let value = blob(&mut m, "k.value", f16(1, 1, 1, 1));
    let r = add_op(&mut m, OpCode::Constant, "k", &[], &[f16(1, 1, 1, 1)], vec![("value", value)]);
    outputs(&mut m, &r);
    m
}

fn neuron_attrs() -> Vec<(&'static str, Attr)> {
    vec![("mode", s("leaky_relu")), ("alpha", Attr::Float(0.1))]
}

fn view_attrs() -> Vec<(&'static str, Attr)> {
    let a = ("axis", s("channel"));
    vec![a, ("offset", Attr::Int(1)), ("size", Attr::Int(3)), ("step", Attr::Int(2))]
}

fn bcast_attrs() -> Vec<(&'static str, Attr)> {
    vec![("axes", Attr::Array(vec![s("channel"), s("width")])), ("sizes", ints(&[3, 5]))]
}

fn conv() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 3, 8, 8)]);
    let w = blob(&mut m, "my_layer.weights", f16(4, 3, 3, 3));
    let attrs = vec![
        ("kernel", ints(&[3, 3])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[1, 1, 1, 1])),
        ("groups", Attr::Int(1)),
        ("weights", w),
        ("kernel_group_reuse", Attr::Bool(false)),
    ];
    let r = add_op(&mut m, OpCode::Conv, "my_layer", &ins, &[f16(1, 4, 8, 8)], attrs);
    outputs(&mut m, &r);
    m
}

fn gain_offset_control() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 4, 1, 8)]);
    let ty = TensorType::nchw(1, 4, 1, 1, DType::F32);
    let bias = blob(&mut m, "goc.bias_data", ty);
    let attrs = vec![("scale", Attr::Float(0.5)), ("bias_data", bias)];
    let r = add_op(&mut m, OpCode::GainOffsetControl, "goc", &ins, &[f16(1, 4, 1, 8)], attrs);
    outputs(&mut m, &r);
    m
}

fn scaled_elementwise() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 4, 2, 2), f16(1, 4, 2, 2)]);
    let attrs = vec![("kind", s("add")), ("scale", Attr::Float(1.0))];
    let r = add_op(&mut m, OpCode::ScaledElementwise, "add", &ins, &[f16(1, 4, 2, 2)], attrs);
    outputs(&mut m, &r);
    m
}

fn concat() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 2, 4, 4), f16(1, 3, 4, 4)]);
    let attrs = vec![("axis", s("channel"))];
    let r = add_op(&mut m, OpCode::Concat, "cat", &ins, &[f16(1, 5, 4, 4)], attrs);
    outputs(&mut m, &r);
    m
}

fn matmul() -> Module {
    let lhs = t5([1, 4, 1, 2, 8], DType::F16);
    let rhs = t5([1, 8, 1, 2, 6], DType::F16);
    let (mut m, ins) = with_inputs(&[lhs, rhs]);
    let attrs = vec![("transpose_lhs", Attr::Bool(false)), ("transpose_rhs", Attr::Bool(false))];
    let out = t5([1, 4, 1, 2, 6], DType::F16);
    let r = add_op(&mut m, OpCode::Matmul, "mm", &ins, &[out], attrs);
    outputs(&mut m, &r);
    m
}

fn sdpa() -> Module {
    let q = t5([1, 5, 2, 2, 16], DType::F16);
    let kv = t5([1, 7, 2, 2, 16], DType::F16);
    let scale = t5([1, 1, 1, 1, 1], DType::F16);
    let mask = t5([1, 5, 1, 1, 7], DType::F16);
    let (mut m, ins) = with_inputs(&[q, kv, kv, scale, mask]);
    let attrs = vec![("subtract_max", Attr::Bool(true))];
    let r = add_op(&mut m, OpCode::Sdpa, "attn", &ins, &[q], attrs);
    outputs(&mut m, &r);
    m
}

fn layer_norm() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 8, 2, 4)]);
    let gamma = blob(&mut m, "ln.gamma", f16(1, 8, 1, 1));
    let beta = blob(&mut m, "ln.beta", f16(1, 8, 1, 1));
    let attrs = vec![
        ("axes", Attr::Array(vec![s("channel")])),
        ("epsilon", Attr::Float(1e-5)),
        ("groups", Attr::Int(2)),
        ("gamma", gamma),
        ("beta", beta),
    ];
    let r = add_op(&mut m, OpCode::LayerNorm, "ln", &ins, &[f16(1, 8, 2, 4)], attrs);
    outputs(&mut m, &r);
    m
}

/// Verifies and asserts success, showing the errors otherwise.
pub(crate) fn assert_valid(m: &Module) {
    if let Err(errs) = crate::verify::verify_module(m) {
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        panic!("expected a valid module, got:\n{}", text.join("\n"));
    }
}

/// Verifies and asserts that some error message contains `needle`.
pub(crate) fn assert_rejects(m: &Module, needle: &str) {
    match crate::verify::verify_module(m) {
        Ok(()) => panic!("expected an error containing {needle:?}, module verified"),
        Err(errs) => {
            let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
            assert!(text.iter().any(|t| t.contains(needle)), "no error contains {needle:?}:\n{}", text.join("\n"));
        }
    }
}

/// The first op of a module, mutably.
pub(crate) fn op0(m: &mut Module) -> &mut Op {
    &mut m.ops[0]
}

/// Changes the type of a value.
pub(crate) fn retype(m: &mut Module, id: ValueId, ty: TensorType) {
    m.values[id.index()].ty = ty;
}
