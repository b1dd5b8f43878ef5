//! `anec sim` and `anec run` as a user runs them: compile the 77-wide sigmoid, simulate it
//! on an input `.npy`, read the output `.npy`; input errors list the program's inputs and
//! leave nothing behind; `anec run` evaluates a MIL model.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tools::npy;
use anec_tools::Tensor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anec")).args(args).output().expect("run anec")
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `anec compile tests/conformance/sigmoid.plist -o DIR` -> `DIR/sigmoid.hwx`.
fn compile_sigmoid(dir: &Path) -> PathBuf {
    let plist = workspace().join("tests/conformance/sigmoid.plist");
    let o = anec(&["compile", s(&plist), "-o", s(dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    dir.join("sigmoid.hwx")
}

/// 77 values spread over [-10, 10], so the table's knots, the space between them and the
/// extrapolation beyond +-8 are all exercised; fp16-exact.
fn ramp() -> Vec<f32> {
    (0..77).map(|i| half::f16::from_f32(-10.0 + 20.0 * i as f32 / 76.0).to_f32()).collect()
}

/// An `.npy` v1 file as numpy writes it: magic, the header dict padded with spaces so the
/// data starts at a multiple of 64 bytes, then `data`.
fn npy_v1(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while dict.len() % 64 != 53 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

/// An fp32 `.npy` (to show fp32 input is accepted), written by hand.
fn write_f32_npy(path: &Path, shape: &[usize], data: &[f32]) {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, npy_v1("<f4", &tuple, &bytes)).unwrap();
}

fn write_f16_npy(path: &Path, shape: &[usize], data: &[f32]) {
    let t = Tensor::new(shape.to_vec(), data.to_vec()).unwrap();
    std::fs::write(path, npy::write_f16_bytes(&t, "in.npy").unwrap()).unwrap();
}

#[test]
fn sim_writes_the_sigmoid_of_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let hwx = compile_sigmoid(dir.path());
    for (name, f32_input) in [("in16.npy", false), ("in32.npy", true)] {
        let input = dir.path().join(name);
        if f32_input {
            write_f32_npy(&input, &[1, 1, 1, 77], &ramp());
        } else {
            write_f16_npy(&input, &[1, 1, 1, 77], &ramp());
        }
        let out = dir.path().join(format!("out-{name}"));
        let arg = format!("image={}", s(&input));
        let o = anec(&["sim", s(&hwx), "--input", &arg, "--output-dir", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let probs = npy::read_file(&out.join("probs.npy")).unwrap();
        assert_eq!(probs.dtype, npy::NpyDtype::F16);
        assert_eq!(probs.tensor.shape, vec![1, 1, 1, 77]);
        let worst = ramp()
            .iter()
            .zip(&probs.tensor.data)
            .map(|(&x, &y)| (y - 1.0 / (1.0 + (-x).exp())).abs())
            .fold(0.0f32, f32::max);
        // The 33-knot table (knots 0.5 apart) interpolates sigmoid to within 3.4e-3
        // (docs/simulator.md, "Tolerances"); 2^-8 bounds it with the fp16 output rounding.
        assert!(worst <= 1.0 / 256.0, "max |sim - sigmoid| = {worst}");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "one file per output");
    }
}

/// Runs `anec sim` with `--input ARG` pairs and returns its stderr, checking that it failed
/// and wrote nothing.
fn sim_fails(hwx: &Path, inputs: &[String], out: &Path) -> String {
    let mut args = vec!["sim".to_string(), s(hwx).to_string()];
    for i in inputs {
        args.extend(["--input".to_string(), i.clone()]);
    }
    args.extend(["--output-dir".to_string(), s(out).to_string()]);
    let o = Command::new(env!("CARGO_BIN_EXE_anec")).args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.exists(), "nothing may be written on error");
    stderr(&o)
}

#[test]
fn sim_input_errors_list_the_programs_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let hwx = compile_sigmoid(dir.path());
    let good = dir.path().join("good.npy");
    write_f16_npy(&good, &[1, 1, 1, 77], &ramp());
    let short = dir.path().join("short.npy");
    write_f16_npy(&short, &[1, 1, 77], &ramp());
    let int32 = dir.path().join("int.npy");
    std::fs::write(&int32, npy_v1("<i4", "(1, 1, 1, 77)", &[0; 77 * 4])).unwrap();
    let out = dir.path().join("out");
    let listing = "the program's inputs are: image [1, 1, 1, 77] fp16";
    let cases = [
        (vec![format!("img={}", s(&good))], "no input named 'img'".to_string()),
        (vec![], "missing --input for 'image'".to_string()),
        (
            vec![format!("image={}", s(&short))],
            format!("{}: input 'image' has shape [1, 1, 77], the program expects [1, 1, 1, 77]", s(&short)),
        ),
        (vec![format!("image={}", s(&int32))], format!("{}: unsupported dtype '<i4'", s(&int32))),
    ];
    for (inputs, problem) in cases {
        let err = sim_fails(&hwx, &inputs, &out);
        assert!(err.starts_with(&format!("error: {}: {problem}", s(&hwx))), "{err}");
        assert!(err.trim_end().ends_with(listing), "{err}");
    }
}

#[test]
fn run_evaluates_a_mil_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = workspace().join("../shared/fixtures/mil/real/apple+coremltools__add_model.mlmodelc.model.mil");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("mul(x = x, y = y)"), "the fixture is x * y");
    let x: Vec<f32> = (0..10).map(|i| i as f32 * 0.25 - 1.0).collect();
    let y: Vec<f32> = (0..10).map(|i| 2.0 - i as f32 * 0.5).collect();
    let (xf, yf) = (dir.path().join("x.npy"), dir.path().join("y.npy"));
    write_f16_npy(&xf, &[1, 10], &x);
    write_f32_npy(&yf, &[1, 10], &y);
    let out = dir.path().join("out");
    let (xa, ya) = (format!("x={}", s(&xf)), format!("y={}", s(&yf)));
    let o = anec(&["run", s(&model), "--input", &xa, "--input", &ya, "--output-dir", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let files: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, vec![std::ffi::OsString::from("var_3.npy")], "one file, named after the returned variable");
    let got = npy::read_file(&out.join("var_3.npy")).unwrap();
    assert_eq!(got.tensor.shape, vec![1, 10], "MIL shape");
    assert_eq!(got.dtype, npy::NpyDtype::F32, "the reference interpreter's outputs are fp32");
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    assert_eq!(got.tensor.data, want, "products of small multiples of 1/4 are exact in fp16");
}

