//! Hand-computed cases for each anec op, run through `run_module`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::reference::{run_module, RefError};
use crate::tensor::Tensor;
use anec_ir::{Attr, Attrs, Blob, DType, Module, Op, OpCode, Port, TensorType};
use half::f16;
use std::collections::BTreeMap;

fn ty(d: [u32; 5]) -> TensorType {
    TensorType { n: d[0], c: d[1], d: d[2], h: d[3], w: d[4], dtype: DType::F16 }
}

/// A module with inputs `ins` (name, dims) and nothing else yet.
fn module(ins: &[(&str, [u32; 5])]) -> Module {
    let mut m = Module::new("net");
    for (name, d) in ins {
        let v = m.add_value(ty(*d));
        m.inputs.push(Port { name: (*name).into(), value: v, layout: Default::default(), loc: Default::default() });
    }
    m
}

/// Appends an op reading values `operands` and makes its result the output `out@output`.
fn op(m: &mut Module, opcode: OpCode, operands: &[u32], out: TensorType, attrs: Vec<(&str, Attr)>) {
    let r = m.add_value(out);
    let attrs: Attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    m.ops.push(Op {
        opcode,
        name: "op".into(),
        operands: operands.iter().map(|&i| anec_ir::ValueId(i)).collect(),
        results: vec![r],
        attrs,
        loc: Default::default(),
    });
    m.outputs = vec![Port { name: "out@output".into(), value: r, layout: Default::default(), loc: Default::default() }];
}

fn res(m: &mut Module, key: &str, d: [u32; 5], dtype: DType, values: &[f32]) -> Attr {
    let bytes = match dtype {
        DType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DType::F16 => values.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect(),
        DType::U8 => values.iter().map(|&v| v as u8).collect(),
        DType::I8 => values.iter().map(|&v| v as i8 as u8).collect(),
    };
    m.resources.insert(key.into(), Blob { dtype, bytes });
    Attr::Resource { name: key.into(), ty: TensorType { dtype, ..ty(d) } }
}

fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

fn names(v: &[&str]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Str(x.into())).collect())
}

fn run(m: &Module, ins: &[(&str, &[usize], &[f32])]) -> Result<Tensor, RefError> {
    let map: BTreeMap<String, Tensor> =
        ins.iter().map(|(n, s, d)| ((*n).to_string(), Tensor { shape: s.to_vec(), data: d.to_vec() })).collect();
    run_module(m, &map).map(|mut o| o.remove("out").expect("output `out`"))
}

#[test]
fn conv_with_padding_and_groups() {
    // Two groups of one channel, 2x2 kernels, pad 1 on the right and bottom only.
    let mut m = module(&[("x", [1, 2, 1, 2, 2])]);
    let w = res(&mut m, "op.weights", [2, 1, 1, 2, 2], DType::I8, &[1., 1., 1., 1., 1., 0., 0., -1.]);
    let attrs = vec![
        ("kernel", ints(&[2, 2])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[0, 1, 0, 1])),
        ("groups", Attr::Int(2)),
        ("weights", w),
        ("kernel_group_reuse", Attr::Bool(false)),
    ];
    op(&mut m, OpCode::Conv, &[0], ty([1, 2, 1, 2, 2]), attrs);
    // Channel 0 [[1, 2], [3, 4]] with an all-ones kernel: window sums 10, 6, 7, 4.
    // Channel 1 [[5, 6], [7, 8]] with [[1, 0], [0, -1]]: 5 - 8, 6 - 0, 7 - 0, 8 - 0.
    let y = run(&m, &[("x", &[1, 2, 2, 2], &[1., 2., 3., 4., 5., 6., 7., 8.])]).unwrap();
    assert_eq!(y.shape, vec![1, 2, 2, 2]);
    assert_eq!(y.data, vec![10., 6., 7., 4., -3., 6., 7., 8.]);
}

#[test]
fn gain_offset_scalar_and_per_channel() {
    let mut m = module(&[("x", [1, 2, 1, 1, 2])]);
    let sd = res(&mut m, "op.scale_data", [1, 2, 1, 1, 1], DType::F32, &[2., -1.]);
    let bd = res(&mut m, "op.bias_data", [1, 2, 1, 1, 1], DType::F16, &[0.5, 1.0]);
    let attrs = vec![("scale", Attr::Float(3.0)), ("scale_data", sd), ("bias_data", bd), ("bias", Attr::Float(1.0))];
    op(&mut m, OpCode::GainOffsetControl, &[0], ty([1, 2, 1, 1, 2]), attrs);
    // y = x * 3 * sd[c] + 1 + bd[c].
    let y = run(&m, &[("x", &[1, 2, 1, 2], &[1., 2., 1., 2.])]).unwrap();
    assert_eq!(y.data, vec![7.5, 13.5, -1., -4.]);
}

