//! Printer and parser tests: exact round trips over every opcode, rank-5 types, every
//! element type, multiple outputs and resources; a reviewed snapshot of one small module;
//! parse errors; and robustness (truncated and corrupted text never panics).

#![allow(clippy::panic)]

use crate::attr::Attr;
use crate::module::{Blob, Layout, Location, Module, Port, ValueId};
use crate::opcode::OpCode;
use crate::testutil::*;
use crate::types::{DType, TensorType};
use crate::{parse_module, print_module};

/// Prints, parses, and checks the module and the text both survive unchanged.
fn roundtrip(m: &Module) -> String {
    let text = print_module(m);
    let back = match parse_module(&text) {
        Ok(b) => b,
        Err(e) => panic!("parse failed: {e}\n{text}"),
    };
    assert_eq!(&back, m, "module changed through\n{text}");
    assert_eq!(print_module(&back), text);
    text
}

/// The 1x1 conv of the format example.
fn small_conv() -> Module {
    let mut m = Module::new("net");
    let x = m.add_value(f16(1, 3, 1, 1));
    let layout = Layout { row_stride: Some(64), plane_stride: Some(64), interleave: Some(1), ..Layout::default() };
    let loc = Location { file: "conv.plist".into(), line: 12, col: 5 };
    m.inputs.push(Port { name: "image".into(), value: x, layout, loc });
    let w = blob(&mut m, "my_layer.weights", f16(3, 3, 1, 1));
    // A 3x3 identity in fp16 (1.0 = 0x3C00).
    let identity = (0..9).flat_map(|i| if i % 4 == 0 { [0x00, 0x3C] } else { [0, 0] });
    m.resources.insert("my_layer.weights".into(), Blob { dtype: DType::F16, bytes: identity.collect() });
    let attrs = vec![
        ("groups", Attr::Int(1)),
        ("kernel", ints(&[1, 1])),
        ("kernel_group_reuse", Attr::Bool(false)),
        ("pad", ints(&[0, 0, 0, 0])),
        ("stride", ints(&[1, 1])),
        ("weights", w),
    ];
    let r = add_op(&mut m, OpCode::Conv, "my_layer", &[x], &[f16(1, 3, 1, 1)], attrs);
    m.ops[0].loc = Location { file: "conv.plist".into(), line: 60, col: 7 };
    let layout = Layout { row_stride: Some(64), ..Layout::default() };
    m.outputs.push(Port { name: "my_layer@output".into(), value: r[0], layout, loc: Location::default() });
    m
}

/// Every opcode in one module: all samples' ops chained on fresh inputs, merged.
fn all_ops() -> Module {
    let mut all = Module::new("everything");
    for opcode in OpCode::ALL {
        merge(&mut all, sample(opcode), opcode.name());
    }
    all
}

/// Appends `part`'s values, ports, ops and blobs to `all`, renaming to stay unique.
fn merge(all: &mut Module, part: Module, prefix: &str) {
    let base = all.values.len() as u32;
    let shift = |id: ValueId| ValueId(id.0 + base);
    all.values.extend(part.values);
    for mut p in part.inputs {
        p.value = shift(p.value);
        p.name = format!("{prefix}.{}", p.name);
        all.inputs.push(p);
    }
    for mut p in part.outputs {
        p.value = shift(p.value);
        p.name = format!("{prefix}.{}", p.name);
        all.outputs.push(p);
    }
    for mut op in part.ops {
        op.operands = op.operands.into_iter().map(shift).collect();
        op.results = op.results.into_iter().map(shift).collect();
        op.name = format!("{prefix}.{}", op.name);
        all.ops.push(op);
    }
    all.resources.extend(part.resources);
}

#[test]
fn snapshot_small_conv() {
    let m = small_conv();
    assert_valid(&m);
    insta::assert_snapshot!("small_conv", roundtrip(&m));
}

#[test]
fn roundtrips_each_opcode() {
    for opcode in OpCode::ALL {
        let m = sample(opcode);
        assert_valid(&m);
        let text = roundtrip(&m);
        assert!(text.contains(&format!("\"{}\"", opcode.name())));
    }
}

