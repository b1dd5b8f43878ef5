//! Running programs and models on host tensors: what `anec sim` and `anec run` and the
//! agreement tests share.
//!
//! - [`InputSpec`]: a program's or model's input as the user must supply it (name, shape,
//!   element type); [`module_inputs`] (anec dialect: `[N, C, H, W]`, `[N, C, D, H, W]` when
//!   depth > 1) and [`mil_inputs`] (MIL shapes) list them.
//! - [`bind_inputs`] reads `--input NAME=FILE.npy` arguments against those specs: an unknown
//!   name, a missing or repeated input, a shape that differs, an unsupported `.npy` dtype
//!   or one that does not suit the input (floats for fp16 and fp32 inputs; bool, uint8 or
//!   int8 with values in range for `bool`, `uint8` and `int8` inputs) is an
//!   [`Error::Inputs`] that lists every input with its shape and type.
//! - [`write_outputs`] writes one `NAME.npy` (fp16 for `sim`, fp32 for `run`) per output,
//!   all or nothing.

use crate::Error;
use anec_ir::mil::{Dim, MilModel, Type};
use anec_ir::{DType, Module, TensorType};
use anec_tools::npy::{self, NpyDtype, NpyError};
use anec_tools::Tensor;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// One input of a program or model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    /// The name the user binds (`image`).
    pub key: String,
    /// Dimensions; `None` for a MIL `?`, which matches any extent.
    pub shape: Vec<Option<usize>>,
    /// Element type name (`fp16`, `fp32`, `uint8`, `int8`).
    pub dtype: String,
}

impl InputSpec {
    /// An input of fixed shape.
    pub fn fixed(key: impl Into<String>, shape: &[usize], dtype: impl Into<String>) -> Self {
        InputSpec { key: key.into(), shape: shape.iter().map(|&d| Some(d)).collect(), dtype: dtype.into() }
    }

    /// Whether a tensor of `shape` fits.
    pub fn accepts(&self, shape: &[usize]) -> bool {
        self.shape.len() == shape.len()
            && self.shape.iter().zip(shape).all(|(want, &got)| match want {
                Some(w) => *w == got,
                None => true,
            })
    }

    /// The shape with every `?` taken as 1 (for generating inputs).
    pub fn concrete_shape(&self) -> Vec<usize> {
        self.shape.iter().map(|d| d.unwrap_or(1)).collect()
    }
}

impl fmt::Display for InputSpec {
    /// `image [1, 1, 1, 77] fp16`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.key, dims_text(&self.shape), self.dtype)
    }
}

/// `[1, 3, ?, 8]`.
fn dims_text(shape: &[Option<usize>]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.map_or("?".to_string(), |d| d.to_string())).collect();
    format!("[{}]", dims.join(", "))
}

/// The program layout shape of an anec tensor type: `[N, C, H, W]`, or `[N, C, D, H, W]`
/// when depth > 1.
pub fn program_shape(ty: &TensorType) -> Vec<usize> {
    let d = |x: u32| x as usize;
    if ty.d > 1 {
        vec![d(ty.n), d(ty.c), d(ty.d), d(ty.h), d(ty.w)]
    } else {
        vec![d(ty.n), d(ty.c), d(ty.h), d(ty.w)]
    }
}

/// The name of an anec element type as the simulator names it.
pub fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "fp16",
        DType::F32 => "fp32",
        DType::U8 => "uint8",
        DType::I8 => "int8",
    }
}

/// The inputs of an anec-dialect module, keyed by port name.
pub fn module_inputs(m: &Module) -> Vec<InputSpec> {
    m.inputs
        .iter()
        .filter_map(|p| m.ty(p.value).map(|ty| InputSpec::fixed(&p.name, &program_shape(ty), dtype_name(ty.dtype))))
        .collect()
}

/// The inputs of MIL function `function`, with their MIL shapes.
pub fn mil_inputs(model: &MilModel, function: &str) -> Result<Vec<InputSpec>, Error> {
    let f = model.program.function(function).ok_or_else(|| Error::NoFunction {
        file: model.file.clone(),
        function: function.to_string(),
        functions: model.program.functions.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join(", "),
    })?;
    Ok(f.inputs
        .iter()
        .map(|p| {
            let (dtype, shape) = match &p.ty {
                Type::Tensor { dtype, shape } => (dtype.name().to_string(), shape.iter().map(dim).collect()),
                Type::Scalar(dtype) => (dtype.name().to_string(), Vec::new()),
                other => (format!("{other:?}"), Vec::new()),
            };
            InputSpec { key: p.name.name.clone(), shape, dtype }
        })
        .collect())
}

fn dim(d: &Dim) -> Option<usize> {
    match d {
        Dim::Known(n) => usize::try_from(*n).ok(),
        Dim::Unknown => None,
    }
}

