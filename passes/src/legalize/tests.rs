//! Tests of the validators: each accepts and rejects on (at least) two chips, naming the
//! rule, the feature byte or limit and the chip's value. Modules are built one op at a
//! time and go through [`check`] (so they verify first); rules the verifier already
//! enforces are tested through [`verdict`] on a module that skips it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::target::lookup;
use anec_ir::verify::infer_extents;
use anec_ir::{Attr, Blob, DType, Port, TensorType, ValueId};

pub(super) fn t(n: u32, c: u32, h: u32, w: u32) -> TensorType {
    TensorType::nchw(n, c, h, w, DType::F16)
}

pub(super) fn t5(n: u32, c: u32, d: u32, h: u32, w: u32) -> TensorType {
    TensorType { n, c, d, h, w, dtype: DType::F16 }
}

pub(super) fn i(v: i64) -> Attr {
    Attr::Int(v)
}

pub(super) fn f(v: f64) -> Attr {
    Attr::Float(v)
}

pub(super) fn s(v: &str) -> Attr {
    Attr::Str(v.into())
}

pub(super) fn b(v: bool) -> Attr {
    Attr::Bool(v)
}

pub(super) fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

pub(super) fn strs(v: &[&str]) -> Attr {
    Attr::Array(v.iter().map(|&x| s(x)).collect())
}

fn port(name: String, value: ValueId) -> Port {
    Port { name, value, layout: Default::default(), loc: Location::default() }
}

/// A module with inputs of `inputs` and one op producing `out`.
pub(super) fn module(op: OpCode, inputs: &[TensorType], out: TensorType, attrs: &[(&str, Attr)]) -> Module {
    let mut m = Module::new("net");
    let ids: Vec<ValueId> = inputs
        .iter()
        .enumerate()
        .map(|(k, ty)| {
            let v = m.add_value(*ty);
            m.inputs.push(port(format!("x{k}"), v));
            v
        })
        .collect();
    push(&mut m, op, ids, out, attrs);
    m
}

/// Appends op `layer` reading `operands` and makes its result an output.
pub(super) fn push(m: &mut Module, op: OpCode, operands: Vec<ValueId>, out: TensorType, attrs: &[(&str, Attr)]) {
    let r = m.add_value(out);
    let attrs = attrs.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    let loc = Location { file: "t.mlir".into(), line: 1 + m.ops.len() as u32, col: 1 };
    m.ops.push(Op { opcode: op, name: format!("layer{}", m.ops.len()), operands, results: vec![r], attrs, loc });
    m.outputs.push(port(format!("y{}", m.outputs.len()), r));
}

/// A hidden-layer op whose result type the IR's shape rule infers (element type `dtype`).
pub(super) fn hidden(op: OpCode, inputs: &[TensorType], attrs: &[(&str, Attr)], dtype: DType) -> Module {
    let map = attrs.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    let d = infer_extents(op, &map, inputs).expect("inferred").expect("valid");
    let out = TensorType { n: d[0], c: d[1], d: d[2], h: d[3], w: d[4], dtype };
    module(op, inputs, out, attrs)
}

/// A zero blob `name` of type `ty`, as a resource attribute.
pub(super) fn blob(m: &mut Module, name: &str, ty: TensorType) -> Attr {
    let bytes = vec![0; ty.elements() as usize * ty.dtype.size()];
    m.resources.insert(name.into(), Blob { dtype: ty.dtype, bytes: bytes.into() });
    Attr::Resource { name: name.into(), ty }
}

/// The verdict of the last op of `m` on `chip` (through [`check`], which verifies).
pub(super) fn on_route(m: &Module, chip: &str, route: Route) -> Verdict {
    let r = check(m, lookup(chip).unwrap(), route);
    assert!(r.module_errors.is_empty(), "{:?}", r.module_errors);
    r.layers.last().unwrap().verdict.clone()
}

/// [`on_route`], direct route.
pub(super) fn on(m: &Module, chip: &str) -> Verdict {
    on_route(m, chip, Route::Direct)
}

/// The validators' verdict without the verifier (for rules both enforce).
pub(super) fn unverified(m: &Module, chip: &str) -> Verdict {
    verdict(m, m.ops.len() - 1, lookup(chip).unwrap(), Route::Direct)
}

/// Asserts the layer runs on the engine.
#[track_caller]
pub(super) fn engine(v: Verdict) {
    assert_eq!(v, Verdict::Engine);
}

/// The rejection; panics when the layer runs.
#[track_caller]
pub(super) fn rejected(v: Verdict) -> Rejection {
    match v {
        Verdict::Rejected(r) => r,
        Verdict::Engine => panic!("expected a rejection"),
    }
}

/// A rejection at validation with this rule.
#[track_caller]
pub(super) fn rule(v: Verdict, rule: &str) -> Rejection {
    let r = rejected(v);
    assert_eq!(r.rule, rule);
    r
}

