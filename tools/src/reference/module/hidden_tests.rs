//! Hand-computed cases for the hidden-layer ops, run through `run_module`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::reference::{run_module, RefError};
use crate::tensor::Tensor;
use anec_ir::{Attr, Attrs, Blob, DType, Module, Op, OpCode, Port, TensorType, ValueId};
use std::collections::BTreeMap;

fn ty(d: [u32; 5]) -> TensorType {
    TensorType { n: d[0], c: d[1], d: d[2], h: d[3], w: d[4], dtype: DType::F16 }
}

/// A verified one-op module over inputs of `ins` dims, result `out` named `out@output`.
fn one_op(opcode: OpCode, ins: &[[u32; 5]], out: [u32; 5], attrs: Vec<(&str, Attr)>) -> Module {
    let m = unverified(opcode, ins, out, attrs);
    assert_eq!(anec_ir::verify_module(&m), Ok(()), "the test module must verify");
    m
}

/// [`one_op`] without the verification.
fn unverified(opcode: OpCode, ins: &[[u32; 5]], out: [u32; 5], attrs: Vec<(&str, Attr)>) -> Module {
    let mut m = Module::new("net");
    for (i, d) in ins.iter().enumerate() {
        let v = m.add_value(ty(*d));
        m.inputs.push(Port { name: format!("x{i}"), value: v, layout: Default::default(), loc: Default::default() });
    }
    let r = m.add_value(ty(out));
    let attrs: Attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let operands = (0..ins.len() as u32).map(ValueId).collect();
    m.ops.push(Op { opcode, name: "op".into(), operands, results: vec![r], attrs, loc: Default::default() });
    m.outputs = vec![Port { name: "out@output".into(), value: r, layout: Default::default(), loc: Default::default() }];
    m
}

/// Runs `m` with inputs `x0`, `x1`, ... holding `data` (shapes from the module).
fn run(m: &Module, data: &[&[f32]]) -> Result<Vec<f32>, RefError> {
    let map: BTreeMap<String, Tensor> = m
        .inputs
        .iter()
        .zip(data)
        .map(|(p, d)| {
            let shape = m.ty(p.value).unwrap().dims().iter().map(|&x| x as usize).collect();
            (p.name.clone(), Tensor { shape, data: d.to_vec() })
        })
        .collect();
    run_module(m, &map).map(|mut o| o.remove("out").expect("output `out`").data)
}

fn s(v: &str) -> Attr {
    Attr::Str(v.into())
}

fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

fn factors(fx: i64, fy: i64) -> Vec<(&'static str, Attr)> {
    vec![("factor_x", Attr::Int(fx)), ("factor_y", Attr::Int(fy)), ("factor_z", Attr::Int(1))]
}

const EIGHT: [f32; 8] = [0., 1., 2., 3., 4., 5., 6., 7.];

#[test]
fn pixel_shuffle_is_channel_major_and_channel_to_space_offset_major() {
    let m = one_op(OpCode::PixelShuffle, &[[1, 8, 1, 1, 1]], [1, 2, 1, 2, 2], factors(2, 2));
    // Output channel c takes input channels 4c .. 4c+3 in (h, w) order.
    assert_eq!(run(&m, &[&EIGHT]).unwrap(), EIGHT.to_vec());
    let m = one_op(OpCode::ChannelToSpace, &[[1, 8, 1, 1, 1]], [1, 2, 1, 2, 2], factors(2, 2));
    // Output (c, i, j) takes input channel (2i + j) * 2 + c.
    assert_eq!(run(&m, &[&EIGHT]).unwrap(), vec![0., 2., 4., 6., 1., 3., 5., 7.]);
}

#[test]
fn unshuffle_inverts_shuffle() {
    let m = one_op(OpCode::PixelUnshuffle, &[[1, 1, 1, 1, 4]], [1, 2, 1, 1, 2], factors(2, 1));
    // Channel j holds the columns w*2 + j.
    assert_eq!(run(&m, &[&[0., 1., 2., 3.]]).unwrap(), vec![0., 2., 1., 3.]);
    let shuffle = one_op(OpCode::PixelShuffle, &[[1, 2, 1, 1, 2]], [1, 1, 1, 1, 4], factors(2, 1));
    assert_eq!(run(&shuffle, &[&[0., 2., 1., 3.]]).unwrap(), vec![0., 1., 2., 3.]);
    let s2c = one_op(OpCode::SpaceToChannel, &[[1, 2, 1, 1, 4]], [1, 4, 1, 1, 2], factors(2, 1));
    let c2s = one_op(OpCode::ChannelToSpace, &[[1, 4, 1, 1, 2]], [1, 2, 1, 1, 4], factors(2, 1));
    let packed = run(&s2c, &[&EIGHT]).unwrap();
    // Offset-major: channel (j * 2 + c) holds columns w*2 + j of channel c.
    assert_eq!(packed, vec![0., 2., 4., 6., 1., 3., 5., 7.]);
    assert_eq!(run(&c2s, &[&packed]).unwrap(), EIGHT.to_vec());
}

