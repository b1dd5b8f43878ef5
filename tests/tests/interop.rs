//! Our programs read by other tools: the shared Python decoder (`tddecode.py`), the
//! `object` crate's Mach-O reader, and our own IR text round trip.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tests::{conformance_input, fixtures, workspace};
use object::read::macho::MachOFile64;
use object::{Endianness, Object, ObjectSection, ObjectSegment};
use std::process::Command;

/// Compiled in the dense v4.2.1 form: `tddecode.py` reads 0x274-byte TDs only.
fn compile(name: &str) -> Vec<u8> {
    let mut opts = anec::Options::new(anec::Target::H13g);
    opts.compat = anec::Compat::V4_2;
    anec::compile_file(&conformance_input(name), &opts).and_then(|c| c.hwx_bytes()).expect("compiles")
}

#[test]
fn tddecode_reads_our_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["relu", "sigmoid", "conv", "sum"] {
        let path = dir.path().join(format!("{name}.hwx"));
        std::fs::write(&path, compile(name)).expect("write");
        let script = fixtures().join("../tools/tddecode.py");
        let out = match Command::new("python3").arg(&script).arg(&path).output() {
            Ok(o) => o,
            Err(e) => panic!("python3 is needed for this test: {e}"),
        };
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |f: &str| {
            text.lines().find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(f)).then(|| w.next().and_then(|v| v.parse::<u64>().ok())).flatten()
            })
        };
        let expected_cin = if name == "sum" {
            64
        } else if name == "conv" {
            3
        } else {
            1
        };
        assert_eq!(field("aneTD.Header[0].EON"), Some(1), "{name}: {text}");
        assert_eq!(field("aneRegs.Common.Cin.Cin"), Some(expected_cin), "{name}: {text}");
    }
}

#[test]
fn object_crate_reads_our_file_with_the_magic_patched() {
    let mut bytes = compile("conv");
    bytes[..4].copy_from_slice(&0xFEED_FACFu32.to_le_bytes());
    let file = MachOFile64::<Endianness>::parse(&*bytes).expect("object parses it");
    let segs: Vec<String> = file.segments().filter_map(|s| s.name().ok().flatten().map(String::from)).collect();
    assert_eq!(segs, ["__PAGEZERO", "__TEXT", "__FVMLIB", "__FVMLIB"]);
    let text = file.section_by_name("__text").expect("__text");
    assert_eq!(text.address(), 0x3000_0000);
    assert_eq!(text.size(), 0x274);
    let consts = file.section_by_name("__const").expect("__const");
    assert_eq!(consts.data().expect("data").len(), 0xc0);
}

#[test]
fn printed_ir_parses_back_to_the_same_module() {
    let root = fixtures().join("apple-h13/netplist");
    let mut checked = 0;
    for dir in ["simple", "plists"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("dir").flatten() {
            let Ok(module) = anec_front::parse_netplist(&entry.path()) else { continue };
            let text = anec_ir::print_module(&module);
            let back = anec_ir::parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
            assert_eq!(back, module, "{}", entry.path().display());
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} netplists parsed");
}

#[test]
fn an_ir_file_compiles_to_the_same_program_as_its_netplist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let module = anec_front::parse_netplist(&conformance_input("conv")).expect("parses");
    let mlir = dir.path().join("conv.mlir");
    std::fs::write(&mlir, anec_ir::print_module(&module)).expect("write");
    let mut opts = anec::Options::new(anec::Target::H13g);
    opts.compat = anec::Compat::V4_2;
    let from_ir = anec::compile_file(&mlir, &opts).and_then(|c| c.hwx_bytes()).expect("compiles");
    assert!(from_ir == compile("conv"), "the .mlir and netplist programs differ");
    let _ = workspace();
}
