//! `conv_activation`: an activation the convolution's NE applies in its own task, before
//! or after its transposed write: a ReLU (native), or an activation whose lookup table
//! sits at the head of each fp16 kernel chunk (NonlinearMode 2, `lower::conv`'s
//! `with_table`; Apple's compute task of `chain_pair_mm_gelu`, `chains.md` §2.5). A table
//! over a transformed input (exp) or a kernel that is not fp16 leaves the activation to a
//! task of its own.

use super::{head, is_relu};
use anec_ir::{Module, Op, OpCode};
use anec_passes::fuse::{Group, Rule, Stage};

/// The rule.
#[derive(Debug, Clone, Copy)]
pub struct ConvActivation;

impl Rule for ConvActivation {
    fn name(&self) -> &'static str {
        "conv_activation"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let conv = head(m, g).filter(|h| h.opcode == OpCode::Conv)?;
        (g.neuron.is_none() && next.opcode == OpCode::Neuron && applies(m, conv, next)).then_some(Stage::Activation)
    }
}

/// Whether `conv`'s NE applies `neuron` as it computes.
pub fn applies(m: &Module, conv: &Op, neuron: &Op) -> bool {
    let table = crate::lower::neuron::conv_table(neuron).is_some() && crate::lower::conv::fp16_kernel(m, conv);
    is_relu(neuron) || table
}

#[cfg(test)]
mod tests {
    use super::super::tests::{after, f16, Net};

    #[test]
    fn relu_and_gelu_join_the_convolution_exp_does_not() {
        let before = Net::new(f16(4, 2, 8))
            .conv("c0", f16(8, 2, 8))
            .neuron("r0", "relu")
            .conv("c1", f16(8, 2, 8))
            .neuron("g1", "gelu")
            .conv("c2", f16(8, 2, 8))
            .neuron("e2", "exp")
            .done();
        insta::assert_snapshot!(after(&before), @r"
        c0 (anec.conv)
          + r0 (anec.neuron) [conv_activation]
        c1 (anec.conv)
          + g1 (anec.neuron) [conv_activation]
        c2 (anec.conv)
        e2 (anec.neuron)
        ");
    }
}