/// `a [..] fp16, b [..] fp16` (or `(none)`).
pub fn list_inputs(specs: &[InputSpec]) -> String {
    if specs.is_empty() {
        return "(none)".to_string();
    }
    specs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// Parses `NAME=FILE` (the value of `--input`).
pub fn parse_input_arg(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => Ok((name.to_string(), PathBuf::from(file))),
        _ => Err(format!("expected NAME=FILE.npy, found '{s}'")),
    }
}

/// Reads every `(name, file)` and checks it against `specs`; `program` names the program
/// in errors. Names are checked before any file is read.
pub fn bind_inputs(
    program: &str,
    specs: &[InputSpec],
    given: &[(String, PathBuf)],
) -> Result<BTreeMap<String, Tensor>, Error> {
    let fail = |problem: String| Error::Inputs { program: program.to_string(), problem, inputs: list_inputs(specs) };
    check_names(specs, given).map_err(fail)?;
    let mut out = BTreeMap::new();
    for (name, file) in given {
        let spec = specs.iter().find(|s| &s.key == name).ok_or_else(|| fail(format!("no input named '{name}'")))?;
        let tensor = read_input(spec, file).map_err(fail)?;
        out.insert(name.clone(), tensor);
    }
    Ok(out)
}

/// Every given name is an input, none is given twice, none is missing.
fn check_names(specs: &[InputSpec], given: &[(String, PathBuf)]) -> Result<(), String> {
    for (i, (name, file)) in given.iter().enumerate() {
        if !specs.iter().any(|s| &s.key == name) {
            return Err(format!("no input named '{name}' (given as --input {name}={})", file.display()));
        }
        if given[..i].iter().any(|(n, _)| n == name) {
            return Err(format!("input '{name}' is given twice"));
        }
    }
    let missing: Vec<&str> =
        specs.iter().filter(|s| !given.iter().any(|(n, _)| n == &s.key)).map(|s| s.key.as_str()).collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing --input for {}",
            missing.iter().map(|m| format!("'{m}'")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}

/// The values an 8-bit input holds (`bool` 0 and 1, `uint8`, `int8`), `None` for a float
/// input.
pub fn eight_bit_range(dtype: &str) -> Option<(f32, f32)> {
    match dtype {
        "bool" => Some((0.0, 1.0)),
        "uint8" => Some((0.0, 255.0)),
        "int8" => Some((-128.0, 127.0)),
        _ => None,
    }
}

/// What an input of `dtype` must be given as.
fn wanted(dtype: &str) -> &'static str {
    match eight_bit_range(dtype) {
        Some(_) => "a bool, uint8 or int8 array",
        None => "a float16 or float32 array",
    }
}

/// One input file, checked against its spec: a float input takes a float16 or float32
/// array, an 8-bit input (`bool`, `uint8`, `int8`) a bool, uint8 or int8 array whose
/// values it can hold.
fn read_input(spec: &InputSpec, file: &Path) -> Result<Tensor, String> {
    let array = npy::read_file(file).map_err(|e| match e {
        NpyError::Dtype { .. } => format!("{e}; input '{}' ({}) must be {}", spec.key, spec.dtype, wanted(&spec.dtype)),
        other => other.to_string(),
    })?;
    let range = eight_bit_range(&spec.dtype);
    if range.is_some() == array.dtype.is_float() {
        return Err(format!(
            "{}: input '{}' is {} but the file holds {}; give {}",
            file.display(),
            spec.key,
            spec.dtype,
            array.dtype.numpy_name(),
            wanted(&spec.dtype)
        ));
    }
    if let Some((lo, hi)) = range {
        if let Some((i, v)) = array.tensor.data.iter().enumerate().find(|(_, v)| !(lo..=hi).contains(*v)) {
            return Err(format!(
                "{}: input '{}' is {}, which holds {lo} to {hi}, but element {i} is {v}",
                file.display(),
                spec.key,
                spec.dtype
            ));
        }
    }
    if !spec.accepts(&array.tensor.shape) {
        let got: Vec<Option<usize>> = array.tensor.shape.iter().map(|&d| Some(d)).collect();
        return Err(format!(
            "{}: input '{}' has shape {}, the program expects {}",
            file.display(),
            spec.key,
            dims_text(&got),
            dims_text(&spec.shape)
        ));
    }
    Ok(array.tensor)
}

/// Writes `DIR/NAME.npy` as `dtype` for every output (`anec sim`: fp16, what the engine
/// stores; `anec run`: fp32, the reference interpreter's precision): all files are encoded
/// before the first is written, and each is written atomically.
pub fn write_outputs(dir: &Path, outputs: &BTreeMap<String, Tensor>, dtype: NpyDtype) -> Result<Vec<PathBuf>, Error> {
    let mut encoded = Vec::new();
    for (name, tensor) in outputs {
        let path = dir.join(format!("{name}.npy"));
        let bytes = npy::write_bytes(tensor, &path.display().to_string(), dtype)?;
        encoded.push((path, bytes));
    }
    for (path, bytes) in &encoded {
        crate::write_atomically(path, bytes)?;
    }
    Ok(encoded.into_iter().map(|(p, _)| p).collect())
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
