//! Strategies for each family of generated models. Every parameter is drawn by proptest
//! (so it shrinks); weights and inputs come from a drawn seed.

use super::model::{anec_unary, boolean, fp16_tensor, int, ints, scalar, string, weights, Body, MilText, Model};
use anec_ir::{Attr, OpCode};
use proptest::array::{uniform3, uniform4};
use proptest::prelude::*;
use proptest::sample::select;

/// Inputs of most families.
const RANGE: (f32, f32) = (-2.0, 2.0);
/// Inputs of modes defined for positive numbers only (sqrt, rsqrt, inv, log, ...): away
/// from the pole or branch point at 0, where one fp16 ulp of input changes the result by
/// an unbounded amount.
const POSITIVE: (f32, f32) = (0.0625, 4.0);
/// Inputs of table-driven activations: wider than the table's [-8, 8] so the
/// extrapolation lines are exercised too.
const WIDE: (f32, f32) = (-10.0, 10.0);

fn mil(family: &'static str, text: &MilText, names: &[&str], seed: u64, range: (f32, f32)) -> Model {
    Model { family, body: Body::Mil(text.text()), names: names.iter().map(ToString::to_string).collect(), range, seed }
}

/// A 2-D convolution: kernel 1..7, stride 1..2, custom pads 0..2 per side (7 in 8 cases
/// below the kernel size), groups 1..4, channels 1..8, spatial up to 12, optional bias.
pub fn conv() -> impl Strategy<Value = Model> {
    let groups = 1usize..=4;
    groups
        .prop_flat_map(|g| {
            let per = 1..=(8 / g);
            let pads = (uniform4(0usize..=2), proptest::bool::weighted(0.875));
            let dilations = prop_oneof![3 => Just((1, 1)), 1 => (1usize..=3, 1usize..=3)];
            (Just(g), per.clone(), per, (1usize..=7, 1usize..=7), (1usize..=2, 1usize..=2), (pads, dilations))
        })
        .prop_flat_map(|(g, cin_g, cout_g, (kh, kw), stride, ((pads, below_kernel), (dy, dx)))| {
            // A dilated kernel spans (k - 1)·d + 1 (at most 19 here: past the engine's 13,
            // which the backend must reject naming the layer).
            let (eh, ew) = ((kh - 1) * dy + 1, (kw - 1) * dx + 1);
            // Mostly pads smaller than the kernel (what the engine runs); sometimes any pad,
            // which the backend must reject naming the layer.
            let pads = if below_kernel { [pads[0] % eh, pads[1] % eh, pads[2] % ew, pads[3] % ew] } else { pads };
            let h = (eh.saturating_sub(pads[0] + pads[1]).max(1))..=(eh + 6).max(12);
            let w = (ew.saturating_sub(pads[2] + pads[3]).max(1))..=(ew + 6).max(12);
            (Just((g, cin_g, cout_g, kh, kw, stride, pads, (dy, dx))), h, w, any::<bool>(), any::<u64>())
        })
        .prop_map(|((g, cin_g, cout_g, kh, kw, (sy, sx), p, (dy, dx)), h, w, bias, seed)| {
            let (cin, cout) = (g * cin_g, g * cout_g);
            let (eh, ew) = ((kh - 1) * dy + 1, (kw - 1) * dx + 1);
            let oh = (h + p[0] + p[1] - eh) / sy + 1;
            let ow = (w + p[2] + p[3] - ew) / sx + 1;
            let wshape = [cout, cin_g, kh, kw];
            let mut args = vec![
                ("x", "x".to_string()),
                ("weight", fp16_tensor(&wshape, &weights(seed, wshape.iter().product()))),
                ("strides", ints(&[sy as i64, sx as i64])),
                ("pad_type", string("custom")),
                ("pad", ints(&p.map(|v| v as i64))),
                ("dilations", ints(&[dy as i64, dx as i64])),
                ("groups", int(g as i64)),
            ];
            if bias {
                args.push(("bias", fp16_tensor(&[cout], &weights(seed ^ 1, cout))));
            }
            let mut t = MilText::new(&[("x", &[1, cin, h, w])]);
            t.op("conv_0", &[1, cout, oh, ow], "conv", &args).output("conv_0");
            mil("conv", &t, &["conv_0"], seed, RANGE)
        })
}

