//! A generated model: MIL text or an anec-dialect module, the names of its layers (an
//! error rejecting it must name one) and how to draw its inputs.

use anec_ir::mil::{BlobTable, MilModel};
use anec_ir::{Attr, DType, Location, Module, Op, OpCode, Port, TensorType};
use anec_tests::agree::{fp16, Source, SplitMix};
use std::fmt;

/// A generated model.
#[derive(Clone)]
pub struct Model {
    /// The family it belongs to (for counts and file names).
    pub family: &'static str,
    /// The program.
    pub body: Body,
    /// Names of its layers (MIL `name` = result variable; anec op names).
    pub names: Vec<String>,
    /// Inputs are uniform in this range.
    pub range: (f32, f32),
    /// Seed of the inputs.
    pub seed: u64,
}

/// The program of a [`Model`].
#[derive(Clone)]
pub enum Body {
    /// `model.mil` text.
    Mil(String),
    /// An anec-dialect module.
    Anec(Module),
}

impl Model {
    /// The program text (`model.mil` or MLIR generic syntax).
    pub fn text(&self) -> String {
        match &self.body {
            Body::Mil(t) => t.clone(),
            Body::Anec(m) => anec_ir::print_module(m),
        }
    }

    /// File extension the compiler reads the text with.
    pub fn ext(&self) -> &'static str {
        match self.body {
            Body::Mil(_) => "mil",
            Body::Anec(_) => "mlir",
        }
    }

    /// What [`anec_tests::agree::compile_and_compare`] takes.
    pub fn source(&self) -> Result<Source, String> {
        match &self.body {
            Body::Anec(m) => Ok(Source::Module { module: m.clone(), name: format!("{} case", self.family) }),
            Body::Mil(text) => {
                let file = format!("{}.mil", self.family);
                let program = anec_front::mil::parse_program(text, &file)
                    .map_err(|ds| ds.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))?;
                let model = MilModel { program, blobs: BlobTable::new(), file, text: Some(text.clone()) };
                Ok(Source::Mil { model, function: "main".into() })
            }
        }
    }
}

impl fmt::Debug for Model {
    /// The program itself, so a shrunk failure reads as the minimal model.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} model (inputs in [{}, {}], seed {}):\n{}",
            self.family,
            self.range.0,
            self.range.1,
            self.seed,
            self.text()
        )
    }
}

/// `tensor<fp16, [1, 3, 4, 4]>`.
pub fn ty(shape: &[usize]) -> String {
    format!("tensor<fp16, [{}]>", join(shape))
}

