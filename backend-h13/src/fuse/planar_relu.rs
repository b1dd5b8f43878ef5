//! `planar_relu`: a ReLU of a planar-engine elementwise op, applied by the PE as it
//! writes (PE.Cfg bit 5; Apple's `chain_add_relu_c512`: an add and its ReLU, one task,
//! PE.Cfg 0x80020).

use super::{bare, head, is_relu};
use anec_ir::{Module, Op, OpCode};
use anec_passes::fuse::{Group, Rule, Stage};

/// The rule.
#[derive(Debug, Clone, Copy)]
pub struct PlanarRelu;

impl Rule for PlanarRelu {
    fn name(&self) -> &'static str {
        "planar_relu"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let planar = head(m, g).is_some_and(|h| h.opcode == OpCode::ScaledElementwise);
        (planar && bare(g) && is_relu(next)).then_some(Stage::Activation)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{after, f16, Net};
    use anec_ir::{Attr, OpCode};

    #[test]
    fn an_add_takes_its_relu_but_not_a_sigmoid() {
        let add = || vec![("kind", Attr::Str("add".into())), ("scale", Attr::Float(1.0))];
        let mut net = Net::new(f16(64, 1, 1));
        let x = net.last;
        net.op(OpCode::ScaledElementwise, "sum", f16(64, 1, 1), add()).neuron("relu", "relu");
        net.op(OpCode::ScaledElementwise, "sum2", f16(64, 1, 1), add()).neuron("sig", "sigmoid");
        let mut before = net.done();
        before.ops[0].operands.push(x);
        let y = before.ops[1].results[0];
        before.ops[2].operands.push(y);
        insta::assert_snapshot!(after(&before), @r"
        sum (anec.scaled_elementwise)
          + relu (anec.neuron) [planar_relu]
        sum2 (anec.scaled_elementwise)
        sig (anec.neuron)
        ");
    }
}
