//! Shared helpers of the weight-blob and `.mlpackage` tests: fixture paths, a MILBlob v2
//! writer for hand-built (and deliberately broken) weight files, and model folders in a
//! temporary directory.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

/// `shared/fixtures/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures").join(rel)
}

/// A real `model.mil` (under `mil/real/`).
pub fn real_mil(stem: &str) -> PathBuf {
    fixture(&format!("mil/real/{stem}.model.mil"))
}

/// The weight file recorded next to a real `model.mil`.
pub fn real_weights(stem: &str) -> PathBuf {
    fixture(&format!("mil/real/{stem}.weight.bin"))
}

/// A fixture package (under `mlpackage/`).
pub fn package(name: &str) -> PathBuf {
    fixture(&format!("mlpackage/{name}.mlpackage"))
}

/// Builds `<tmp>/model.mlmodelc/` with `model.mil` = `text` and, when given, a copy of
/// `weights` as `weights/weight.bin`; returns the folder.
pub fn mlmodelc(tmp: &Path, text: &str, weights: Option<&[u8]>) -> PathBuf {
    let dir = tmp.join("model.mlmodelc");
    std::fs::create_dir_all(dir.join("weights")).unwrap();
    std::fs::write(dir.join("model.mil"), text).unwrap();
    if let Some(w) = weights {
        std::fs::write(dir.join("weights/weight.bin"), w).unwrap();
    }
    dir
}

/// One blob to write: dtype code, data bytes, padding bits.
#[derive(Clone)]
pub struct Blob {
    pub code: u32,
    pub data: Vec<u8>,
    pub padding_bits: u64,
}

impl Blob {
    pub fn new(code: u32, data: Vec<u8>) -> Self {
        Blob { code, data, padding_bits: 0 }
    }
}

/// A MILBlob v2 file holding `blobs`, laid out as coremltools writes it (64-byte header,
/// then per blob a 64-byte record and its data, each 64-byte aligned). Returns the bytes
/// and the record offset of each blob.
pub fn blob_file(blobs: &[Blob]) -> (Vec<u8>, Vec<u64>) {
    let mut out = vec![0u8; 64];
    out[0..4].copy_from_slice(&(blobs.len() as u32).to_le_bytes());
    out[4..8].copy_from_slice(&2u32.to_le_bytes());
    let mut offsets = Vec::new();
    for b in blobs {
        let rec = out.len();
        offsets.push(rec as u64);
        let data_at = rec + 64;
        let mut meta = [0u8; 64];
        meta[0..4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        meta[4..8].copy_from_slice(&b.code.to_le_bytes());
        meta[8..16].copy_from_slice(&(b.data.len() as u64).to_le_bytes());
        meta[16..24].copy_from_slice(&(data_at as u64).to_le_bytes());
        meta[24..32].copy_from_slice(&b.padding_bits.to_le_bytes());
        out.extend_from_slice(&meta);
        out.extend_from_slice(&b.data);
        out.resize(out.len().div_ceil(64) * 64, 0);
    }
    (out, offsets)
}

/// A program(1.3) text whose function returns one const `w` (declared `ty`, with a `name`
/// attribute when `name` is given) read from `path` at `offset`.
pub fn one_const_program(name: Option<&str>, ty: &str, path: &str, offset: u64) -> String {
    let name = name.map(|n| format!("name = string(\"{n}\"), ")).unwrap_or_default();
    format!(
        "program(1.3)\n{{\n    func main<ios16>(tensor<fp16, [1, 4]> x) {{\n            \
         {ty} w = const()[{name}val = {ty}(BLOBFILE(path = string(\"{path}\"), offset = uint64({offset})))];\n        \
         }} -> (w);\n}}"
    )
}

/// Every `offset = ...(N)` of the BLOBFILE references in a text, as written.
pub fn blobfile_offsets(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("BLOBFILE(") {
        let rest = &text[i..];
        let at = rest.find("offset = ").unwrap() + "offset = ".len();
        let rest = &rest[at..];
        let open = rest.find('(').unwrap() + 1;
        let close = rest.find(')').unwrap();
        out.push(rest[open..close].parse().unwrap());
    }
    out
}