#[test]
fn scaled_elementwise_and_u8_store() {
    let mut m = module(&[("a", [1, 1, 1, 1, 4]), ("b", [1, 1, 1, 1, 4])]);
    let attrs = vec![("kind", Attr::Str("sub".into())), ("scale", Attr::Float(0.5))];
    op(&mut m, OpCode::ScaledElementwise, &[0, 1], TensorType { dtype: DType::U8, ..ty([1, 1, 1, 1, 4]) }, attrs);
    // (a - b) / 2 = [2.5, -1, 600, 3.5] stored as u8: 2 (ties to even), 0, 255, 4.
    let y = run(&m, &[("a", &[1, 1, 1, 4], &[6., 0., 1200., 7.]), ("b", &[1, 1, 1, 4], &[1., 2., 0., 0.])]).unwrap();
    assert_eq!(y.data, vec![2., 0., 255., 4.]);
}

#[test]
fn matmul_rows_on_channels() {
    // lhs: 2 rows (C) x 3 columns (W) = [[1, 2, 3], [4, 5, 6]]; rhs given transposed:
    // 2 rows x 3 columns = [[1, 0, 1], [0, 1, 0]], so rhs^T is 3 x 2.
    let mut m = module(&[("a", [1, 2, 1, 1, 3]), ("b", [1, 2, 1, 1, 3])]);
    let attrs = vec![("transpose_lhs", Attr::Bool(false)), ("transpose_rhs", Attr::Bool(true))];
    op(&mut m, OpCode::Matmul, &[0, 1], ty([1, 2, 1, 1, 2]), attrs);
    let y =
        run(&m, &[("a", &[1, 2, 1, 3], &[1., 2., 3., 4., 5., 6.]), ("b", &[1, 2, 1, 3], &[1., 0., 1., 0., 1., 0.])])
            .unwrap();
    // [[1+3, 2], [4+6, 5]].
    assert_eq!(y.data, vec![4., 2., 10., 5.]);
}

#[test]
fn sdpa_equal_keys_average_the_values() {
    // Two keys with equal scores: each query gets the mean of the two value rows.
    let mut m =
        module(&[("q", [1, 1, 1, 1, 2]), ("k", [1, 2, 1, 1, 2]), ("v", [1, 2, 1, 1, 2]), ("s", [1, 1, 1, 1, 1])]);
    op(&mut m, OpCode::Sdpa, &[0, 1, 2, 3], ty([1, 1, 1, 1, 2]), vec![("subtract_max", Attr::Bool(true))]);
    let y = run(
        &m,
        &[
            ("q", &[1, 1, 1, 2], &[1., 2.]),
            ("k", &[1, 2, 1, 2], &[1., 1., 1., 1.]),
            ("v", &[1, 2, 1, 2], &[2., 4., 6., 8.]),
            ("s", &[1, 1, 1, 1], &[0.5]),
        ],
    )
    .unwrap();
    assert_eq!(y.data, vec![4., 6.]);
}

#[test]
fn sdpa_mask_selects_one_key() {
    let mut m = module(&[
        ("q", [1, 1, 1, 1, 1]),
        ("k", [1, 2, 1, 1, 1]),
        ("v", [1, 2, 1, 1, 1]),
        ("s", [1, 1, 1, 1, 1]),
        ("mask", [1, 1, 1, 1, 2]),
    ]);
    op(&mut m, OpCode::Sdpa, &[0, 1, 2, 3, 4], ty([1, 1, 1, 1, 1]), vec![("subtract_max", Attr::Bool(true))]);
    let y = run(
        &m,
        &[
            ("q", &[1, 1, 1, 1], &[1.]),
            ("k", &[1, 2, 1, 1], &[1., 1.]),
            ("v", &[1, 2, 1, 1], &[3., 5.]),
            ("s", &[1, 1, 1, 1], &[1.]),
            ("mask", &[1, 1, 1, 2], &[-1e30, 0.]),
        ],
    )
    .unwrap();
    assert_eq!(y.data, vec![5.]);
}

