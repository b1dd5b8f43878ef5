//! The MNIST network of `mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil` as the
//! MIL front end lowers it, built here directly in the anec dialect (seeded pseudo-random
//! weights), compiled by the pass pipeline and the H13 backend, and reviewed through
//! `anec dump`:
//!
//! `1x1x28x28 -> conv 5x5 pad 2, 1->8 -> gain/offset bias_data -> relu -> max pool 2x2/2
//! -> conv 5x5 pad 2, 8->16 -> bias -> relu -> max pool 3x3/3 -> conv 4x4, 16->10 -> bias`.
//!
//! The snapshot is our encoding, not Apple's (there is no Apple program of this network);
//! the explicit assertions pin the rules it exercises. Re-bless with `INSTA_UPDATE=always`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use anec_backend_h13::td::TdImage;
use anec_ir::{Attr, Blob, DType, Location, Module, Op, OpCode, Port, TensorType, ValueId};

/// xorshift64*: a fixed, seeded stream of weights in [-0.5, 0.5).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 24) as f32 - 0.5
    }

    /// A random fp16 in ±[2^-5, 1): sign, exponent 10..14, any mantissa.
    fn half_bits(&mut self) -> u16 {
        let r = ((self.next() + 0.5) * (1 << 16) as f32) as u32;
        let (sign, exp, mant) = (r & 1, 10 + (r >> 1) % 5, (r >> 4) & 0x3FF);
        (sign << 15 | exp << 10 | mant) as u16
    }

    fn blob(&mut self, n: u32, dtype: DType) -> Blob {
        let bytes = (0..n)
            .flat_map(|_| match dtype {
                DType::F16 => self.half_bits().to_le_bytes().to_vec(),
                _ => self.next().to_le_bytes().to_vec(),
            })
            .collect();
        Blob { dtype, bytes }
    }
}

fn ints(v: &[i64]) -> Attr {
    Attr::Array(v.iter().map(|&x| Attr::Int(x)).collect())
}

fn f16(c: u32, h: u32, w: u32) -> TensorType {
    TensorType::nchw(1, c, h, w, DType::F16)
}

/// A square convolution with stride 1 and its bias element type.
struct Conv {
    cin: u32,
    out: TensorType,
    kernel: u32,
    pad: u32,
    bias: DType,
}

struct Builder {
    m: Module,
    rng: Rng,
    line: u32,
}

impl Builder {
    fn op(&mut self, opcode: OpCode, name: &str, x: ValueId, out: TensorType, attrs: Vec<(&str, Attr)>) -> ValueId {
        let r = self.m.add_value(out);
        self.line += 1;
        let loc = Location { file: "mnist.mlir".into(), line: self.line, col: 5 };
        let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.m.ops.push(Op { opcode, name: name.into(), operands: vec![x], results: vec![r], attrs, loc });
        r
    }

    fn resource(&mut self, key: &str, ty: TensorType) -> Attr {
        let blob = self.rng.blob(u32::try_from(ty.elements()).expect("small"), ty.dtype);
        self.m.resources.insert(key.into(), blob);
        Attr::Resource { name: key.into(), ty }
    }

    /// conv (fp32 weights) -> gain/offset with a per-channel bias.
    fn conv_bias(&mut self, name: &str, x: ValueId, c: Conv) -> ValueId {
        let (k, out) = (c.kernel, c.out);
        let w = self.resource(&format!("{name}.weights"), TensorType::nchw(out.c, c.cin, k, k, DType::F32));
        let attrs = vec![
            ("kernel", ints(&[k.into(), k.into()])),
            ("stride", ints(&[1, 1])),
            ("pad", ints(&[c.pad.into(); 4])),
            ("groups", Attr::Int(1)),
            ("weights", w),
            ("kernel_group_reuse", Attr::Bool(false)),
        ];
        let conv = self.op(OpCode::Conv, name, x, out, attrs);
        let b = self.resource(&format!("{name}_bias.bias_data"), TensorType::nchw(1, out.c, 1, 1, c.bias));
        self.op(OpCode::GainOffsetControl, &format!("{name}_bias"), conv, out, vec![("bias_data", b)])
    }

    fn relu_pool(&mut self, name: &str, x: ValueId, input: TensorType, k: i64, out: TensorType) -> ValueId {
        let r = self.op(OpCode::Neuron, &format!("{name}_relu"), x, input, vec![("mode", Attr::Str("relu".into()))]);
        let attrs = vec![
            ("kind", Attr::Str("max".into())),
            ("kernel", ints(&[k, k])),
            ("stride", ints(&[k, k])),
            ("pad", ints(&[0; 4])),
        ];
        self.op(OpCode::Pooling, &format!("{name}_pool"), r, out, attrs)
    }
}

