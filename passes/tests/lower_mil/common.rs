//! Test helpers: parse MIL text, lower it, print or collect the errors.

use anec_ir::mil::{BlobData, BlobKey, BlobTable, MilModel, ScalarType, SharedBytes};
use anec_ir::{print_module, verify_module, Module};
use anec_passes::lower::lower_mil;

/// The file name tests use.
pub const FILE: &str = "test.mil";

/// Parses `text` (panicking with the parser's errors) into a model with `blobs`.
pub fn model_with(text: &str, blobs: BlobTable) -> MilModel {
    let program = match anec_front::mil::parse_program(text, FILE) {
        Ok(p) => p,
        Err(errs) => panic!("parse failed: {}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
    };
    MilModel { program, blobs, file: FILE.into(), text: Some(text.into()) }
}

/// Lowers `main` of `model`, panicking with the diagnostics on failure; checks the
/// module verifies.
pub fn lower_model(model: &MilModel) -> Module {
    match lower_mil(model, "main") {
        Ok(m) => {
            assert_eq!(verify_module(&m), Ok(()));
            m
        }
        Err(errs) => {
            panic!("lowering failed:\n{}", errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// Lowers a program without blobs and prints the module.
pub fn lower(text: &str) -> String {
    print_module(&lower_model(&model_with(text, BlobTable::new())))
}

/// Lowers a program that must fail; returns each diagnostic as `file:line:col: message`.
pub fn errors(text: &str) -> Vec<String> {
    errors_of(&model_with(text, BlobTable::new()))
}

/// The diagnostics of a model that must fail to lower.
pub fn errors_of(model: &MilModel) -> Vec<String> {
    match lower_mil(model, "main") {
        Ok(m) => panic!("expected errors, the module lowered:\n{}", print_module(&m)),
        Err(errs) => errs.iter().map(ToString::to_string).collect(),
    }
}

/// Asserts that some error contains `needle`.
pub fn assert_error(errs: &[String], needle: &str) {
    assert!(errs.iter().any(|e| e.contains(needle)), "no error contains {needle:?}:\n{}", errs.join("\n"));
}

/// A one-blob table: `@model_path/weights/weight.bin` at `offset`.
pub fn blob(offset: u64, dtype: ScalarType, bytes: Vec<u8>) -> (BlobKey, BlobData) {
    let key = BlobKey { path: "@model_path/weights/weight.bin".into(), offset };
    (key, BlobData { dtype, bytes: SharedBytes::from_vec(bytes) })
}

/// A MIL program with one function `main` over `inputs`, returning `outputs`.
pub fn program(inputs: &str, body: &str, outputs: &str) -> String {
    format!("program(1.3)\n{{\n    func main<ios18>({inputs}) {{\n{body}    }} -> ({outputs});\n}}\n")
}
