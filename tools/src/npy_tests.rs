//! Tests of `npy.rs`: hand-made files of known bytes, rejections, round trips, and (when
//! python3 with numpy is installed) files numpy wrote.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

/// An `.npy` version 1.0 file: magic, header dict padded with spaces to a multiple of 64
/// bytes and ended by a newline (as numpy writes it), then `data`.
fn npy_v1(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    while dict.len() % 64 != 53 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(dict.len()).unwrap().to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

fn le16(bits: &[u16]) -> Vec<u8> {
    bits.iter().flat_map(|b| b.to_le_bytes()).collect()
}

fn le32(vals: &[f32]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn reads_hand_made_fp16_file() {
    // 1.0, -2.0, 0.5, 65504 (largest fp16) as their IEEE half bit patterns.
    let bytes = npy_v1("<f2", false, "(2, 2)", &le16(&[0x3C00, 0xC000, 0x3800, 0x7BFF]));
    let a = read_bytes(&bytes, "a.npy").unwrap();
    assert_eq!(a.dtype, NpyDtype::F16);
    assert_eq!(a.tensor.shape, vec![2, 2]);
    assert_eq!(a.tensor.data, vec![1.0, -2.0, 0.5, 65504.0]);
}

#[test]
fn reads_hand_made_fp32_file_of_rank_4_and_rank_0() {
    let vals = [1.5, -0.25, 3.0, 1e-8, 7.0, -9.5];
    let a = read_bytes(&npy_v1("<f4", false, "(1, 3, 1, 2)", &le32(&vals)), "b.npy").unwrap();
    assert_eq!(a.dtype, NpyDtype::F32);
    assert_eq!(a.tensor.shape, vec![1, 3, 1, 2]);
    assert_eq!(a.tensor.data, vals.to_vec());
    let s = read_bytes(&npy_v1("<f4", false, "()", &le32(&[4.25])), "s.npy").unwrap();
    assert_eq!(s.tensor.shape, Vec::<usize>::new());
    assert_eq!(s.tensor.data, vec![4.25]);
}

#[test]
fn rejects_other_dtypes_naming_the_file_and_dtype() {
    for (descr, data) in [("<f8", vec![0u8; 16]), ("<i4", vec![0u8; 8]), (">f4", vec![0u8; 8]), ("<u2", vec![0u8; 4])] {
        let err = read_bytes(&npy_v1(descr, false, "(2,)", &data), "in.npy").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, NpyError::Dtype { .. }), "{descr}: {text}");
        assert!(text.starts_with("in.npy: unsupported dtype"), "{text}");
        assert!(text.contains(descr), "{descr} not named in: {text}");
    }
}

#[test]
fn reads_hand_made_bool_uint8_and_int8_files() {
    let b = read_bytes(&npy_v1("|b1", false, "(1, 1, 2, 2)", &[1, 0, 0, 1]), "b.npy").unwrap();
    assert_eq!((b.dtype, b.tensor.shape.clone()), (NpyDtype::Bool, vec![1, 1, 2, 2]));
    assert_eq!(b.tensor.data, vec![1.0, 0.0, 0.0, 1.0]);
    let u = read_bytes(&npy_v1("|u1", false, "(3,)", &[0, 200, 255]), "u.npy").unwrap();
    assert_eq!((u.dtype, u.tensor.data.clone()), (NpyDtype::U8, vec![0.0, 200.0, 255.0]));
    let i = read_bytes(&npy_v1("|i1", false, "(3,)", &[0x80, 0xFF, 0x7F]), "i.npy").unwrap();
    assert_eq!((i.dtype, i.tensor.data.clone()), (NpyDtype::I8, vec![-128.0, -1.0, 127.0]));
    assert!(!NpyDtype::U8.is_float() && NpyDtype::F16.is_float());
}