#[test]
fn run_on_a_netplist_uses_program_shapes_and_lists_inputs_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let plist = workspace().join("tests/conformance/sigmoid.plist");
    let bad = dir.path().join("bad.npy");
    write_f16_npy(&bad, &[77], &ramp());
    let out = dir.path().join("out");
    let arg = format!("image={}", s(&bad));
    let o = anec(&["run", s(&plist), "--input", &arg, "--output-dir", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("input 'image' has shape [77], the program expects [1, 1, 1, 77]"), "{err}");
    assert!(err.trim_end().ends_with("the program's inputs are: image [1, 1, 1, 77] fp16"), "{err}");
    assert!(!out.exists());
}

/// Apple's `cast_b_to_f16_1x1x64x1` as a user runs it: compile the MIL (a bool input cast
/// to fp16), simulate the program on a bool `.npy` (the program's input is uint8) and
/// interpret the MIL on the same file; both give the 0/1 values as fp16. A float file
/// for the bool input is refused naming the input.
#[test]
fn a_bool_input_cast_to_fp16_simulates_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mil = dir.path().join("model.mil");
    let text = "program(1.3)\n{\n  func main<ios18>(tensor<bool, [1, 1, 64, 1]> x) {\n        \
        tensor<fp16, [1, 1, 64, 1]> y = cast(dtype = string(\"fp16\"), x = x)[name = string(\"y\")];\n  } -> (y);\n}\n";
    std::fs::write(&mil, text).unwrap();
    let o = anec(&["compile", s(&mil), "-t", "h13g", "-o", s(dir.path())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bits: Vec<u8> = (0..64).map(|i| u8::from(i % 3 == 0)).collect();
    let input = dir.path().join("x.npy");
    std::fs::write(&input, npy_v1("|b1", "(1, 1, 64, 1)", &bits)).unwrap();
    let want: Vec<f32> = bits.iter().map(|&b| f32::from(b)).collect();
    let arg = format!("x={}", s(&input));
    let hwx = dir.path().join("model.hwx");
    for (cmd, program, dtype) in [("sim", &hwx, npy::NpyDtype::F16), ("run", &mil, npy::NpyDtype::F32)] {
        let out = dir.path().join(cmd);
        let o = anec(&[cmd, s(program), "--input", &arg, "--output-dir", s(&out)]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        let got = npy::read_file(&out.join("y.npy")).unwrap();
        assert_eq!((got.dtype, got.tensor.shape.clone()), (dtype, vec![1, 1, 64, 1]), "{cmd}");
        assert_eq!(got.tensor.data, want, "{cmd}");
    }
    let float = dir.path().join("f.npy");
    write_f16_npy(&float, &[1, 1, 64, 1], &want);
    let o = anec(&["sim", s(&hwx), "--input", &format!("x={}", s(&float)), "--output-dir", s(dir.path())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("input 'x' is uint8 but the file holds float16"), "{}", stderr(&o));
}
