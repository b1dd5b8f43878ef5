//! Models the integration tests write: a MIL program of two 1x1 convolutions whose weight
//! file is large enough to be memory-mapped and packed on several threads, with the same
//! weights stored as fp16, as fp32 or as 4-bit palette indices.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses what it needs

use std::path::Path;

/// Channels of each convolution: 1024 x 1024 weights, 2 MiB per layer in fp16.
pub const C: usize = 1024;

/// How the weights are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// fp16 blobs.
    Fp16,
    /// fp32 blobs (the compiler converts them).
    Fp32,
    /// uint8 blobs of packed 4-bit indices into an inline fp16 palette
    /// (`constexpr_lut_to_dense`).
    Palette4,
}

/// The 16 weight values, exact in fp16.
fn palette() -> Vec<f32> {
    (0..16).map(|i| (i as f32 - 7.5) / 512.0).collect()
}

/// Palette index of weight `i` of `layer`.
fn index(i: usize, layer: u32) -> u8 {
    ((i as u32).wrapping_mul(2654435761).wrapping_add(layer) >> 7) as u8 & 15
}

/// The blob of `layer` in `form`.
fn data(form: Form, layer: u32) -> (u32, Vec<u8>) {
    let p = palette();
    let value = |i: usize| p[index(i, layer) as usize];
    match form {
        Form::Fp16 => (1, (0..C * C).flat_map(|i| half::f16::from_f32(value(i)).to_le_bytes()).collect()),
        Form::Fp32 => (2, (0..C * C).flat_map(|i| value(i).to_le_bytes()).collect()),
        Form::Palette4 => (3, (0..C * C / 2).map(|b| index(2 * b, layer) | index(2 * b + 1, layer) << 4).collect()),
    }
}

/// `model.mil` and `weights/weight.bin` (MILBlob v2) of two 1x1 convolutions C -> C, fp16.
pub fn write_model(dir: &Path) {
    write_model_as(dir, Form::Fp16);
}

/// [`write_model`] with the weights stored as `form`.
pub fn write_model_as(dir: &Path, form: Form) {
    std::fs::create_dir_all(dir.join("weights")).unwrap();
    let mut blob = vec![0u8; 64];
    blob[0..4].copy_from_slice(&2u32.to_le_bytes());
    blob[4..8].copy_from_slice(&2u32.to_le_bytes());
    let mut offsets = Vec::new();
    for layer in 0..2u32 {
        let (code, data) = data(form, layer);
        let record = blob.len();
        let mut meta = vec![0u8; 64];
        meta[0..4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        meta[4..8].copy_from_slice(&code.to_le_bytes());
        meta[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
        meta[16..24].copy_from_slice(&((record + 64) as u64).to_le_bytes());
        blob.extend_from_slice(&meta);
        blob.extend_from_slice(&data);
        blob.resize(blob.len().div_ceil(64) * 64, 0);
        offsets.push(record);
    }
    std::fs::write(dir.join("weights/weight.bin"), blob).unwrap();
    std::fs::write(dir.join("model.mil"), mil(form, &offsets)).unwrap();
}

/// The MIL program reading the weights at `offsets`.
fn mil(form: Form, offsets: &[usize]) -> String {
    let t = format!("tensor<fp16, [1, {C}, 2, 2]>");
    let w = format!("tensor<fp16, [{C}, {C}, 1, 1]>");
    let mut mil = format!("program(1.3)\n{{\n    func main<ios18>({t} x) {{\n");
    mil += "        string pad = const()[name = string(\"pad\"), val = string(\"valid\")];\n";
    mil += "        tensor<int32, [2]> ones = const()[name = string(\"ones\"), val = tensor<int32, [2]>([1, 1])];\n";
    mil += "        tensor<int32, [4]> zeros = const()[name = string(\"zeros\"), val = tensor<int32, [4]>([0, 0, 0, 0])];\n";
    mil += "        int32 groups = const()[name = string(\"groups\"), val = int32(1)];\n";
    let mut prev = "x".to_string();
    for (i, off) in offsets.iter().enumerate() {
        let file = format!("BLOBFILE(path = string(\"@model_path/weights/weight.bin\"), offset = uint64({off}))");
        mil += &match form {
            Form::Fp16 => format!("        {w} w{i} = const()[name = string(\"w{i}\"), val = {w}({file})];\n"),
            Form::Fp32 => {
                let w32 = format!("tensor<fp32, [{C}, {C}, 1, 1]>");
                format!("        {w32} w{i} = const()[name = string(\"w{i}\"), val = {w32}({file})];\n")
            }
            Form::Palette4 => {
                let lut = palette().iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ");
                let n = C * C / 2;
                format!(
                    "        {w} w{i} = constexpr_lut_to_dense()[indices = tensor<uint8, [{n}]>({file}), lut = tensor<fp16, [16]>([{lut}]), shape = tensor<uint32, [4]>([{C}, {C}, 1, 1]), name = string(\"w{i}\")];\n"
                )
            }
        };
        mil += &format!("        {t} y{i} = conv(dilations = ones, groups = groups, pad = zeros, pad_type = pad, strides = ones, weight = w{i}, x = {prev})[name = string(\"y{i}\")];\n");
        prev = format!("y{i}");
    }
    mil += &format!("    }} -> ({prev});\n}}\n");
    mil
}