#[test]
fn layer_norm_over_channels_with_gamma_beta() {
    let mut m = module(&[("x", [1, 2, 1, 1, 2])]);
    let gamma = res(&mut m, "op.gamma", [1, 2, 1, 1, 1], DType::F16, &[2., 3.]);
    let beta = res(&mut m, "op.beta", [1, 2, 1, 1, 1], DType::F16, &[0., 1.]);
    let attrs = vec![
        ("axes", names(&["channel"])),
        ("epsilon", Attr::Float(0.0)),
        ("groups", Attr::Int(1)),
        ("gamma", gamma),
        ("beta", beta),
    ];
    op(&mut m, OpCode::LayerNorm, &[0], ty([1, 2, 1, 1, 2]), attrs);
    // Column w=0 holds [1, 3] and w=1 holds [5, 9]: both normalize to [-1, 1].
    let y = run(&m, &[("x", &[1, 2, 1, 2], &[1., 5., 3., 9.])]).unwrap();
    assert_eq!(y.data, vec![-2., -2., 4., 4.]);
}

#[test]
fn grouped_layer_norm_uses_group_statistics() {
    let mut m = module(&[("x", [1, 4, 1, 1, 1])]);
    let attrs = vec![("axes", names(&["channel"])), ("epsilon", Attr::Float(0.0)), ("groups", Attr::Int(2))];
    op(&mut m, OpCode::LayerNorm, &[0], ty([1, 4, 1, 1, 1]), attrs);
    // Groups [0, 2] and [10, 30]: each normalizes to [-1, 1].
    let y = run(&m, &[("x", &[1, 4, 1, 1], &[0., 2., 10., 30.])]).unwrap();
    assert_eq!(y.data, vec![-1., 1., -1., 1.]);
}

#[test]
fn avg_pooling_excluding_padding() {
    let mut m = module(&[("x", [1, 1, 1, 2, 2])]);
    let attrs = vec![
        ("kind", Attr::Str("avg".into())),
        ("kernel", ints(&[2, 2])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[1, 0, 1, 0])),
        ("exclude_padding", Attr::Bool(true)),
    ];
    op(&mut m, OpCode::Pooling, &[0], ty([1, 1, 1, 2, 2]), attrs);
    // Windows at (-1,-1): [1]; (-1,0): [1, 2]; (0,-1): [1, 3]; (0,0): all four.
    let y = run(&m, &[("x", &[1, 1, 2, 2], &[1., 2., 3., 4.])]).unwrap();
    assert_eq!(y.data, vec![1., 1.5, 2., 2.5]);
}

#[test]
fn data_movement_ops() {
    // input_view: channels 1 and 3 of 4.
    let mut m = module(&[("x", [1, 4, 1, 1, 1])]);
    let attrs = vec![
        ("axis", Attr::Str("channel".into())),
        ("offset", Attr::Int(1)),
        ("size", Attr::Int(2)),
        ("step", Attr::Int(2)),
    ];
    op(&mut m, OpCode::InputView, &[0], ty([1, 2, 1, 1, 1]), attrs);
    assert_eq!(run(&m, &[("x", &[1, 4, 1, 1], &[1., 2., 3., 4.])]).unwrap().data, vec![2., 4.]);

    // broadcast: width 1 -> 3.
    let mut m = module(&[("x", [1, 2, 1, 1, 1])]);
    op(&mut m, OpCode::Broadcast, &[0], ty([1, 2, 1, 1, 3]), vec![("axes", names(&["width"])), ("sizes", ints(&[3]))]);
    assert_eq!(run(&m, &[("x", &[1, 2, 1, 1], &[1., 2.])]).unwrap().data, vec![1., 1., 1., 2., 2., 2.]);

    // concat on width, transpose channel <-> width, reduction max over width.
    let mut m = module(&[("a", [1, 2, 1, 1, 1]), ("b", [1, 2, 1, 1, 2])]);
    op(&mut m, OpCode::Concat, &[0, 1], ty([1, 2, 1, 1, 3]), vec![("axis", Attr::Str("width".into()))]);
    let y = run(&m, &[("a", &[1, 2, 1, 1], &[1., 2.]), ("b", &[1, 2, 1, 2], &[3., 4., 5., 6.])]).unwrap();
    assert_eq!(y.data, vec![1., 3., 4., 2., 5., 6.]);

    let mut m = module(&[("x", [1, 2, 1, 1, 3])]);
    let perm = names(&["batch", "width", "depth", "height", "channel"]);
    op(&mut m, OpCode::Transpose, &[0], ty([1, 3, 1, 1, 2]), vec![("perm", perm)]);
    assert_eq!(run(&m, &[("x", &[1, 2, 1, 3], &[1., 2., 3., 4., 5., 6.])]).unwrap().data, vec![1., 4., 2., 5., 3., 6.]);

    let mut m = module(&[("x", [1, 2, 1, 1, 3])]);
    op(
        &mut m,
        OpCode::Reduction,
        &[0],
        ty([1, 2, 1, 1, 1]),
        vec![("kind", Attr::Str("max".into())), ("axes", names(&["width"]))],
    );
    assert_eq!(run(&m, &[("x", &[1, 2, 1, 3], &[1., 9., 3., 4., 5., 6.])]).unwrap().data, vec![9., 6.]);
}