#[test]
fn roundtrips_all_ops_in_one_module() {
    let m = all_ops();
    assert_valid(&m);
    let text = roundtrip(&m);
    assert_eq!(text.matches("\"func.return\"").count(), 1);
    assert!(text.contains("tensor<1x5x2x2x16xf16>"), "rank-5 type missing");
}

#[test]
fn roundtrips_every_dtype_rank5_and_multiple_outputs() {
    let dtypes = [DType::F16, DType::F32, DType::U8, DType::I8];
    let tys: Vec<TensorType> = dtypes.iter().map(|&d| t5([2, 3, 4, 5, 6], d)).collect();
    let (mut m, ins) = with_inputs(&tys);
    let mut outs = Vec::new();
    for (i, (&x, ty)) in ins.iter().zip(&tys).enumerate() {
        let r = add_op(&mut m, OpCode::Reshape, &format!("r{i}"), &[x], &[t5([1, 6, 2, 5, 12], ty.dtype)], vec![]);
        outs.extend(r);
    }
    for (i, &d) in dtypes.iter().enumerate() {
        blob(&mut m, &format!("blob{i}"), TensorType::nchw(1, 2, 1, 3, d));
    }
    outputs(&mut m, &outs);
    m.outputs[1].layout = Layout {
        row_stride: Some(u64::MAX),
        plane_stride: Some(0),
        depth_stride: Some(4096),
        batch_stride: Some(1 << 40),
        interleave: Some(u32::MAX),
    };
    let text = roundtrip(&m);
    for name in ["f16", "f32", "ui8", "si8"] {
        assert!(text.contains(&format!("x{name}>")), "{name} missing");
    }
    assert!(text.contains("anec.resource_types = {blob0 = f16, blob1 = f32, blob2 = ui8, blob3 = si8}"));
}

#[test]
fn roundtrips_unusual_names_strings_and_ids() {
    let mut m = Module::new("net \"quoted\" \\ é€\n\t\u{1}");
    // Value ids deliberately out of definition order.
    m.add_value(f16(1, 1, 1, 1));
    m.add_value(f16(1, 2, 1, 1));
    // %0 is the op's operand and %1 its result: the input is value 0, defined first.
    let (x, r) = (ValueId(0), ValueId(1));
    m.inputs.push(Port { name: "in/put:0".into(), value: x, layout: Layout::default(), loc: Location::default() });
    let w = Attr::Resource { name: "layer/1-weights".into(), ty: f16(1, 1, 1, 1) };
    let mut op = crate::module::Op {
        opcode: OpCode::Neuron,
        name: "odd \"name\"".into(),
        operands: vec![x],
        results: vec![r],
        attrs: Default::default(),
        loc: Location { file: "dir with space/ü.plist".into(), line: 0, col: 0 },
    };
    op.attrs.insert("key with space".into(), Attr::Str("\u{7f}\u{0}x".into()));
    op.attrs.insert("w".into(), Attr::Array(vec![w, Attr::Array(vec![]), Attr::Float(-0.0), Attr::Int(i64::MIN)]));
    op.attrs.insert("big".into(), Attr::Int(i64::MAX));
    m.ops.push(op);
    m.values[1].ty = f16(1, 1, 1, 1);
    m.values[0].ty = f16(1, 2, 1, 1);
    m.outputs.push(Port { name: "o".into(), value: r, layout: Layout::default(), loc: Location::default() });
    m.outputs.push(Port { name: "o2".into(), value: x, layout: Layout::default(), loc: Location::default() });
    m.resources.insert("layer/1-weights".into(), Blob { dtype: DType::F16, bytes: vec![0, 0x3c].into() });
    m.resources.insert("unused".into(), Blob { dtype: DType::I8, bytes: vec![].into() });
    // A reference whose type disagrees with its blob: the blob's own type must survive.
    m.resources.insert("mismatch".into(), Blob { dtype: DType::F32, bytes: vec![1, 2, 3, 4].into() });
    let wrong = Attr::Resource { name: "mismatch".into(), ty: f16(1, 1, 1, 2) };
    m.ops[0].attrs.insert("wrong".into(), wrong);
    let text = roundtrip(&m);
    assert!(text.contains("dense_resource<\"layer/1-weights\">"));
    assert!(text.contains("anec.resource_types = {mismatch = f32, unused = si8}"), "{text}");
    assert!(text.contains("\"key with space\" = \"\\7F\\00x\""));
}

