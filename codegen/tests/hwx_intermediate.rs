//! Intermediate tensors (`TensorRole::Intermediate`): the inferred `__DATA,__bss` layout
//! (docs/formats/hwx.md, "Intermediate tensors"), its round trip through the reader, an
//! independent Mach-O parser, eiln/anecc's way of finding buffers, and the `.anec` form.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::hwx::thread::{decode_tensor, FLAVOR_TENSOR};
use anec_codegen::{
    check_canonical, parse_hwx, read_anec, read_hwx, write_anec, write_hwx, AnecFile, CodegenError, TensorRole,
};
use object::read::macho::MachOFile64;
use object::{Endianness, Object, ObjectSection, ObjectSegment, ObjectSymbol};

/// Addresses of the chain: `__TEXT` is 0x580 + 0x4000 bytes -> 0x8000; `image` (3 planes
/// of 0xc0) and `out@output` (16 planes of 0xc0) take one page each; `tmp` three.
const IMAGE: u64 = 0x3000_8000;
const OUT: u64 = 0x3000_c000;
const TMP: u64 = 0x3001_0000;

#[test]
fn chain_with_an_intermediate_round_trips() {
    let h = common::chain();
    let bytes = write_hwx(&h).unwrap();
    assert_eq!(read_hwx(&bytes).unwrap(), h);
    assert_eq!(check_canonical(&bytes).unwrap(), h);
    assert_eq!(bytes.len(), 0x4000 + 0x8000, "intermediates add no file bytes");
}

#[test]
fn the_intermediate_is_a_data_bss_segment_after_the_fvmlib_ones() {
    let bytes = write_hwx(&common::chain()).unwrap();
    let f = parse_hwx(&bytes).unwrap();
    let segs: Vec<_> = f
        .segments()
        .map(|s| (s.name.as_str(), s.vmaddr, s.vmsize, s.fileoff, s.filesize, s.maxprot, s.initprot, s.nsects, s.flags))
        .collect();
    assert_eq!(
        segs,
        [
            ("__PAGEZERO", 0, 0x4000, 0, 0, 0, 0, 0, 4),
            ("__TEXT", 0x3000_0000, 0x8000, 0x4000, 0x8000, 5, 5, 2, 4),
            ("__FVMLIB", IMAGE, 0x4000, 0, 0, 1, 1, 1, 6),
            ("__FVMLIB", OUT, 0x4000, 0, 0, 2, 2, 1, 6),
            ("__DATA", TMP, 0xc000, 0, 0, 3, 3, 1, 4),
        ]
    );
    let bss = f.section("__DATA", "__bss").unwrap();
    assert_eq!((bss.addr, bss.size, bss.offset, bss.align, bss.flags), (TMP, 0xa000, 0, 14, 1));
    // Only the inputs and outputs are bound by name.
    let libs: Vec<_> = f.fvmlibs().map(|l| (l.name.as_str(), u64::from(l.header_addr))).collect();
    assert_eq!(libs, [("image", IMAGE), ("out@output", OUT)]);
    // BAR table: tmp at 3.
    let program = f.threads().find(|t| t.flavor == 1).unwrap();
    let bars = anec_codegen::hwx::thread::decode_program(program).unwrap().bars;
    assert_eq!(&bars[..6], &[0x3000_0000, 0x3000_0580, 0, TMP, OUT, IMAGE]);
    // One flavor-3 thread per tensor; the intermediate's role word is 3.
    let states: Vec<_> = f
        .threads()
        .filter(|t| t.flavor == FLAVOR_TENSOR)
        .map(|t| decode_tensor(t).unwrap())
        .map(|st| (st.name, st.role, st.dims, st.state_size))
        .collect();
    // The size word is stored as given (common::tensor gives the extent 63 * 0x280 + 600).
    assert_eq!(states[2], ("tmp".to_string(), 3, [1, 64, 1, 300, 1], 0x9fd8));
    assert_eq!((states[0].1, states[1].1), (1, 2));
    // Symbols: tmp is defined in section 5 (__text, __const, two __FVMLIB, __bss) with
    // desc 0; it has no stabs shape string.
    let symtab = f.symtab().unwrap();
    let tmp = symtab.symbols.iter().find(|s| s.name == "tmp").unwrap();
    assert_eq!((tmp.n_type, tmp.sect, tmp.desc, tmp.value), (0x0F, 5, 0, TMP));
    let stabs: Vec<_> = symtab.symbols.iter().filter(|s| s.n_type == 0x20).map(|s| s.name.as_str()).collect();
    assert_eq!(stabs.len(), 2);
    assert!(stabs[0].starts_with("image:t11=") && stabs[1].starts_with("out@output:t16="), "{stabs:?}");
}

