//! Our `.hwx` output read by an independent Mach-O parser (the `object` crate) after
//! patching the magic to `0xFEEDFACF`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::{read_hwx, write_hwx};
use object::read::macho::MachOFile64;
use object::{Endianness, Object, ObjectSection, ObjectSegment, ObjectSymbol};

/// Our bytes for a reference file, with the Mach-O 64 magic patched in.
fn patched(name: &str) -> Vec<u8> {
    let mut bytes = write_hwx(&read_hwx(&common::fixture(name)).unwrap()).unwrap();
    bytes[..4].copy_from_slice(&0xFEED_FACFu32.to_le_bytes());
    bytes
}

#[test]
fn object_reads_segments_sections_and_symbols_of_relu() {
    let bytes = patched("relu.hwx");
    let file = MachOFile64::<Endianness>::parse(&*bytes).unwrap();
    let segments: Vec<(String, u64, u64)> =
        file.segments().map(|s| (s.name().unwrap().unwrap_or_default().to_string(), s.address(), s.size())).collect();
    assert_eq!(
        segments,
        [
            ("__PAGEZERO".to_string(), 0, 0x4000),
            ("__TEXT".to_string(), 0x3000_0000, 0x8000),
            ("__FVMLIB".to_string(), 0x3000_8000, 0x4000),
            ("__FVMLIB".to_string(), 0x3000_c000, 0x4000),
        ]
    );
    let sections: Vec<(String, String, u64, u64)> = file
        .sections()
        .map(|s| {
            (
                s.segment_name().unwrap().unwrap_or_default().to_string(),
                s.name().unwrap().to_string(),
                s.address(),
                s.size(),
            )
        })
        .collect();
    assert_eq!(
        sections,
        [
            ("__TEXT".to_string(), "__text".to_string(), 0x3000_0000, 0x274),
            ("__TEXT".to_string(), "__const".to_string(), 0x3000_0280, 0x4000),
            ("__FVMLIB".to_string(), "__const".to_string(), 0x3000_8000, 0xc0),
            ("__FVMLIB".to_string(), "__data".to_string(), 0x3000_c000, 0xc0),
        ]
    );
    let text = file.section_by_name("__text").unwrap();
    assert_eq!(text.file_range(), Some((0x4000, 0x274)));
    assert_eq!(text.data().unwrap(), &bytes[0x4000..0x4274]);
    // `object` hides the twelve stabs entries; the two tensor symbols remain.
    let symbols: Vec<(String, u64)> = file.symbols().map(|s| (s.name().unwrap().to_string(), s.address())).collect();
    assert_eq!(symbols, [("image".to_string(), 0x3000_8000), ("probs@output".to_string(), 0x3000_c000)]);
    assert_eq!(file.macho_symbol_table().len(), 14);
}

#[test]
fn object_reads_every_reference_layout() {
    for (name, _) in common::fixtures() {
        let bytes = patched(&name);
        let file = MachOFile64::<Endianness>::parse(&*bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let consts = file
            .sections()
            .find(|s| s.name() == Ok("__const") && s.segment_name() == Ok(Some("__TEXT")))
            .unwrap_or_else(|| panic!("{name}: no __TEXT,__const"));
        assert_eq!(consts.address() % 0x40, 0, "{name}");
        let weights = consts.data().unwrap();
        let ours = read_hwx(&common::fixture(&name)).unwrap();
        assert_eq!(weights, ours.consts.as_slice(), "{name}");
        let const_symbols = file.symbols().filter(|s| s.name().is_ok_and(|n| n.starts_with('K'))).count();
        assert_eq!(const_symbols, ours.const_symbols.len(), "{name}");
    }
}