/// A 1x1 convolution of `[1, cin, h, w]` into `cout` channels, weights from `seed`.
pub fn pointwise_conv(cin: usize, h: usize, w: usize, cout: usize, seed: u64) -> Model {
    let wshape = [cout, cin, 1, 1];
    let args = [
        ("x", "x".to_string()),
        ("weight", fp16_tensor(&wshape, &weights(seed, cout * cin))),
        ("strides", ints(&[1, 1])),
        ("pad_type", string("valid")),
        ("dilations", ints(&[1, 1])),
        ("groups", int(1)),
    ];
    let mut t = MilText::new(&[("x", &[1, cin, h, w])]);
    t.op("conv_0", &[1, cout, h, w], "conv", &args).output("conv_0");
    mil("conv", &t, &["conv_0"], seed, RANGE)
}

/// `linear(x, weight, bias)` on rank 2 `[s, din]` or rank 3 `[1, s, din]`.
pub fn linear() -> impl Strategy<Value = Model> {
    (1usize..=8, 1usize..=16, 1usize..=16, any::<bool>(), any::<u64>()).prop_map(|(s, din, dout, rank3, seed)| {
        let (xs, ys): (Vec<usize>, Vec<usize>) =
            if rank3 { (vec![1, s, din], vec![1, s, dout]) } else { (vec![s, din], vec![s, dout]) };
        let args = [
            ("x", "x".to_string()),
            ("weight", fp16_tensor(&[dout, din], &weights(seed, dout * din))),
            ("bias", fp16_tensor(&[dout], &weights(seed ^ 1, dout))),
        ];
        let mut t = MilText::new(&[("x", &xs)]);
        t.op("linear_0", &ys, "linear", &args).output("linear_0");
        mil("linear", &t, &["linear_0"], seed, RANGE)
    })
}

/// Two `linear`s in a row (an MLP without its activation, or with a ReLU between them) on
/// rank 2 `[s, d]` or rank 3 `[1, s, d]`: the first product handed to the second in L2.
pub fn mlp() -> impl Strategy<Value = Model> {
    let dims = (1usize..=24, 1usize..=40, 1usize..=40, 1usize..=24);
    (dims, any::<bool>(), any::<bool>(), any::<u64>()).prop_map(|((s, d, h, o), relu, rank3, seed)| {
        let shape = |f: usize| if rank3 { vec![1, s, f] } else { vec![s, f] };
        let layer = |t: &mut MilText, name: &str, x: &str, din: usize, dout: usize, salt: u64| {
            let args = [
                ("x", x.to_string()),
                ("weight", fp16_tensor(&[dout, din], &weights(seed ^ salt, dout * din))),
                ("bias", fp16_tensor(&[dout], &weights(seed ^ salt ^ 1, dout))),
            ];
            t.op(name, &shape(dout), "linear", &args);
        };
        let mut t = MilText::new(&[("x", &shape(d))]);
        layer(&mut t, "fc_0", "x", d, h, 2);
        let mid = if relu {
            t.op("act_0", &shape(h), "relu", &[("x", "fc_0".into())]);
            "act_0"
        } else {
            "fc_0"
        };
        layer(&mut t, "fc_1", mid, h, o, 4);
        t.output("fc_1");
        mil("mlp", &t, &["fc_0", "act_0", "fc_1"], seed, RANGE)
    })
}

/// `matmul(x, y)` with a constant `y` (`[din, dout]`, or `[dout, din]` with `transpose_y`),
/// `x` `[s, din]` or, with `transpose_x`, `[din, s]`.
pub fn matmul() -> impl Strategy<Value = Model> {
    let flags = (any::<bool>(), any::<bool>());
    (1usize..=8, 1usize..=16, 1usize..=16, flags, any::<u64>()).prop_map(|(s, din, dout, (tx, ty), seed)| {
        let wshape = if ty { [dout, din] } else { [din, dout] };
        let xshape = if tx { [din, s] } else { [s, din] };
        let args = [
            ("x", "x".to_string()),
            ("y", fp16_tensor(&wshape, &weights(seed, din * dout))),
            ("transpose_x", boolean(tx)),
            ("transpose_y", boolean(ty)),
        ];
        let mut t = MilText::new(&[("x", &xshape)]);
        t.op("matmul_0", &[s, dout], "matmul", &args).output("matmul_0");
        mil("matmul", &t, &["matmul_0"], seed, RANGE)
    })
}

