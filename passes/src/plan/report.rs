//! The memory plan as a user reads it (`anec dump --plan`): every buffer the program
//! binds, and every intermediate with its place, its size and the tasks that first and
//! last use it.
//!
//! A backend fills it from its own binding; this file only holds and prints it.

use std::fmt;

/// A buffer the program binds (a BAR of the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedBuffer {
    /// Its BAR.
    pub bar: u8,
    /// The name the runtime binds (`x`, `y@output`, `intermediates@arena`).
    pub name: String,
    /// `input`, `output` or `intermediate`.
    pub role: String,
    /// Its bytes.
    pub bytes: u64,
}

/// A group of the schedule: its position, its first layer and the tasks it became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Position in the schedule.
    pub position: usize,
    /// The group's first layer.
    pub layer: String,
    /// Its first task and the one after its last (equal when it runs no task of its own).
    pub tasks: (usize, usize),
}

/// An intermediate value's place and lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedSlot {
    /// The layer that writes it.
    pub layer: String,
    /// The BAR of its buffer.
    pub bar: u8,
    /// Its offset in the buffer.
    pub offset: u64,
    /// Its bytes.
    pub bytes: u64,
    /// The group that writes it.
    pub first: Step,
    /// The last group that reads it.
    pub last: Step,
}

/// Buffers and intermediates of one program.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemoryPlan {
    /// The network's name.
    pub network: String,
    /// Groups in the schedule and tasks in the program.
    pub groups: usize,
    /// Tasks in the program.
    pub tasks: usize,
    /// Every buffer, by BAR.
    pub buffers: Vec<PlannedBuffer>,
    /// Every intermediate given memory, in the order they are written.
    pub slots: Vec<PlannedSlot>,
}

impl MemoryPlan {
    /// The bytes of intermediates the program binds, and the bytes they would take each in a
    /// buffer of its own.
    pub fn intermediate_bytes(&self) -> (u64, u64) {
        let bound = self.buffers.iter().filter(|b| b.role == "intermediate").map(|b| b.bytes).sum();
        (bound, self.slots.iter().map(|s| s.bytes).sum())
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tasks {
            (a, b) if b <= a => write!(f, "{} (no task)", self.layer),
            (a, b) if b == a + 1 => write!(f, "{} (TD {a})", self.layer),
            (a, b) => write!(f, "{} (TD {a}-{})", self.layer, b - 1),
        }
    }
}

impl fmt::Display for MemoryPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "memory plan of {}: {} groups in order, {} tasks", self.network, self.groups, self.tasks)?;
        writeln!(f, "buffers")?;
        writeln!(f, "  {:>3}  {:<12} {:>10}  name", "BAR", "role", "bytes")?;
        for b in &self.buffers {
            writeln!(f, "  {:>3}  {:<12} {:>10}  {}", b.bar, b.role, b.bytes, b.name)?;
        }
        let (bound, alone) = self.intermediate_bytes();
        writeln!(f, "intermediates: {} in {bound} bytes ({alone} bytes one buffer each)", self.slots.len())?;
        if self.slots.is_empty() {
            return Ok(());
        }
        writeln!(f, "  {:>3}  {:>10}  {:>10}  {:<24} first use -> last use", "BAR", "offset", "bytes", "value")?;
        for s in &self.slots {
            let at = format!("{:#x}", s.offset);
            writeln!(f, "  {:>3}  {at:>10}  {:>10}  {:<24} {} -> {}", s.bar, s.bytes, s.layer, s.first, s.last)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_prints_its_buffers_and_each_value_with_its_first_and_last_task() {
        let step = |position: usize, layer: &str, tasks| Step { position, layer: layer.into(), tasks };
        let plan = MemoryPlan {
            network: "net".into(),
            groups: 3,
            tasks: 4,
            buffers: vec![
                PlannedBuffer { bar: 4, name: "x".into(), role: "input".into(), bytes: 128 },
                PlannedBuffer { bar: 6, name: "intermediates@arena".into(), role: "intermediate".into(), bytes: 128 },
            ],
            slots: vec![
                PlannedSlot {
                    layer: "a".into(),
                    bar: 6,
                    offset: 0,
                    bytes: 64,
                    first: step(0, "a", (0, 1)),
                    last: step(1, "b", (1, 3)),
                },
                PlannedSlot {
                    layer: "b".into(),
                    bar: 6,
                    offset: 64,
                    bytes: 64,
                    first: step(1, "b", (1, 3)),
                    last: step(2, "c", (3, 3)),
                },
            ],
        };
        insta::assert_snapshot!(plan.to_string(), @r"
        memory plan of net: 3 groups in order, 4 tasks
        buffers
          BAR  role              bytes  name
            4  input               128  x
            6  intermediate        128  intermediates@arena
        intermediates: 2 in 128 bytes (128 bytes one buffer each)
          BAR      offset       bytes  value                    first use -> last use
            6         0x0          64  a                        a (TD 0) -> b (TD 1-2)
            6        0x40          64  b                        b (TD 1-2) -> c (no task)
        ");
    }
}
