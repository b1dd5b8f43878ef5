//! Textual MIL errors: each syntax and checker error kind from a small program, with its
//! message and the exact text under its span.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec_front::mil::{parse_program, MAX_DEPTH};
use anec_ir::Diagnostic;

/// A valid program; the tests replace parts of it.
const BASE: &str = r#"program(1.3)
[buildInfo = dict<string, string>({{"coremlc-version", "3505.4.1"}})]
{
    func main<ios18>(tensor<fp16, [1, 4]> x) {
        tensor<int32, [2]> p = const()[name = string("p"), val = tensor<int32, [2]>([1, 0])];
        tensor<fp16, [4, 1]> y = transpose(perm = p, x = x)[name = string("y")];
    } -> (y);
}
"#;

/// Errors of `BASE` with `from` replaced by `to`.
fn errors(from: &str, to: &str) -> Vec<Diagnostic> {
    assert!(BASE.contains(from), "{from}");
    let text = BASE.replacen(from, to, 1);
    match parse_program(&text, "t.mil") {
        Ok(_) => panic!("no error for {to:?}"),
        Err(e) => e,
    }
}

/// The single error of `BASE` with `from` replaced by `to`: its message, `line:col` and
/// the text under its span.
fn one(from: &str, to: &str) -> (String, String, String) {
    let es = errors(from, to);
    assert_eq!(es.len(), 1, "{es:#?}");
    describe(&es[0])
}

fn describe(d: &Diagnostic) -> (String, String, String) {
    let text = d.text.as_deref().expect("diagnostics carry the text");
    let (line, col) = d.line_col().expect("a position");
    assert_eq!(d.file, "t.mil");
    (d.message.clone(), format!("{line}:{col}"), text[d.span.range()].to_string())
}

fn strs(m: &str, at: &str, under: &str) -> (String, String, String) {
    (m.to_string(), at.to_string(), under.to_string())
}

#[test]
fn base_program_is_valid() {
    let p = parse_program(BASE, "t.mil").unwrap();
    assert_eq!(p.functions[0].body.len(), 2);
}

#[test]
fn unexpected_token() {
    let got = one("perm = p", "perm p");
    assert_eq!(got, strs("expected `=`, found identifier `p`", "6:49", "p"));
}

