//! Rendered textual MIL errors: one snapshot per syntax and checker error kind, each from
//! a small program, through `anec::diagnostic::render` (file:line:col, the source line and
//! a caret under the offending text).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use anec::diagnostic::{render, render_all};
use anec_front::mil::parse_program;
use anec_ir::mil::Span;
use anec_ir::Diagnostic;

/// A valid program; each test swaps one piece.
const BASE: &str = r#"program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 4]> x) {
        tensor<int32, [2]> p = const()[name = string("p"), val = tensor<int32, [2]>([1, 0])];
        tensor<fp16, [4, 1]> y = transpose(perm = p, x = x)[name = string("y")];
    } -> (y);
}
"#;

/// The rendered errors of `BASE` with `from` replaced by `to` (exactly one error).
fn rendered(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    let text = BASE.replacen(from, to, 1);
    rendered_text(&text)
}

fn rendered_text(text: &str) -> String {
    let errors = parse_program(text, "model.mil").expect_err("the program has an error");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    render(&errors[0])
}

#[test]
fn base_is_valid() {
    assert!(parse_program(BASE, "model.mil").is_ok());
}

#[test]
fn syntax_unexpected_token() {
    insta::assert_snapshot!(rendered("perm = p", "perm p"));
}

#[test]
fn syntax_unterminated_string() {
    insta::assert_snapshot!(rendered(r#"string("y")"#, r#"string("y)"#));
}

#[test]
fn syntax_invalid_escape() {
    insta::assert_snapshot!(rendered(r#"string("y")"#, r#"string("y\q")"#));
}

#[test]
fn syntax_bad_number() {
    insta::assert_snapshot!(rendered("[1, 0]", "[1, 0x1.8]"));
}

#[test]
fn syntax_integer_too_large() {
    insta::assert_snapshot!(rendered("[1, 0]", "[1, 1000000000000000000000000000000000000000]"));
}

#[test]
fn syntax_unexpected_character() {
    insta::assert_snapshot!(rendered("perm = p,", "perm = p, @"));
}

#[test]
fn syntax_unclosed_bracket() {
    let cut = BASE.find(r#"("y")]"#).expect("in BASE") + 5;
    insta::assert_snapshot!(rendered_text(&BASE[..cut]));
}

#[test]
fn syntax_unexpected_end_of_file() {
    insta::assert_snapshot!(rendered_text("program(1.3)\n"));
}

#[test]
fn syntax_missing_arrow() {
    insta::assert_snapshot!(rendered("} -> (y);", "} (y);"));
}

#[test]
fn syntax_missing_semicolon() {
    insta::assert_snapshot!(rendered(r#"("y")];"#, r#"("y")]"#));
}

#[test]
fn syntax_unknown_element_type() {
    insta::assert_snapshot!(rendered("tensor<fp16, [4, 1]> y", "tensor<fp17, [4, 1]> y"));
}

#[test]
fn syntax_unknown_type() {
    insta::assert_snapshot!(rendered("tensor<fp16, [4, 1]> y", "floaty y"));
}

#[test]
fn syntax_text_after_program() {
    insta::assert_snapshot!(rendered("} -> (y);\n}\n", "} -> (y);\n}\n}"));
}

#[test]
fn syntax_nesting_too_deep() {
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    insta::assert_snapshot!(rendered("[1, 0]", &deep));
}

#[test]
fn check_undefined_variable() {
    insta::assert_snapshot!(rendered("perm = p", "perm = q"));
}

#[test]
fn check_defined_twice() {
    insta::assert_snapshot!(rendered("tensor<int32, [2]> p =", "tensor<int32, [2]> x, tensor<int32, [2]> p ="));
}

#[test]
fn check_output_not_defined() {
    insta::assert_snapshot!(rendered("-> (y);", "-> (y, z);"));
}

#[test]
fn check_literal_element_count() {
    insta::assert_snapshot!(rendered("[2]>([1, 0])", "[2]>([1, 0, 2])"));
}

#[test]
fn check_literal_nesting() {
    insta::assert_snapshot!(rendered("tensor<int32, [2]>([1, 0])", "tensor<int32, [2, 1]>([1, 0])"));
}

#[test]
fn check_string_for_int() {
    insta::assert_snapshot!(rendered("[2]>([1, 0])", r#"[2]>([1, "0"])"#));
}

#[test]
fn check_float_for_int() {
    insta::assert_snapshot!(rendered("[2]>([1, 0])", "[2]>([1, 0.5])"));
}

#[test]
fn check_int_out_of_range() {
    insta::assert_snapshot!(rendered("tensor<int32, [2]>([1, 0])", "tensor<uint8, [2]>([1, 256])"));
}

#[test]
fn check_bool_for_float() {
    insta::assert_snapshot!(rendered("val = tensor<int32, [2]>([1, 0])", "val = fp16(true)"));
}

#[test]
fn check_unknown_opset() {
    insta::assert_snapshot!(rendered("main<ios18>", "main<ios19>"));
}

#[test]
fn check_blobfile_path() {
    let blob = r#"tensor<int32, [2]>(BLOBFILE(path = uint64(3), offset = uint64(64)))"#;
    insta::assert_snapshot!(rendered("tensor<int32, [2]>([1, 0])", blob));
}

#[test]
fn check_blobfile_offset() {
    let blob = r#"tensor<int32, [2]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = fp16(64.0)))"#;
    insta::assert_snapshot!(rendered("tensor<int32, [2]>([1, 0])", blob));
}

#[test]
fn check_argument_given_twice() {
    insta::assert_snapshot!(rendered("perm = p, x = x", "perm = p, x = x, x = x"));
}

#[test]
fn check_function_defined_twice() {
    let func = "    func main<ios18>() {\n    } -> ();\n}\n";
    insta::assert_snapshot!(rendered("} -> (y);\n}\n", &format!("}} -> (y);\n{func}")));
}

#[test]
fn several_check_errors_render_in_order() {
    let text = BASE.replacen("perm = p", "perm = q", 1).replacen("-> (y)", "-> (w)", 1);
    let errors = parse_program(&text, "model.mil").expect_err("two errors");
    insta::assert_snapshot!(render_all(&errors));
}

#[test]
fn long_lines_are_cut_around_the_error() {
    let values: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    let mut long = values.clone();
    long[1000] = "\"x\"".into();
    let from = "tensor<int32, [2]>([1, 0])";
    let to = format!("tensor<int32, [2000]>([{}])", long.join(", "));
    let text = BASE.replacen(from, &to, 1).replacen("tensor<int32, [2]> p", "tensor<int32, [2000]> p", 1);
    insta::assert_snapshot!(rendered_text(&text));
}

#[test]
fn without_text_renders_one_line() {
    let d =
        Diagnostic::new("model.mlpackage", None, Span::NONE, "function `main`, op `conv_0`: unknown opset `CoreML9`")
            .with_note("supported opsets: ios15, ios16, ios17, ios18");
    insta::assert_snapshot!(render(&d));
}
