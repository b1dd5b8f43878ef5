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
        other => hidden_sample(other),
    }
}

/// A float attribute.
pub(crate) fn fl(v: f64) -> Attr {
    Attr::Float(v)
}

/// A bool attribute.
pub(crate) fn b(v: bool) -> Attr {
    Attr::Bool(v)
}

/// An integer attribute.
pub(crate) fn int(v: i64) -> Attr {
    Attr::Int(v)
}

/// An array of axis names.
pub(crate) fn axes(v: &[&str]) -> Attr {
    Attr::Array(v.iter().map(|x| s(x)).collect())
}

/// The three rearrangement factors.
fn factors(fx: i64, fy: i64, fz: i64) -> Vec<(&'static str, Attr)> {
    vec![("factor_x", int(fx)), ("factor_y", int(fy)), ("factor_z", int(fz))]
}

/// Two inputs, one op, one output.
fn binary(opcode: OpCode, a: TensorType, b: TensorType, out: TensorType, attrs: Vec<(&str, Attr)>) -> Module {
    let (mut m, ins) = with_inputs(&[a, b]);
    let r = add_op(&mut m, opcode, "layer", &ins, &[out], attrs);
    outputs(&mut m, &r);
    m
}

/// A valid one-op module for a hidden-layer opcode (`verify/hidden_table.rs`).
fn hidden_sample(opcode: OpCode) -> Module {
    let x = f16(1, 4, 8, 8);
    let sorting = |mut a: Vec<(&'static str, Attr)>| {
        a.extend([("sort_dimension", s("width")), ("vector_dimension", s("channel")), ("indices", b(false))]);
        a
    };
    match opcode {
        OpCode::Sort => unary(opcode, x, x, sorting(vec![("direction", s("descending")), ("sort_indices", b(false))])),
        OpCode::TopK => {
            let a = sorting(vec![("kind", s("max")), ("k", int(3)), ("sort_indices", b(true))]);
            unary(opcode, x, f16(1, 4, 8, 3), a)
        }
        OpCode::ArgMinMax => {
            let a = vec![("mode", s("spatial_arg_max")), ("kernel", ints(&[2, 2])), ("pad", ints(&[0, 0, 1, 1, 1, 1]))];
            unary(opcode, x, f16(1, 4, 9, 9), a)
        }
        OpCode::GlobalArgMinMax => {
            unary(opcode, x, f16(1, 4, 8, 1), vec![("kind", s("max")), ("dimension", s("width"))])
        }
        OpCode::PixelShuffle => unary(opcode, f16(1, 8, 3, 5), f16(1, 2, 6, 10), factors(2, 2, 1)),
        OpCode::PixelUnshuffle => unary(opcode, f16(1, 2, 6, 10), f16(1, 8, 3, 5), factors(2, 2, 1)),
        OpCode::ChannelToSpace => unary(opcode, f16(1, 8, 3, 5), f16(1, 4, 3, 10), factors(2, 1, 1)),
        OpCode::SpaceToChannel => unary(opcode, f16(1, 2, 4, 6), f16(1, 12, 2, 2), factors(3, 2, 1)),
        OpCode::SpaceToBatch => unary(opcode, f16(1, 3, 4, 4), f16(4, 3, 2, 2), factors(2, 2, 1)),
        OpCode::BatchToSpace => unary(opcode, f16(4, 3, 2, 2), f16(1, 3, 4, 4), factors(2, 2, 1)),
        OpCode::MinMaxNorm => unary(opcode, x, x, vec![("dimension", s("width")), ("epsilon", fl(0.0009765625))]),
        OpCode::Lrn => {
            let a = vec![("kernel_channel", int(3)), ("alpha", fl(0.0001)), ("beta", fl(0.75)), ("bias", fl(1.0))];
            unary(opcode, x, x, a)
        }
        OpCode::InstanceNorm => instance_norm(),
        OpCode::CrossCorrelation => binary(opcode, f16(1, 1, 8, 8), f16(1, 1, 3, 3), f16(1, 1, 6, 6), vec![]),
        OpCode::CrossProduct => binary(opcode, f16(1, 3, 1, 5), f16(1, 3, 1, 5), f16(1, 3, 1, 5), vec![]),
        OpCode::FurthestPointSampling => {
            let a = vec![("centroid_count", int(4)), ("distance_metric", s("l2"))];
            unary(opcode, f16(1, 3, 1, 16), f16(1, 3, 1, 4), a)
        }
        OpCode::RadiusSearch => {
            binary(opcode, f16(1, 3, 1, 4), f16(1, 3, 1, 16), f16(1, 16, 1, 4), vec![("radius", fl(0.5))])
        }
        OpCode::CostVolume => {
            let a = vec![("disparity_direction", s("left")), ("disparity_range", int(4))];
            binary(opcode, f16(1, 8, 4, 16), f16(1, 8, 4, 16), f16(1, 4, 4, 16), a)
        }
        OpCode::DynamicSlice => unary(opcode, x, f16(1, 4, 4, 2), dynamic_slice_attrs()),
        OpCode::Flatten => unary(opcode, f16(1, 2, 3, 4), f16(1, 24, 1, 1), vec![]),
        OpCode::Dropout => unary(opcode, x, x, vec![("rate", fl(0.0))]),
        OpCode::Pad => {
            let a = vec![("mode", s("reflect")), ("pad", ints(&[0, 0, 0, 0, 0, 0, 1, 1, 2, 2]))];
            unary(opcode, f16(1, 3, 4, 4), f16(1, 3, 6, 8), a)
        }
        OpCode::Gather => binary(opcode, x, f16(1, 1, 1, 3), f16(1, 4, 8, 3), vec![("axis", s("width"))]),
        OpCode::Resize => {
            let a = vec![("mode", s("bilinear")), ("ratio_y", fl(2.0)), ("ratio_x", fl(2.0))];
            unary(opcode, f16(1, 3, 4, 4), f16(1, 3, 8, 8), a)
        }
        OpCode::CropResize => {
            let roi = t5([1, 2, 4, 1, 1], DType::F16);
            let a = vec![("height", int(5)), ("width", int(5)), ("box_coordinate_mode", s("corners_height_first"))];
            binary(opcode, f16(1, 3, 16, 16), roi, f16(2, 3, 5, 5), a)
        }
        OpCode::AffineTransform => {
            let a = vec![("height", int(4)), ("width", int(4)), ("sampling_mode", s("bilinear"))];
            binary(opcode, f16(1, 3, 8, 8), f16(1, 6, 1, 1), f16(1, 3, 4, 4), a)
        }
        OpCode::Resample => binary(opcode, f16(1, 3, 8, 8), f16(1, 2, 5, 6), f16(1, 3, 5, 6), vec![]),
        OpCode::Random => random(),
        OpCode::RingBufferWriter => {
            let a = vec![("axis", s("width")), ("circular", b(true))];
            binary(opcode, f16(1, 4, 1, 16), f16(1, 4, 1, 2), f16(1, 4, 1, 16), a)
        }
        OpCode::Nms => {
            let a = vec![("output", s("boxes")), ("iou_threshold", fl(0.5)), ("max_boxes", int(5))];
            binary(opcode, f16(1, 4, 1, 10), f16(1, 2, 1, 10), f16(1, 4, 1, 5), a)
        }
        other => panic!("{other} has no hidden-layer sample"),
    }
}

