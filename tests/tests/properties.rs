//! Property tests: generated small models (conv, linear, matmul with constant weights,
//! elementwise with broadcast, every neuron mode, the MIL activations, gain/offset, casts
//! of bool, uint8 and int8 inputs, concat, reshape, reductions, softmax, layer_norm,
//! instance_norm, transposes, slices, tiles, rows streamed through L2 in pieces) are compiled, simulated from their registers and compared with the
//! reference interpreter on the source within the fp16 tolerance of
//! `anec_tests::tolerance`.
//!
//! A case the compiler rejects (a lowering error or "not supported on h13g") is an
//! accepted outcome when the error names the layer; one that compiles must agree. Each
//! family runs a fixed number of cases from a fixed seed (independent of
//! `PROPTEST_RNG_SEED`); a failure is shrunk, its seed appended to
//! `tests/proptest-regressions/properties-<family>.txt` (replayed first by later runs)
//! and the minimal model saved under `tests/proptest-regressions/cases/`, which
//! `saved_cases_agree` replays. The output (`--nocapture`) lists per family how many
//! cases compiled and how many were rejected, and why.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // tests fail loudly

mod props;

use anec_tests::agree::{compile_and_compare, random_inputs, source_inputs};
use props::families;
use props::harness::{replay_saved_cases, run_family};

/// Compiles `m` for h13g and checks that its simulated program agrees with the reference
/// interpreter (inputs in [-2, 2], seed 3); returns the program for the caller's checks
/// of its shape. `what` names the case in a failure.
fn compiled_and_agreeing(m: &props::model::Model, what: &str) -> anec_codegen::Hwx {
    let source = m.source().unwrap();
    let anec_tests::agree::Source::Mil { model: mil, function } = &source else { panic!("a MIL model") };
    let module = anec_passes::lower::lower_mil(mil, function).unwrap();
    let compiled = anec::compile_module(module, "case", &anec::Options::new(anec::Target::H13g)).unwrap();
    let inputs = random_inputs(&source_inputs(&source).unwrap(), 3, -2.0, 2.0);
    let report = compile_and_compare(&source, &inputs).unwrap();
    assert!(report.passed(), "{what}: {report}");
    compiled.hwx
}

/// Cases per family: enough to cover every mode and shape class several times over, few
/// enough that the file runs in seconds in release and well under a minute in debug.
const CASES: u32 = 256;

#[test]
fn conv_agrees() {
    run_family("conv", CASES, families::conv());
}

/// A convolution whose result does not fit L2 beside its source runs in slices of its
/// output channels; when the NE streams the source rows in 0x100-byte pieces (W > 128),
/// only the last piece is left in L2, so every slice loads the source again (as Apple's
/// regime-B matmul slices re-read x^T). Kept for the later slices, the program read
/// pieces that were gone (the simulator refused its overlapping regions).
#[test]
fn a_streamed_source_split_into_slices_agrees() {
    for (cin, h, w, cout, slices) in [(16, 32, 256, 64, 2), (8, 16, 200, 160, 2), (16, 8, 64, 1024, 2)] {
        let what = format!("{cin}x{h}x{w} -> {cout}");
        let hwx = compiled_and_agreeing(&families::pointwise_conv(cin, h, w, cout, 3), &what);
        assert_eq!(hwx.td_count, slices, "{what}");
    }
}

/// A MobileNetV2 inverted-residual block at 56 x 56 (24 -> 144 -> 24 channels): compiled
/// to a program the verifier accepts and the simulator runs in agreement with the
/// reference (issue 11's first measurement: its L2 result region once ended past the L2).
#[test]
fn a_mobilenet_v2_block_at_56_agrees() {
    let hwx = compiled_and_agreeing(&families::inverted_residual(24, 144, 56, 7), "inverted residual 24x144 at 56");
    // Expansion in two slices, the depthwise convolution, projection in two slices, the add.
    assert_eq!(hwx.td_count, 6);
}

#[test]
fn transposed_convolution_agrees_or_is_rejected() {
    run_family("conv_transpose", CASES, families::conv_transpose());
}

/// Kernels wider than the chip's 13 taps with a stride equal to the kernel (a ViT's patch
/// embedding) run as data moves and a 1x1 convolution.
#[test]
fn a_patch_embedding_agrees_or_is_rejected() {
    run_family("patch_embedding", CASES / 8, families::patch_embedding());
}

/// LSTM and GRU layers unrolled over their steps.
#[test]
fn a_recurrent_layer_agrees_or_is_rejected() {
    run_family("recurrent", CASES / 4, families::recurrent());
}