#[test]
fn unterminated_string() {
    let got = one(r#"string("y")"#, r#"string("y)"#);
    assert_eq!(got, strs("unterminated string", "6:75", "\""));
}

#[test]
fn invalid_escape() {
    let got = one(r#"string("y")"#, r#"string("y\q")"#);
    assert_eq!(got, strs("invalid escape in string", "6:75", r#""y\q""#));
}

#[test]
fn bad_numbers() {
    let got = one("[1, 0]", "[1, 0x1.8]");
    assert_eq!(got, strs("invalid number `0x1.8`", "5:89", "0x1.8"));
    let got = one("[1, 0]", "[1, 12ab]");
    assert_eq!(got, strs("invalid number `12ab`", "5:89", "12ab"));
    let got = one("[1, 0]", "[1, 1e+]");
    assert_eq!(got, strs("invalid number `1e+`", "5:89", "1e+"));
    let got = one("[1, 0]", "[1, 999999999999999999999999999999999999999999]");
    assert_eq!(got.0, "integer `999999999999999999999999999999999999999999` is too large");
    let got = one("[1, 4]", "[1, 99999999999999999999]");
    assert_eq!(got, strs("dimension `99999999999999999999` is too large", "4:39", "99999999999999999999"));
}

#[test]
fn unexpected_character() {
    let got = one("perm = p,", "perm = p, @");
    assert_eq!(got, strs("unexpected character `@`", "6:54", "@"));
}

#[test]
fn unclosed_bracket_at_end_of_file() {
    let cut = BASE.find(r#"("y")]"#).unwrap() + 5;
    let es = parse_program(&BASE[..cut], "t.mil").unwrap_err();
    assert_eq!(describe(&es[0]), strs("unclosed `[`", "6:60", "["));
    assert_eq!(es[0].notes, vec!["the file ends where `,` or `]` was expected".to_string()]);
}

#[test]
fn unexpected_end_of_file() {
    let es = parse_program("program(1.0)\n", "t.mil").unwrap_err();
    assert_eq!(es[0].message, "unexpected end of file, expected `{`");
    assert_eq!(es[0].line_col(), Some((2, 1)));
}

#[test]
fn missing_arrow() {
    let got = one("} -> (y);", "} (y);");
    assert_eq!(got, strs("expected `->` after the function body, found `(`", "7:7", "("));
}

#[test]
fn missing_semicolon() {
    let got = one(r#"("y")];"#, r#"("y")]"#);
    assert_eq!(got, strs("expected `;`, found `}`", "7:5", "}"));
}

#[test]
fn unknown_element_type() {
    let got = one("tensor<fp16, [4, 1]> y", "tensor<fp17, [4, 1]> y");
    assert_eq!(got, strs("unknown element type `fp17`", "6:16", "fp17"));
}

#[test]
fn unknown_type() {
    let got = one("tensor<fp16, [4, 1]> y", "floaty y");
    assert_eq!(got, strs("unknown type `floaty`", "6:9", "floaty"));
}

#[test]
fn text_after_the_program() {
    let got = one("} -> (y);\n}\n", "} -> (y);\n}\n}");
    assert_eq!(got, strs("unexpected `}` after the end of the program", "9:1", "}"));
}

#[test]
fn nesting_is_limited() {
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let got = one("[1, 0]", &deep);
    assert_eq!(got.0, format!("nesting deeper than {MAX_DEPTH} levels"));
    let deep_types = format!("{}fp16{}", "tuple<".repeat(10_000), ">".repeat(10_000));
    let got = one("tensor<fp16, [4, 1]> y", &format!("{deep_types} y"));
    assert_eq!(got.0, format!("nesting deeper than {MAX_DEPTH} levels"));
}

#[test]
fn undefined_variable() {
    let got = one("perm = p", "perm = q");
    assert_eq!(got, strs("use of undefined variable `q`", "6:51", "q"));
}

#[test]
fn use_before_definition_is_undefined() {
    let text = BASE.replacen("(perm = p, x = x)", "(perm = p, x = y)", 1);
    let es = parse_program(&text, "t.mil").unwrap_err();
    assert_eq!(describe(&es[0]), strs("use of undefined variable `y`", "6:58", "y"));
}

#[test]
fn variable_defined_twice() {
    let got = errors("tensor<fp16, [4, 1]> y", "tensor<fp16, [4, 1]> p");
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(describe(&got[0]), strs("variable `p` is defined twice in function `main`", "6:30", "p"));
    assert_eq!(got[0].notes, vec!["first defined at line 5, column 28".to_string()]);
    assert_eq!(got[1].message, "function output `y` is not defined");
    let got = errors("tensor<int32, [2]> p =", "tensor<int32, [2]> x =");
    assert_eq!(describe(&got[0]), strs("variable `x` is defined twice in function `main`", "5:28", "x"));
    assert_eq!(got[0].notes, vec!["first defined at line 4, column 43".to_string()]);
    assert_eq!(got[1].message, "use of undefined variable `p`");
}

#[test]
fn function_output_not_defined() {
    let got = one("-> (y);", "-> (y, z);");
    assert_eq!(got, strs("function output `z` is not defined", "7:14", "z"));
}

#[test]
fn literal_shape_mismatches() {
    let got = one("[2]>([1, 0])", "[2]>([1, 0, 2])");
    assert_eq!(got.0, "dimension 0 has 3 elements, the shape says 2");
    assert_eq!(got.2, "[1, 0, 2]");
    let got = one("[2]>([1, 0])", "[2]>(1)");
    assert_eq!(got.0, "expected a list for dimension 0 of a rank-1 tensor, found the integer `1`");
    let got = one("[2]>([1, 0])", "[2]>([[1], [0]])");
    assert_eq!(got.0, "element [0]: a list where a int32 scalar is expected (more nesting than the shape)");
    let got = one("tensor<int32, [2]>([1, 0])", "tensor<int32, [2, 2]>([[1, 2], [3]])");
    assert_eq!(got.0, "element [1]: dimension 1 has 1 elements, the shape says 2");
    let got = one("tensor<int32, [2]>([1, 0])", "tensor<int32, [?, ?]>([[1, 2], [3]])");
    assert_eq!(got.0, "element [1]: dimension 1 has 1 elements, earlier lists have 2");
}

#[test]
fn literal_kind_mismatches() {
    let cases = [
        ("[1, \"a\"]", "element [1]: the string \"a\" does not fit element type int32"),
        ("[1, 0x1.8p+0]", "element [1]: the float `1.5` does not fit element type int32"),
        ("[1, true]", "element [1]: the bool `true` does not fit element type int32"),
        ("[1, 2147483648]", "element [1]: integer 2147483648 is out of range for int32"),
    ];
    for (lit, msg) in cases {
        let got = one("[2]>([1, 0])", &format!("[2]>({lit})"));
        assert_eq!(got.0, msg);
        assert_eq!(format!("[1, {}]", got.2), lit, "the span covers the element");
    }
    let got = one("tensor<int32, [2]>([1, 0])", "tensor<uint8, [2]>([1, -1])");
    assert_eq!(got.0, "element [1]: integer -1 is out of range for uint8");
    let got = one("tensor<int32, [2]>([1, 0])", "tensor<int8, [2]>([1, 300])");
    assert_eq!(got.0, "element [1]: integer 300 is out of range for int8");
    let got = one(r#"string("p")"#, "string(1)");
    assert_eq!(got, strs("the integer `1` does not fit element type string", "5:54", "1"));
    let got = one(r#"val = tensor<int32, [2]>([1, 0])"#, "val = tensor<fp16, []>(false)");
    assert_eq!(got.0, "the bool `false` does not fit element type fp16");
    let got = one(r#"val = tensor<int32, [2]>([1, 0])"#, "val = bool(1)");
    assert_eq!(got.0, "the integer `1` does not fit element type bool");
}

#[test]
fn container_literal_mismatches() {
    let got = one(r#"{{"coremlc-version", "3505.4.1"}}"#, r#"{{"coremlc-version", 3}}"#);
    assert_eq!(got.0, "element [1]: the integer `3` does not fit element type string");
    let got = one(r#"dict<string, string>({{"coremlc-version", "3505.4.1"}})"#, r#"tuple<string, int32>(("a"))"#);
    assert_eq!(got.0, "tuple literal has 1 elements, the type says 2");
    let got = one(r#"dict<string, string>({{"coremlc-version", "3505.4.1"}})"#, "list<int32, 2>([1, 2, 3])");
    assert_eq!(got.0, "list literal has 3 elements, the type says 2");
}

#[test]
fn unknown_opset() {
    let got = one("main<ios18>", "main<ios19>");
    assert_eq!(got, strs("unknown opset `ios19`", "4:15", "ios19"));
}

#[test]
fn blobfile_path_and_offset() {
    let blob = |path: &str, offset: &str| format!("tensor<int32, [2]>(BLOBFILE(path = {path}, offset = {offset}))");
    let got = one("tensor<int32, [2]>([1, 0])", &blob("uint64(3)", "uint64(64)"));
    assert_eq!(got, strs("BLOBFILE path must be a string, found the integer `3` of type uint64", "5:101", "uint64(3)"));
    let got = one("tensor<int32, [2]>([1, 0])", &blob(r#"string("w.bin")"#, r#"string("64")"#));
    assert_eq!(got.0, "BLOBFILE offset must be a non-negative integer, found the string \"64\" of type string");
    assert_eq!(got.2, r#"string("64")"#);
    let got = one("tensor<int32, [2]>([1, 0])", &blob(r#"string("w.bin")"#, "int64(-64)"));
    assert_eq!(got.0, "BLOBFILE offset must be a non-negative integer, found the integer `-64` of type int64");
    assert!(parse_program(
        &BASE.replacen("tensor<int32, [2]>([1, 0])", &blob(r#"string("w.bin")"#, "uint64(64)"), 1),
        "t.mil"
    )
    .is_ok());
}

#[test]
fn repeated_keys_and_functions() {
    let got = one("perm = p, x = x", "perm = p, x = x, x = x");
    assert_eq!(got, strs("argument `x` is given twice", "6:61", "x"));
    let func = BASE.split_once("    func").unwrap().1.rsplit_once('}').unwrap().0;
    let text = BASE.replacen("} -> (y);\n", &format!("}} -> (y);\n    func{func}"), 1);
    let es = parse_program(&text, "t.mil").unwrap_err();
    assert_eq!(es.len(), 1, "{es:#?}");
    assert_eq!(describe(&es[0]), strs("function `main` is defined twice", "8:5", "func main<ios18>"));
}

#[test]
fn every_checker_error_is_reported_in_order() {
    let text = BASE
        .replacen("perm = p", "perm = q", 1)
        .replacen("main<ios18>", "main<ios9>", 1)
        .replacen("-> (y)", "-> (w)", 1);
    let es = parse_program(&text, "t.mil").unwrap_err();
    let msgs: Vec<&str> = es.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs, ["unknown opset `ios9`", "use of undefined variable `q`", "function output `w` is not defined"]);
}

#[test]
fn display_names_file_line_and_column() {
    let es = errors("perm = p", "perm = q");
    assert_eq!(es[0].to_string(), "t.mil:6:51: use of undefined variable `q`");
}
