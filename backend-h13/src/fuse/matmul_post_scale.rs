//! `matmul_post_scale`: a scalar gain/offset of a runtime matmul's product, applied as
//! the product's PostScale and bias (Apple's attention: the scores' 1/8 in Q·K^T's
//! PostScale, `chains.md` §1.1). A per-channel one stays a task of its own (its streams
//! would be read from the kernel's buffer).

use super::{bare, head};
use anec_ir::{Module, Op, OpCode};
use anec_passes::fuse::{Group, Rule, Stage};

/// The rule.
#[derive(Debug, Clone, Copy)]
pub struct MatmulPostScale;

impl Rule for MatmulPostScale {
    fn name(&self) -> &'static str {
        "matmul_post_scale"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let matmul = head(m, g).is_some_and(|h| h.opcode == OpCode::Matmul);
        let scalar = next.opcode == OpCode::GainOffsetControl
            && next.attr("scale_data").is_none()
            && next.attr("bias_data").is_none();
        (matmul && bare(g) && scalar).then_some(Stage::GainOffset)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{after, f16, Net};
    use anec_ir::{Attr, OpCode};

    #[test]
    fn the_scores_scale_joins_the_product_a_second_one_does_not() {
        let mut net = Net::new(f16(64, 1, 64));
        let x = net.last;
        net.op(OpCode::Matmul, "scores", f16(64, 1, 64), vec![("transpose_rhs", Attr::Bool(true))]);
        net.op(OpCode::GainOffsetControl, "scale", f16(64, 1, 64), vec![("scale", Attr::Float(0.125))]);
        net.op(OpCode::GainOffsetControl, "again", f16(64, 1, 64), vec![("scale", Attr::Float(2.0))]);
        let mut before = net.done();
        before.ops[0].operands.push(x);
        insta::assert_snapshot!(after(&before), @r"
        scores (anec.matmul)
          + scale (anec.gain_offset_control) [matmul_post_scale]
        again (anec.gain_offset_control)
        ");
    }
}