/// Comparisons, logical ops and `select`, computed as fp16 0 and 1.
#[test]
fn comparisons_and_select_agree() {
    run_family("logic", CASES, families::logic());
}

#[test]
fn linear_agrees() {
    run_family("linear", CASES, families::linear());
}

#[test]
fn a_table_activation_in_the_convolution_agrees() {
    run_family("conv_activation", CASES, families::conv_activation());
}

#[test]
fn a_table_activation_of_a_vector_read_by_the_planar_engine_agrees() {
    run_family("vector_activation_pe", CASES, families::vector_activation_pe());
}

#[test]
fn two_linears_in_a_row_agree() {
    run_family("mlp", CASES, families::mlp());
}

#[test]
fn l2_hand_overs_into_a_matmul_agree() {
    run_family("l2_hand_over", CASES, props::chains::hand_overs());
}

/// The hand-overs into a matmul keep the value in L2 at shapes other than the records'
/// (odd widths, one and several rows, rank 2 and 3; a scale before a one-row `linear`
/// stays in memory: its transpose is a reshape): no intermediate buffer, no BAR-3
/// token but the serial pair's first (P from memory read by C1), the task count of Apple's plan (layer_norm 3 + P + C; P, the scale, C; P, C1,
/// P from L2, C2, the add), and the program agrees with the reference.
#[test]
fn hand_overs_into_a_matmul_stay_in_l2_and_agree() {
    use props::chains::{model, Kind};
    let cases = [
        (Kind::NormThenLinear, 5, 33, 17, true, 5),
        (Kind::NormThenLinear, 1, 7, 9, false, 5),
        (Kind::NormThenLinear, 12, 64, 48, true, 5),
        (Kind::ScaleThenLinear, 3, 21, 11, false, 3),
        (Kind::ScaleThenLinear, 16, 100, 40, true, 3),
        (Kind::ScaleThenLinear, 7, 77, 5, true, 3),
        (Kind::Serial, 5, 33, 17, true, 5),
        (Kind::Serial, 1, 9, 24, false, 5),
        (Kind::Serial, 20, 48, 80, true, 5),
    ];
    for (kind, s, d, n, rank3, tasks) in cases {
        let what = format!("{kind:?} {s}x{d}->{n}");
        let h = compiled_and_agreeing(&model(kind, s, d, n, rank3, 11), &what);
        let between: Vec<&str> = h
            .tensors
            .iter()
            .filter(|t| t.role == anec_codegen::TensorRole::Intermediate)
            .map(|t| t.name.as_str())
            .collect();
        // The serial pair's first P reads memory and keeps its token (BAR 3).
        let tokens = usize::from(kind == Kind::Serial);
        let scratch = between.iter().filter(|n| n.ends_with("@scratch")).count();
        assert_eq!((h.td_count, between.len(), scratch), (tasks, tokens, tokens), "{what}: {between:?}");
    }
}

/// The folded plan (P C Y) at shapes other than the records': products over 64 KiB, or
/// rows over 1 KiB with more than 8 of them; at 8 rows, or rows of 1 KiB, two tasks.
#[test]
fn folded_matmuls_agree() {
    use props::chains::{model, Kind};
    for (s, d, n, tasks) in [(16, 64, 1024, 3), (24, 40, 520, 3), (8, 64, 1024, 2), (32, 96, 512, 2), (72, 24, 520, 3)]
    {
        let hwx = compiled_and_agreeing(&model(Kind::Linear, s, d, n, true, 5), &format!("{s}x{d}->{n}"));
        assert_eq!(hwx.td_count, tasks, "{s}x{d}->{n}");
    }
}

/// The folded chain (P C1 C2 Y) and its residual form (L P C1 C2 add) at shapes other
/// than the records': several rows of 8, rank 2 and 3, features whose rows are not 0x40
/// bytes; the first product over 64 KiB (or rows over 1 KiB) folds the whole chain.
#[test]
fn folded_feed_forward_blocks_agree() {
    use props::chains::{model, Kind};
    let cases = [
        (Kind::Ffn, 16, 64, 2048, true, 4),
        (Kind::Ffn, 32, 40, 1040, false, 4),
        (Kind::Ffn, 64, 96, 768, true, 4),
        (Kind::ResidualFfn, 16, 64, 2048, true, 5),
        (Kind::ResidualFfn, 24, 40, 1400, true, 5),
        (Kind::ResidualFfn, 64, 128, 1024, false, 5),
    ];
    for (kind, s, d, n, rank3, tasks) in cases {
        let what = format!("{kind:?} {s}x{d}->{n}");
        let h = compiled_and_agreeing(&model(kind, s, d, n, rank3, 9), &what);
        let between = h.tensors.iter().filter(|t| t.role == anec_codegen::TensorRole::Intermediate).count();
        // Only the BAR-3 token of a P reading memory (none when x is loaded once).
        let tokens = usize::from(kind == Kind::Ffn);
        assert_eq!((h.td_count, between), (tasks, tokens), "{what}");
    }
}