/// `1, 3, 4`.
pub fn join<T: fmt::Display>(v: &[T]) -> String {
    v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// An inline int32 vector value.
pub fn ints(v: &[i64]) -> String {
    format!("tensor<int32, [{}]>([{}])", v.len(), join(v))
}

/// An inline int32 scalar value.
pub fn int(v: i64) -> String {
    format!("tensor<int32, []>({v})")
}

/// An inline string value.
pub fn string(s: &str) -> String {
    format!("tensor<string, []>(\"{s}\")")
}

/// An inline bool value.
pub fn boolean(b: bool) -> String {
    format!("tensor<bool, []>({b})")
}

/// An inline fp16 scalar value.
pub fn scalar(v: f32) -> String {
    format!("tensor<fp16, []>({v})")
}

/// An inline fp16 tensor of `shape` holding `data` (row-major).
pub fn fp16_tensor(shape: &[usize], data: &[f32]) -> String {
    if shape.is_empty() {
        return scalar(data.first().copied().unwrap_or(0.0));
    }
    format!("{}({})", ty(shape), nested(shape, data))
}

fn nested(shape: &[usize], data: &[f32]) -> String {
    match shape {
        [] => data.first().copied().unwrap_or(0.0).to_string(),
        [_] => format!("[{}]", join(data)),
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
            let parts: Vec<String> = (0..*n).map(|i| nested(rest, &data[i * step..(i + 1) * step])).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// `n` values that are exact in fp16: multiples of 1/64 in [-1, 1] (no weight rounding, so
/// a disagreement is never the weights' fp16 storage).
pub fn weights(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = SplitMix(seed);
    (0..n).map(|_| fp16(((rng.next_u64() % 129) as f32 - 64.0) / 64.0)).collect()
}

/// A MIL program with one function `main`.
pub struct MilText {
    inputs: Vec<String>,
    stmts: Vec<String>,
    outputs: Vec<String>,
}

impl MilText {
    /// A function with fp16 inputs `(name, shape)`.
    pub fn new(inputs: &[(&str, &[usize])]) -> Self {
        MilText {
            inputs: inputs.iter().map(|(n, s)| format!("{} {n}", ty(s))).collect(),
            stmts: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// A function with inputs `(name, MIL dtype, shape)` (`bool`, `uint8`, `fp16`, ...).
    pub fn typed(inputs: &[(&str, &str, &[usize])]) -> Self {
        MilText {
            inputs: inputs.iter().map(|(n, d, s)| format!("tensor<{d}, [{}]> {n}", join(s))).collect(),
            stmts: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// `tensor<fp16, shape> name = op(args)[name = "name"];`.
    pub fn op(&mut self, name: &str, shape: &[usize], op: &str, args: &[(&str, String)]) -> &mut Self {
        self.op_as("fp16", name, shape, op, args)
    }

    /// [`MilText::op`] with a result of MIL dtype `dtype`.
    pub fn op_as(&mut self, dtype: &str, name: &str, shape: &[usize], op: &str, args: &[(&str, String)]) -> &mut Self {
        let args: Vec<String> = args.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let ty = format!("tensor<{dtype}, [{}]>", join(shape));
        self.stmts.push(format!("{ty} {name} = {op}({})[name = {}];", args.join(", "), string(name)));
        self
    }

    /// `tensor<fp16, s0> n0, tensor<fp16, s1> n1 = op(args)[name = "n0"];` (an op of several
    /// results).
    pub fn op_multi(&mut self, results: &[(&str, &[usize])], op: &str, args: &[(&str, String)]) -> &mut Self {
        let outs: Vec<String> = results.iter().map(|(n, s)| format!("{} {n}", ty(s))).collect();
        let args: Vec<String> = args.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let name = results.first().map_or("", |r| r.0);
        self.stmts.push(format!("{} = {op}({})[name = {}];", outs.join(", "), args.join(", "), string(name)));
        self
    }

    /// Returns `name`.
    pub fn output(&mut self, name: &str) -> &mut Self {
        self.outputs.push(name.to_string());
        self
    }

    /// The program text.
    pub fn text(&self) -> String {
        let body: String = self.stmts.iter().map(|s| format!("            {s}\n")).collect();
        format!(
            "program(1.0)\n{{\n    func main<ios16>({}) {{\n{body}        }} -> ({});\n}}",
            self.inputs.join(", "),
            self.outputs.join(", ")
        )
    }
}

/// An anec module `x -> op -> y@output` with one op on `[1, c, h, w]` fp16 tensors.
pub fn anec_unary(opcode: OpCode, name: &str, shape: [u32; 4], attrs: Vec<(&str, Attr)>) -> Module {
    let [n, c, h, w] = shape;
    let ty = TensorType::nchw(n, c, h, w, DType::F16);
    let mut m = Module::new("net");
    let x = m.add_value(ty);
    let y = m.add_value(ty);
    m.inputs.push(Port { name: "x".into(), value: x, layout: Default::default(), loc: Location::default() });
    m.outputs.push(Port { name: "y@output".into(), value: y, layout: Default::default(), loc: Location::default() });
    let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    m.ops.push(Op { opcode, name: name.into(), operands: vec![x], results: vec![y], attrs, loc: Location::default() });
    m
}
