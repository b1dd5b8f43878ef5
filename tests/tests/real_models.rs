//! Models of the kinds users run, as coremltools writes them (`tests/models/*.mlpackage`,
//! built by `scripts/models/build.py` with coremltools' MIL builder and `ct.convert`):
//! MobileNetV2 and ResNet blocks with heads, BERT and Llama layers, a 1-D audio
//! convolution net, a UNet decoder step, a ViT patch embedding, compressed linears,
//! an LSTM and a GRU; and the published Silero VAD. Each is read as a `.mlpackage`, compiled, verified, simulated from
//! its registers and compared with the reference interpreter on the same file.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

use anec_tests::agree::{compile_and_compare, random_inputs, source_inputs, Source};
use std::path::PathBuf;

fn model(name: &str) -> Source {
    Source::file(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models").join(format!("{name}.mlpackage")))
}

/// Compiles the model and checks the simulated program against the reference (inputs in
/// [-2, 2]).
fn agrees(name: &str) {
    let source = model(name);
    let inputs = random_inputs(&source_inputs(&source).unwrap(), 7, -2.0, 2.0);
    let report = compile_and_compare(&source, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(report.passed(), "{name}: {report}");
}

#[test]
fn a_mobilenet_v2_block_with_its_head_agrees() {
    agrees("mobilenet_v2_block");
}

#[test]
fn a_resnet_block_with_its_head_agrees() {
    agrees("resnet_block");
}

#[test]
fn a_bert_layer_agrees() {
    agrees("bert_layer");
}

#[test]
fn a_llama_layer_agrees() {
    agrees("llama_layer");
}

#[test]
fn a_1d_audio_convolution_net_agrees() {
    agrees("audio_conv1d");
}

#[test]
fn a_unet_decoder_step_agrees() {
    agrees("unet_decoder_step");
}

#[test]
fn a_vit_patch_embedding_agrees() {
    agrees("vit_patch_embedding");
}

#[test]
fn compressed_linears_agree() {
    agrees("compressed_linear");
}

#[test]
fn an_lstm_agrees() {
    agrees("lstm");
}

#[test]
fn a_gru_agrees() {
    agrees("gru");
}

/// Silero VAD as published (`shared/fixtures/mil/real`: fp16, 8-bit and 4-bit palettized
/// weights): an STFT as a 256-tap framing convolution (a padded patch embedding), an
/// encoder of 1-D convolutions, an LSTM cell and a sigmoid head, staged as the
/// `.mlmodelc` folder coremlc writes.
#[test]
fn silero_vad_agrees() {
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/mil/real");
    for stem in [
        "FluidInference+mobius__silero-vad_silero-vad-unified-v6.0.0",
        "FluidInference+mobius__silero-vad_unified_int8",
        "FluidInference+mobius__silero-vad_unified_palette_4bit",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(format!("{stem}.mlmodelc"));
        std::fs::create_dir_all(root.join("weights")).unwrap();
        std::fs::copy(real.join(format!("{stem}.model.mil")), root.join("model.mil")).unwrap();
        std::fs::copy(real.join(format!("{stem}.weight.bin")), root.join("weights/weight.bin")).unwrap();
        let source = Source::file(&root);
        let inputs = random_inputs(&source_inputs(&source).unwrap(), 7, -1.0, 1.0);
        let report = compile_and_compare(&source, &inputs).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(report.passed(), "{stem}: {report}");
    }
}