/// `matmul(x, y)` of two runtime operands, rank 2 or rank 3 with batch 1: M, K, N
/// random (odd sizes and 1 included, M beyond one 16-row slice), the four transpose
/// combinations.
pub fn runtime_matmul() -> impl Strategy<Value = Model> {
    let dims = (1usize..=40, 1usize..=40, 1usize..=40);
    (dims, any::<bool>(), any::<bool>(), any::<bool>(), any::<u64>()).prop_map(|((m, k, n), tx, ty, rank3, seed)| {
        let xs = if tx { [k, m] } else { [m, k] };
        let ys = if ty { [n, k] } else { [k, n] };
        let lead = |s: [usize; 2]| if rank3 { vec![1, s[0], s[1]] } else { s.to_vec() };
        let args = [
            ("x", "x".to_string()),
            ("y", "y".to_string()),
            ("transpose_x", boolean(tx)),
            ("transpose_y", boolean(ty)),
        ];
        let mut t = MilText::new(&[("x", &lead(xs)), ("y", &lead(ys))]);
        t.op("matmul_0", &lead([m, n]), "matmul", &args).output("matmul_0");
        mil("runtime_matmul", &t, &["matmul_0"], seed, RANGE)
    })
}

/// `add`/`mul`/`sub`/`maximum`/`minimum` of two runtime rank-4 tensors, each axis of
/// either operand possibly 1 (broadcast), half the time followed by a ReLU.
pub fn elementwise() -> impl Strategy<Value = Model> {
    let op = select(vec!["add", "mul", "sub", "maximum", "minimum"]);
    let broadcast = (any::<bool>(), uniform3(0u8..3));
    let dims = (1usize..=8, 1usize..=6, 1usize..=6);
    (op, dims, broadcast, any::<bool>(), any::<u64>()).prop_map(|(op, (c, h, w), (b, bc), relu, seed)| {
        // Half the cases broadcast; then per axis: 0 both full, 1 x is 1, 2 y is 1.
        let bc = if b { bc } else { [0; 3] };
        let dims = [c, h, w];
        let side = |who: u8| -> Vec<usize> {
            let mut s = vec![1];
            s.extend(dims.iter().zip(bc).map(|(&d, b)| if b == who { 1 } else { d }));
            s
        };
        let (xs, ys) = (side(1), side(2));
        let out = [1, c, h, w];
        let mut t = MilText::new(&[("x", &xs), ("y", &ys)]);
        t.op("ew_0", &out, op, &[("x", "x".into()), ("y", "y".into())]);
        // Half the cases apply a ReLU after it (the planar engine's ReLU bit).
        let last = if relu {
            t.op("ew_1", &out, "relu", &[("x", "ew_0".into())]);
            "ew_1"
        } else {
            "ew_0"
        };
        t.output(last);
        mil("elementwise", &t, &["ew_0", "ew_1"], seed, RANGE)
    })
}

/// `(mode, alpha, beta, input range)` of every anec neuron mode.
fn neuron_params(mode: &str, a: f32, b: f32) -> (Option<f32>, Option<f32>, (f32, f32)) {
    match mode {
        "sigmoid" | "sigmoid_high_precision" | "tanh" | "gelu" | "swish" | "erf" => (None, None, WIDE),
        "clamped_relu" => (Some(-a.abs()), Some(b.abs()), RANGE),
        "leaky_relu" | "elu" | "threshold_relu" => (Some(a), None, RANGE),
        "relu_n" => (Some(b.abs()), None, RANGE),
        "sqrt" | "rsqrt" | "inv" | "log2" | "degamma" | "gamma" => (None, None, POSITIVE),
        _ => (None, None, RANGE),
    }
}

/// One `anec.neuron` of every mode the verifier lists, on `[1, c, h, w]`.
pub fn neuron() -> impl Strategy<Value = Model> {
    let modes: Vec<&'static str> = anec_ir::verify::NEURON_MODES.to_vec();
    (select(modes), (1u32..=8, 1u32..=6, 1u32..=6), (-8i32..=8, 1i32..=16), any::<u64>()).prop_map(
        |(mode, (c, h, w), (a, b), seed)| {
            let (alpha, beta, range) = neuron_params(mode, a as f32 / 8.0, b as f32 / 4.0);
            let mut attrs = vec![("mode", Attr::Str(mode.into()))];
            attrs.extend(alpha.map(|v| ("alpha", Attr::Float(f64::from(v)))));
            attrs.extend(beta.map(|v| ("beta", Attr::Float(f64::from(v)))));
            let m = anec_unary(OpCode::Neuron, "neuron_0", [1, c, h, w], attrs);
            Model { family: "neuron", body: Body::Anec(m), names: vec!["neuron_0".into()], range, seed }
        },
    )
}

