//! `lstm` and `gru`: the unrolled plan's ops, and the layers refused by name.

use crate::common::{assert_error, errors, lower, program};

/// A gru of `s` steps over 2 inputs and 2 hidden units, with `extra` arguments.
fn gru(s: usize, b: usize, extra: &str) -> String {
    // A different matrix per gate (equal ones would be merged as one computation).
    let w = "tensor<fp16, [6, 2]>([[1, 0], [0, 1], [2, 0], [0, 2], [3, 0], [0, 3]])";
    let body = format!(
        "        tensor<fp16, [{s}, {b}, 2]> y, tensor<fp16, [{b}, 2]> hn = gru(x = x, initial_h = \
         tensor<fp16, [{b}, 2]>({h}), weight_ih = {w}, weight_hh = {w}, output_sequence = bool(true){extra})[name = string(\"rnn\")];\n",
        h = if b == 1 { "[[0, 0]]" } else { "[[0, 0], [0, 0]]" }
    );
    program(&format!("tensor<fp16, [{s}, {b}, 2]> x"), &body, "y, hn")
}

#[test]
fn a_gru_from_a_zero_state_unrolls_into_convolutions_and_elementwise_ops() {
    let out = lower(&gru(2, 1, ""));
    // Three input-side convolutions (one per gate, every step at once), then per step
    // after the first the three hidden-side ones.
    assert_eq!(out.matches("\"anec.conv\"").count(), 3 + 3, "{out}");
    // A row per gate and step, but the first step's reset gate: it only scales the zero
    // state, so it is never computed.
    assert_eq!(out.matches("\"anec.input_view\"").count(), 3 * 2 - 1, "{out}");
    assert!(out.contains("mode = \"sigmoid\"") && out.contains("mode = \"tanh\""), "{out}");
}

#[test]
fn batches_long_sequences_and_bidirectional_layers_are_refused_by_name() {
    assert_error(&errors(&gru(2, 2, "")), "a recurrent layer over a batch of 2 sequences is not lowered");
    assert_error(&errors(&gru(1025, 1, "")), "a recurrent layer over 1025 steps is not unrolled (at most 1024 are)");
    let bidirectional = gru(2, 1, ", direction = string(\"bidirectional\")");
    assert_error(&errors(&bidirectional), "a bidirectional recurrent layer is not lowered");
}
