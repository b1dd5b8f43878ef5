//! Models the integration tests write: a MIL program whose weight file is large enough
//! to be memory-mapped and packed on several threads.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses what it needs

use std::path::Path;

/// Channels of each convolution: 1024 x 1024 fp16 weights, 2 MiB per layer.
pub const C: usize = 1024;

/// `model.mil` and `weights/weight.bin` (MILBlob v2) of two 1x1 convolutions C -> C.
pub fn write_model(dir: &Path) {
    std::fs::create_dir_all(dir.join("weights")).unwrap();
    let mut blob = vec![0u8; 64];
    blob[0..4].copy_from_slice(&2u32.to_le_bytes());
    blob[4..8].copy_from_slice(&2u32.to_le_bytes());
    let mut offsets = Vec::new();
    for layer in 0..2u32 {
        let data: Vec<u8> = (0..C * C)
            .flat_map(|i| {
                half::f16::from_f32(((i as u32 * 2654435761 + layer) % 1000) as f32 / 50_000.0 - 0.01).to_le_bytes()
            })
            .collect();
        let record = blob.len();
        let mut meta = vec![0u8; 64];
        meta[0..4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        meta[4..8].copy_from_slice(&1u32.to_le_bytes());
        meta[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
        meta[16..24].copy_from_slice(&((record + 64) as u64).to_le_bytes());
        blob.extend_from_slice(&meta);
        blob.extend_from_slice(&data);
        blob.resize(blob.len().div_ceil(64) * 64, 0);
        offsets.push(record);
    }
    std::fs::write(dir.join("weights/weight.bin"), blob).unwrap();
    let t = format!("tensor<fp16, [1, {C}, 2, 2]>");
    let w = format!("tensor<fp16, [{C}, {C}, 1, 1]>");
    let mut mil = format!("program(1.3)\n{{\n    func main<ios18>({t} x) {{\n");
    mil += "        string pad = const()[name = string(\"pad\"), val = string(\"valid\")];\n";
    mil += "        tensor<int32, [2]> ones = const()[name = string(\"ones\"), val = tensor<int32, [2]>([1, 1])];\n";
    mil += "        tensor<int32, [4]> zeros = const()[name = string(\"zeros\"), val = tensor<int32, [4]>([0, 0, 0, 0])];\n";
    mil += "        int32 groups = const()[name = string(\"groups\"), val = int32(1)];\n";
    let mut prev = "x".to_string();
    for (i, off) in offsets.iter().enumerate() {
        mil += &format!("        {w} w{i} = const()[name = string(\"w{i}\"), val = {w}(BLOBFILE(path = string(\"@model_path/weights/weight.bin\"), offset = uint64({off})))];\n");
        mil += &format!("        {t} y{i} = conv(dilations = ones, groups = groups, pad = zeros, pad_type = pad, strides = ones, weight = w{i}, x = {prev})[name = string(\"y{i}\")];\n");
        prev = format!("y{i}");
    }
    mil += &format!("    }} -> ({prev});\n}}\n");
    std::fs::write(dir.join("model.mil"), mil).unwrap();
}
