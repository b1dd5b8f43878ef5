//! The same network from a net.plist and from MIL lowers to the same anec module (names,
//! ops, attributes, value types, weight bytes and dtypes); only port layouts (which a
//! netplist states and MIL does not) and source locations differ.

use crate::common::*;
use anec_ir::mil::{BlobTable, ScalarType};
use anec_ir::Module;
use anec_passes::lower::lower_mil;

/// Apple's conv 1x1 + bias netplist: `probs_tmp_0` (Conv, Float32 kernel) then `probs` (GOC,
/// Float16 bias).
fn netplist() -> Module {
    let path = format!("{}/../../shared/fixtures/apple-h13/netplist/net.plist", env!("CARGO_MANIFEST_DIR"));
    anec_front::parse_netplist(std::path::Path::new(&path)).unwrap()
}

#[test]
fn conv_with_bias_matches_apples_netplist() {
    let np = netplist();
    let w = np.resources["probs_tmp_0.weights"].bytes.clone();
    let b = np.resources["probs.bias_data"].bytes.clone();
    let text = "program(1.3)
{
    func net<ios18>(tensor<fp16, [1, 3, 1, 1]> image) {
        tensor<fp32, [2, 3, 1, 1]> w = const()[val = tensor<fp32, [2, 3, 1, 1]>(BLOBFILE(path = string(\"@model_path/weights/weight.bin\"), offset = uint64(64)))];
        tensor<fp16, [2]> b = const()[val = tensor<fp16, [2]>(BLOBFILE(path = string(\"@model_path/weights/weight.bin\"), offset = uint64(128)))];
        tensor<fp16, [1, 2, 1, 1]> probs = conv(x = image, weight = w, bias = b)[name = string(\"probs\")];
    } -> (probs);
}
";
    let blobs: BlobTable =
        [blob(64, ScalarType::Fp32, w.to_vec()), blob(128, ScalarType::Fp16, b.to_vec())].into_iter().collect();
    let mil = lower_mil(&model_with(text, blobs), "net").unwrap();
    assert_eq!(mil.name, np.name);
    assert_eq!(mil.values, np.values);
    assert_eq!(mil.resources, np.resources);
    let ports = |m: &Module| m.inputs.iter().chain(&m.outputs).map(|p| (p.name.clone(), p.value)).collect::<Vec<_>>();
    assert_eq!(ports(&mil), ports(&np));
    assert_eq!(mil.ops.len(), np.ops.len());
    for (a, b) in mil.ops.iter().zip(&np.ops) {
        assert_eq!(
            (a.opcode, &a.name, &a.operands, &a.results, &a.attrs),
            (b.opcode, &b.name, &b.operands, &b.results, &b.attrs)
        );
    }
}

#[test]
fn sigmoid_matches_apples_netplist() {
    let path = format!("{}/../../shared/fixtures/apple-h13/netplist/simple/neuron.plist", env!("CARGO_MANIFEST_DIR"));
    let np = anec_front::parse_netplist(std::path::Path::new(&path)).unwrap();
    let t = np.ty(np.inputs[0].value).copied().unwrap();
    let (input, out) = (&np.inputs[0].name, np.outputs[0].name.trim_end_matches("@output"));
    let shape = format!("[{}, {}, {}, {}]", t.n, t.c, t.h, t.w);
    let text = format!(
        "program(1.3)\n{{\n    func {net}<ios18>(tensor<fp16, {shape}> {input}) {{\n        tensor<fp16, {shape}> {out} = sigmoid(x = {input})[name = string(\"{name}\")];\n    }} -> ({out});\n}}\n",
        net = np.name,
        name = np.ops[0].name,
    );
    let mil = lower_mil(&model_with(&text, BlobTable::new()), &np.name).unwrap();
    assert_eq!((&mil.name, &mil.values, &mil.resources), (&np.name, &np.values, &np.resources));
    let ops = |m: &Module| m.ops.iter().map(|o| (o.opcode, o.name.clone(), o.attrs.clone())).collect::<Vec<_>>();
    assert_eq!(ops(&mil), ops(&np));
    assert_eq!(mil.outputs[0].name, np.outputs[0].name);
}