// ---- conv, matmul, sdpa -------------------------------------------------------------------

fn conv(kw: u32, groups: u32) -> Module {
    let (cin, cout, w) = (4, 8, 32);
    let mut m = module(OpCode::Conv, &[t(1, cin, 8, w)], t(1, cout, 8, w - kw + 1), &[]);
    let wts = blob(&mut m, "layer0.weights", t(cout, cin / groups, 1, kw));
    let attrs = &mut m.ops[0].attrs;
    for (k, v) in [
        ("kernel", ints(&[1, i64::from(kw)])),
        ("stride", ints(&[1, 1])),
        ("pad", ints(&[0, 0, 0, 0])),
        ("groups", i(i64::from(groups))),
        ("weights", wts),
        ("kernel_group_reuse", b(false)),
    ] {
        attrs.insert(k.into(), v);
    }
    m
}

#[test]
fn conv_kernel_width_is_per_chip() {
    engine(on(&conv(13, 1), "h13g"));
    let r = rule(on(&conv(15, 1), "h13g"), "Invalid conv kernel width = 15, It should be in [1, 13]");
    assert_eq!(r.stage, Stage::Validation);
    assert_eq!(r.feature.as_deref(), Some("limit conv-kernel-width = 1..=13 on h13g"));
    assert_eq!(r.suggestion.as_deref(), Some(
            "kernel 15 > 13 on h13g: write it as kernels of at most 13 taps over shifted slices of the input, their results added (a dilated kernel spans (k - 1) x dilation + 1)"
        ));
    engine(on(&conv(15, 1), "h16g"));
    rule(on(&conv(16, 1), "h16g"), "Invalid conv kernel width = 16, It should be in [1, 15]");
}

#[test]
fn conv_groups_divide_both_channel_counts() {
    engine(on(&conv(3, 4), "h13g"));
    let mut m = conv(3, 2);
    m.values[1].ty.c = 5;
    let r = rule(
        unverified(&m, "h17"),
        "Invalid conv groups = 2: input channels 4 and output channels 5 must be divisible by it",
    );
    assert_eq!(r.feature, None);
}

fn matmul(k: u32, depth: u32) -> Module {
    let (a, b) = (t5(1, 8, depth, 1, k), t5(1, k, depth, 1, 4));
    let attrs = [("transpose_lhs", Attr::Bool(false)), ("transpose_rhs", Attr::Bool(false))];
    module(OpCode::Matmul, &[a, b], t5(1, 8, depth, 1, 4), &attrs)
}

#[test]
fn matmul_contraction_within_the_chip_extent() {
    engine(on(&matmul(16384, 1), "h13g"));
    let r = rule(
        on(&matmul(20000, 1), "h13g"),
        "MatMult contraction K = 20000 exceeds the maximum 16384 on this ANE architecture",
    );
    assert_eq!(r.feature.as_deref(), Some("limit max-spatial-extent = 16384 on h13g"));
    engine(on(&matmul(20000, 1), "h16g"));
}

#[test]
fn matmul_depth_above_one_is_rejected_on_every_chip() {
    for chip in ["h13g", "h17"] {
        rule(unverified(&matmul(4, 2), chip), "depth > 1 is not supported for MatMult");
    }
}

fn sdpa(scale_is_constant: bool, mask: Option<TensorType>) -> Module {
    let (q, kv) = (t(1, 8, 1, 16), t(1, 12, 1, 16));
    let mut ins = vec![q, kv, kv];
    if !scale_is_constant {
        ins.push(t(1, 1, 1, 1));
    }
    let mut m = module(OpCode::Constant, &ins, t(1, 1, 1, 1), &[]);
    let value = blob(&mut m, "scale", t(1, 1, 1, 1));
    m.ops[0].attrs.insert("value".into(), value);
    m.ops[0].operands.clear();
    m.outputs.clear();
    let scale = if scale_is_constant { m.ops[0].results[0] } else { m.inputs[3].value };
    let mut operands = vec![m.inputs[0].value, m.inputs[1].value, m.inputs[2].value, scale];
    if let Some(ty) = mask {
        let v = m.add_value(ty);
        m.inputs.push(port("mask".into(), v));
        operands.push(v);
    }
    push(&mut m, OpCode::Sdpa, operands, q, &[("subtract_max", b(true))]);
    m
}

#[test]
fn sdpa_scale_is_a_constant_and_the_mask_broadcasts() {
    for chip in ["h13g", "h16g"] {
        engine(on(&sdpa(true, None), chip));
        engine(on(&sdpa(true, Some(t(1, 8, 1, 12))), chip));
        engine(on(&sdpa(true, Some(t(1, 1, 1, 12))), chip));
        let r = rule(on(&sdpa(false, None), chip), "SDPA scale must be a constant");
        assert!(r.suggestion.is_some());
    }
}

