//! The same weights stored as fp16, as fp32 (converted as they are packed) and as 4-bit
//! palette indices (expanded once, through a temporary file) compile to the same program,
//! byte for byte: each form takes its own path to the packed banks.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

mod common;

use common::{write_model_as, Form};

fn program(form: Form) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    write_model_as(dir.path(), form);
    let opts = anec::Options::new(anec::Target::H13g);
    let c = anec::compile_file(&dir.path().join("model.mil"), &opts).unwrap_or_else(|e| panic!("{form:?}: {e}"));
    c.hwx_file().to_vec()
}

#[test]
fn fp16_fp32_and_palettized_weights_give_the_same_program() {
    let fp16 = program(Form::Fp16);
    assert!(fp16.len() > 4 << 20, "large enough to be staged on disk and packed in parallel");
    assert!(fp16 == program(Form::Fp32), "fp32 weights");
    assert!(fp16 == program(Form::Palette4), "palettized weights");
}
