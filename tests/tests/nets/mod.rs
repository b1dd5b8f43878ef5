//! Whole networks written as MIL with their weights in memory (`BLOBFILE` references
//! resolved from a [`BlobTable`] built here, as the front end builds one from a
//! `weight.bin`): big linears, MLPs and deep chains too large to write as inline
//! constants.

use anec_ir::mil::{BlobData, BlobKey, BlobTable, MilModel, ScalarType, SharedBytes};
use anec_tests::agree::{Source, SplitMix};
use half::f16;

/// Path every weight names.
const WEIGHTS: &str = "@model_path/weights/weight.bin";

/// A MIL `main` function under construction.
pub struct Net {
    input: String,
    stmts: Vec<String>,
    blobs: BlobTable,
    rng: SplitMix,
}

/// `tensor<fp16, [1, 2, 3]>`.
fn ty(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("tensor<fp16, [{}]>", dims.join(", "))
}

impl Net {
    /// A function of one fp16 input `x` of `shape`; weights drawn from `seed`.
    pub fn new(shape: &[usize], seed: u64) -> Net {
        Net { input: format!("{} x", ty(shape)), stmts: Vec::new(), blobs: BlobTable::new(), rng: SplitMix(seed) }
    }

    /// A constant `name` of `shape`, uniform in `[-scale, scale]`, stored as fp16 in the
    /// blob table.
    pub fn weight(&mut self, name: &str, shape: &[usize], scale: f32) -> String {
        let n: usize = shape.iter().product();
        let bytes: Vec<u8> =
            (0..n).flat_map(|_| f16::from_f32((self.rng.unit() * 2.0 - 1.0) * scale).to_le_bytes()).collect();
        let offset = 64 * (self.blobs.len() as u64 + 1);
        let key = BlobKey { path: WEIGHTS.into(), offset };
        self.blobs.insert(key, BlobData { dtype: ScalarType::Fp16, bytes: SharedBytes::from_vec(bytes) });
        self.stmts.push(format!(
            "{t} {name} = const()[name = string(\"{name}\"), val = {t}(BLOBFILE(path = string(\"{WEIGHTS}\"), \
             offset = uint64({offset})))];",
            t = ty(shape)
        ));
        name.to_string()
    }

    /// `shape name = op(args)`; returns `name`.
    pub fn op(&mut self, name: &str, shape: &[usize], op: &str, args: &str) -> String {
        self.stmts.push(format!("{} {name} = {op}({args})[name = string(\"{name}\")];", ty(shape)));
        name.to_string()
    }

    /// `linear(x)` from `din` to `dout` features on `[1, s, din]`, weights scaled by
    /// `1/sqrt(din)`, then `act` (a MIL activation) when given.
    pub fn linear(&mut self, name: &str, x: &str, s: usize, din: usize, dout: usize, act: Option<&str>) -> String {
        let w = self.weight(&format!("{name}_w"), &[dout, din], (din as f32).sqrt().recip());
        let b = self.weight(&format!("{name}_b"), &[dout], 0.05);
        let y = self.op(name, &[1, s, dout], "linear", &format!("x = {x}, weight = {w}, bias = {b}"));
        match act {
            Some(a) => self.op(&format!("{name}_{a}"), &[1, s, dout], a, &format!("x = {y}")),
            None => y,
        }
    }

    /// A same-padded 3x3 convolution with bias on `[1, c, h, w]`.
    pub fn conv3(&mut self, name: &str, x: &str, c: usize, hw: (usize, usize)) -> String {
        let w = self.weight(&format!("{name}_w"), &[c, c, 3, 3], (9.0 * c as f32).sqrt().recip());
        let b = self.weight(&format!("{name}_b"), &[c], 0.05);
        let args = format!(
            "x = {x}, weight = {w}, bias = {b}, strides = tensor<int32, [2]>([1, 1]), pad_type = string(\"same\"), \
             dilations = tensor<int32, [2]>([1, 1]), groups = int32(1)"
        );
        self.op(name, &[1, c, hw.0, hw.1], "conv", &args)
    }

    /// The model whose output is `y`, as the front end would give it.
    pub fn source(self, y: &str, file: &str) -> Source {
        let body: String = self.stmts.iter().map(|s| format!("        {s}\n")).collect();
        let text = format!("program(1.3)\n{{\n    func main<ios18>({}) {{\n{body}    }} -> ({y});\n}}\n", self.input);
        let program = anec_front::mil::parse_program(&text, file).unwrap_or_else(|ds| {
            panic!("{file}: {}", ds.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        });
        let model = MilModel { program, blobs: self.blobs, file: file.into(), text: Some(text) };
        Source::Mil { model, function: "main".into() }
    }
}
