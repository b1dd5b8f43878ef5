//! `swapped_relu`: a ReLU of a result its task writes transposed; the NE applies it
//! before the transposed write (Apple's `chain_pair_mm_relu`: one compute task). A
//! convolution's other activations after the swap are `conv_activation`'s.

use super::is_relu;
use anec_ir::{Module, Op};
use anec_passes::fuse::{Group, Rule, Stage};

/// The rule.
#[derive(Debug, Clone, Copy)]
pub struct SwappedRelu;

impl Rule for SwappedRelu {
    fn name(&self) -> &'static str {
        "swapped_relu"
    }

    fn joins(&self, _m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        (g.swap.is_some() && g.neuron.is_none() && is_relu(next)).then_some(Stage::Activation)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{after, f16, Net};
    use anec_ir::{Attr, OpCode};

    #[test]
    fn a_row_of_reduced_channels_takes_the_relu_after_its_transposed_write() {
        let axes = Attr::Array(vec![Attr::Str("height".into()), Attr::Str("width".into())]);
        let before = Net::new(f16(8, 4, 4))
            .op(OpCode::Reduction, "mean", f16(8, 1, 1), vec![("kind", Attr::Str("mean".into())), ("axes", axes)])
            .swap("row")
            .neuron("relu", "relu")
            .done();
        insta::assert_snapshot!(after(&before), @r"
        mean (anec.reduction)
          + row (anec.transpose) [swapped_write]
          + relu (anec.neuron) [swapped_relu]
        ");
    }
}
