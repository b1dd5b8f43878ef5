//! Hidden-layer units (seed 002 Table B.1, plus `Resize`): each Type parses into a verified
//! module with the documented attributes and result shape; each required `Params` key,
//! when missing, is an error naming the unit and the key; the hand-authored netplists of
//! `tests/hidden/` parse and verify.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::{parse_netplist, parse_netplist_bytes};
use anec_ir::{verify_module, Attr, Module, OpCode};
use common::*;
use plist::{Dictionary, Value};
use std::path::PathBuf;

/// One unit Type: bottoms (input dims N, C, D, H, W), Params, required keys, the op and
/// result dims it must give.
struct Case {
    unit_type: &'static str,
    inputs: &'static [[i64; 5]],
    params: Vec<(&'static str, Value)>,
    required: &'static [&'static str],
    opcode: OpCode,
    result: [u32; 5],
}

fn t() -> Value {
    Value::Boolean(true)
}

fn f() -> Value {
    Value::Boolean(false)
}

fn factors(fx: i64, fy: i64) -> Vec<(&'static str, Value)> {
    vec![("FactorX", int(fx)), ("FactorY", int(fy)), ("FactorZ", int(1))]
}

const FACTOR_KEYS: &[&str] = &["FactorX", "FactorY", "FactorZ"];

