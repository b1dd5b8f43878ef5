//! A simulator of H13 (M1) neural-engine programs that interprets the registers of the
//! `.hwx` alone: the TD chain, the BAR table, tile DMA, L2, kernel DMA, the NE and the
//! planar engine. It does not see the network the program was compiled from.
//!
//! [`SimProgram::load`] reads the container and decodes every TD field by name through
//! the register map (the machinery `anec dump` uses); a field value outside what is
//! modelled is a [`SimError`] naming the TD and the field, at load time.
//! [`SimProgram::run`] executes the chain on host tensors. Storage is the program's
//! element formats (fp16, u8, i8); the engines compute in f32 and round once, to the
//! result format, when they write the L2 result. What is modelled, and on which
//! evidence, is listed in `docs/simulator.md`.
//!
//! Modules, one per concern: `program` (container, BARs, bound tensors, chain), `td`
//! with `reader`, `td_header`, `td_common`, `td_dma`, `td_engine`, `td_pair` and
//! `td_reduce` (field decoding; `td_pair`: results kept in L2 or transposed by the NE,
//! operands read from L2 and their broadcast flags, streamed NE sources; `td_reduce`: the
//! planar engine's reduction, its view, L2 layouts, groups and result forms), `memory`
//! (BAR buffers, L2, formats), `dma` (tile DMA), `kernel` (kernel DMA), `ne`, `pe` (also
//! the reduction's arithmetic), `operand` (operands read from L2 and their broadcast),
//! `table` (activation tables), `exec` (one task), `io` (inputs and outputs). Test-only:
//! `kernel_tests` (coefficient images built by hand), `record_tests` (Apple's convolution
//! records of the current compiler, decoded and run), `pair_tests` (the L2 pair modes on
//! tasks built by hand), `pair_record_tests` (Apple's NE-producer / PE-consumer records
//! and abs), `reduce_tests` (reductions on tasks built by hand), `reduce_record_tests`
//! (Apple's reductions), `chain_tests` (tasks chained through L2, built by hand:
//! transposed results, grouped reductions in place, operand 1 broadcast, in place),
//! `softmax_record_tests` and `layer_norm_record_tests` (Apple's softmax and layer norms),
//! `cast_record_tests` (Apple's cast of a bool input), `stream_record_tests` (Apple's
//! copies streamed in pieces).

#[cfg(test)]
mod cast_record_tests;
#[cfg(test)]
mod chain_tests;
mod dma;
mod error;
mod exec;
mod io;
mod kernel;
#[cfg(test)]
mod layer_norm_record_tests;
mod memory;
mod ne;
mod operand;
#[cfg(test)]
mod pair_record_tests;
#[cfg(test)]
mod pair_tests;
mod pe;
mod program;
mod reader;
#[cfg(test)]
mod record_tests;
#[cfg(test)]
mod reduce_record_tests;
#[cfg(test)]
mod reduce_tests;
#[cfg(test)]
mod softmax_record_tests;
#[cfg(test)]
mod stream_record_tests;
mod table;
mod td;
mod td_common;
mod td_dma;
mod td_engine;
mod td_header;
mod td_pair;
mod td_reduce;
#[cfg(test)]
mod test_build;
mod verify;

pub use error::SimError;
pub use io::IoSpec;

use crate::tensor::Tensor;
use anec_codegen::TensorRole;
use memory::{Buffer, Memory, L2};
use program::{Program, Target};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A program read and decoded, ready to run any number of times.
#[derive(Debug, Clone, PartialEq)]
pub struct SimProgram {
    program: Program,
    inputs: Vec<IoSpec>,
    outputs: Vec<IoSpec>,
}

impl SimProgram {
    /// Reads `.hwx` bytes and decodes every TD of the chain.
    ///
    /// # Errors
    /// A malformed container, an inconsistent chain or BAR table, or a TD field whose
    /// value the simulator does not model.
    pub fn load(bytes: &[u8]) -> Result<SimProgram, SimError> {
        Self::of(program::load(bytes)?)
    }