fn dynamic_slice_attrs() -> Vec<(&'static str, Attr)> {
    vec![
        ("axis_order", axes(&["height", "width"])),
        ("sizes", ints(&[4, 2])),
        ("offsets", ints(&[1, 3])),
        ("coordinate_info", s("constant")),
        ("padding_info", s("none")),
    ]
}

fn instance_norm() -> Module {
    let (mut m, ins) = with_inputs(&[f16(1, 4, 8, 8)]);
    let gamma = blob(&mut m, "in.gamma", f16(1, 4, 1, 1));
    let beta = blob(&mut m, "in.beta", f16(1, 4, 1, 1));
    let attrs = vec![("axes", axes(&["height", "width"])), ("epsilon", fl(1e-5)), ("gamma", gamma), ("beta", beta)];
    let r = add_op(&mut m, OpCode::InstanceNorm, "in", &ins, &[f16(1, 4, 8, 8)], attrs);
    outputs(&mut m, &r);
    m
}

/// A random op (no operands) as the only output; the module input is unused.
fn random() -> Module {
    let (mut m, _) = with_inputs(&[f16(1, 1, 2, 2)]);
    let attrs = vec![("low", fl(0.0)), ("high", fl(1.0)), ("seed", int(7))];
    let r = add_op(&mut m, OpCode::Random, "rand", &[], &[f16(1, 1, 4, 4)], attrs);
    outputs(&mut m, &r);
    m
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