/// The MIL activations with their parameters and input range.
fn activation_args(op: &str, a: f32, b: f32) -> (Vec<(&'static str, String)>, (f32, f32)) {
    let x = ("x", "x".to_string());
    match op {
        "sigmoid" | "tanh" | "gelu" | "silu" | "erf" | "softplus" | "softsign" | "exp" | "exp2" => (vec![x], WIDE),
        "sqrt" => (vec![x], POSITIVE),
        "rsqrt" | "inverse" | "log" => (vec![x, ("epsilon", scalar(1.0 / 1024.0))], POSITIVE),
        "clip" => (vec![x, ("alpha", scalar(-a.abs())), ("beta", scalar(b.abs()))], RANGE),
        "leaky_relu" | "elu" | "thresholded_relu" | "threshold" => (vec![x, ("alpha", scalar(a))], RANGE),
        "sigmoid_hard" | "linear_activation" | "scaled_tanh" => {
            (vec![x, ("alpha", scalar(a)), ("beta", scalar(b))], RANGE)
        }
        _ => (vec![x], RANGE),
    }
}

/// Every MIL activation the lowering knows, on rank 4 or rank 2 inputs.
pub fn activation() -> impl Strategy<Value = Model> {
    let ops = anec_passes::lower::ACTIVATIONS.to_vec();
    (select(ops), (1usize..=8, 1usize..=6, 1usize..=6), any::<bool>(), (-8i32..=8, 1i32..=16), any::<u64>()).prop_map(
        |(op, (c, h, w), rank2, (a, b), seed)| {
            let shape = if rank2 { vec![h, c] } else { vec![1, c, h, w] };
            let (mut args, range) = activation_args(op, a as f32 / 8.0, b as f32 / 4.0);
            if op == "gelu" {
                args.push(("mode", string(if seed % 2 == 0 { "EXACT" } else { "TANH_APPROXIMATION" })));
            }
            let mut t = MilText::new(&[("x", &shape)]);
            t.op("act_0", &shape, op, &args).output("act_0");
            mil("activation", &t, &["act_0"], seed, range)
        },
    )
}

/// Table activations a convolution can apply in its own task (and a few that stay tasks
/// of their own: their table reads a transformed input).
const CONV_ACTIVATIONS: [&str; 10] =
    ["gelu", "sigmoid", "tanh", "silu", "erf", "elu", "leaky_relu", "clip", "exp", "softsign"];

/// A convolution (1x1 or 3x3 "same", bias or not, up to 96 output channels on up to 32x32:
/// several passes of blocks per NE) or a `linear` (rank 2 or 3, sometimes followed by a
/// second one), then a table activation of its result: the table at the head of each
/// kernel chunk (`chains.md` §2.5).
pub fn conv_activation() -> impl Strategy<Value = Model> {
    let conv = (1usize..=8, 1usize..=96, 1usize..=32, 1usize..=32, any::<bool>(), any::<bool>());
    let linear = (1usize..=16, 1usize..=40, 1usize..=80, any::<bool>(), proptest::option::of(1usize..=24));
    (select(CONV_ACTIVATIONS.to_vec()), any::<bool>(), conv, linear, (-8i32..=8, 1i32..=16), any::<u64>()).prop_map(
        |(act, is_conv, (cin, cout, h, w, k3, bias), (s, din, dout, rank3, then), (a, b), seed)| {
            let (mut t, shape) = if is_conv {
                let k = if k3 { 3 } else { 1 };
                let p = (k / 2) as i64;
                let mut args = vec![
                    ("x", "x".to_string()),
                    ("weight", fp16_tensor(&[cout, cin, k, k], &scaled(seed, cout * cin * k * k, cin * k * k))),
                    ("strides", ints(&[1, 1])),
                    ("pad_type", string("custom")),
                    ("pad", ints(&[p, p, p, p])),
                    ("dilations", ints(&[1, 1])),
                    ("groups", int(1)),
                ];
                if bias {
                    args.push(("bias", fp16_tensor(&[cout], &weights(seed ^ 1, cout))));
                }
                let mut t = MilText::new(&[("x", &[1, cin, h, w])]);
                t.op("mac_0", &[1, cout, h, w], "conv", &args);
                (t, vec![1, cout, h, w])
            } else {
                let (xs, ys) = if rank3 { (vec![1, s, din], vec![1, s, dout]) } else { (vec![s, din], vec![s, dout]) };
                let args = [
                    ("x", "x".to_string()),
                    ("weight", fp16_tensor(&[dout, din], &scaled(seed, dout * din, din))),
                    ("bias", fp16_tensor(&[dout], &weights(seed ^ 1, dout))),
                ];
                let mut t = MilText::new(&[("x", &xs)]);
                t.op("mac_0", &ys, "linear", &args);
                (t, ys)
            };
            let (mut args, _) = activation_args(act, a as f32 / 8.0, b as f32 / 4.0);
            args[0].1 = "mac_0".into();
            t.op("act_0", &shape, act, &args);
            // A linear's activation read by a second linear (the feed-forward of
            // `chain_ffn`: the first product handed over in L2).
            match then.filter(|_| !is_conv) {
                Some(o) => {
                    let mut ys = shape.clone();
                    if let Some(last) = ys.last_mut() {
                        *last = o;
                    }
                    let args = [
                        ("x", "act_0".to_string()),
                        ("weight", fp16_tensor(&[o, dout], &scaled(seed ^ 2, o * dout, dout))),
                        ("bias", fp16_tensor(&[o], &weights(seed ^ 3, o))),
                    ];
                    t.op("mac_1", &ys, "linear", &args).output("mac_1");
                }
                None => {
                    t.output("act_0");
                }
            }
            mil("conv_activation", &t, &["mac_0", "act_0", "mac_1"], seed, RANGE)
        },
    )
}

/// `op(x or z, act(x))` of `[1, C, 1, 1]` vectors, `act` a table activation: the table
/// task keeps its result as one packed row in L2 and, when the other operand is x, x
/// staged for the planar engine (`chains.md` §2.10); also the operands the other way round.
pub fn vector_activation_pe() -> impl Strategy<Value = Model> {
    let acts = select(vec!["gelu", "sigmoid", "tanh", "silu", "exp", "sqrt", "inverse"]);
    // (add and sub: a product scales the table's error by the other operand, which the
    // harness's per-op tolerance does not allow for.)
    let ops = select(vec!["add", "sub"]);
    (acts, ops, 1usize..=1000, (any::<bool>(), any::<bool>()), any::<u64>()).prop_map(
        |(act, op, c, (same, swapped), seed)| {
            let shape = [1, c, 1, 1];
            let (args, range) = activation_args(act, 0.0, 1.0);
            // Within [-2, 2] x * exp(x) stays in fp16's range.
            let range = if range == POSITIVE { POSITIVE } else { RANGE };
            let mut t = MilText::new(&[("x", &shape), ("z", &shape)]);
            t.op("act_0", &shape, act, &args);
            let other = if same { "x" } else { "z" };
            let (a, b) = if swapped { ("act_0", other) } else { (other, "act_0") };
            t.op("ew_0", &shape, op, &[("x", a.into()), ("y", b.into())]).output("ew_0");
            mil("vector_activation_pe", &t, &["act_0", "ew_0"], seed, range)
        },
    )
}

/// `n` weights of a sum over `fan_in` terms, scaled so the sum stays within a few units
/// (the activation's table is exercised over its knots, not only its saturated ends).
fn scaled(seed: u64, n: usize, fan_in: usize) -> Vec<f32> {
    let k = 2.0 / (fan_in as f32).sqrt();
    weights(seed, n).iter().map(|v| v * k).collect()
}

/// Gain/offset: `mul` then `add` (or `sub`) by a scalar or per-channel `[1, c, 1, 1]`
/// constant.
pub fn goc() -> impl Strategy<Value = Model> {
    (any::<bool>(), any::<bool>(), any::<bool>(), (1usize..=8, 1usize..=6, 1usize..=6), any::<u64>()).prop_map(
        |(per_channel, sub, bias_first, (c, h, w), seed)| {
            let konst = |s: u64| {
                if per_channel {
                    fp16_tensor(&[1, c, 1, 1], &weights(s, c).iter().map(|v| v * 2.0).collect::<Vec<_>>())
                } else {
                    scalar(weights(s, 1)[0] * 2.0)
                }
            };
            let shape = [1, c, h, w];
            let (first, second) = if bias_first { ("offset_0", "gain_0") } else { ("gain_0", "offset_0") };
            let mut t = MilText::new(&[("x", &shape)]);
            let offset_op = if sub { "sub" } else { "add" };
            for (i, name) in [first, second].into_iter().enumerate() {
                let x = if i == 0 { "x".to_string() } else { first.to_string() };
                let op = if name == "gain_0" { "mul" } else { offset_op };
                t.op(name, &shape, op, &[("x", x), ("y", konst(seed ^ i as u64))]);
            }
            t.output(second);
            mil("goc", &t, &["gain_0", "offset_0"], seed, RANGE)
        },
    )
}

/// `concat` of 2 or 3 runtime rank-4 tensors along a random axis.
pub fn concat() -> impl Strategy<Value = Model> {
    (2usize..=3, 0usize..4, (1usize..=4, 1usize..=6, 1usize..=6), uniform3(1usize..=4), any::<u64>()).prop_map(
        |(n, axis, (c, h, w), sizes, seed)| {
            let base = [1, c, h, w];
            let shapes: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    let mut s = base.to_vec();
                    s[axis] = if axis == 0 { 1 } else { sizes[i] };
                    s
                })
                .collect();
            let mut out = base.to_vec();
            out[axis] = shapes.iter().map(|s| s[axis]).sum();
            let names = ["a", "b", "c"];
            let inputs: Vec<(&str, &[usize])> = (0..n).map(|i| (names[i], shapes[i].as_slice())).collect();
            let mut t = MilText::new(&inputs);
            let values = format!("({})", names[..n].join(", "));
            let args = [("values", values), ("axis", int(axis as i64)), ("interleave", boolean(false))];
            t.op("concat_0", &out, "concat", &args).output("concat_0");
            mil("concat", &t, &["concat_0"], seed, RANGE)
        },
    )
}

