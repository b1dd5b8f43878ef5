//! MILBlob v2 weight files: the real weight files next to Apple's `model.mil` fixtures,
//! every dtype code, memory-mapped and read files, and one test per error kind with a
//! hand-built broken file (each error names the const and points at its `BLOBFILE`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod milfix;

use anec_front::load_mil;
use anec_front::milblob::{dtype_code, dtype_from_code, BlobFile, MMAP_THRESHOLD};
use anec_ir::mil::{BlobKey, ScalarType};
use anec_ir::Diagnostic;
use milfix::{blob_file, blobfile_offsets, mlmodelc, one_const_program, real_mil, real_weights, Blob};
use std::collections::BTreeSet;

const WEIGHTS: &str = "@model_path/weights/weight.bin";
const SILERO: [&str; 3] = [
    "FluidInference+mobius__silero-vad_silero-vad-unified-v6.0.0",
    "FluidInference+mobius__silero-vad_unified_int8",
    "FluidInference+mobius__silero-vad_unified_palette_4bit",
];

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn dtype_codes_are_the_milblob_table() {
    let table = [
        (1, "fp16"),
        (2, "fp32"),
        (3, "uint8"),
        (4, "int8"),
        (5, "bf16"),
        (6, "int16"),
        (7, "uint16"),
        (8, "int4"),
        (9, "uint1"),
        (10, "uint2"),
        (11, "uint4"),
        (12, "uint3"),
        (13, "uint6"),
        (14, "int32"),
        (15, "uint32"),
        (16, "fp8e4m3fn"),
        (17, "fp8e5m2"),
    ];
    for (code, name) in table {
        let t = dtype_from_code(code).unwrap_or_else(|| panic!("code {code} unknown"));
        assert_eq!(t.name(), name, "code {code}");
        assert_eq!(dtype_code(t), Some(code));
    }
    assert_eq!(dtype_from_code(0), None);
    assert_eq!(dtype_from_code(18), None);
    assert_eq!(dtype_code(ScalarType::Fp64), None);
    assert_eq!(dtype_code(ScalarType::Int64), None);
}

/// Each silero model resolves: one blob per distinct offset, whose bytes are the file's
/// bytes at the record's data offset (decoded here independently of the reader).
#[test]
fn real_weight_files_resolve_against_their_model() {
    for stem in SILERO {
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(real_mil(stem)).unwrap();
        let raw = std::fs::read(real_weights(stem)).unwrap();
        let dir = mlmodelc(tmp.path(), &text, Some(&raw));
        let model = load_mil(&dir).unwrap_or_else(|e| panic!("{stem}: {e:?}"));
        let offsets: BTreeSet<u64> = blobfile_offsets(&text).into_iter().collect();
        assert_eq!(model.blobs.len(), offsets.len(), "{stem}");
        for off in offsets {
            let key = BlobKey { path: WEIGHTS.to_string(), offset: off };
            let blob = &model.blobs[&key];
            let at = off as usize;
            let code = u32::from_le_bytes(raw[at + 4..at + 8].try_into().unwrap());
            let (size, data) = (le_u64(&raw, at + 8) as usize, le_u64(&raw, at + 16) as usize);
            assert_eq!(Some(blob.dtype), dtype_from_code(code), "{stem} @{off}");
            assert_eq!(blob.bytes.as_slice(), &raw[data..data + size], "{stem} @{off}");
        }
        assert!(model.file.ends_with("model.mil"), "{}", model.file);
        assert_eq!(model.text.as_deref(), Some(text.as_str()));
    }
}

