//! Scheduling and memory planning, independent of the chip.
//!
//! - [`schedule`]: the dependency graph of the fused groups (a `petgraph` graph, one node
//!   per group, one edge per value a group hands to another) and the order they run in.
//! - [`liveness`]: for every value a group writes, the positions in that order of its
//!   writer and of its last reader, reshapes counted as the same bytes.
//! - [`pack`]: offsets in one buffer for values alive over intervals, so that a value's
//!   bytes are reused once its last reader has run: the buffer's size is bounded by the
//!   tensors alive at once, not by the depth of the network.
//! - [`report`]: the plan as `anec dump --plan` prints it.
//!
//! A backend decides which values need memory and how many bytes each takes; it asks
//! these three for the order, the lifetimes and the offsets (H13: `buffers.rs`).

pub mod liveness;
pub mod pack;
pub mod report;
pub mod schedule;

pub use liveness::{Interval, Liveness};
pub use pack::{pack, Packer, Placed};
pub use report::{MemoryPlan, PlannedBuffer, PlannedSlot, Step};
pub use schedule::{Schedule, ScheduleError};
