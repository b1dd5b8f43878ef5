//! The real MNIST network of `jafreck/ironmill` (Apple's coremlc output, weights inline):
//! it lowers completely, and the flatten + matmul at its end is one convolution whose
//! per-channel bias folds in before the result becomes the `[1, 10]` row.

use crate::common::*;
use anec_ir::mil::BlobTable;
use anec_ir::{print_module, OpCode};

const MNIST: &str = "jafreck+ironmill__test-q_base.mlmodelc.model.mil";

fn read(name: &str) -> String {
    let path = format!("{}/../../shared/fixtures/mil/real/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn mnist_lowers_to_conv_goc_relu_pool_and_a_final_conv() {
    let text = read(MNIST);
    let m = lower_model(&model_with(&text, BlobTable::new()));
    let ops: Vec<OpCode> = m.ops.iter().map(|o| o.opcode).collect();
    use OpCode::*;
    let block = [Conv, GainOffsetControl, Neuron, Pooling];
    assert_eq!(ops, [&block[..], &block[..], &[Conv, GainOffsetControl, Reshape]].concat());
    let last = &m.ops[8];
    assert_eq!(last.name, "Times212_Output_0_tmp_0");
    assert_eq!(last.attr("kernel").and_then(|a| a.as_int_array()), Some(vec![4, 4]));
    let out = m.ty(m.outputs[0].value).map(ToString::to_string);
    // MIL [1, 10]: one row of 10 (the last axis on W).
    assert_eq!(out.as_deref(), Some("tensor<1x1x1x10xf16>"));
    // The first weight of the final conv is Parameter193[0, 0, 0, 0] (0x1.77540ap-4, f32).
    let w = &m.resources["Times212_Output_0_tmp_0.weights"];
    assert_eq!(w.bytes[..4], (f32::from_bits(0x3DBBAA05)).to_le_bytes());
    let printed = print_module(&m);
    let head: String = printed.lines().take_while(|l| !l.starts_with("{-#")).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!(head);
}