/// `relu` then `reshape` to another factorization of the element count (ranks 1 to 4),
/// or `reshape` then `relu`.
pub fn reshape() -> impl Strategy<Value = Model> {
    ((1usize..=4, 1usize..=4, 1usize..=4), 0usize..6, any::<bool>(), any::<u64>()).prop_map(
        |((c, h, w), pick, reshape_first, seed)| {
            let n = c * h * w;
            let targets = [vec![n], vec![1, n], vec![c, h * w], vec![1, c * h, w], vec![1, h, c, w], vec![1, n, 1, 1]];
            let to = targets[pick].clone();
            let from = [1, c, h, w];
            let mut t = MilText::new(&[("x", &from)]);
            let shape_arg = ints(&to.iter().map(|&d| d as i64).collect::<Vec<_>>());
            if reshape_first {
                t.op("reshape_0", &to, "reshape", &[("x", "x".into()), ("shape", shape_arg)]);
                t.op("relu_0", &to, "relu", &[("x", "reshape_0".into())]).output("relu_0");
            } else {
                t.op("relu_0", &from, "relu", &[("x", "x".into())]);
                t.op("reshape_0", &to, "reshape", &[("x", "relu_0".into()), ("shape", shape_arg)]).output("reshape_0");
            }
            mil("reshape", &t, &["reshape_0", "relu_0"], seed, RANGE)
        },
    )
}