fn sorting(mut v: Vec<(&'static str, Value)>) -> Vec<(&'static str, Value)> {
    v.extend([
        ("SortDimension", s("Width")),
        ("VectorDimension", s("Channel")),
        ("SortIndices", t()),
        ("Indices", f()),
    ]);
    v
}

fn cases() -> Vec<Case> {
    let one = |unit_type, inputs, params, required, opcode, result| Case {
        unit_type,
        inputs,
        params,
        required,
        opcode,
        result,
    };
    let slice_info = Value::Array(vec![Value::Dictionary(dict(&[("Size", int(2)), ("Offset", int(1))]))]);
    vec![
        one(
            "SDPA",
            &[[1, 5, 1, 2, 16], [1, 7, 1, 2, 16], [1, 7, 1, 2, 16], [1, 1, 1, 1, 1]],
            vec![("SubtractMax", t())],
            &[],
            OpCode::Sdpa,
            [1, 5, 1, 2, 16],
        ),
        one(
            "Sort",
            &[[1, 4, 1, 2, 8]],
            sorting(vec![("Direction", s("Descending"))]),
            &["Direction", "SortDimension", "VectorDimension", "SortIndices", "Indices"],
            OpCode::Sort,
            [1, 4, 1, 2, 8],
        ),
        one(
            "TopK",
            &[[1, 4, 1, 2, 8]],
            sorting(vec![("Type", s("Max")), ("K", int(3))]),
            &["Type", "K", "SortDimension", "VectorDimension", "SortIndices", "Indices"],
            OpCode::TopK,
            [1, 4, 1, 2, 3],
        ),
        one(
            "ArgMinMax",
            &[[1, 4, 1, 6, 6]],
            vec![
                ("Mode", s("SpatialArgMax")),
                ("KernelWidth", int(3)),
                ("KernelHeight", int(2)),
                ("PadLeft", int(1)),
                ("PadRight", int(1)),
            ],
            &["Mode", "KernelWidth", "KernelHeight"],
            OpCode::ArgMinMax,
            [1, 4, 1, 5, 6],
        ),
        one(
            "GlobalArgMinMax",
            &[[1, 4, 1, 2, 8]],
            vec![("Type", s("Min")), ("Dimension", s("Channel"))],
            &["Type", "Dimension"],
            OpCode::GlobalArgMinMax,
            [1, 1, 1, 2, 8],
        ),
        one("PixelShuffle", &[[1, 8, 1, 3, 5]], factors(2, 2), FACTOR_KEYS, OpCode::PixelShuffle, [1, 2, 1, 6, 10]),
        one("PixelUnshuffle", &[[1, 2, 1, 6, 10]], factors(2, 2), FACTOR_KEYS, OpCode::PixelUnshuffle, [1, 8, 1, 3, 5]),
        one("ChannelToSpace", &[[1, 8, 1, 3, 5]], factors(4, 1), FACTOR_KEYS, OpCode::ChannelToSpace, [1, 2, 1, 3, 20]),
        one(
            "SpaceToChannel",
            &[[1, 2, 1, 6, 10]],
            factors(2, 3),
            FACTOR_KEYS,
            OpCode::SpaceToChannel,
            [1, 12, 1, 2, 5],
        ),
        one("SpaceToBatch", &[[1, 3, 1, 4, 4]], factors(2, 2), FACTOR_KEYS, OpCode::SpaceToBatch, [4, 3, 1, 2, 2]),
        one("BatchToSpace", &[[4, 3, 1, 2, 2]], factors(2, 2), FACTOR_KEYS, OpCode::BatchToSpace, [1, 3, 1, 4, 4]),
        one(
            "MinMaxNormalization",
            &[[1, 4, 1, 2, 8]],
            vec![("Dimension", s("Width")), ("Epsilon", int(5120))],
            &["Dimension", "Epsilon"],
            OpCode::MinMaxNorm,
            [1, 4, 1, 2, 8],
        ),
        one(
            "LocalResponseNormalization",
            &[[1, 8, 1, 2, 2]],
            vec![("KernelChannel", int(5)), ("Alpha", int(15360)), ("Beta", int(14848))],
            &["KernelChannel", "Alpha", "Beta"],
            OpCode::Lrn,
            [1, 8, 1, 2, 2],
        ),
        one(
            "CrossCorrelation",
            &[[1, 1, 1, 8, 8], [1, 1, 1, 3, 3]],
            vec![],
            &[],
            OpCode::CrossCorrelation,
            [1, 1, 1, 6, 6],
        ),
        one("CrossProduct", &[[1, 3, 1, 1, 1], [1, 3, 1, 1, 1]], vec![], &[], OpCode::CrossProduct, [1, 3, 1, 1, 1]),
        one(
            "FurthestPointSampling",
            &[[1, 3, 1, 1, 64]],
            vec![("CentroidCount", int(8)), ("DistanceMetric", s("L2"))],
            &["CentroidCount", "DistanceMetric"],
            OpCode::FurthestPointSampling,
            [1, 3, 1, 1, 8],
        ),
        one(
            "RadiusSearch",
            &[[1, 3, 1, 1, 8], [1, 3, 1, 1, 64]],
            vec![("Radius", int(14336))],
            &["Radius"],
            OpCode::RadiusSearch,
            [1, 64, 1, 1, 8],
        ),
        one(
            "CostVolume",
            &[[1, 8, 1, 4, 16], [1, 8, 1, 4, 16]],
            vec![("DisparityDirection", s("Left")), ("DisparityRange", int(6))],
            &["DisparityDirection", "DisparityRange"],
            OpCode::CostVolume,
            [1, 6, 1, 4, 16],
        ),
        one(
            "DynamicSlice",
            &[[1, 4, 1, 2, 8]],
            vec![
                ("DynamicSliceAxisOrder", strs(&["Width"])),
                ("DynamicSliceInfo", slice_info),
                ("CoordinateInfo", s("Constant")),
                ("PaddingInfo", s("None")),
                ("BackgroundValue", int(0)),
            ],
            &["DynamicSliceAxisOrder", "DynamicSliceInfo", "CoordinateInfo", "PaddingInfo"],
            OpCode::DynamicSlice,
            [1, 4, 1, 2, 2],
        ),
        one("Flatten", &[[1, 4, 1, 2, 8]], vec![], &[], OpCode::Flatten, [1, 64, 1, 1, 1]),
        one("Dropout", &[[1, 4, 1, 2, 8]], vec![("Rate", int(0))], &[], OpCode::Dropout, [1, 4, 1, 2, 8]),
        one(
            "Resize",
            &[[1, 3, 1, 4, 4]],
            vec![("Mode", s("Bilinear")), ("OutputHeight", int(8)), ("OutputWidth", int(12))],
            &["Mode"],
            OpCode::Resize,
            [1, 3, 1, 8, 12],
        ),
    ]
}

/// A network with inputs `x0`, `x1`, ... of `dims` and one unit `layer` of `unit_type`.
fn network(case: &Case, params: Option<Dictionary>) -> Dictionary {
    let names: Vec<String> = (0..case.inputs.len()).map(|i| format!("x{i}")).collect();
    let mut unit =
        dict(&[("Bottom", strs(&names.iter().map(String::as_str).collect::<Vec<_>>())), ("Type", s(case.unit_type))]);
    if let Some(p) = params {
        unit.insert("Params".into(), Value::Dictionary(p));
    }
    let mut net = dict(&[
        ("Inputs", strs(&names.iter().map(String::as_str).collect::<Vec<_>>())),
        ("Outputs", strs(&["layer@output"])),
        ("Units", strs(&["layer"])),
        ("layer", Value::Dictionary(unit)),
        ("layer@output", Value::Dictionary(dict(&[("Bottom", s("layer"))]))),
    ]);
    for (name, d) in names.iter().zip(case.inputs) {
        let input = dict(&[
            ("BatchSize", int(d[0])),
            ("InputChannels", int(d[1])),
            ("InputDepth", int(d[2])),
            ("InputHeight", int(d[3])),
            ("InputWidth", int(d[4])),
            ("InputType", s("Float16")),
        ]);
        net.insert(name.clone(), Value::Dictionary(input));
    }
    top(net)
}

fn params_of(case: &Case) -> Dictionary {
    dict(&case.params)
}

fn parse(top: &Dictionary) -> Result<Module, String> {
    parse_netplist_bytes(&xml(top), "t.plist", std::path::Path::new(".")).map_err(|e| e.to_string())
}

#[test]
fn every_hidden_unit_parses_into_a_verified_op() {
    for case in cases() {
        let m = parse(&network(&case, Some(params_of(&case)))).unwrap_or_else(|e| panic!("{}: {e}", case.unit_type));
        verify_module(&m).unwrap_or_else(|e| panic!("{}: {e:?}", case.unit_type));
        let op = &m.ops[0];
        assert_eq!(op.opcode, case.opcode, "{}", case.unit_type);
        let got = result_ty(&m, op);
        assert_eq!([got.n, got.c, got.d, got.h, got.w], case.result, "{}", case.unit_type);
    }
}

#[test]
fn each_missing_required_key_names_the_unit_and_key() {
    let mut checked = 0;
    for case in cases() {
        for key in case.required {
            let mut p = params_of(&case);
            assert!(p.remove(key).is_some(), "{}: {key} is not in the sample", case.unit_type);
            let err = parse(&network(&case, Some(p))).expect_err(key);
            let want = format!("unit 'layer': missing key '{key}' in Params");
            assert!(err.contains(&want), "{}: {err}", case.unit_type);
            assert!(err.starts_with("t.plist:"), "{err}");
            checked += 1;
        }
    }
    assert_eq!(checked, 49);
}

#[test]
fn units_with_required_keys_need_params() {
    for case in cases().into_iter().filter(|c| !c.required.is_empty()) {
        let err = parse(&network(&case, None)).expect_err(case.unit_type);
        assert!(err.ends_with("unit 'layer': missing key 'Params'"), "{err}");
    }
    let flatten = cases().into_iter().find(|c| c.unit_type == "Flatten").expect("flatten case");
    assert!(parse(&network(&flatten, None)).is_ok());
}

#[test]
fn wrong_bottom_count_is_an_error() {
    for case in cases() {
        let params = params_of(&case);
        let inputs: &'static [[i64; 5]] =
            if case.inputs.len() == 1 { &[[1, 3, 1, 1, 1]; 6] } else { &[[1, 3, 1, 1, 1]] };
        let name = case.unit_type;
        let wrong = Case { inputs, ..case };
        let err = parse(&network(&wrong, Some(params))).expect_err(name);
        assert!(err.contains("key 'Bottom': expects"), "{name}: {err}");
    }
}

fn attr(m: &Module, name: &str) -> Attr {
    m.ops[0].attrs.get(name).cloned().unwrap_or_else(|| panic!("no attribute {name}"))
}

fn case(unit_type: &str) -> Case {
    cases().into_iter().find(|c| c.unit_type == unit_type).expect("case")
}

#[test]
fn fp16_patterns_enums_and_packing() {
    let m = parse(&network(&case("MinMaxNormalization"), Some(params_of(&case("MinMaxNormalization"))))).unwrap();
    assert_eq!(attr(&m, "epsilon"), Attr::Float(0.0009765625));
    assert_eq!(attr(&m, "dimension"), Attr::Str("width".into()));
    let c = case("LocalResponseNormalization");
    let m = parse(&network(&c, Some(params_of(&c)))).unwrap();
    assert_eq!(
        (attr(&m, "alpha"), attr(&m, "beta"), attr(&m, "bias")),
        (Attr::Float(1.0), Attr::Float(0.75), Attr::Float(1.0))
    );
    let c = case("ArgMinMax");
    let m = parse(&network(&c, Some(params_of(&c)))).unwrap();
    let ints = |v: &[i64]| Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect());
    assert_eq!(attr(&m, "kernel"), ints(&[2, 3]));
    assert_eq!(attr(&m, "pad"), ints(&[0, 0, 0, 0, 1, 1]));
    assert_eq!(attr(&m, "mode"), Attr::Str("spatial_arg_max".into()));
    let c = case("DynamicSlice");
    let m = parse(&network(&c, Some(params_of(&c)))).unwrap();
    assert_eq!((attr(&m, "sizes"), attr(&m, "offsets")), (ints(&[2]), ints(&[1])));
    assert_eq!(attr(&m, "background_value"), Attr::Float(0.0));
}