#[test]
fn roundtrips_empty_module_and_zero_result_op() {
    roundtrip(&Module::new(""));
    let (mut m, ins) = with_inputs(&[f16(1, 1, 1, 1)]);
    add_op(&mut m, OpCode::Reshape, "none", &ins, &[], vec![]);
    add_op(&mut m, OpCode::Concat, "two", &[ins[0], ins[0]], &[f16(1, 1, 1, 1), f16(1, 2, 1, 1)], vec![]);
    roundtrip(&m);
}

#[test]
fn floats_roundtrip_bit_exactly() {
    let values = [
        0.0,
        -0.0,
        0.1,
        1.0 / 3.0,
        1e-7,
        1e16,
        -1.5e300,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        65504.0,
        f64::from(half::f16::from_bits(0x3555).to_f32()),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
    ];
    let (mut m, ins) = with_inputs(&[f16(1, 1, 1, 1)]);
    let attrs: Vec<(String, Attr)> =
        values.iter().enumerate().map(|(i, &v)| (format!("f{i:02}"), Attr::Float(v))).collect();
    let attrs_ref = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    add_op(&mut m, OpCode::Neuron, "n", &ins, &[f16(1, 1, 1, 1)], attrs_ref);
    let text = print_module(&m);
    let back = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for (i, v) in values.iter().enumerate() {
        let got = back.ops[0].attrs.get(&format!("f{i:02}")).and_then(Attr::as_float);
        assert_eq!(got.map(f64::to_bits), Some(v.to_bits()), "value {v:e}");
    }
    assert!(text.contains("f05 = 1.0e16 : f64"), "{text}");
    assert!(text.contains("f12 = 0x7FF0000000000000 : f64"), "{text}");
}

#[test]
fn accepts_other_whitespace_and_comments() {
    let m = all_ops();
    let text = print_module(&m);
    let spaced = text.replace(", ", " ,\n\t ").replace("(", "( ").replace(" = ", "=");
    let commented = format!("// leading comment\n{}", spaced.replace("\n", " // note\n"));
    assert_eq!(parse_module(&commented).as_ref(), Ok(&m));
}

