//! The writer on programs no reference file covers: round trips through the reader,
//! derived addresses, and every kind of invalid content giving an error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::{check_canonical, parse_hwx, read_hwx, write_hwx, CodegenError, Relocation, TensorRole};

#[test]
fn synthetic_program_round_trips() {
    let h = common::synthetic();
    let bytes = write_hwx(&h).unwrap();
    assert_eq!(read_hwx(&bytes).unwrap(), h);
    assert_eq!(check_canonical(&bytes).unwrap(), h);
    let f = parse_hwx(&bytes).unwrap();
    let text = f.section("__TEXT", "__text").unwrap();
    assert_eq!((text.offset, text.size, text.nreloc, text.flags), (0x4000, 0x874, 4, 0x128));
    assert_eq!(text.reloff % 8, 0);
    let consts = f.section("__TEXT", "__const").unwrap();
    assert_eq!((consts.addr, consts.offset), (0x3000_0880, 0x4880));
    let segs: Vec<(u64, u64, u32)> = f.segments().map(|s| (s.vmaddr, s.vmsize, s.flags)).collect();
    // __TEXT: 0x880 + 0x9000 rounded to 0xc000; tensors 0x9000 bytes (64 planes of 0x240) -> 0xc000.
    assert_eq!(
        segs,
        [
            (0, 0x4000, 4),
            (0x3000_0000, 0xc000, 0),
            (0x3000_c000, 0xc000, 6),
            (0x3001_8000, 0x4000, 6),
            (0x3001_c000, 0xc000, 6)
        ]
    );
    assert_eq!(bytes.len(), 0x4000 + 0xc000);
}

#[test]
fn state_order_round_trips() {
    let mut h = common::synthetic();
    h.state_order = vec![1, 0, 2];
    let bytes = write_hwx(&h).unwrap();
    assert_eq!(read_hwx(&bytes).unwrap(), h);
    h.state_order = vec![0, 1, 2];
    let back = read_hwx(&write_hwx(&h).unwrap()).unwrap();
    assert!(back.state_order.is_empty(), "the identity order reads back as empty");
}

#[test]
fn a_large_symbol_table_moves_text_to_the_next_page() {
    let mut h = common::synthetic();
    h.const_symbols =
        (0..400).map(|i| anec_codegen::ConstSymbol { name: format!("K{i:064X}_ne_{i}"), offset: 0x40 * i }).collect();
    let bytes = write_hwx(&h).unwrap();
    let f = parse_hwx(&bytes).unwrap();
    let text = f.section("__TEXT", "__text").unwrap();
    let symtab = f.symtab().unwrap();
    let header_end = symtab.stroff + symtab.strsize;
    assert!(header_end > 0x4000);
    assert_eq!(text.offset, header_end.next_multiple_of(0x4000));
    let at = text.offset as usize;
    assert_eq!(&bytes[at..at + h.text.len()], h.text.as_slice());
    assert_eq!(read_hwx(&bytes).unwrap(), h);
}

#[test]
fn empty_consts_and_no_tensors_still_write() {
    let mut h = common::synthetic();
    h.consts = Vec::new().into();
    h.const_symbols.clear();
    h.relocations.clear();
    h.tensors.clear();
    let bytes = write_hwx(&h).unwrap();
    assert_eq!(read_hwx(&bytes).unwrap(), h);
}

/// Writes `h` after `change`, expecting an error whose message contains `needle`.
fn rejects(change: impl FnOnce(&mut anec_codegen::Hwx), needle: &str) -> CodegenError {
    let mut h = common::synthetic();
    change(&mut h);
    let Err(err) = write_hwx(&h) else { panic!("the writer accepted content that should fail with {needle:?}") };
    assert!(err.to_string().contains(needle), "{err} does not mention {needle:?}");
    err
}

#[test]
fn invalid_content_is_an_error() {
    rejects(|h| h.tensors[0].role = TensorRole::Intermediate, "follows intermediate");
    rejects(|h| h.tensors[0].bar = 1, "BAR index 1");
    rejects(|h| h.tensors[0].bar = 32, "BAR index 32");
    rejects(|h| h.tensors[1].bar = 5, "reuses BAR index 5");
    rejects(|h| h.tensors[0].name = "a\0b".into(), "NUL");
    rejects(|h| h.network = "n\0".into(), "NUL");
    rejects(|h| h.ident = "x\0".into(), "NUL");
    rejects(|h| h.relocations.push(Relocation::const_word(0x872)), "past the end of __text");
    rejects(|h| h.relocations[0].length = 4, "r_length");
    rejects(|h| h.relocations[0].symbol_num = 1 << 24, "r_symbolnum");
    rejects(|h| h.relocations[0].kind = 16, "r_type");
    rejects(|h| h.const_symbols[0].offset = 0x9000, "past its end");
    rejects(|h| h.state_order = vec![0, 0, 1], "permutation");
    rejects(|h| h.state_order = vec![0, 1], "permutation");
}

#[test]
fn values_too_wide_for_their_fields_are_errors_not_truncations() {
    let e = rejects(|h| h.tensors[1].dims[3] = 1 << 32, "dim W");
    assert!(matches!(e, CodegenError::Overflow { value: 0x1_0000_0000, .. }), "{e:?}");
    rejects(|h| h.tensors[0].section_size = u64::MAX - 2, "tensor segment size");
    // A 4 GiB first tensor pushes the next tensor's address beyond the 32-bit
    // LC_LOADFVMLIB header_addr.
    rejects(|h| h.tensors[0].section_size = 1 << 32, "header_addr");
}