/// A MobileNetV2 inverted-residual block on `[1, c, s, s]`: 1x1 expansion to `e`
/// channels with bias, relu6 (`clip` 0..6), 3x3 depthwise with bias, relu6, 1x1
/// projection back to `c` with bias, and the residual add; weights from `seed`, scaled
/// as a layer's initialisation is (by a power of two near 1/sqrt(fan-in)).
pub fn inverted_residual(c: usize, e: usize, s: usize, seed: u64) -> Model {
    let scaled = |salt: u64, n: usize, fan_in: usize| -> Vec<f32> {
        let k = (fan_in as f32).sqrt().log2().round().exp2().recip();
        weights(seed ^ salt, n).iter().map(|v| v * k).collect()
    };
    let conv = |x: &str, w: Vec<f32>, wshape: [usize; 4], bias: Vec<f32>, groups: usize, pad: &str| {
        vec![
            ("x", x.to_string()),
            ("weight", fp16_tensor(&wshape, &w)),
            ("bias", fp16_tensor(&[wshape[0]], &bias)),
            ("strides", ints(&[1, 1])),
            ("pad_type", string(pad)),
            ("dilations", ints(&[1, 1])),
            ("groups", int(groups as i64)),
        ]
    };
    let clip = |x: &str| {
        vec![
            ("x", x.to_string()),
            ("alpha", "tensor<fp16, []>(0)".to_string()),
            ("beta", "tensor<fp16, []>(6)".to_string()),
        ]
    };
    let mut t = MilText::new(&[("x", &[1, c, s, s])]);
    t.op(
        "expand",
        &[1, e, s, s],
        "conv",
        &conv("x", scaled(1, e * c, c), [e, c, 1, 1], weights(seed ^ 2, e), 1, "valid"),
    );
    t.op("relu_0", &[1, e, s, s], "clip", &clip("expand"));
    t.op(
        "dw",
        &[1, e, s, s],
        "conv",
        &conv("relu_0", scaled(3, e * 9, 9), [e, 1, 3, 3], weights(seed ^ 4, e), e, "same"),
    );
    t.op("relu_1", &[1, e, s, s], "clip", &clip("dw"));
    t.op(
        "project",
        &[1, c, s, s],
        "conv",
        &conv("relu_1", scaled(5, c * e, e), [c, e, 1, 1], weights(seed ^ 6, c), 1, "valid"),
    );
    t.op("y", &[1, c, s, s], "add", &[("x", "x".to_string()), ("y", "project".to_string())]).output("y");
    mil("inverted_residual", &t, &["expand", "relu_0", "dw", "relu_1", "project", "y"], seed, RANGE)
}