#[test]
fn space_to_batch_puts_offsets_outside_the_batch() {
    let m = one_op(OpCode::SpaceToBatch, &[[2, 1, 1, 2, 2]], [4, 1, 1, 2, 1], factors(2, 1));
    // Batch j*2 + n holds columns j of batch n: [0, 2], [4, 6], [1, 3], [5, 7].
    let y = run(&m, &[&EIGHT]).unwrap();
    assert_eq!(y, vec![0., 2., 4., 6., 1., 3., 5., 7.]);
    let back = one_op(OpCode::BatchToSpace, &[[4, 1, 1, 2, 1]], [2, 1, 1, 2, 2], factors(2, 1));
    assert_eq!(run(&back, &[&y]).unwrap(), EIGHT.to_vec());
}

#[test]
fn pad_modes() {
    let cases: [(&str, [f32; 7]); 4] = [
        ("reflect", [3., 2., 1., 2., 3., 2., 1.]),
        ("replicate", [1., 1., 1., 2., 3., 3., 3.]),
        ("symmetric", [2., 1., 1., 2., 3., 3., 2.]),
        ("constant", [9., 9., 1., 2., 3., 9., 9.]),
    ];
    for (mode, want) in cases {
        let attrs =
            vec![("mode", s(mode)), ("pad", ints(&[0, 0, 0, 0, 0, 0, 0, 0, 2, 2])), ("value", Attr::Float(9.0))];
        let m = one_op(OpCode::Pad, &[[1, 1, 1, 1, 3]], [1, 1, 1, 1, 7], attrs);
        assert_eq!(run(&m, &[&[1., 2., 3.]]).unwrap(), want.to_vec(), "{mode}");
    }
}

#[test]
fn gather_reads_positions_and_rejects_fractions() {
    let m = one_op(OpCode::Gather, &[[1, 1, 1, 1, 4], [1, 1, 1, 1, 3]], [1, 1, 1, 1, 3], vec![("axis", s("width"))]);
    assert_eq!(run(&m, &[&[10., 20., 30., 40.], &[3., 0., -1.]]).unwrap(), vec![40., 10., 40.]);
    let err = run(&m, &[&[10., 20., 30., 40.], &[1.5, 0., 0.]]).unwrap_err();
    assert!(err.to_string().contains("index 1.5 is not a position along an axis of 4"), "{err}");
}

#[test]
fn flatten_and_dropout_keep_the_data() {
    let m = one_op(OpCode::Flatten, &[[1, 2, 1, 2, 2]], [1, 8, 1, 1, 1], vec![]);
    assert_eq!(run(&m, &[&EIGHT]).unwrap(), EIGHT.to_vec());
    let m = one_op(OpCode::Dropout, &[[1, 2, 1, 2, 2]], [1, 2, 1, 2, 2], vec![("rate", Attr::Float(0.0))]);
    assert_eq!(run(&m, &[&EIGHT]).unwrap(), EIGHT.to_vec());
}

#[test]
fn instance_norm_with_gamma_and_beta() {
    let attrs = vec![("axes", Attr::Array(vec![s("width")])), ("epsilon", Attr::Float(0.0))];
    let mut m = unverified(OpCode::InstanceNorm, &[[1, 1, 1, 1, 2]], [1, 1, 1, 1, 2], attrs);
    for (name, v) in [("gamma", 2.0f32), ("beta", 1.0)] {
        let key = format!("op.{name}");
        m.resources.insert(key.clone(), Blob { dtype: DType::F32, bytes: v.to_le_bytes().to_vec().into() });
        let ty = TensorType { dtype: DType::F32, ..ty([1, 1, 1, 1, 1]) };
        m.ops[0].attrs.insert(name.into(), Attr::Resource { name: key, ty });
    }
    assert_eq!(anec_ir::verify_module(&m), Ok(()));
    // [1, 3]: mean 2, variance 1 -> [-1, 1] -> * 2 + 1.
    assert_eq!(run(&m, &[&[1., 3.]]).unwrap(), vec![-1., 3.]);
}

#[test]
fn lrn_and_min_max_norm() {
    let attrs = vec![
        ("kernel_channel", Attr::Int(2)),
        ("alpha", Attr::Float(2.0)),
        ("beta", Attr::Float(1.0)),
        ("bias", Attr::Float(1.0)),
    ];
    let m = one_op(OpCode::Lrn, &[[1, 2, 1, 1, 1]], [1, 2, 1, 1, 1], attrs);
    // Window of channel 0 is {0}: 1 / (1 + 1 * 1); of channel 1 is {0, 1}: 2 / (1 + 1 * 5).
    assert_eq!(run(&m, &[&[1., 2.]]).unwrap(), vec![0.5, 2.0 / 6.0]);
    let attrs = vec![("dimension", s("width")), ("epsilon", Attr::Float(0.0))];
    let m = one_op(OpCode::MinMaxNorm, &[[1, 1, 1, 2, 3]], [1, 1, 1, 2, 3], attrs);
    assert_eq!(run(&m, &[&[2., 4., 6., 1., 0., -1.]]).unwrap(), vec![0., 0.5, 1., 1., 0.5, 0.]);
}