#[test]
fn sdpa_operand_count_is_four_or_five() {
    let mut m = sdpa(true, None);
    let last = m.ops.len() - 1;
    m.ops[last].operands.truncate(3);
    rule(unverified(&m, "h13g"), "SDPA layer must have only 4 or 5(optional mask) inputs");
}

#[test]
fn sdpa_without_subtract_max_runs_with_a_note() {
    let mut m = sdpa(true, None);
    let last = m.ops.len() - 1;
    m.ops[last].attrs.insert("subtract_max".into(), b(false));
    let r = check(&m, lookup("h13g").unwrap(), Route::Direct);
    assert!(r.all_engine(), "{r:?}");
    assert!(r.notes.iter().any(|n| n.contains("subtract_max = false")), "{:?}", r.notes);
}

// ---- pooling, neuron, reduction, extents ----------------------------------------------------

fn pool(kind: &str, pad: [i64; 4]) -> Module {
    let (kh, kw) = (3, 3);
    let out_h = 8 + pad[0] + pad[1] - kh + 1;
    let out_w = 8 + pad[2] + pad[3] - kw + 1;
    let attrs = [("kind", s(kind)), ("kernel", ints(&[kh, kw])), ("stride", ints(&[1, 1])), ("pad", ints(&pad))];
    module(OpCode::Pooling, &[t(1, 4, 8, 8)], t(1, 4, out_h as u32, out_w as u32), &attrs)
}

#[test]
fn pooling_pad_below_kernel() {
    for chip in ["h13g", "h16g"] {
        engine(on(&pool("max", [1, 1, 1, 1]), chip));
        engine(on(&pool("avg", [0, 0, 2, 2]), chip));
        rule(on(&pool("max", [0, 0, 3, 0]), chip), "Pooling pad left = 3 must be below the kernel size 3");
    }
}

#[test]
fn pooling_mode_outside_the_chip_list() {
    let mut m = pool("max", [0; 4]);
    m.ops[0].attrs.insert("kind".into(), s("l2"));
    rule(unverified(&m, "h13g"), "Pooling mode \"l2\" is not available on this ANE architecture.");
}

fn neuron(mode: &str, alpha: Option<f64>) -> Module {
    let mut attrs = vec![("mode", s(mode))];
    if let Some(a) = alpha {
        attrs.push(("alpha", f(a)));
    }
    module(OpCode::Neuron, &[t(1, 4, 8, 8)], t(1, 4, 8, 8), &attrs)
}

#[test]
fn sin_and_cos_are_floored_at_family_a15_on_both_routes() {
    for route in [Route::Direct, Route::Conversion] {
        for mode in ["sin", "cos"] {
            let r = rule(
                on_route(&neuron(mode, None), "h13g", route),
                &format!("This platform doesn't support Neuron {mode}"),
            );
            let feature = r.feature.unwrap();
            assert!(feature.starts_with(&format!("family floor A15 ({} route: ANEForge", route.name())), "{feature}");
            assert!(feature.ends_with("; h13g is family A13"), "{feature}");
            engine(on_route(&neuron(mode, None), "h15g", route));
        }
    }
    engine(on(&neuron("sigmoid", None), "h13g"));
}

#[test]
fn mil_models_need_family_a13() {
    let m = neuron("sigmoid", None);
    let r = rule(on_route(&m, "h12", Route::Conversion), "MIL is only supported for H13+ ANE architectures");
    assert!(r.feature.unwrap().starts_with("family floor A13 (conversion route: ANEForge"));
    engine(on_route(&m, "h12", Route::Direct));
    engine(on_route(&m, "h13", Route::Conversion));
}

#[test]
fn relu_n_needs_a_positive_bound() {
    for chip in ["h13g", "h17"] {
        engine(on(&neuron("relu_n", Some(6.0)), chip));
        rule(
            on(&neuron("relu_n", Some(0.0)), chip),
            "This platform doesn't support Neuron relu_n with a non-positive parameter N = 0",
        );
    }
}

/// `x -> reduction(sum over width) -> neuron(mode)`.
fn reduce_then(mode: Option<&str>, axes: &[&str]) -> Module {
    let x = t(2, 4, 8, 8);
    let mut out = x;
    for a in axes {
        match *a {
            "batch" => out.n = 1,
            "channel" => out.c = 1,
            "height" => out.h = 1,
            "width" => out.w = 1,
            _ => {}
        }
    }
    let mut m = module(OpCode::Reduction, &[x], out, &[("kind", s("sum")), ("axes", strs(axes))]);
    if let Some(mode) = mode {
        m.outputs.clear();
        let r = m.ops[0].results[0];
        push(&mut m, OpCode::Neuron, vec![r], out, &[("mode", s(mode))]);
    }
    m
}