/// `conv_transpose` of `[1, cin, h, w]` (weight `[cin, cout/groups, kh, kw]`): kernels
/// 1..4, strides 1..3, dilations 1..2, groups 1..2, `valid`, `same` or `custom` pads up to
/// the kernel's reach, optional bias; a case the backend cannot place is refused by name.
pub fn conv_transpose() -> impl Strategy<Value = Model> {
    let shape = (1usize..=2, 1usize..=4, 1usize..=4, 1usize..=9, 1usize..=9);
    let window = ((1usize..=4, 1usize..=4), (1usize..=3, 1usize..=3), (1usize..=2, 1usize..=2));
    (shape, window, 0usize..3, uniform4(0usize..=3), any::<bool>(), any::<u64>()).prop_map(
        |((g, cig, cog, h, w), ((kh, kw), (sy, sx), (dy, dx)), pad_kind, pads, bias, seed)| {
            let (cin, cout) = (g * cig, g * cog);
            let (eh, ew) = ((kh - 1) * dy + 1, (kw - 1) * dx + 1);
            let (fh, fw) = ((h - 1) * sy + eh, (w - 1) * sx + ew);
            let p = [pads[0] % eh, pads[1] % eh, pads[2] % ew, pads[3] % ew];
            let (kind, out) = match pad_kind {
                0 => ("valid", [fh, fw]),
                1 => ("same", [h * sy, w * sx]),
                _ => ("custom", [(fh - p[0] - p[1]).max(1), (fw - p[2] - p[3]).max(1)]),
            };
            let wshape = [cin, cog, kh, kw];
            let mut args = vec![
                ("x", "x".to_string()),
                ("weight", fp16_tensor(&wshape, &weights(seed, wshape.iter().product()))),
                ("strides", ints(&[sy as i64, sx as i64])),
                ("dilations", ints(&[dy as i64, dx as i64])),
                ("pad_type", string(kind)),
                ("groups", int(g as i64)),
            ];
            if kind == "custom" {
                args.push(("pad", ints(&p.map(|v| v as i64))));
            }
            if bias {
                args.push(("bias", fp16_tensor(&[cout], &weights(seed ^ 1, cout))));
            }
            let mut t = MilText::new(&[("x", &[1, cin, h, w])]);
            t.op("ct_0", &[1, cout, out[0], out[1]], "conv_transpose", &args).output("ct_0");
            mil("conv_transpose", &t, &["ct_0"], seed, RANGE)
        },
    )
}

/// A patch embedding: a convolution whose kernel equals its stride and exceeds the 13
/// taps of H13 (14 to 32), 1 to 3 input channels and 1 to 6 outputs, optional bias, in
/// one case in four padded left and right (`passes::tile::patch_embedding`); patches
/// whose width is not a multiple of 32 (16 x 3) stay refused by name.
pub fn patch_embedding() -> impl Strategy<Value = Model> {
    let sides = prop_oneof![
        Just((14, 16)),
        Just((16, 2)),
        Just((16, 4)),
        Just((20, 8)),
        Just((32, 1)),
        Just((32, 3)),
        Just((16, 3))
    ];
    let pads = prop_oneof![3 => Just((0, 0)), 1 => (0usize..=8, 0usize..=8)];
    (sides, 1usize..=3, 1usize..=3, 1usize..=6, (any::<bool>(), pads), any::<u64>()).prop_map(
        |((k, pw), ph, cin, cout, (bias, (pl, pr)), seed)| {
            // Padded on the left and right; the input shrinks so that the padded width
            // still holds the same patches plus a remainder the convolution drops.
            let (h, w) = (ph * k, (pw * k + (pl + pr) % k).saturating_sub(pl + pr).max(1));
            let ow = (w + pl + pr - k) / k + 1;
            let scale = (((cin * k * k) as f32).sqrt()).recip();
            let kernel: Vec<f32> =
                weights(seed, cout * cin * k * k).iter().map(|v| anec_tests::agree::fp16(v * scale)).collect();
            let mut args = vec![
                ("x", "x".to_string()),
                ("weight", fp16_tensor(&[cout, cin, k, k], &kernel)),
                ("strides", ints(&[k as i64, k as i64])),
                ("pad_type", string("custom")),
                ("pad", ints(&[0, 0, pl as i64, pr as i64])),
                ("dilations", ints(&[1, 1])),
                ("groups", int(1)),
            ];
            if bias {
                args.push(("bias", fp16_tensor(&[cout], &weights(seed ^ 1, cout))));
            }
            let mut t = MilText::new(&[("x", &[1, cin, h, w])]);
            t.op("patch_0", &[1, cout, ph, ow], "conv", &args).output("patch_0");
            mil("patch_embedding", &t, &["patch_0"], seed, RANGE)
        },
    )
}

