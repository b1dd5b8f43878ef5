//! Shared helpers of the codegen tests: Apple's reference files and a synthetic program.
#![allow(dead_code, clippy::panic, clippy::unwrap_used)]

use std::path::PathBuf;

/// The directory of Apple's v4.2.1 H13 `.hwx` files (`shared/` sits next to the workspace).
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/apple-h13/hwx")
}

/// Every reference file, sorted by name, with its bytes.
pub fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = fixture_dir();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "hwx"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "expected the five reference files in {}", dir.display());
    names
        .into_iter()
        .map(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            (name, bytes)
        })
        .collect()
}

/// One reference file by name (`relu.hwx`).
pub fn fixture(name: &str) -> Vec<u8> {
    let p = fixture_dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

use anec_codegen::{BoundTensor, ConstSymbol, Hwx, Relocation, TensorRole};

/// A tensor of fp16 N=1, C=`c`, H=1, W=`w` laid out as v4.2.1 lays it out.
pub fn tensor(name: &str, role: TensorRole, bar: u8, c: u64, w: u64) -> BoundTensor {
    let row = (w * 2).div_ceil(64) * 64;
    let plane = row;
    BoundTensor {
        name: name.to_string(),
        role,
        bar,
        dtype_code: 5,
        dims: [1, c, 1, w, 1],
        strides: [c * plane, plane, row, 2, c * plane],
        section_size: c * plane,
        state_size: if role == TensorRole::Input { c * plane } else { (c - 1) * plane + w * 2 },
    }
}

/// A three-TD program with weights, relocations and three tensors, none of it Apple's.
pub fn synthetic() -> Hwx {
    let text: Vec<u8> = (0..0x300 * 2 + 0x274).map(|i: u32| (i * 7 % 251) as u8).collect();
    let consts: Vec<u8> = (0..0x9000).map(|i: u32| (i % 253) as u8 + 1).collect();
    Hwx {
        cpu_subtype: 4,
        text,
        consts: consts.into(),
        td_count: 3,
        td_words: 0x9c,
        state_850: 0x11,
        state_858: 4,
        network: "net".into(),
        tensors: vec![
            tensor("a", TensorRole::Input, 5, 64, 300),
            tensor("b", TensorRole::Input, 6, 3, 7),
            tensor("out@output", TensorRole::Output, 4, 64, 300),
        ],
        const_symbols: (0..4)
            .map(|i| ConstSymbol { name: format!("K{:064X}_ne_{i}", 0xABCDu32), offset: 0x2400 * i })
            .collect(),
        ident: "ANEC v1\nanec test\n".into(),
        state_order: Vec::new(),
        relocations: [0x74, 0x78, 0x374, 0x674].into_iter().map(Relocation::const_word).collect(),
        task_layers: Vec::new(),
    }
}

/// A two-TD chain `image -> tmp -> out@output` (conv -> conv shaped): the first TD
/// writes the intermediate `tmp`, the second reads it. Inputs and outputs take Apple's
/// v4.2.1 BARs (output 4, input 5); the intermediate takes BAR 3, where eiln/anecc puts
/// it. `tmp` is 64 planes of 0x280 bytes = 0xa000 bytes, three 16 KiB tiles.
pub fn chain() -> Hwx {
    let text: Vec<u8> = (0..0x300 + 0x274).map(|i: u32| (i * 11 % 241) as u8).collect();
    Hwx {
        cpu_subtype: 4,
        text,
        consts: vec![0; 0x4000].into(),
        td_count: 2,
        td_words: 0x9c,
        state_850: 0x11,
        state_858: 3,
        network: "net".into(),
        tensors: vec![
            tensor("image", TensorRole::Input, 5, 3, 77),
            tensor("out@output", TensorRole::Output, 4, 16, 77),
            tensor("tmp", TensorRole::Intermediate, 3, 64, 300),
        ],
        const_symbols: Vec::new(),
        ident: "ANEC v1\nanec test\n".into(),
        state_order: Vec::new(),
        relocations: Vec::new(),
        task_layers: Vec::new(),
    }
}