/// Parses `text` and returns the error as `line:col: message`.
fn parse_err(text: &str) -> String {
    match parse_module(text) {
        Ok(_) => panic!("expected a parse error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn reports_errors_with_line_and_column() {
    let text = print_module(&small_conv());
    let bad = text.replace("\"anec.conv\"", "\"anec.conv2d\"");
    assert_eq!(parse_err(&bad), "4:10: unknown op `anec.conv2d`");
    let bad = text.replace("(%0) {", "(%7) {");
    assert_eq!(parse_err(&bad), "4:22: use of undefined value %7");
    let bad = text.replacen("^bb0(%0: tensor<1x3x1x1xf16>)", "^bb0(%0: tensor<1x3x2x1xf16>)", 1);
    assert!(parse_err(&bad).contains("value %0 is used as tensor<1x3x1x1xf16> but defined as tensor<1x3x2x1xf16>"));
    let bad = text.replace("name = \"my_layer\", ", "");
    assert_eq!(parse_err(&bad), "4:5: op has no `name` attribute");
    let bad = text.replace("tensor<1x3x1x1xf16>) -> tensor", "tensor<1x3x1xf16>) -> tensor");
    assert!(parse_err(&bad).contains("tensor rank must be 4 or 5, got 3"));
    let bad = text.replace("groups = 1 : i64", "groups = 1 : i64, groups = 2 : i64");
    assert!(parse_err(&bad).contains("duplicate key `groups`"));
    let bad = text.replace("groups = 1 : i64", "groups = 1 : i32");
    assert!(parse_err(&bad).contains("unsupported literal type `i32`"));
    let bad = text.replace("\"func.func\"", "\"func.fun\"");
    assert_eq!(parse_err(&bad), "2:3: expected `\"func.func\"`, found '\"'");
    assert_eq!(parse_err(""), "1:1: expected `\"builtin.module\"`, found end of input");
}

#[test]
fn reports_resource_and_id_errors() {
    let text = print_module(&small_conv());
    let bad = text.replace("\"my_layer.weights\": \"0x02000000", "\"other\": \"0x02000000");
    assert!(parse_err(&bad).contains("resource `other` has no element type"));
    let hex = text.split("\"0x").nth(1).and_then(|h| h.split('"').next()).unwrap_or("");
    let bad = text.replace(hex, "0200");
    assert!(parse_err(&bad).contains("4-byte alignment word"));
    let bad = text.replace(hex, "02000000ABC");
    assert!(parse_err(&bad).contains("4-byte alignment word"));
    let bad = text.replace(hex, "0200000G");
    assert!(parse_err(&bad).contains("non-hex digit"));
    let bad = text.replace("%1", "%2");
    assert!(parse_err(&bad).contains("value %1 is never defined"));
    let bad = text.replace("%1 = ", "%0 = ");
    assert!(parse_err(&bad).contains("value %0 is defined twice"));
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let bad = text.replace("[1, 1]", &deep);
    assert!(parse_err(&bad).contains("nested too deeply"));
}

#[test]
fn truncated_text_never_panics() {
    let text = print_module(&all_ops());
    let body = text.split("{-#").next().unwrap_or("").trim_end();
    for end in 0..text.len() {
        if let Some(prefix) = text.get(..end) {
            // Cutting exactly before the resource trailer leaves a valid module without blobs.
            let whole = prefix.trim_end() == text.trim_end() || prefix.trim_end() == body;
            let ok = parse_module(prefix).is_err() || whole;
            assert!(ok, "prefix of {end} bytes parsed:\n{prefix}");
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let text = print_module(&small_conv());
    let bytes = text.as_bytes();
    let replacements = [b'"', b'%', b'[', b'{', b'}', b'0', b'x', b'-', b'\\', b' ', 0xC3];
    for i in 0..bytes.len() {
        let mut flips: Vec<u8> = replacements.to_vec();
        flips.extend([bytes[i] ^ 0x01, bytes[i] ^ 0x20, bytes[i] ^ 0x80]);
        for b in flips {
            let mut corrupted = bytes.to_vec();
            corrupted[i] = b;
            let s = String::from_utf8_lossy(&corrupted);
            let _ = parse_module(&s);
        }
    }
}

#[test]
fn random_edits_never_panic() {
    let text = print_module(&all_ops());
    let alphabet = b"\"%[]{}()<>:=,-.0123456789xe\\ \n^#loc";
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..3000 {
        let mut bytes = text.as_bytes().to_vec();
        for _ in 0..1 + next(4) {
            let at = next(bytes.len());
            match next(3) {
                0 => bytes[at] = alphabet[next(alphabet.len())],
                1 => drop(bytes.drain(at..(at + next(40)).min(bytes.len()))),
                _ => {
                    let from = next(bytes.len());
                    let piece: Vec<u8> = bytes[from..(from + next(40)).min(bytes.len())].to_vec();
                    bytes.splice(at..at, piece);
                }
            }
        }
        let _ = parse_module(&String::from_utf8_lossy(&bytes));
    }
}

/// Removing an op renumbers the values after its result, everywhere they are named.
#[test]
fn retain_ops_renumbers_the_values_densely() {
    let mut m = small_conv();
    let x = m.inputs[0].value;
    let dead =
        add_op(&mut m, OpCode::Neuron, "unused", &[x], &[f16(1, 3, 1, 1)], vec![("mode", Attr::Str("relu".into()))]);
    let kept =
        add_op(&mut m, OpCode::Neuron, "kept", &[x], &[f16(1, 3, 1, 1)], vec![("mode", Attr::Str("relu".into()))]);
    m.outputs.push(Port {
        name: "kept@output".into(),
        value: kept[0],
        layout: Layout::default(),
        loc: Location::default(),
    });
    assert_eq!((dead[0], kept[0]), (ValueId(2), ValueId(3)));
    m.retain_ops(|i| i != 1);
    assert_eq!(m.values.len(), 3);
    assert_eq!(m.ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["my_layer", "kept"]);
    assert_eq!((m.ops[1].results[0], m.outputs[1].value, m.ops[1].operands[0]), (ValueId(2), ValueId(2), x));
    assert_eq!(crate::verify_module(&m), Ok(()));
}