    /// [`SimProgram::load`] of a program in a shared buffer, whose `__const` is read where
    /// it is (no copy: what the compiler's check of a large program needs).
    ///
    /// # Errors
    /// As [`SimProgram::load`].
    pub fn load_shared(bytes: anec_ir::mil::SharedBytes) -> Result<SimProgram, SimError> {
        Self::of(program::load_shared(bytes)?)
    }

    fn of(program: Program) -> Result<SimProgram, SimError> {
        let specs = |role| program.tensors.iter().filter(|t| t.role == role).map(IoSpec::of).collect();
        let inputs = specs(TensorRole::Input);
        let outputs = specs(TensorRole::Output);
        Ok(SimProgram { program, inputs, outputs })
    }

    /// The program's inputs, in binding order.
    pub fn inputs(&self) -> &[IoSpec] {
        &self.inputs
    }

    /// The program's outputs, in binding order.
    pub fn outputs(&self) -> &[IoSpec] {
        &self.outputs
    }

    /// Number of TDs in the chain.
    pub fn task_count(&self) -> usize {
        self.program.tasks.len()
    }

    /// Checks every task without running it: its L2 regions inside the L2 and apart, its
    /// DMA boxes and kernel chunks inside their buffers (`verify`).
    ///
    /// # Errors
    /// The first task that breaks one, with its TD index.
    pub fn verify(&self) -> Result<(), SimError> {
        let (mem, l2) = (self.memory(&BTreeMap::new()), L2::default());
        self.program.tasks.iter().try_for_each(|t| verify::task(&mem, &l2, t))
    }

    /// Runs the program on `inputs` (keyed by [`IoSpec::key`], shaped as
    /// [`IoSpec::shape`]; values are rounded to the tensor's element type) and returns
    /// every output keyed by its [`IoSpec::key`], holding the stored values.
    ///
    /// # Errors
    /// A missing, unknown or wrongly shaped input (the error lists the program's
    /// inputs), or a TD that reads or writes outside a buffer.
    pub fn run(&self, inputs: &BTreeMap<String, Tensor>) -> Result<BTreeMap<String, Tensor>, SimError> {
        io::check_inputs(&self.inputs, inputs)?;
        let mut mem = self.memory(inputs);
        let mut l2 = L2::default();
        for task in &self.program.tasks {
            exec::run(&mut mem, &mut l2, task)?;
        }
        self.collect(&mem)
    }

    /// The buffers of a run: `__text` and `__const` borrowed, inputs filled, the other
    /// tensors zero.
    fn memory(&self, inputs: &BTreeMap<String, Tensor>) -> Memory<'_> {
        let p = &self.program;
        let buffers = p
            .bars
            .iter()
            .filter_map(|&(bar, target)| {
                let buf = match target {
                    Target::Text => {
                        Buffer { name: "__text".into(), bytes: Cow::Borrowed(&p.text[..]), writable: false }
                    }
                    Target::Const => {
                        Buffer { name: "__const".into(), bytes: Cow::Borrowed(&p.consts[..]), writable: false }
                    }
                    Target::Tensor(i) => {
                        let b = p.tensors.get(i)?;
                        let key = b.name.strip_suffix("@output").unwrap_or(&b.name);
                        let bytes = match (b.role, inputs.get(key)) {
                            (TensorRole::Input, Some(t)) => io::input_buffer(b, t),
                            _ => vec![0; b.size],
                        };
                        let writable = b.role != TensorRole::Input;
                        Buffer { name: format!("{:?}", b.name), bytes: Cow::Owned(bytes), writable }
                    }
                };
                Some((bar, buf))
            })
            .collect();
        Memory::new(buffers)
    }

    fn collect(&self, mem: &Memory<'_>) -> Result<BTreeMap<String, Tensor>, SimError> {
        let mut out = BTreeMap::new();
        for spec in &self.outputs {
            let b = self
                .program
                .tensors
                .iter()
                .find(|t| t.name == spec.name)
                .ok_or_else(|| SimError::Program(format!("output {:?} is not bound", spec.name)))?;
            let buf = mem
                .buffer(0, b.bar, "")
                .map_err(|_| SimError::Program(format!("output {:?}: BAR {} holds no buffer", spec.name, b.bar)))?;
            out.insert(spec.key.clone(), io::output_tensor(b, spec, &buf.bytes));
        }
        Ok(out)
    }
}
