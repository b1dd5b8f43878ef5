//! `swapped_write`: a channel<->width transpose of a result, its only use, written by the
//! task that computes the result (Common.Cfg bit 28). A convolution of one group does so (a `linear`
//! swaps back after its 1x1 convolution: Apple's compute task writes the product rows
//! so, `matmul.md` §1), and so does a planar-engine reduction whose vector of results
//! becomes a row (written packed, word 0x158 0x400; `lower::reduction`).

use super::head;
use anec_ir::{Module, Op, OpCode};
use anec_passes::fuse::{Group, Rule, Stage};

/// The rule.
#[derive(Debug, Clone, Copy)]
pub struct SwappedWrite;

impl Rule for SwappedWrite {
    fn name(&self) -> &'static str {
        "swapped_write"
    }

    fn joins(&self, m: &Module, g: &Group, next: &Op) -> Option<Stage> {
        let writer = head(m, g).is_some_and(|h| match h.opcode {
            // One group: a grouped convolution runs as several tasks, one per group slice,
            // and no record shows one writing transposed.
            OpCode::Conv => h.attr("groups").and_then(anec_ir::Attr::as_int).unwrap_or(1) == 1,
            OpCode::Reduction => g.goc.is_none() && crate::lower::reduction::packs_into_row(m, h),
            _ => false,
        });
        let swap = crate::lower::movement::is_channel_width_swap(m, next);
        (writer && g.swap.is_none() && swap).then_some(Stage::Swap)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{after, f16, Net};

    #[test]
    fn a_grouped_convolution_leaves_its_transpose_to_a_task_of_its_own() {
        let mut before = Net::new(f16(4, 1, 4)).conv("dw", f16(8, 1, 4)).swap("back").done();
        before.ops[0].attrs.insert("groups".into(), anec_ir::Attr::Int(4));
        insta::assert_snapshot!(after(&before), @r"
        dw (anec.conv)
        back (anec.transpose)
        ");
    }

    #[test]
    fn a_convolution_writes_its_result_transposed_then_the_next_transpose_is_a_task() {
        let before = Net::new(f16(16, 1, 4)).conv("fc", f16(32, 1, 4)).swap("back").swap("again").done();
        insta::assert_snapshot!(after(&before), @r"
        fc (anec.conv)
          + back (anec.transpose) [swapped_write]
        again (anec.transpose)
        ");
    }
}
