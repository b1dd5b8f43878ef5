//! The check every compile runs on its program before writing it (`anec::verify_program`):
//! a program anec generated passes it, and the same program with a defect the engine
//! would trip over (a kernel chunk past `__const`) is refused as an internal error naming
//! the layer whose task reads it.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::PathBuf;

fn conv() -> anec::Compiled {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/conv.plist");
    anec::compile_file(&path, &anec::Options::new(anec::Target::H13g)).unwrap()
}

#[test]
fn a_generated_program_passes() {
    let c = conv();
    let bytes = anec_ir::mil::SharedBytes::from_vec(c.hwx_file().to_vec());
    anec::verify_program(&bytes, &c.hwx, "conv.plist").unwrap();
}

#[test]
fn a_kernel_chunk_past_the_constants_is_an_internal_error_naming_the_layer() {
    let mut c = conv();
    c.hwx.consts = c.hwx.consts[..0x10].to_vec().into();
    c.hwx.const_symbols.clear();
    let bytes = anec_ir::mil::SharedBytes::from_vec(anec_codegen::write_hwx(&c.hwx).unwrap());
    let e = anec::verify_program(&bytes, &c.hwx, "conv.plist").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, anec::Error::Unverified { .. }), "{text}");
    assert!(text.starts_with("conv.plist: internal compiler error"), "{text}");
    assert!(text.contains("layer 'my_layer'") && text.contains("TD 0: a kernel chunk"), "{text}");
}
