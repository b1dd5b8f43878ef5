//! Textual MIL on the corpus: every real coremlc file prints back byte for byte, every
//! generated file survives parse -> print -> parse, and the parsed trees hold what the text
//! says (spot checks of multi-output statements, tuples, dicts, function attributes,
//! BLOBFILE references, hex floats and `-inf`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec_front::mil::parse_program;
use anec_ir::mil::print::print_program;
use anec_ir::mil::{Arg, Dim, Literal, Program, ScalarType, Type, ValueData};
use std::path::{Path, PathBuf};

fn corpus(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/mil").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mil"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .mil files in {}", root.display());
    files
}

fn parse_file(path: &Path) -> (String, Program) {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    match parse_program(&text, &name) {
        Ok(p) => (text, p),
        Err(errors) => panic!("{}", errors.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")),
    }
}

/// The one real file saved with a final newline after coremlc's closing `}` (coremlc
/// itself writes none, as the other files show).
const FINAL_NEWLINE_EXCEPTION: &str = "apple+coremltools__add_model.mlmodelc.model.mil";

#[test]
fn real_files_print_back_byte_for_byte() {
    let files = corpus("real");
    assert!(files.len() >= 11);
    for path in files {
        let (text, program) = parse_file(&path);
        let printed = print_program(&program);
        let name = path.file_name().unwrap().to_string_lossy();
        let expected = if name == FINAL_NEWLINE_EXCEPTION {
            text.strip_suffix('\n').expect("the exception ends with a newline")
        } else {
            text.as_str()
        };
        if printed != expected {
            let at = printed.bytes().zip(expected.bytes()).position(|(a, b)| a != b).unwrap_or(printed.len());
            let lo = at.saturating_sub(80);
            panic!(
                "{name}: printed text differs at byte {at}\nprinted:  {:?}\nexpected: {:?}",
                &printed[lo..(at + 80).min(printed.len())],
                &expected[lo..(at + 80).min(expected.len())]
            );
        }
    }
}

#[test]
fn generated_files_survive_print_and_reparse() {
    for path in corpus("generated") {
        let (_, program) = parse_file(&path);
        let printed = print_program(&program);
        let again = parse_program(&printed, "printed.mil").unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        assert_eq!(again, program, "{}", path.display());
        assert_eq!(print_program(&again), printed);
    }
}

fn real(name: &str) -> Program {
    let path = corpus("real").into_iter().find(|p| p.to_string_lossy().contains(name)).unwrap();
    parse_file(&path).1
}

#[test]
fn multi_output_statements_keep_every_result() {
    let p = real("silero-vad_unified_int8");
    let main = p.function("main").unwrap();
    let lstm = main.body.iter().find(|s| s.op.name == "lstm").unwrap();
    assert_eq!(lstm.outputs.len(), 3);
    let split = real("ParakeetEOU_1280ms_streaming_encoder");
    let s = split.functions[0].body.iter().find(|s| s.op.name == "split").unwrap();
    assert_eq!(s.outputs.len(), 2);
    assert_eq!(
        s.outputs[1].ty,
        Type::Tensor { dtype: ScalarType::Fp16, shape: vec![Dim::Known(1), Dim::Known(512), Dim::Known(17)] }
    );
}

#[test]
fn function_attributes_hold_nested_tuples_and_dicts() {
    let p = real("TransposeEncoder");
    let f = &p.functions[0];
    assert_eq!(f.inputs[0].ty.shape().unwrap(), &[Dim::Known(1), Dim::Unknown, Dim::Unknown]);
    let Arg::Value(v) = &f.attrs[0].value else { panic!("not a value") };
    let ValueData::Literal(Literal::Tuple(items)) = &v.data else { panic!("not a tuple") };
    let Literal::Tuple(range) = &items[1] else { panic!("not a tuple") };
    assert_eq!(range[0], Literal::Str("RangeDims".into()));
    let Literal::Dict(entries) = &range[1] else { panic!("not a dict") };
    let bounds = Literal::List(vec![Literal::Int(1), Literal::Int(2048)]);
    assert_eq!(
        entries[0].1,
        Literal::List(vec![Literal::List(vec![Literal::Int(1), Literal::Int(1)]), bounds.clone(), bounds])
    );
    let Type::Tuple(types) = &v.ty else { panic!("not a tuple type") };
    assert!(
        matches!(&types[1], Type::Tuple(t) if matches!(&t[1], Type::Dict(_, v) if matches!(**v, Type::List(_, Dim::Unknown))))
    );
}

#[test]
fn values_hold_exact_numbers_and_blob_references() {
    let p = real("silero-vad_unified_int8");
    let main = &p.functions[0];
    let neg_inf = main.body.iter().find(|s| s.outputs[0].name.name == "const_0_to_fp16").unwrap();
    let Some(Arg::Value(v)) = neg_inf.arg("val") else { panic!("no val") };
    assert_eq!(v.data, ValueData::Literal(Literal::Float(f64::NEG_INFINITY)));
    let q = real("test-q_base");
    let w = &q.functions[0].body[0];
    let Some(Arg::Value(v)) = w.arg("val") else { panic!("no val") };
    let ValueData::Literal(lit) = &v.data else { panic!("not a literal") };
    let flat = lit.flatten();
    assert_eq!(flat.len(), 16 * 4 * 4 * 10);
    assert_eq!(*flat[0], Literal::Float(f64::from(f32::from_bits((123 << 23) | 0x3b_aa05))));
    let dec = real("ParakeetEOU_1280ms_decoder");
    let emb = dec.functions[0].body.iter().find(|s| s.outputs[0].name.name == "module_prediction_embed_weight_to_fp16");
    let Some(Arg::Value(v)) = emb.unwrap().arg("val") else { panic!("no val") };
    let key = v.data.blob_key().unwrap();
    assert_eq!((key.path.as_str(), key.offset), ("@model_path/weights/weight.bin", 64));
}

#[test]
fn spans_point_at_the_source_text() {
    let path = corpus("real").into_iter().find(|p| p.to_string_lossy().contains("add_model")).unwrap();
    let (text, p) = parse_file(&path);
    let f = &p.functions[0];
    assert_eq!(&text[f.span.range()], "func main<ios16>");
    let s = &f.body[0];
    assert!(text[s.span.range()].starts_with("tensor<fp16, [1, 10]> var_3 = mul("));
    assert!(text[s.span.range()].ends_with("\")];"));
    assert_eq!(&text[s.inputs[1].name.span.range()], "y");
    assert_eq!(&text[f.outputs[0].span.range()], "var_3");
}
