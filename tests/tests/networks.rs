//! Whole networks of the sizes real models have (issue 11): a 4096 x 4096 linear, a
//! Llama MLP 11008 wide, a chain of 64 layers and a deep residual chain of convolutions.
//! Each is compiled, verified, simulated from its registers and compared with the
//! reference interpreter within the fp16 tolerance; the residual chain's memory plan must
//! hold only the tensors alive at once.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

mod nets;

use anec_tests::agree::{compile_and_compare, random_inputs, source_inputs, Source};
use nets::Net;

/// Compiles `source`, checks it agrees with the reference (inputs in [-1, 1]) and returns
/// the compiled program.
fn agrees(source: &Source) -> anec::Compiled {
    let Source::Mil { model, function } = source else { panic!("a MIL model") };
    let module = anec_passes::lower::lower_mil(model, function).unwrap();
    let compiled = anec::compile_module(module, &source.name(), &anec::Options::new(anec::Target::H13g)).unwrap();
    let inputs = random_inputs(&source_inputs(source).unwrap(), 5, -1.0, 1.0);
    let report = compile_and_compare(source, &inputs).unwrap();
    assert!(report.passed(), "{report}");
    compiled
}

#[test]
fn a_4096_by_4096_linear_agrees() {
    let mut net = Net::new(&[1, 8, 4096], 1);
    let y = net.linear("fc", "x", 8, 4096, 4096, None);
    agrees(&net.source(&y, "linear_4096.mil"));
}

/// Llama-7B's MLP: `down(silu(gate(x)) * up(x))`, 4096 -> 11008 -> 4096.
#[test]
fn an_11008_wide_llama_mlp_agrees() {
    let (s, d, h) = (2, 4096, 11008);
    let mut net = Net::new(&[1, s, d], 2);
    let gate = net.linear("gate", "x", s, d, h, Some("silu"));
    let up = net.linear("up", "x", s, d, h, None);
    let mixed = net.op("mixed", &[1, s, h], "mul", &format!("x = {gate}, y = {up}"));
    let y = net.linear("down", &mixed, s, h, d, None);
    agrees(&net.source(&y, "llama_mlp.mil"));
}

#[test]
fn a_chain_of_64_linear_layers_agrees() {
    let (s, d) = (16, 256);
    let mut net = Net::new(&[1, s, d], 3);
    let mut x = "x".to_string();
    for i in 0..64 {
        x = net.linear(&format!("l{i}"), &x, s, d, d, Some("relu"));
    }
    agrees(&net.source(&x, "chain_64.mil"));
}

/// 64 convolutions with ReLU, a residual add every two: the arena holds three tensors
/// (the block's input, the first ReLU, the second), not one per layer.
#[test]
fn a_deep_residual_chain_reuses_its_memory() {
    let (c, hw) = (32, (32, 32));
    let shape = [1, c, hw.0, hw.1];
    let mut net = Net::new(&shape, 4);
    let mut x = "x".to_string();
    for i in (0..64).step_by(2) {
        let a = net.conv3(&format!("c{i}"), &x, c, hw);
        let a = net.op(&format!("r{i}"), &shape, "relu", &format!("x = {a}"));
        let b = net.conv3(&format!("c{}", i + 1), &a, c, hw);
        let b = net.op(&format!("r{}", i + 1), &shape, "relu", &format!("x = {b}"));
        x = net.op(&format!("s{i}"), &shape, "add", &format!("x = {b}, y = {x}"));
    }
    let compiled = agrees(&net.source(&x, "residual_chain.mil"));
    let plan = &compiled.plan;
    let tensor = (c * hw.0 * hw.1 * 2) as u64;
    let arena = plan.buffers.iter().find(|b| b.name == "intermediates@arena").expect("an arena");
    assert_eq!(arena.bytes, 3 * tensor, "{plan}");
    let (bound, alone) = plan.intermediate_bytes();
    assert_eq!(bound, 4 * tensor, "the arena and BAR 3: {plan}");
    assert_eq!(alone, plan.slots.len() as u64 * tensor);
    assert_eq!(plan.slots.len(), 64 + 32 - 1);
}

/// ViT-B/16's patch embedding: 3 x 224 x 224 into 768 channels of 14 x 14 patches, a
/// 16 x 16 kernel with stride 16 (wider than H13's 13 taps), run as data moves and a 1x1
/// convolution (`passes::tile::patch_embedding`).
#[test]
fn a_vit_patch_embedding_agrees() {
    let mut net = Net::new(&[1, 3, 224, 224], 5);
    let w = net.weight("patch_w", &[768, 3, 16, 16], (768.0f32).sqrt().recip());
    let b = net.weight("patch_b", &[768], 0.05);
    let args = format!(
        "x = x, weight = {w}, bias = {b}, strides = tensor<int32, [2]>([16, 16]), pad_type = string(\"valid\"), \
         dilations = tensor<int32, [2]>([1, 1]), groups = int32(1)"
    );
    let y = net.op("patch", &[1, 768, 14, 14], "conv", &args);
    let compiled = agrees(&net.source(&y, "vit_patch_embedding.mil"));
    // Per input channel a slice, a transposing pass and a copy (9); the concatenation (3),
    // the 1x1 convolution (1), H and W of its result exchanged (3), the bias (2).
    assert_eq!(compiled.hwx.td_count, 18);
}