fn mnist() -> Module {
    let mut b = Builder { m: Module::new("net"), rng: Rng(0x5eed_1234_abcd_0001), line: 1 };
    let x = b.m.add_value(f16(1, 28, 28));
    b.m.inputs.push(Port { name: "Input3".into(), value: x, layout: Default::default(), loc: Location::default() });
    let c1 = b.conv_bias("conv1", x, Conv { cin: 1, out: f16(8, 28, 28), kernel: 5, pad: 2, bias: DType::F32 });
    let p1 = b.relu_pool("l1", c1, f16(8, 28, 28), 2, f16(8, 14, 14));
    let c2 = b.conv_bias("conv2", p1, Conv { cin: 8, out: f16(16, 14, 14), kernel: 5, pad: 2, bias: DType::F16 });
    let p2 = b.relu_pool("l2", c2, f16(16, 14, 14), 3, f16(16, 4, 4));
    let c3 = b.conv_bias("conv3", p2, Conv { cin: 16, out: f16(10, 1, 1), kernel: 4, pad: 0, bias: DType::F32 });
    b.m.outputs.push(Port {
        name: "Plus214_Output_0@output".into(),
        value: c3,
        layout: Default::default(),
        loc: Location::default(),
    });
    b.m
}

fn compile() -> anec::Compiled {
    let mut opts = anec::Options::new(anec::Target::H13g);
    opts.banner_args = vec!["-i <input>".into(), "-o <output>".into()];
    anec::compile_module(mnist(), "mnist.mlir", &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn tds(c: &anec::Compiled) -> Vec<TdImage> {
    let tasks = anec_backend_h13::chain::read(&c.hwx.text, u64::from(c.hwx.td_words) + 1, c.hwx.td_count as usize)
        .expect("the task chain reads");
    tasks.into_iter().map(|t| t.task.image).collect()
}

fn field(td: &TdImage, name: &str) -> u64 {
    td.get(name).unwrap_or_else(|| panic!("no field {name}"))
}

#[test]
fn mnist_compiles_to_five_tasks_with_fused_bias_and_relu() {
    let c = compile();
    let tds = tds(&c);
    assert_eq!(tds.len(), 5, "conv1+bias+relu, pool1, conv2+bias+relu, pool2, conv3+bias");
    let conv: Vec<&TdImage> = [0, 2, 4].iter().map(|&i| &tds[i]).collect();
    // 8, 16 and 10 output channels: 8 and 16 NEs (ActiveNE 3, 4), ENE = ActiveNE + 1.
    for (td, (k, pad, hout, ene)) in conv.iter().zip([(5, 2, 28, 4), (5, 2, 14, 5), (4, 0, 1, 5)]) {
        assert_eq!(field(td, "aneTD.Header[8].ENE"), ene);
        assert_eq!((field(td, "Common.ConvCfg.Kh"), field(td, "Common.ConvCfg.Kw")), (k, k));
        assert_eq!((field(td, "Common.ConvCfg.Py"), field(td, "Common.ConvCfg.Px")), (pad, pad));
        assert_eq!(field(td, "Common.OutDim.Hout"), hout);
        // The bias leads each kernel block (Apple's current compiler): BiasMode without
        // AccBias, the bias header stream idle.
        assert_eq!(field(td, "NE.MACCfg.BiasMode"), 1);
        assert_eq!(field(td, "NE.AccBias.AccBias"), 0);
        assert_eq!(td.word(0xF4), 0x80, "bias stream idle");
    }
    assert_eq!(field(conv[0], "NE.MACCfg.NonlinearMode"), 1);
    assert_eq!(field(conv[1], "NE.MACCfg.NonlinearMode"), 1);
    assert_eq!(field(conv[2], "NE.MACCfg.NonlinearMode"), 0);
    assert_eq!((field(conv[2], "Common.InDim.Win"), field(conv[2], "Common.OutDim.Wout")), (4, 1));
    for (td, (k, hout)) in [(&tds[1], (2, 14)), (&tds[3], (3, 4))] {
        assert_eq!(td.word(0x244) & (1 << 19), 1 << 19, "max pool bit");
        assert_eq!((field(td, "Common.ConvCfg.Kh"), field(td, "Common.ConvCfg.Sy")), (k, k));
        assert_eq!(field(td, "Common.OutDim.Hout"), hout);
        assert_eq!(field(td, "aneTD.Header[9].KBE0"), 0);
    }
    // 8 + 16 + 10 weight chunks (biases inline), each relocated against __const.
    assert_eq!(c.hwx.relocations.len(), 8 + 16 + 10);
}

#[test]
fn mnist_dump() {
    let c = compile();
    let bytes = c.hwx_bytes().unwrap_or_else(|e| panic!("{e}"));
    let text = anec_tools::dump_file(&bytes).unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("mnist_dump", text);
}
