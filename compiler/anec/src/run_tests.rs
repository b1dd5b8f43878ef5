//! Tests of `run.rs`: input binding and its errors, output writing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn specs() -> Vec<InputSpec> {
    vec![InputSpec::fixed("image", &[1, 1, 1, 4], "fp16"), InputSpec::fixed("mask", &[1, 2, 1, 1], "fp16")]
}

fn write(dir: &Path, name: &str, t: &Tensor) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, npy::write_f16_bytes(t, name).unwrap()).unwrap();
    p
}

fn tensor(shape: &[usize]) -> Tensor {
    let n = shape.iter().product::<usize>();
    Tensor::new(shape.to_vec(), (0..n).map(|i| i as f32 * 0.5).collect()).unwrap()
}

fn inputs_error(e: Error) -> (String, String) {
    match e {
        Error::Inputs { problem, inputs, .. } => (problem, inputs),
        other => panic!("expected an input error, got {other}"),
    }
}

#[test]
fn binds_inputs_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.npy", &tensor(&[1, 1, 1, 4]));
    let b = write(dir.path(), "b.npy", &tensor(&[1, 2, 1, 1]));
    let bound = bind_inputs("p.hwx", &specs(), &[("mask".into(), b), ("image".into(), a)]).unwrap();
    assert_eq!(bound["image"], tensor(&[1, 1, 1, 4]));
    assert_eq!(bound["mask"], tensor(&[1, 2, 1, 1]));
}

#[test]
fn binding_errors_name_the_problem_and_list_the_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.npy", &tensor(&[1, 1, 1, 4]));
    let wrong = write(dir.path(), "w.npy", &tensor(&[1, 4]));
    let listing = "image [1, 1, 1, 4] fp16, mask [1, 2, 1, 1] fp16";
    let cases: Vec<(Vec<(String, PathBuf)>, String)> = vec![
        (vec![("imag".into(), a.clone())], "no input named 'imag'".into()),
        (vec![("image".into(), a.clone()), ("image".into(), a.clone())], "input 'image' is given twice".into()),
        (vec![("image".into(), a.clone())], "missing --input for 'mask'".into()),
        (
            vec![("image".into(), wrong.clone()), ("mask".into(), a.clone())],
            format!("{}: input 'image' has shape [1, 4], the program expects [1, 1, 1, 4]", wrong.display()),
        ),
    ];
    for (given, want) in cases {
        let (problem, inputs) = inputs_error(bind_inputs("p.hwx", &specs(), &given).unwrap_err());
        assert!(problem.starts_with(&want), "{problem:?} should start with {want:?}");
        assert_eq!(inputs, listing);
    }
}

#[test]
fn a_float64_file_is_a_dtype_error_listing_the_inputs() {
    let dir = tempfile::tempdir().unwrap();
    // A float64 vector of 4: 32 bytes of data.
    let f = npy_file(dir.path(), "d.npy", "<f8", "(1, 1, 1, 4)", &[0u8; 32]);
    let m = write(dir.path(), "m.npy", &tensor(&[1, 2, 1, 1]));
    let e = bind_inputs("p.hwx", &specs(), &[("image".into(), f), ("mask".into(), m)]).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("unsupported dtype '<f8'"), "{text}");
    assert!(text.contains("input 'image' (fp16) must be a float16 or float32 array"), "{text}");
    assert!(text.ends_with("the program's inputs are: image [1, 1, 1, 4] fp16, mask [1, 2, 1, 1] fp16"), "{text}");
}