/// `lstm` or `gru` over 1 to 5 steps of 1 to 8 inputs, 1 to 12 hidden units, forward or
/// reverse, every step or the last as output, zero or constant initial states, an lstm
/// with or without peepholes; a batch of two sequences is refused by name.
pub fn recurrent() -> impl Strategy<Value = Model> {
    let dims = (1usize..=5, 1usize..=8, 1usize..=12, proptest::sample::select(vec![1usize, 1, 1, 2]));
    let flags = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    (dims, flags, any::<u64>()).prop_map(|((s, i, h, b), (lstm, reverse, sequence, zero, peep), seed)| {
        let gates = if lstm { 4 } else { 3 };
        let scaled = |salt: u64, n: usize, fan_in: usize| -> Vec<f32> {
            let k = (fan_in as f32).sqrt().recip();
            weights(seed ^ salt, n).iter().map(|v| anec_tests::agree::fp16(v * k)).collect()
        };
        let state = |salt: u64| if zero { vec![0.0; b * h] } else { scaled(salt, b * h, 4) };
        let mut args = vec![
            ("x", "x".to_string()),
            ("initial_h", fp16_tensor(&[b, h], &state(1))),
            ("weight_ih", fp16_tensor(&[gates * h, i], &scaled(2, gates * h * i, i))),
            ("weight_hh", fp16_tensor(&[gates * h, h], &scaled(3, gates * h * h, h))),
            ("bias", fp16_tensor(&[gates * h], &scaled(4, gates * h, 4))),
            ("direction", string(if reverse { "reverse" } else { "forward" })),
            ("output_sequence", boolean(sequence)),
        ];
        if lstm {
            args.push(("initial_c", fp16_tensor(&[b, h], &state(5))));
            if peep {
                args.push(("peephole", fp16_tensor(&[3 * h], &scaled(6, 3 * h, 4))));
            }
        }
        let steps = if sequence { s } else { 1 };
        let mut t = MilText::new(&[("x", &[s, b, i])]);
        let op = if lstm { "lstm" } else { "gru" };
        let (seq, last) = ([steps, b, h], [b, h]);
        let results: [(&str, &[usize]); 3] = [("y", &seq), ("hn", &last), ("cn", &last)];
        t.op_multi(&results[..if lstm { 3 } else { 2 }], op, &args);
        t.output("y").output("hn");
        if lstm {
            t.output("cn");
        }
        mil("recurrent", &t, &["y"], seed, RANGE)
    })
}

/// A comparison of `x` with a second operand (another input broadcast along H, `relu(x)`
/// for ties where `x >= 0`, or a constant), returned as a bool, negated, combined with
/// `x > 0.5` by a logical op, or choosing between `x` and the other input (`select`).
pub fn logic() -> impl Strategy<Value = Model> {
    let ops = select(vec!["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]);
    let uses = select(vec!["bool", "not", "logical_and", "logical_or", "logical_xor", "select"]);
    let dims = (1usize..=4, 1usize..=4, 1usize..=6);
    (dims, ops, 0usize..3, uses, any::<u64>()).prop_map(|((c, h, w), op, other, usage, seed)| {
        let (shape, yshape) = ([1, c, h, w], [1, c, 1, w]);
        let mut t = MilText::new(&[("x", &shape), ("y", &yshape)]);
        let rhs = match other {
            0 => "y".to_string(),
            1 => {
                t.op("r", &shape, "relu", &[("x", "x".into())]);
                "r".to_string()
            }
            _ => scalar(0.25),
        };
        t.op_as("bool", "cmp", &shape, op, &[("x", "x".into()), ("y", rhs)]);
        let out = match usage {
            "bool" => "cmp",
            "not" => {
                t.op_as("bool", "out", &shape, "logical_not", &[("x", "cmp".into())]);
                "out"
            }
            "select" => {
                t.op("out", &shape, "select", &[("cond", "cmp".into()), ("a", "x".into()), ("b", "y".into())]);
                "out"
            }
            logical => {
                t.op_as("bool", "half", &shape, "greater", &[("x", "x".into()), ("y", scalar(0.5))]);
                t.op_as("bool", "out", &shape, logical, &[("x", "cmp".into()), ("y", "half".into())]);
                "out"
            }
        };
        t.output(out);
        mil("logic", &t, &["cmp", "out", "half", "r"], seed, RANGE)
    })
}