#[test]
fn a_bool_byte_other_than_0_or_1_is_malformed() {
    let err = read_bytes(&npy_v1("|b1", false, "(2,)", &[1, 2]), "b.npy").unwrap_err();
    assert!(matches!(err, NpyError::Malformed { .. }), "{err}");
}

#[test]
fn one_byte_types_round_trip_with_integer_rounding() {
    let t = Tensor::new(vec![5], vec![0.0, 1.0, 2.5, 300.0, -3.0]).unwrap();
    let read = |d| read_bytes(&write_bytes(&t, "o.npy", d).unwrap(), "o.npy").unwrap();
    assert_eq!(read(NpyDtype::U8).tensor.data, vec![0.0, 1.0, 2.0, 255.0, 0.0]);
    assert_eq!(read(NpyDtype::I8).tensor.data, vec![0.0, 1.0, 2.0, 127.0, -3.0]);
    assert_eq!(read(NpyDtype::Bool).tensor.data, vec![0.0, 1.0, 1.0, 1.0, 1.0]);
}

#[test]
fn rejects_fortran_order_of_a_matrix() {
    let err = read_bytes(&npy_v1("<f2", true, "(2, 3)", &le16(&[0; 6])), "f.npy").unwrap_err();
    assert!(matches!(err, NpyError::FortranOrder { .. }), "{err}");
    assert!(err.to_string().starts_with("f.npy: Fortran-ordered"), "{err}");
}

#[test]
fn fortran_flag_on_a_vector_is_the_same_data() {
    let a = read_bytes(&npy_v1("<f2", true, "(3,)", &le16(&[0x3C00, 0x4000, 0x4200])), "v.npy").unwrap();
    assert_eq!(a.tensor.data, vec![1.0, 2.0, 3.0]);
}

#[test]
fn rejects_bad_magic_and_truncated_data() {
    let err = read_bytes(b"PK\x03\x04 not an npy", "z.npy").unwrap_err();
    assert!(matches!(err, NpyError::Malformed { .. }), "{err}");
    assert!(err.to_string().starts_with("z.npy: not a readable .npy file"), "{err}");
    let short = npy_v1("<f2", false, "(4,)", &le16(&[0x3C00, 0x3C00]));
    let err = read_bytes(&short, "t.npy").unwrap_err();
    assert!(matches!(err, NpyError::Malformed { .. }), "{err}");
}

#[test]
fn writes_a_v1_header_and_fp16_data() {
    let t = Tensor::new(vec![2, 2], vec![1.0, -2.0, 0.5, 65504.0]).unwrap();
    let bytes = write_f16_bytes(&t, "o.npy").unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    assert_eq!((10 + header_len) % 64, 0, "data must start 64-byte aligned");
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<f2'") && header.contains("'fortran_order': False"), "{header}");
    assert!(header.contains("'shape': (2, 2"), "{header}");
    assert_eq!(&bytes[10 + header_len..], le16(&[0x3C00, 0xC000, 0x3800, 0x7BFF]).as_slice());
}

#[test]
fn round_trips_with_fp16_rounding() {
    let data: Vec<f32> = (0..24).map(|i| (i as f32 - 11.3) * 0.377).collect();
    let t = Tensor::new(vec![1, 2, 3, 4], data.clone()).unwrap();
    let back = read_bytes(&write_f16_bytes(&t, "r.npy").unwrap(), "r.npy").unwrap();
    assert_eq!(back.dtype, NpyDtype::F16);
    assert_eq!(back.tensor.shape, t.shape);
    let rounded: Vec<f32> = data.iter().map(|&v| f16::from_f32(v).to_f32()).collect();
    assert_eq!(back.tensor.data, rounded);
    assert!(back.tensor.data.iter().zip(&data).any(|(a, b)| a != b), "some values must round");
}

