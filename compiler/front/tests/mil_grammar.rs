//! Textual MIL grammar corners not in the corpus: several functions, no attributes,
//! statements without results, `state<>` and `list<>` types, every literal form (negative
//! and u64-sized integers, decimal and hex floats, `inf`/`-inf`/`nan`, escapes, empty
//! lists, tuples and dicts), and the printed layout of each.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec_front::mil::parse_program;
use anec_ir::mil::print::print_program;
use anec_ir::mil::{Arg, Dim, Literal, Program, ScalarType, Stmt, Type, ValueData};

/// Loose layout (like hand-written generators): odd spacing, decimal floats, no attributes.
const SOURCE: &str = r#"program(1.3)
{
  func first<ios18>(state<tensor<fp16, [1, ?]>> s, list<tensor<int32, [2]>, ?> l) {
    tensor<fp16,[1,?]> r=read_state(input=s);
    write_state(data=r,input=s)[name=string("w")];
    uint64 big = const()[val = uint64(18446744073709551615)];
    int64 neg = const()[val = int64(-9223372036854775808)];
    tensor<fp32, [6]> f = const()[val = tensor<fp32, [6]>([1.5, -0.25e1, 0x1.8p-3, inf, -inf, -0x0p+0])];
    fp64 n = const()[val = fp64(nan)];
    string e = const()[val = string("a\"b\\c\nd\te\x41")];
    tensor<int32, [0]> z = const()[val = tensor<int32, [0]>([])];
    tuple<> t = const()[val = tuple<>(())];
    dict<string, int32> d = const()[val = dict<string, int32>({})];
    tensor<fp16, [1, ?]> c0, tensor<fp16, [1, ?]> c1 = split(x = r, values = (r, (r, s)))[];
  } -> (r, c0, c1);
  func second<ios15>() {
  } -> ();
}
"#;

/// The same program in coremlc's layout.
const PRINTED: &str = r#"program(1.3)
{
    func first<ios18>(state<tensor<fp16, [1, ?]>> s, list<tensor<int32, [2]>, ?> l) {
            tensor<fp16, [1, ?]> r = read_state(input = s);
            write_state(data = r, input = s)[name = string("w")];
            uint64 big = const()[val = uint64(18446744073709551615)];
            int64 neg = const()[val = int64(-9223372036854775808)];
            tensor<fp32, [6]> f = const()[val = tensor<fp32, [6]>([0x1.8p+0, -0x1.4p+1, 0x1.8p-3, inf, -inf, -0x0p+0])];
            fp64 n = const()[val = fp64(nan)];
            string e = const()[val = string("a\"b\\c\nd\teA")];
            tensor<int32, [0]> z = const()[val = tensor<int32, [0]>([])];
            tuple<> t = const()[val = tuple<>(())];
            dict<string, int32> d = const()[val = dict<string, int32>({})];
            tensor<fp16, [1, ?]> c0, tensor<fp16, [1, ?]> c1 = split(x = r, values = (r, (r, s)));
        } -> (r, c0, c1);
    func second<ios15>() {
        } -> ();
}"#;

fn parse(text: &str) -> Program {
    parse_program(text, "g.mil")
        .unwrap_or_else(|e| panic!("{}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")))
}

fn stmt<'p>(p: &'p Program, result: &str) -> &'p Stmt {
    p.functions[0].body.iter().find(|s| s.outputs.iter().any(|o| o.name.name == result)).unwrap()
}

fn val(s: &Stmt) -> &Literal {
    match s.arg("val") {
        Some(Arg::Value(v)) => match &v.data {
            ValueData::Literal(l) => l,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn prints_in_coremlc_layout() {
    assert_eq!(print_program(&parse(SOURCE)), PRINTED);
}

#[test]
fn printed_form_parses_to_the_same_program() {
    let p = parse(SOURCE);
    let again = parse(PRINTED);
    // NaN never equals itself: compare the rest, then the NaN separately.
    let is_nan = |p: &Program| matches!(val(stmt(p, "n")), Literal::Float(v) if v.is_nan());
    assert!(is_nan(&p) && is_nan(&again));
    let strip = |mut p: Program| {
        p.functions[0].body.retain(|s| s.outputs.first().is_none_or(|o| o.name.name != "n"));
        p
    };
    assert_eq!(strip(again), strip(p));
}

#[test]
fn literals_hold_exact_values() {
    let p = parse(SOURCE);
    assert_eq!(*val(stmt(&p, "big")), Literal::Int(i128::from(u64::MAX)));
    assert_eq!(*val(stmt(&p, "neg")), Literal::Int(i128::from(i64::MIN)));
    let floats = [1.5, -2.5, 0.1875, f64::INFINITY, f64::NEG_INFINITY, -0.0];
    assert_eq!(*val(stmt(&p, "f")), Literal::List(floats.iter().map(|v| Literal::Float(*v)).collect()));
    let Literal::List(items) = val(stmt(&p, "f")) else { panic!() };
    assert!(matches!(items[5], Literal::Float(v) if v.is_sign_negative()));
    assert_eq!(*val(stmt(&p, "e")), Literal::Str("a\"b\\c\nd\teA".into()));
    assert_eq!(*val(stmt(&p, "z")), Literal::List(vec![]));
    assert_eq!(*val(stmt(&p, "t")), Literal::Tuple(vec![]));
    assert_eq!(*val(stmt(&p, "d")), Literal::Dict(vec![]));
}

#[test]
fn structure_is_kept() {
    let p = parse(SOURCE);
    assert_eq!(p.functions.len(), 2);
    assert!(p.attrs.is_empty());
    let f = &p.functions[0];
    let fp16_1_any = Type::Tensor { dtype: ScalarType::Fp16, shape: vec![Dim::Known(1), Dim::Unknown] };
    assert_eq!(f.inputs[0].ty, Type::State(Box::new(fp16_1_any.clone())));
    assert!(matches!(&f.inputs[1].ty, Type::List(_, Dim::Unknown)));
    let write = f.body.iter().find(|s| s.op.name == "write_state").unwrap();
    assert!(write.outputs.is_empty());
    assert_eq!(write.name_attr(), Some("w"));
    let split = f.body.iter().find(|s| s.op.name == "split").unwrap();
    assert_eq!(split.outputs.len(), 2);
    assert!(split.attrs.is_empty());
    let Some(Arg::Tuple(items, _)) = split.arg("values") else { panic!() };
    assert!(matches!(&items[1], Arg::Tuple(inner, _) if inner.len() == 2));
    assert_eq!(p.functions[1].name, "second");
    assert!(p.functions[1].outputs.is_empty());
}

#[test]
fn repeated_key_in_a_long_argument_list() {
    let args: Vec<String> = (0..20).map(|i| format!("a{i} = x")).collect();
    let text = SOURCE.replacen("read_state(input=s)", &format!("read_state(input=s, {}, a3 = x)", args.join(", ")), 1);
    let text = text.replacen("(state<", "(tensor<fp16, [1]> x, state<", 1);
    let errors = parse_program(&text, "g.mil").unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].message, "argument `a3` is given twice");
    assert_eq!(&text[errors[0].span.range()], "a3");
    assert!(errors[0].span.start as usize > text.find("a19").unwrap());
}