fn first_verdict(m: &Module, chip: &str) -> Verdict {
    check(m, lookup(chip).unwrap(), Route::Direct).layers[0].verdict.clone()
}

#[test]
fn a_square_after_a_reduction_needs_byte_0x494() {
    let m = reduce_then(Some("sqr"), &["width"]);
    let r = rule(first_verdict(&m, "h13g"), "square operation after reduction is not supported");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x494 (reduce-then-square) = 0 on h13g"));
    engine(first_verdict(&m, "h14g"));
    engine(first_verdict(&reduce_then(Some("sqrt"), &["width"]), "h13g"));
    engine(first_verdict(&reduce_then(None, &["width"]), "h13g"));
}

#[test]
fn at_most_four_reduced_axes() {
    let axes = ["batch", "channel", "depth", "height", "width"];
    for chip in ["h13g", "h16g"] {
        engine(first_verdict(&reduce_then(None, &axes[1..]), chip));
        rule(
            first_verdict(&reduce_then(None, &axes), chip),
            "Reduction over 5 axes (N, C, D, H, W) is not supported: at most 4",
        );
    }
}

#[test]
fn extents_are_per_chip_and_suggest_tiling() {
    let wide = module(OpCode::Neuron, &[t(1, 4, 1, 20000)], t(1, 4, 1, 20000), &[("mode", s("relu"))]);
    let r = rule(on(&wide, "h13g"), "input 0 extent W = 20000 exceeds the maximum 16384 on this ANE architecture");
    assert_eq!(r.feature.as_deref(), Some("limit max-spatial-extent = 16384 on h13g"));
    assert_eq!(r.suggestion.as_deref(), Some("extent 20000 > 16384: tile along W"));
    engine(on(&wide, "h16g"));
    let deep = module(OpCode::Neuron, &[t(1, 70000, 1, 1)], t(1, 70000, 1, 1), &[("mode", s("relu"))]);
    for chip in ["h13g", "h17"] {
        let r = rejected(on(&deep, chip));
        assert!(r.rule.contains("extent C = 70000 exceeds the maximum 65536"), "{}", r.rule);
    }
}

// ---- normalizations --------------------------------------------------------------------------

#[test]
fn softmax_needs_byte_0x815() {
    let m = module(OpCode::Softmax, &[t(1, 4, 8, 8)], t(1, 4, 8, 8), &[("axis", s("channel"))]);
    engine(on(&m, "h13g"));
    let r = rule(on(&m, "h12"), "Softmax is not supported by this ANE architecture");
    assert_eq!(r.feature.as_deref(), Some("feature byte 0x815 (softmax) = 0 on h12"));
    let mut int8 = m.clone();
    int8.values[1].ty.dtype = DType::I8;
    rule(on(&int8, "h13g"), "Softmax output must be Float, got si8");
}

#[test]
fn grouped_layer_norm_needs_depth_one() {
    let attrs = [("axes", strs(&["channel"])), ("epsilon", f(1e-5)), ("groups", i(2))];
    let flat = module(OpCode::LayerNorm, &[t(1, 4, 8, 8)], t(1, 4, 8, 8), &attrs);
    let deep = module(OpCode::LayerNorm, &[t5(1, 4, 2, 8, 8)], t5(1, 4, 2, 8, 8), &attrs);
    for chip in ["h13g", "h16g"] {
        engine(on(&flat, chip));
        rule(unverified(&deep, chip), "LayerNorm with num-groups > 1 does not yet support depth > 1");
    }
}

#[test]
fn legalize_rejects_exactly_what_check_reports() {
    let mut m = neuron("sin", None);
    let x = m.inputs[0].value;
    push(&mut m, OpCode::Neuron, vec![x], t(1, 4, 8, 8), &[("mode", s("relu"))]);
    let chip = lookup("h13g").unwrap();
    let report = check(&m, chip, Route::Direct);
    let v = crate::validate(m.clone()).unwrap();
    let err = legalize(&v, chip, Route::Direct).unwrap_err();
    let from_check: Vec<&LayerVerdict> = report.rejected().collect();
    assert_eq!(err.rejected.iter().collect::<Vec<_>>(), from_check);
    assert_eq!(err.rejected.len(), 1);
    let line = err.to_string();
    let want = "t.mlir:1:1: layer 'layer0' (anec.neuron) rejected on h13g at validation: \
                This platform doesn't support Neuron sin [family floor A15 (direct route: ";
    assert!(line.starts_with(want), "{line}");
    assert!(legalize(&v, lookup("h15g").unwrap(), Route::Direct).is_ok());
    let legal = crate::run(m, lookup("h15g").unwrap(), Route::Direct).unwrap();
    assert_eq!(legal.target().map(|t| t.name()), Some("h15g"));
}