#[test]
fn feed_forward_blocks_agree() {
    run_family("feed_forward", CASES, props::chains::feed_forward());
}

/// Regime B (x^T too large for L2 beside x) at shapes other than the record's: x^T
/// written 8 channels interleaved by one preparation task, the convolution in slices
/// (as many as keep 64 KiB of kernel per NE once the L2 asks for a split), each reading
/// x^T again; M odd or not, rank 2 and 3.
#[test]
fn regime_b_matmuls_agree() {
    use props::chains::{model, Kind};
    for (s, d, n, rank3, tasks) in [(256, 2048, 64, true, 2), (300, 2048, 48, false, 2), (256, 2048, 1280, true, 9)] {
        let hwx = compiled_and_agreeing(&model(Kind::Linear, s, d, n, rank3, 5), &format!("{s}x{d}->{n}"));
        assert_eq!(hwx.td_count, tasks, "{s}x{d}->{n}");
    }
}

#[test]
fn matmul_with_constant_weights_agrees() {
    run_family("matmul", CASES, families::matmul());
}

#[test]
fn runtime_matmul_agrees() {
    run_family("runtime_matmul", CASES, families::runtime_matmul());
}

#[test]
fn elementwise_with_broadcast_agrees() {
    run_family("elementwise", CASES, families::elementwise());
}

#[test]
fn every_neuron_mode_agrees_or_is_rejected() {
    run_family("neuron", 2 * CASES, families::neuron());
}

#[test]
fn mil_activations_agree_or_are_rejected() {
    run_family("activation", 2 * CASES, families::activation());
}

#[test]
fn reductions_agree_or_are_rejected() {
    run_family("reduction", CASES, props::reduction::reduction());
}

#[test]
fn softmax_agrees_or_is_rejected() {
    run_family("softmax", CASES, props::normalization::softmax());
}

#[test]
fn layer_norm_agrees_or_is_rejected() {
    run_family("layer_norm", CASES, props::normalization::layer_norm());
}

#[test]
fn sequence_layer_norm_agrees_or_is_rejected() {
    run_family("sequence_layer_norm", CASES, props::normalization::sequence_layer_norm());
}

#[test]
fn sequence_softmax_agrees_or_is_rejected() {
    run_family("sequence_softmax", CASES, props::normalization::sequence_softmax());
}

#[test]
fn instance_norm_agrees_or_is_rejected() {
    run_family("instance_norm", CASES, props::normalization::instance_norm());
}

#[test]
fn data_movement_agrees_or_is_rejected() {
    run_family("movement", CASES, props::movement::movement());
}

#[test]
fn attention_agrees_or_is_rejected() {
    run_family("attention", CASES, props::attention::attention());
}

#[test]
fn constant_operands_agree_or_are_rejected() {
    run_family("constant", CASES, props::constants::constant_operand());
}

/// Copies beyond the L2 (each case moves megabytes through the simulator: fewer cases).
#[test]
fn copies_beyond_the_l2_run_in_bands_and_agree() {
    run_family("large_copy", CASES / 16, props::movement::large_copy());
}

/// Nearest upsampling by whole factors: columns repeated by a grouped convolution between
/// two transposing passes, rows by a broadcast (`lower::upsample`).
#[test]
fn nearest_upsampling_agrees_or_is_rejected() {
    run_family("upsample", CASES, props::movement::upsample());
}

/// Rows wider than an engine's L2 piece stream through L2 and agree.
#[test]
fn streamed_rows_agree() {
    run_family("streamed_rows", CASES, props::movement::streamed_rows());
}

#[test]
fn constant_pad_agrees_or_is_rejected() {
    run_family("pad", CASES, props::movement::pad());
}

#[test]
fn casts_of_eight_bit_inputs_agree() {
    let counts = run_family("cast", CASES, props::cast::cast());
    assert!(counts.rejected.is_empty(), "every cast of a bool, uint8 or int8 input compiles: {:?}", counts.rejected);
}

#[test]
fn gain_offset_agrees() {
    run_family("goc", CASES, families::goc());
}

#[test]
fn concat_agrees_or_is_rejected() {
    run_family("concat", CASES, families::concat());
}

#[test]
fn reshape_agrees_or_is_rejected() {
    run_family("reshape", CASES, families::reshape());
}

#[test]
fn saved_cases_agree() {
    let n = replay_saved_cases();
    println!("{n} saved regression model(s) replayed");
}