#[test]
fn object_reads_the_intermediate_segment_section_and_symbol() {
    let mut bytes = write_hwx(&common::chain()).unwrap();
    bytes[..4].copy_from_slice(&0xFEED_FACFu32.to_le_bytes());
    let file = MachOFile64::<Endianness>::parse(&*bytes).unwrap();
    let segments: Vec<(String, u64, u64)> =
        file.segments().map(|s| (s.name().unwrap().unwrap_or_default().to_string(), s.address(), s.size())).collect();
    assert_eq!(segments.last().unwrap(), &("__DATA".to_string(), TMP, 0xc000));
    let bss = file.section_by_name("__bss").unwrap();
    assert_eq!((bss.segment_name().unwrap(), bss.address(), bss.size()), (Some("__DATA"), TMP, 0xa000));
    assert_eq!(bss.file_range(), None, "a zero-fill section has no file bytes");
    let symbols: Vec<(String, u64)> = file.symbols().map(|s| (s.name().unwrap().to_string(), s.address())).collect();
    assert_eq!(symbols, [("image".to_string(), IMAGE), ("out@output".to_string(), OUT), ("tmp".to_string(), TMP)]);
    let tmp = file.symbols().find(|s| s.name() == Ok("tmp")).unwrap();
    assert_eq!(tmp.section_index().map(|i| i.0), Some(5));
    let text = file.section_by_name("__text").unwrap();
    assert_eq!(text.data().unwrap(), common::chain().text.as_slice());
}

/// Buffers found the way eiln/anecc's `anect_convert` finds them (reimplemented from its
/// description, not its code): starting at the page after `__TEXT` + weights, the first
/// little-endian word equal to the buffer address is its segment's `vmaddr`; two words on
/// is `vmsize`; eight words on are (maxprot, initprot, nsects, flags), which must be
/// (3, 3, 1, 4) for an intermediate, (1, 1, 1, 6) for a source, (2, 2, 1, 6) for a
/// destination; the next buffer starts where this one ends.
fn anecc_buffers(bytes: &[u8], first: u64) -> Vec<(&'static str, u64)> {
    let words: Vec<u32> = bytes.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    let mut out = Vec::new();
    let mut addr = first;
    while let Some(pos) = words.iter().position(|&w| u64::from(w) == addr) {
        let size = u64::from(words[pos + 2]);
        let kind = match &words[pos + 8..pos + 12] {
            [3, 3, 1, 4] => "itm",
            [1, 1, 1, 6] => "src",
            [2, 2, 1, 6] => "dst",
            other => panic!("anecc would reject the buffer at {addr:#x}: {other:x?}"),
        };
        out.push((kind, size));
        addr += size;
    }
    out
}

/// The `strings -n 50 | grep ':t.*:5$'` stabs shape strings anecc reads N/C/H/W from.
fn anecc_shape_strings(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| !(0x20..0x7f).contains(&b))
        .filter(|s| s.len() >= 50)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .filter(|s| s.contains(":t") && s.ends_with(":5"))
        .collect()
}

#[test]
fn anecc_finds_one_intermediate_and_only_io_shape_strings() {
    let bytes = write_hwx(&common::chain()).unwrap();
    // anecc: size = round_up(tsk_size, 16) + krn_size = 0x580 + 0x4000 -> first buffer
    // at 0x30000000 + round_up(size, 0x4000).
    let buffers = anecc_buffers(&bytes, 0x3000_8000);
    assert_eq!(buffers, [("src", 0x4000), ("dst", 0x4000), ("itm", 0xc000)]);
    let shapes = anecc_shape_strings(&bytes);
    assert_eq!(shapes.len(), 2, "anecc asserts one shape string per source and destination: {shapes:?}");
}