#[test]
fn sdpa_subtract_max_defaults_to_false_and_flags_take_integers() {
    let c = case("SDPA");
    let m = parse(&network(&c, Some(Dictionary::new()))).unwrap();
    assert_eq!(attr(&m, "subtract_max"), Attr::Bool(false));
    let m = parse(&network(&c, Some(dict(&[("SubtractMax", int(1))])))).unwrap();
    assert_eq!(attr(&m, "subtract_max"), Attr::Bool(true));
    let err = parse(&network(&c, Some(dict(&[("SubtractMax", int(2))])))).unwrap_err();
    assert!(err.ends_with("key 'SubtractMax' in Params: 2 is not a flag (expected a boolean, 0 or 1)"), "{err}");
}

#[test]
fn bad_values_name_the_key() {
    let c = case("TopK");
    let mut p = params_of(&c);
    p.insert("Type".into(), s("Median"));
    let err = parse(&network(&c, Some(p))).unwrap_err();
    assert!(err.ends_with("unit 'layer': key 'Type' in Params: unknown value 'Median' (expected Max, Min)"), "{err}");
    let mut p = params_of(&c);
    p.insert("SortDimension".into(), s("Time"));
    let err = parse(&network(&c, Some(p))).unwrap_err();
    assert!(err.contains("key 'SortDimension' in Params: unknown dimension 'Time'"), "{err}");
    let c = case("PixelShuffle");
    let mut p = params_of(&c);
    p.insert("FactorX".into(), int(0));
    let err = parse(&network(&c, Some(p))).unwrap_err();
    assert!(err.contains("key 'FactorX' in Params: 0 is out of range"), "{err}");
}

