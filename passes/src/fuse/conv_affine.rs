//! The chip-independent fusion rules: a convolution runs the gain/offset and the
//! activation that follow it in its own task (the NE's affine stage, then its nonlinear
//! stage: Apple's Conv + GOC + Neuron layers, `conv_*_relu` records, one task).
//!
//! The order is the engine's: the affine stage comes before the nonlinear one, so a
//! gain/offset after the activation does not join. Whether a chip's engine applies a
//! given activation is the chip's rule (H13: `backend-h13/src/fuse/conv_activation.rs`);
//! [`ConvActivation`] here takes any.

use super::{Group, Rule, Stage};
use anec_ir::{Module, Op, OpCode};

/// `conv_gain_offset`: a gain/offset after a convolution with nothing after it yet.
#[derive(Debug, Clone, Copy)]
pub struct ConvGainOffset;

impl Rule for ConvGainOffset {
    fn name(&self) -> &'static str {
        "conv_gain_offset"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let conv = m.ops.get(g.head).is_some_and(|h| h.opcode == OpCode::Conv);
        let bare = g.goc.is_none() && g.neuron.is_none() && g.swap.is_none();
        (conv && bare && next.opcode == OpCode::GainOffsetControl).then_some(Stage::GainOffset)
    }
}

/// `conv_activation`: an activation after a convolution (and its gain/offset), before
/// any transposed write.
#[derive(Debug, Clone, Copy)]
pub struct ConvActivation;

impl Rule for ConvActivation {
    fn name(&self) -> &'static str {
        "conv_activation"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let conv = m.ops.get(g.head).is_some_and(|h| h.opcode == OpCode::Conv);
        let open = g.neuron.is_none() && g.swap.is_none();
        (conv && open && next.opcode == OpCode::Neuron).then_some(Stage::Activation)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{describe, group_with, tests::chain};
    use super::*;

    #[test]
    fn a_convolution_takes_its_gain_offset_then_its_activation() {
        let before = chain(&[OpCode::Conv, OpCode::GainOffsetControl, OpCode::Neuron, OpCode::Neuron], 3);
        let after = group_with(&before, &[&ConvGainOffset, &ConvActivation]);
        insta::assert_snapshot!(describe(&before, &after), @r"
        l0 (anec.conv)
          + l1 (anec.gain_offset_control) [conv_gain_offset]
          + l2 (anec.neuron) [conv_activation]
        l3 (anec.neuron)
        ");
    }

    #[test]
    fn a_gain_offset_after_the_activation_starts_a_group_of_its_own() {
        let before = chain(&[OpCode::Conv, OpCode::Neuron, OpCode::GainOffsetControl], 2);
        let after = group_with(&before, &[&ConvGainOffset, &ConvActivation]);
        insta::assert_snapshot!(describe(&before, &after), @r"
        l0 (anec.conv)
          + l1 (anec.neuron) [conv_activation]
        l2 (anec.gain_offset_control)
        ");
    }

    #[test]
    fn without_the_rule_nothing_joins() {
        let before = chain(&[OpCode::Conv, OpCode::GainOffsetControl], 1);
        let after = group_with(&before, &[&ConvActivation]);
        assert_eq!(after.groups.len(), 2);
        assert!(after.rule_of.is_empty());
    }
}