#[test]
fn constant_softmax_and_reshape() {
    let mut m = module(&[]);
    let v = res(&mut m, "op.value", [1, 2, 1, 1, 1], DType::F16, &[0., 2f32.ln()]);
    op(&mut m, OpCode::Constant, &[], ty([1, 2, 1, 1, 1]), vec![("value", v)]);
    let c = m.ops[0].results[0];
    let r = m.add_value(ty([1, 2, 1, 1, 1]));
    m.ops.push(Op {
        opcode: OpCode::Softmax,
        name: "sm".into(),
        operands: vec![c],
        results: vec![r],
        attrs: [("axis".to_string(), Attr::Str("channel".into()))].into_iter().collect(),
        loc: Default::default(),
    });
    m.outputs[0].value = r;
    // softmax([0, ln 2]) = [1/3, 2/3] (ln 2 rounded to fp16 first).
    let y = run(&m, &[]).unwrap();
    let e = f16::from_f32(2f32.ln()).to_f32().exp();
    assert!((y.data[0] - 1. / (1. + e)).abs() < 1e-6);
}

#[test]
fn input_errors_list_the_inputs() {
    let mut m = module(&[("image", [1, 3, 1, 1, 1])]);
    op(&mut m, OpCode::Neuron, &[0], ty([1, 3, 1, 1, 1]), vec![("mode", Attr::Str("relu".into()))]);
    let e = run(&m, &[]).unwrap_err().to_string();
    assert!(e.contains("missing input `image`") && e.contains("image [1, 3, 1, 1] (f16)"), "{e}");
    let e = run(&m, &[("image", &[1, 1, 1, 3], &[0.; 3])]).unwrap_err().to_string();
    assert!(e.contains("has shape [1, 1, 1, 3]"), "{e}");
    let e = run(&m, &[("image", &[1, 3, 1, 1], &[0.; 3]), ("other", &[1], &[0.])]).unwrap_err().to_string();
    assert!(e.contains("unknown input `other`"), "{e}");
    let y = run(&m, &[("image", &[1, 3, 1, 1], &[-1., 0.5, 2.])]).unwrap();
    assert_eq!(y.data, vec![0., 0.5, 2.]);
}

#[test]
fn op_errors_name_the_op() {
    let mut m = module(&[("x", [1, 1, 1, 1, 1])]);
    op(&mut m, OpCode::Neuron, &[0], ty([1, 1, 1, 1, 1]), vec![("mode", Attr::Str("degamma".into()))]);
    let e = run(&m, &[("x", &[1, 1, 1, 1], &[1.])]).unwrap_err();
    assert!(
        matches!(&e, RefError::ModuleOp { opcode, name, reason }
        if opcode == "anec.neuron" && name == "op" && reason.contains("degamma")),
        "{e}"
    );
    let mut m = module(&[("x", [1, 1, 1, 1, 1])]);
    let w = Attr::Resource { name: "missing".into(), ty: ty([1, 1, 1, 1, 1]) };
    let attrs = vec![
        ("kernel", ints(&[1, 1])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[0, 0, 0, 0])),
        ("groups", Attr::Int(1)),
        ("weights", w),
        ("kernel_group_reuse", Attr::Bool(false)),
    ];
    op(&mut m, OpCode::Conv, &[0], ty([1, 1, 1, 1, 1]), attrs);
    let e = run(&m, &[("x", &[1, 1, 1, 1], &[1.])]).unwrap_err().to_string();
    assert!(e.contains("resource `missing`"), "{e}");
}