/// The palettized silero model declares its 4-bit indices as a `uint8` tensor of the packed
/// byte count and stores them as a `uint8` blob of that many bytes: two indices per byte.
#[test]
fn palettized_indices_are_packed_uint8_blobs() {
    let stem = SILERO[2];
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(real_mil(stem)).unwrap();
    let raw = std::fs::read(real_weights(stem)).unwrap();
    let model = load_mil(&mlmodelc(tmp.path(), &text, Some(&raw))).unwrap();
    let key = BlobKey { path: WEIGHTS.to_string(), offset: 64 };
    let indices = &model.blobs[&key];
    assert_eq!(indices.dtype, ScalarType::Uint8);
    // shape = [258, 1, 256] of 4-bit indices
    assert_eq!(indices.bytes.as_slice().len() * 2, 258 * 256);
    let lut = &model.blobs[&BlobKey { path: WEIGHTS.to_string(), offset: 33152 }];
    assert_eq!((lut.dtype, lut.bytes.as_slice().len()), (ScalarType::Fp16, 32));
}

#[test]
fn large_files_are_mapped_small_files_read_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..(MMAP_THRESHOLD as usize + 4096)).map(|i| (i * 7 % 251) as u8).collect();
    let small = vec![0x5au8; 100];
    for (name, data, code) in [("big.bin", &big, 3u32), ("small.bin", &small, 4u32)] {
        let (bytes, offsets) = blob_file(&[Blob::new(2, vec![0; 8]), Blob::new(code, data.clone())]);
        let path = tmp.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let file = BlobFile::open(&path).unwrap();
        assert_eq!((file.len(), file.count()), (bytes.len() as u64, 2));
        let rec = file.record(offsets[1]).unwrap();
        assert_eq!(rec.dtype, dtype_from_code(code).unwrap());
        assert_eq!(rec.bytes.as_slice(), data.as_slice(), "{name}");
        assert_eq!(rec.data_offset, offsets[1] + 64);
    }
}

/// Every blob dtype resolves when the declared type matches, sub-byte types by their
/// packed size.
#[test]
fn every_dtype_resolves_with_its_packed_size() {
    let cases: [(&str, u32, usize); 17] = [
        ("tensor<fp16, [3]>", 1, 6),
        ("tensor<fp32, [2]>", 2, 8),
        ("tensor<uint8, [5]>", 3, 5),
        ("tensor<int8, [5]>", 4, 5),
        ("tensor<bf16, [2]>", 5, 4),
        ("tensor<int16, [3]>", 6, 6),
        ("tensor<uint16, [1]>", 7, 2),
        ("tensor<int4, [3]>", 8, 2),
        ("tensor<uint1, [9]>", 9, 2),
        ("tensor<uint2, [5]>", 10, 2),
        ("tensor<uint4, [5]>", 11, 3),
        ("tensor<uint3, [8]>", 12, 3),
        ("tensor<uint6, [4]>", 13, 3),
        ("tensor<int32, [2]>", 14, 8),
        ("tensor<uint32, [1]>", 15, 4),
        ("tensor<fp8e4m3fn, [3]>", 16, 3),
        ("tensor<fp8e5m2, [2, 2]>", 17, 4),
    ];
    for (ty, code, size) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..size as u8).map(|i| i.wrapping_mul(37)).collect();
        let (bytes, off) = blob_file(&[Blob::new(code, data.clone())]);
        let text = one_const_program(Some("w"), ty, WEIGHTS, off[0]);
        let model = load_mil(&mlmodelc(tmp.path(), &text, Some(&bytes))).unwrap_or_else(|e| panic!("{ty}: {e:?}"));
        let blob = &model.blobs[&BlobKey { path: WEIGHTS.into(), offset: off[0] }];
        assert_eq!(Some(blob.dtype), dtype_from_code(code), "{ty}");
        assert_eq!(blob.bytes.as_slice(), data.as_slice(), "{ty}");
    }
}

/// Loads `text` with `weights` as the model's weight file and returns the single error,
/// checking it names `const_name` and points at the `BLOBFILE` value.
fn single_error(text: &str, weights: Option<&[u8]>, const_name: &str) -> Diagnostic {
    let tmp = tempfile::tempdir().unwrap();
    single_error_in(&mlmodelc(tmp.path(), text, weights), text, const_name)
}

