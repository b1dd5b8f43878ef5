//! The same input gives the same bytes whatever the thread count: a model whose banks are
//! packed on several threads (each over a megabyte: two 1024 x 1024 fp16 convolutions)
//! compiled with one thread and with four, into the same path.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use std::path::Path;
use std::process::Command;

const C: usize = 1024;

/// `model.mil` and `weights/weight.bin` (MILBlob v2) of two 1x1 convolutions C -> C.
fn write_model(dir: &Path) {
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

#[test]
fn one_thread_and_four_give_the_same_program() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path());
    let out = dir.path().join("out");
    let compile = |threads: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_anec"))
            .args(["compile", dir.path().join("model.mil").to_str().unwrap(), "-o", out.to_str().unwrap()])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(out.join("model.hwx")).unwrap()
    };
    let one = compile("1");
    assert!(one.len() > 4 << 20, "the banks are large enough to be packed in parallel");
    assert_eq!(one, compile("4"));
}