#[test]
fn write_anec_puts_the_intermediate_at_its_bar() {
    let h = common::chain();
    let bytes = write_anec(&h).unwrap();
    let f = read_anec(&bytes).unwrap();
    assert_eq!(f, AnecFile::from_hwx(&h).unwrap());
    assert_eq!(f.to_bytes().unwrap(), bytes);
    let mut tiles = [0u32; 32];
    tiles[0] = 2; // 0x580 + 0x4000 bytes of TDs and weights
    tiles[3] = 3; // tmp: 0xa000 bytes
    tiles[4] = 1; // out@output
    tiles[5] = 1; // image
    assert_eq!(f.tiles, tiles);
    assert_eq!((f.src_count, f.dst_count, f.td_count), (1, 1, 2));
    // As anecc writes it: N/C/H/W only for sources and destinations.
    assert_eq!(f.nchw[3], [0; 6]);
    assert_eq!(f.nchw[4], [1, 16, 1, 77, 0xc0, 0xc0]);
    assert_eq!(f.nchw[5], [1, 3, 1, 77, 0xc0, 0xc0]);
}

#[test]
fn several_intermediates_and_a_thread_order_round_trip() {
    let mut h = common::chain();
    h.tensors.push(common::tensor("tmp2", TensorRole::Intermediate, 2, 8, 40));
    h.tensors.push(common::tensor("tmp3", TensorRole::Intermediate, 6, 1, 1));
    h.state_order = vec![4, 0, 2, 1, 3];
    let bytes = write_hwx(&h).unwrap();
    assert_eq!(check_canonical(&bytes).unwrap(), h);
    let f = parse_hwx(&bytes).unwrap();
    let data: Vec<_> = f.segments().filter(|s| s.name == "__DATA").map(|s| (s.vmaddr, s.vmsize)).collect();
    assert_eq!(data, [(TMP, 0xc000), (0x3001_c000, 0x4000), (0x3002_0000, 0x4000)]);
    let anec = AnecFile::from_hwx(&h).unwrap();
    assert_eq!((anec.tiles[2], anec.tiles[3], anec.tiles[6]), (1, 3, 1));
}

/// Writes the chain after `change`, expecting an invalid-program error mentioning `needle`.
fn rejects(change: impl FnOnce(&mut anec_codegen::Hwx), needle: &str) {
    let mut h = common::chain();
    change(&mut h);
    match write_hwx(&h) {
        Err(e @ CodegenError::Invalid(_)) => assert!(e.to_string().contains(needle), "{e} lacks {needle:?}"),
        other => panic!("expected an invalid-program error with {needle:?}, got {other:?}"),
    }
}

#[test]
fn intermediates_must_follow_inputs_and_outputs_and_names_must_be_unique() {
    rejects(|h| h.tensors.swap(1, 2), "follows intermediate");
    rejects(|h| h.tensors[2].name = "image".into(), "used twice");
    rejects(|h| h.tensors[2].bar = 4, "reuses BAR index 4");
}

/// The file offset of the first segment command named `name`.
fn segment_offset(bytes: &[u8], name: &str) -> usize {
    let f = parse_hwx(bytes).unwrap();
    let offset = f.segments().find(|s| s.name == name).unwrap().header.offset;
    offset as usize
}

#[test]
fn the_reader_refuses_what_it_cannot_map_back() {
    let good = write_hwx(&common::chain()).unwrap();

    // An __FVMLIB segment with protection 3 (what some tools guess an intermediate is).
    let mut fvm3 = good.clone();
    let at = segment_offset(&fvm3, "__DATA");
    fvm3[at + 8..at + 16].copy_from_slice(b"__FVMLIB");
    let e = read_hwx(&fvm3).unwrap_err();
    assert!(matches!(e, CodegenError::Unsupported(_)), "{e}");

    // A __DATA segment with the wrong protection.
    let mut prot = good.clone();
    prot[at + 60] = 2;
    assert!(read_hwx(&prot).unwrap_err().to_string().contains("initprot"));

    // A thread whose role word disagrees with its segment.
    let f = parse_hwx(&good).unwrap();
    let tmp_thread = f
        .threads()
        .filter(|t| t.flavor == FLAVOR_TENSOR)
        .find(|t| decode_tensor(t).unwrap().name == "tmp")
        .unwrap()
        .header
        .offset as usize;
    let mut role = good.clone();
    role[tmp_thread + 0x14] = 2;
    assert!(read_hwx(&role).unwrap_err().to_string().contains("role word"));

    // An intermediate no symbol names.
    let symtab = f.symtab().unwrap();
    let i = symtab.symbols.iter().position(|s| s.name == "tmp").unwrap();
    let mut unnamed = good;
    let value_at = symtab.symoff as usize + 16 * i + 8;
    unnamed[value_at] ^= 0x40;
    assert!(read_hwx(&unnamed).unwrap_err().to_string().contains("named by no single symbol"));
}