fn single_error_in(dir: &std::path::Path, text: &str, const_name: &str) -> Diagnostic {
    let errs = load_mil(dir).expect_err("the model must be rejected");
    assert_eq!(errs.len(), 1, "{errs:?}");
    let d = errs.into_iter().next().unwrap();
    assert!(d.message.contains(&format!("`{const_name}`")), "{}", d.message);
    let at = &text[d.span.range()];
    assert!(at.contains("(BLOBFILE(path = ") && at.ends_with("))"), "span covers {at:?}");
    assert!(d.file.ends_with("model.mil"), "{}", d.file);
    assert!(d.line_col().is_some_and(|(line, _)| line == 4), "{:?}", d.line_col());
    d
}

fn fp16_blob(n: usize) -> (Vec<u8>, u64) {
    let (bytes, off) = blob_file(&[Blob::new(1, vec![0x3c; 2 * n])]);
    (bytes, off[0])
}

#[test]
fn error_path_with_parent_dir() {
    let (bytes, off) = fp16_blob(4);
    let text = one_const_program(Some("w_up"), "tensor<fp16, [4]>", "@model_path/../weights/weight.bin", off);
    let d = single_error(&text, Some(&bytes), "w_up");
    assert!(d.message.contains("leaves the model folder"), "{}", d.message);
}

#[test]
fn error_absolute_path() {
    let tmp = tempfile::tempdir().unwrap();
    let (bytes, off) = fp16_blob(4);
    let outside = tmp.path().join("outside.bin");
    std::fs::write(&outside, &bytes).unwrap();
    let text = one_const_program(Some("w_abs"), "tensor<fp16, [4]>", outside.to_str().unwrap(), off);
    let d = single_error(&text, Some(&bytes), "w_abs");
    assert!(d.message.contains("absolute"), "{}", d.message);
}

#[cfg(unix)]
#[test]
fn error_symlink_leaving_the_model_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (bytes, off) = fp16_blob(4);
    let outside = tmp.path().join("outside.bin");
    std::fs::write(&outside, &bytes).unwrap();
    let text = one_const_program(Some("w_link"), "tensor<fp16, [4]>", WEIGHTS, off);
    let dir = mlmodelc(tmp.path(), &text, None);
    std::os::unix::fs::symlink(&outside, dir.join("weights/weight.bin")).unwrap();
    let d = single_error_in(&dir, &text, "w_link");
    assert!(d.message.contains("leaves the model folder"), "{}", d.message);
}

#[cfg(unix)]
#[test]
fn symlink_inside_the_model_folder_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let (bytes, off) = fp16_blob(4);
    let text = one_const_program(Some("w"), "tensor<fp16, [4]>", WEIGHTS, off);
    let dir = mlmodelc(tmp.path(), &text, None);
    std::fs::write(dir.join("real.bin"), &bytes).unwrap();
    std::os::unix::fs::symlink(dir.join("real.bin"), dir.join("weights/weight.bin")).unwrap();
    let model = load_mil(&dir).unwrap();
    assert_eq!(model.blobs.len(), 1);
}

#[test]
fn error_missing_file() {
    let text = one_const_program(Some("w_missing"), "tensor<fp16, [4]>", WEIGHTS, 64);
    let d = single_error(&text, None, "w_missing");
    assert!(d.message.contains("does not exist"), "{}", d.message);
}

#[test]
fn missing_file_is_reported_once_for_all_its_consts() {
    let one = one_const_program(Some("w_a"), "tensor<fp16, [4]>", WEIGHTS, 64);
    let line = one.lines().nth(3).unwrap();
    let two = line.replace("w = ", "w2 = ").replace("w_a", "w_b");
    let text = one.replacen(line, &format!("{line}\n{two}"), 1);
    let tmp = tempfile::tempdir().unwrap();
    let errs = load_mil(&mlmodelc(tmp.path(), &text, None)).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].message.contains("`w_a`"), "{}", errs[0].message);
}