#[test]
fn shape_errors_name_the_unit() {
    let c = case("PixelShuffle");
    let mut p = params_of(&c);
    p.insert("FactorX".into(), int(3));
    let err = parse(&network(&c, Some(p))).unwrap_err();
    assert!(err.ends_with("unit 'layer': channel 8 is not divisible by factor_x * factor_y * factor_z = 6"), "{err}");
    let c = case("DynamicSlice");
    let mut p = params_of(&c);
    p.insert("DynamicSliceAxisOrder".into(), strs(&["Width", "Height"]));
    let err = parse(&network(&c, Some(p))).unwrap_err();
    assert!(
        err.contains("key 'DynamicSliceInfo' in Params: has 1 entries, DynamicSliceAxisOrder lists 2 axes"),
        "{err}"
    );
}

#[test]
fn engine_gated_layers_still_parse() {
    // Factors outside {1, 2, 3, 4, 8}, a depth factor, Channel min-max normalization and
    // a TopK k beyond the axis are the validators' to reject, not the parser's.
    let c = case("PixelShuffle");
    let mut p = params_of(&c);
    p.insert("FactorX".into(), int(5));
    p.insert("FactorY".into(), int(1));
    let c5 = Case { inputs: &[[1, 10, 1, 3, 5]], ..c };
    assert!(parse(&network(&c5, Some(p))).is_ok());
    let c = case("MinMaxNormalization");
    let mut p = params_of(&c);
    p.insert("Dimension".into(), s("Channel"));
    assert!(parse(&network(&c, Some(p))).is_ok());
    let c = case("TopK");
    let mut p = params_of(&c);
    p.insert("K".into(), int(20));
    let m = parse(&network(&c, Some(p))).unwrap();
    assert!(verify_module(&m).is_ok());
}

/// `tests/hidden/` of the workspace.
fn hidden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/hidden")
}

#[test]
fn authored_hidden_netplists_parse_and_verify() {
    let expected = [
        ("sdpa.plist", OpCode::Sdpa),
        ("topk.plist", OpCode::TopK),
        ("sort.plist", OpCode::Sort),
        ("pixelshuffle.plist", OpCode::PixelShuffle),
        ("globalargminmax.plist", OpCode::GlobalArgMinMax),
        ("minmaxnorm_channel.plist", OpCode::MinMaxNorm),
        ("resize.plist", OpCode::Resize),
    ];
    for (file, opcode) in expected {
        let path = hidden_dir().join(file);
        let m = parse_netplist(&path).unwrap_or_else(|e| panic!("{e}"));
        verify_module(&m).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        assert!(m.ops.iter().any(|op| op.opcode == opcode), "{file} has no {opcode}");
        assert!(m.ops.iter().all(|op| op.loc.line > 0), "{file}: every op has a line");
    }
    let m = parse_netplist(&hidden_dir().join("minmaxnorm_channel.plist")).unwrap();
    let op = m.ops.iter().find(|op| op.opcode == OpCode::MinMaxNorm).unwrap();
    assert_eq!(op.attrs.get("dimension"), Some(&Attr::Str("channel".into())));
}
