//! The memory plan of an H13 program as `anec dump --plan` prints it: the BARs the
//! program binds and every intermediate's place (`buffers::bind`), with the tasks of the
//! groups that first and last use it.

use crate::buffers::Buffers;
use anec_codegen::hwx::model::TensorRole;
use anec_ir::Module;
use anec_passes::plan::{MemoryPlan, PlannedBuffer, PlannedSlot, Step};
use anec_passes::Group;

/// The plan of `m` grouped as `groups`, bound as `bufs`, where group `i` became tasks
/// `group_tasks[i].0 .. group_tasks[i].1` of `tasks`.
pub fn report(
    m: &Module,
    groups: &[Group],
    bufs: &Buffers,
    group_tasks: &[(usize, usize)],
    tasks: usize,
) -> MemoryPlan {
    let step = |position: usize| Step {
        position,
        layer: groups.get(position).and_then(|g| m.ops.get(g.head)).map(|op| op.name.clone()).unwrap_or_default(),
        tasks: group_tasks.get(position).copied().unwrap_or((tasks, tasks)),
    };
    let mut buffers: Vec<PlannedBuffer> = bufs
        .tensors
        .iter()
        .map(|t| PlannedBuffer { bar: t.bar, name: t.name.clone(), role: role(t.role).into(), bytes: t.section_size })
        .collect();
    buffers.sort_by_key(|b| b.bar);
    let slots = bufs
        .plan
        .iter()
        .map(|p| PlannedSlot {
            layer: p.layer.clone(),
            bar: p.surface.bar,
            offset: p.surface.offset,
            bytes: p.surface.strides.buffer_size(&p.surface.ty),
            first: step(p.live.first),
            last: step(p.live.last),
        })
        .collect();
    MemoryPlan { network: m.name.clone(), groups: groups.len(), tasks, buffers, slots }
}

fn role(r: TensorRole) -> &'static str {
    match r {
        TensorRole::Input => "input",
        TensorRole::Output => "output",
        TensorRole::Intermediate => "intermediate",
    }
}