#[test]
fn error_not_a_milblob_v2_file() {
    let (mut bytes, off) = fp16_blob(4);
    bytes[4] = 1; // header version 1
    let text = one_const_program(Some("w_v1"), "tensor<fp16, [4]>", WEIGHTS, off);
    let d = single_error(&text, Some(&bytes), "w_v1");
    assert!(d.message.contains("not a MILBlob v2 file") && d.message.contains("version 1"), "{}", d.message);
    let d = single_error(&text, Some(b"short"), "w_v1");
    assert!(d.message.contains("not a MILBlob v2 file") && d.message.contains("5 bytes"), "{}", d.message);
}

#[test]
fn error_bad_sentinel_at_offset() {
    let (bytes, off) = fp16_blob(4);
    // The data of the blob, not its record.
    let text = one_const_program(Some("w_data"), "tensor<fp16, [4]>", WEIGHTS, off + 64);
    let d = single_error(&text, Some(&bytes), "w_data");
    assert!(d.message.contains("sentinel is 0x3c3c3c3c"), "{}", d.message);
    assert!(d.message.contains(&format!("offset {}", off + 64)), "{}", d.message);
}

#[test]
fn error_record_outside_the_file() {
    let (bytes, _) = fp16_blob(4);
    let past = bytes.len() as u64;
    let text = one_const_program(Some("w_far"), "tensor<fp16, [4]>", WEIGHTS, past);
    let d = single_error(&text, Some(&bytes), "w_far");
    assert!(d.message.contains(&format!("offset {past} is not a blob record")), "{}", d.message);
}

#[test]
fn error_unknown_dtype_code() {
    let (bytes, off) = blob_file(&[Blob::new(99, vec![0; 8])]);
    let text = one_const_program(Some("w_code"), "tensor<fp16, [4]>", WEIGHTS, off[0]);
    let d = single_error(&text, Some(&bytes), "w_code");
    assert!(d.message.contains("unknown dtype code 99"), "{}", d.message);
}

#[test]
fn error_dtype_not_the_declared_type() {
    let (bytes, off) = blob_file(&[Blob::new(2, vec![0; 8])]); // fp32 x 2
    let text = one_const_program(Some("w_type"), "tensor<fp16, [4]>", WEIGHTS, off[0]);
    let d = single_error(&text, Some(&bytes), "w_type");
    assert!(d.message.contains("holds fp32 data but the value is declared tensor<fp16, [4]>"), "{}", d.message);
}

#[test]
fn error_size_not_the_declared_shape() {
    let (bytes, off) = fp16_blob(3);
    let text = one_const_program(Some("w_size"), "tensor<fp16, [4]>", WEIGHTS, off);
    let d = single_error(&text, Some(&bytes), "w_size");
    assert!(d.message.contains("holds 6 bytes but tensor<fp16, [4]> needs 8"), "{}", d.message);
    // Packed sub-byte types: 5 uint4 need 3 bytes, not 5.
    let (bytes, off) = blob_file(&[Blob::new(11, vec![0; 5])]);
    let text = one_const_program(Some("w_nibbles"), "tensor<uint4, [5]>", WEIGHTS, off[0]);
    let d = single_error(&text, Some(&bytes), "w_nibbles");
    assert!(d.message.contains("holds 5 bytes but tensor<uint4, [5]> needs 3"), "{}", d.message);
}

#[test]
fn error_data_past_the_end_of_the_file() {
    let (mut bytes, off) = fp16_blob(32);
    bytes.truncate(off as usize + 64 + 10);
    let text = one_const_program(Some("w_cut"), "tensor<fp16, [32]>", WEIGHTS, off);
    let d = single_error(&text, Some(&bytes), "w_cut");
    assert!(d.message.contains("(64 bytes at offset 128) runs past the end of the file (138 bytes)"), "{}", d.message);
}

#[test]
fn const_without_name_attribute_is_named_by_its_variable() {
    let text = one_const_program(None, "tensor<fp16, [4]>", WEIGHTS, 64);
    let d = single_error(&text, None, "w");
    assert!(d.message.starts_with("const `w`"), "{}", d.message);
}
