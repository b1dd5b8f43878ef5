//! `write_hwx(read_hwx(f)) == f` for every Apple reference file, and what `read_hwx`
//! finds in them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::hwx::file::LoadCommand;
use anec_codegen::{check_canonical, parse_hwx, read_hwx, write_hwx, Relocation, TensorRole};

/// Index of the first differing byte, for a readable failure.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

#[test]
fn every_reference_file_round_trips_byte_for_byte() {
    for (name, bytes) in common::fixtures() {
        let h = read_hwx(&bytes).unwrap_or_else(|e| panic!("{name}: read failed: {e}"));
        let again = write_hwx(&h).unwrap_or_else(|e| panic!("{name}: write failed: {e}"));
        if let Some(i) = first_difference(&bytes, &again) {
            panic!(
                "{name}: first difference at {i:#x}: apple {:?}, ours {:?} (lengths {:#x} / {:#x})",
                bytes.get(i),
                again.get(i),
                bytes.len(),
                again.len()
            );
        }
        check_canonical(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn relu_content() {
    let h = read_hwx(&common::fixture("relu.hwx")).unwrap();
    assert_eq!(h.cpu_subtype, 4);
    assert_eq!(h.text.len(), 0x274);
    assert_eq!(h.consts, vec![0; 0x4000].into());
    assert_eq!((h.td_count, h.td_words, h.state_850, h.state_858), (1, 0x9c, 0x11, 3));
    assert_eq!(h.network, "net");
    assert!(h.const_symbols.is_empty() && h.relocations.is_empty());
    assert!(h.ident.starts_with("ANEC v1\nzin_ane_compiler v4.2.1\n\t-t h13\n"));
    let [input, output] = h.tensors.as_slice() else { panic!("two tensors") };
    assert_eq!((input.name.as_str(), input.role, input.bar), ("image", TensorRole::Input, 5));
    assert_eq!((output.name.as_str(), output.role, output.bar), ("probs@output", TensorRole::Output, 4));
    assert_eq!(input.dims, [1, 1, 1, 77, 1]);
    assert_eq!(input.strides, [0xc0, 0xc0, 0xc0, 2, 0xc0]);
    assert_eq!((input.section_size, input.state_size), (0xc0, 0xc0));
    assert_eq!((output.section_size, output.state_size), (0xc0, 77 * 2));
    assert_eq!(input.dtype_code, 5);
}

#[test]
fn conv_has_weight_symbols_and_relocations() {
    let h = read_hwx(&common::fixture("conv.hwx")).unwrap();
    assert_eq!(h.consts.len(), 0xc0);
    let offsets: Vec<u64> = h.const_symbols.iter().map(|s| s.offset).collect();
    assert_eq!(offsets, [0, 0x40, 0x80]);
    assert!(h
        .const_symbols
        .iter()
        .enumerate()
        .all(|(i, s)| s.name.starts_with('K') && s.name.ends_with(&format!("_ne_{i}"))));
    let expected: Vec<Relocation> = [0x74, 0x78, 0x7c].into_iter().map(Relocation::const_word).collect();
    assert_eq!(h.relocations, expected);
    assert_eq!(h.tensors[0].dims, [1, 3, 1, 1, 1]);
    assert_eq!(h.tensors[1].state_size, 2 * 0x40 + 2);
}

#[test]
fn sum_binds_three_tensors_in_bar_order() {
    let h = read_hwx(&common::fixture("sum.hwx")).unwrap();
    let summary: Vec<(&str, TensorRole, u8)> = h.tensors.iter().map(|t| (t.name.as_str(), t.role, t.bar)).collect();
    assert_eq!(
        summary,
        [("image2", TensorRole::Input, 5), ("image", TensorRole::Input, 6), ("probs@output", TensorRole::Output, 4)]
    );
    // The flavor-3 threads list `image` before `image2`.
    assert_eq!(h.state_order, [1, 0, 2]);
}

#[test]
fn sigmoid_table_is_one_symbol_one_relocation() {
    let h = read_hwx(&common::fixture("sigmoid.hwx")).unwrap();
    assert_eq!(h.consts.len(), 0x80);
    assert_eq!(h.const_symbols.len(), 1);
    assert!(!h.const_symbols[0].name.contains("_ne_"));
    assert_eq!(h.relocations, vec![Relocation::const_word(0x74)]);
}

#[test]
fn parse_shows_the_structure_as_stored() {
    let f = parse_hwx(&common::fixture("relu.hwx")).unwrap();
    assert_eq!((f.magic, f.cpu_type, f.cpu_subtype, f.file_type), (0xBEEF_FACE, 0x80, 4, 2));
    assert_eq!((f.ncmds, f.sizeofcmds, f.flags), (11, 0xde8, 0x20_0000));
    let names: Vec<&str> = f.segments().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["__PAGEZERO", "__TEXT", "__FVMLIB", "__FVMLIB"]);
    let text = f.section("__TEXT", "__text").unwrap();
    assert_eq!((text.addr, text.offset, text.align, text.flags), (0x3000_0000, 0x4000, 14, 0x28));
    let symtab = f.symtab().unwrap();
    assert_eq!((symtab.symoff, symtab.nsyms, symtab.stroff, symtab.strsize), (0xe08, 14, 0xee8, 0x161));
    assert_eq!(symtab.symbols[2].name, "void:t1=1");
    assert_eq!(
        symtab.symbols[12].name,
        "image:t11=ar1;0;1;12=s192n:ar1;0;1;13=s192c:ar1;0;1;14=s192h:ar1;0;77;15=s2w:5"
    );
    let offsets: Vec<u64> = f.load_commands.iter().map(|c| c.header().offset).collect();
    assert_eq!(offsets[..3], [0x20, 0x68, 0x150]);
    let threads = f.load_commands.iter().filter(|c| matches!(c, LoadCommand::Thread(_))).count();
    assert_eq!(threads, 3);
}