/// An `.npy` file (numpy's v1 header) of `descr` (`<f8`, `|b1`, `|u1`, `|i1`) holding
/// `data`, shape `shape`.
fn npy_file(dir: &Path, name: &str, descr: &str, shape: &str, data: &[u8]) -> PathBuf {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while dict.len() % 64 != 53 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn eight_bit_inputs_take_bool_uint8_and_int8_files() {
    let dir = tempfile::tempdir().unwrap();
    let specs = [InputSpec::fixed("m", &[1, 1, 4, 1], "bool"), InputSpec::fixed("q", &[1, 1, 4, 1], "int8")];
    let b = npy_file(dir.path(), "b.npy", "|b1", "(1, 1, 4, 1)", &[1, 0, 0, 1]);
    // A uint8 file of 0 and 1 serves a bool input; an int8 one an int8 input.
    let u = npy_file(dir.path(), "u.npy", "|u1", "(1, 1, 4, 1)", &[0, 1, 1, 0]);
    let i = npy_file(dir.path(), "i.npy", "|i1", "(1, 1, 4, 1)", &[0x80, 0xFF, 0, 0x7F]);
    let bound = bind_inputs("p.hwx", &specs, &[("m".into(), b.clone()), ("q".into(), i.clone())]).unwrap();
    assert_eq!(bound["m"].data, vec![1.0, 0.0, 0.0, 1.0]);
    assert_eq!(bound["q"].data, vec![-128.0, -1.0, 0.0, 127.0]);
    let bound = bind_inputs("p.hwx", &specs, &[("m".into(), u), ("q".into(), b)]).unwrap();
    assert_eq!(bound["m"].data, vec![0.0, 1.0, 1.0, 0.0]);
    // The sim's names of the program's 8-bit tensors.
    let program = [InputSpec::fixed("x", &[1, 1, 4, 1], "uint8")];
    assert!(bind_inputs("p.hwx", &program, &[("x".into(), i)]).is_err(), "-128 is no uint8");
}

#[test]
fn an_input_file_of_the_wrong_kind_or_range_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let two = npy_file(dir.path(), "two.npy", "|u1", "(1, 1, 4, 1)", &[0, 2, 1, 0]);
    let float = write(dir.path(), "f.npy", &tensor(&[1, 1, 4, 1]));
    let bytes = npy_file(dir.path(), "u.npy", "|u1", "(1, 1, 1, 4)", &[1, 2, 3, 4]);
    let cases = [
        (
            InputSpec::fixed("m", &[1, 1, 4, 1], "bool"),
            two,
            "input 'm' is bool, which holds 0 to 1, but element 1 is 2",
        ),
        (
            InputSpec::fixed("m", &[1, 1, 4, 1], "bool"),
            float,
            "input 'm' is bool but the file holds float16; give a bool, uint8 or int8 array",
        ),
        (
            InputSpec::fixed("image", &[1, 1, 1, 4], "fp16"),
            bytes,
            "input 'image' is fp16 but the file holds uint8; give a float16 or float32 array",
        ),
    ];
    for (spec, file, want) in cases {
        let (problem, _) = inputs_error(
            bind_inputs("p.hwx", std::slice::from_ref(&spec), &[(spec.key.clone(), file.clone())]).unwrap_err(),
        );
        assert_eq!(problem, format!("{}: {want}", file.display()));
    }
}

#[test]
fn parses_input_arguments() {
    assert_eq!(parse_input_arg("x=a/b.npy").unwrap(), ("x".to_string(), PathBuf::from("a/b.npy")));
    assert_eq!(parse_input_arg("x=a=b.npy").unwrap(), ("x".to_string(), PathBuf::from("a=b.npy")));
    for bad in ["x", "=a.npy", "x="] {
        assert!(parse_input_arg(bad).is_err(), "{bad}");
    }
}

#[test]
fn outputs_are_written_as_fp16_files() {
    let dir = tempfile::tempdir().unwrap();
    let outs: BTreeMap<String, Tensor> = [("probs".to_string(), tensor(&[1, 1, 1, 3]))].into();
    let written = write_outputs(&dir.path().join("o"), &outs, NpyDtype::F16).unwrap();
    assert_eq!(written, vec![dir.path().join("o/probs.npy")]);
    let back = npy::read_file(&written[0]).unwrap();
    assert_eq!(back.tensor, tensor(&[1, 1, 1, 3]));
}

#[test]
fn nothing_is_written_when_an_output_cannot_be_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let bad = Tensor { shape: vec![2, 2], data: vec![0.0; 3] };
    let outs: BTreeMap<String, Tensor> = [("a".to_string(), tensor(&[2])), ("b".to_string(), bad)].into();
    assert!(write_outputs(dir.path(), &outs, NpyDtype::F16).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