fn sorting(extra: Vec<(&'static str, Attr)>, indices: bool) -> Vec<(&'static str, Attr)> {
    let mut a =
        vec![("sort_dimension", s("width")), ("vector_dimension", s("channel")), ("indices", Attr::Bool(indices))];
    a.extend(extra);
    a
}

#[test]
fn sort_values_and_indices_are_stable() {
    let x: &[f32] = &[3., 1., 4., 1.];
    let cases = [
        ("ascending", false, vec![1., 1., 3., 4.]),
        ("ascending", true, vec![1., 3., 0., 2.]),
        ("descending", false, vec![4., 3., 1., 1.]),
        ("descending", true, vec![2., 0., 1., 3.]),
    ];
    for (dir, indices, want) in cases {
        let a = sorting(vec![("direction", s(dir)), ("sort_indices", Attr::Bool(false))], indices);
        let m = one_op(OpCode::Sort, &[[1, 1, 1, 1, 4]], [1, 1, 1, 1, 4], a);
        assert_eq!(run(&m, &[x]).unwrap(), want, "{dir} {indices}");
    }
}

#[test]
fn top_k_by_rank_or_by_position() {
    let x: &[f32] = &[4., 1., 5., 2.];
    let cases = [
        ("max", true, false, vec![5., 4.]),
        ("max", true, true, vec![2., 0.]),
        ("max", false, false, vec![4., 5.]),
        ("max", false, true, vec![0., 2.]),
        ("min", true, false, vec![1., 2.]),
        ("min", true, true, vec![1., 3.]),
    ];
    for (kind, by_rank, indices, want) in cases {
        let extra = vec![("kind", s(kind)), ("k", Attr::Int(2)), ("sort_indices", Attr::Bool(by_rank))];
        let m = one_op(OpCode::TopK, &[[1, 1, 1, 1, 4]], [1, 1, 1, 1, 2], sorting(extra, indices));
        assert_eq!(run(&m, &[x]).unwrap(), want, "{kind} {by_rank} {indices}");
    }
}

#[test]
fn global_arg_min_max_over_one_axis() {
    let x: &[f32] = &[1., 5., 3., 4., 2., 6.];
    let m = one_op(
        OpCode::GlobalArgMinMax,
        &[[1, 1, 1, 2, 3]],
        [1, 1, 1, 2, 1],
        vec![("kind", s("max")), ("dimension", s("width"))],
    );
    assert_eq!(run(&m, &[x]).unwrap(), vec![1., 2.]);
    let m = one_op(
        OpCode::GlobalArgMinMax,
        &[[1, 1, 1, 2, 3]],
        [1, 1, 1, 1, 3],
        vec![("kind", s("min")), ("dimension", s("height"))],
    );
    assert_eq!(run(&m, &[x]).unwrap(), vec![0., 1., 0.]);
}

#[test]
fn arg_min_max_window_offsets() {
    let x: &[f32] = &[1., 4., 3., 2.];
    let window = |mode: &str, pad: &[i64]| vec![("mode", s(mode)), ("kernel", ints(&[2, 2])), ("pad", ints(pad))];
    let m = one_op(OpCode::ArgMinMax, &[[1, 1, 1, 2, 2]], [1, 1, 1, 1, 1], window("spatial_arg_max", &[0; 6]));
    assert_eq!(run(&m, &[x]).unwrap(), vec![1.]);
    let m = one_op(OpCode::ArgMinMax, &[[1, 1, 1, 2, 2]], [1, 1, 1, 1, 1], window("spatial_arg_min", &[0; 6]));
    assert_eq!(run(&m, &[x]).unwrap(), vec![0.]);
    // Left pad 1: the first window sees column 0 at kx = 1 (max 3 at ky = 1 -> offset 3).
    let pad = [0, 0, 0, 0, 1, 0];
    let m = one_op(OpCode::ArgMinMax, &[[1, 1, 1, 2, 2]], [1, 1, 1, 1, 2], window("spatial_arg_max", &pad));
    assert_eq!(run(&m, &[x]).unwrap(), vec![3., 1.]);
    let attrs = vec![("mode", s("channel_arg_max")), ("kernel", ints(&[1, 1])), ("pad", ints(&[0; 6]))];
    let m = one_op(OpCode::ArgMinMax, &[[1, 3, 1, 1, 2]], [1, 1, 1, 1, 2], attrs);
    assert_eq!(run(&m, &[&[1., 9., 7., 0., 3., 2.]]).unwrap(), vec![1., 0.]);
}

#[test]
fn unimplemented_ops_are_named_errors() {
    let attrs = vec![("mode", s("bilinear")), ("ratio_y", Attr::Float(2.0)), ("ratio_x", Attr::Float(2.0))];
    let m = one_op(OpCode::Resize, &[[1, 1, 1, 1, 1]], [1, 1, 1, 2, 2], attrs);
    let err = run(&m, &[&[1.]]).unwrap_err();
    assert_eq!(
        err,
        RefError::ModuleOp {
            opcode: "anec.resize".into(),
            name: "op".into(),
            reason: "the reference interpreter does not implement anec.resize".into()
        }
    );
}