#[test]
fn round_trips_fp32_exactly() {
    let data: Vec<f32> = (0..24).map(|i| (i as f32 - 11.3) * 0.377).collect();
    let t = Tensor::new(vec![2, 3, 4], data.clone()).unwrap();
    let bytes = write_bytes(&t, "r.npy", NpyDtype::F32).unwrap();
    assert!(bytes.windows(5).any(|w| w == b"'<f4'"), "the header names <f4");
    let back = read_bytes(&bytes, "r.npy").unwrap();
    assert_eq!((back.dtype, back.tensor.shape.clone()), (NpyDtype::F32, t.shape.clone()));
    assert_eq!(back.tensor.data, data, "fp32 keeps every value");
}

#[test]
fn write_rejects_inconsistent_tensor() {
    let t = Tensor { shape: vec![2, 3], data: vec![0.0; 5] };
    assert!(matches!(write_f16_bytes(&t, "x.npy"), Err(NpyError::Shape { .. })));
}

/// Files written by numpy itself, when python3 and numpy are installed.
#[test]
fn reads_files_numpy_wrote() {
    let dir = std::env::temp_dir().join(format!("anec-npy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = "import numpy as np, sys\n\
        d = sys.argv[1]\n\
        np.save(d + '/h.npy', np.arange(12, dtype='<f2').reshape(1, 3, 2, 2) / 4)\n\
        np.save(d + '/s.npy', (np.arange(6, dtype='<f4') - 2.5).reshape(2, 3))\n\
        np.save(d + '/b.npy', np.arange(4).reshape(1, 1, 4, 1) % 2 == 0)\n\
        np.save(d + '/u.npy', np.array([0, 7, 255], dtype=np.uint8))\n\
        np.save(d + '/i.npy', np.array([-128, -1, 127], dtype=np.int8))\n";
    let ran = std::process::Command::new("python3").arg("-c").arg(script).arg(&dir).status();
    if !matches!(ran, Ok(s) if s.success()) {
        eprintln!("skipped: python3 with numpy is not available");
        return;
    }
    let h = read_file(&dir.join("h.npy")).unwrap();
    assert_eq!((h.dtype, h.tensor.shape.clone()), (NpyDtype::F16, vec![1, 3, 2, 2]));
    assert_eq!(h.tensor.data, (0..12).map(|i| i as f32 / 4.0).collect::<Vec<_>>());
    let s = read_file(&dir.join("s.npy")).unwrap();
    assert_eq!((s.dtype, s.tensor.shape.clone()), (NpyDtype::F32, vec![2, 3]));
    assert_eq!(s.tensor.data, vec![-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]);
    let b = read_file(&dir.join("b.npy")).unwrap();
    assert_eq!(
        (b.dtype, b.tensor.shape.clone(), b.tensor.data.clone()),
        (NpyDtype::Bool, vec![1, 1, 4, 1], vec![1.0, 0.0, 1.0, 0.0])
    );
    let u = read_file(&dir.join("u.npy")).unwrap();
    assert_eq!((u.dtype, u.tensor.data.clone()), (NpyDtype::U8, vec![0.0, 7.0, 255.0]));
    let i = read_file(&dir.join("i.npy")).unwrap();
    assert_eq!((i.dtype, i.tensor.data.clone()), (NpyDtype::I8, vec![-128.0, -1.0, 127.0]));
    let ours = Tensor::new(vec![1, 2, 3], vec![0.5, -1.0, 2.0, 3.25, -0.125, 100.0]).unwrap();
    std::fs::write(dir.join("o.npy"), write_f16_bytes(&ours, "o.npy").unwrap()).unwrap();
    let check = "import numpy as np, sys\n\
        a = np.load(sys.argv[1] + '/o.npy')\n\
        assert a.dtype == np.float16 and a.shape == (1, 2, 3), (a.dtype, a.shape)\n\
        assert a.ravel().tolist() == [0.5, -1.0, 2.0, 3.25, -0.125, 100.0], a\n";
    let status = std::process::Command::new("python3").arg("-c").arg(check).arg(&dir).status().unwrap();
    assert!(status.success(), "numpy could not read the file we wrote");
    std::fs::remove_dir_all(&dir).unwrap();
}
