//! Reading a program for the simulator: the `.hwx` container through the existing
//! readers (`parse_hwx` for the structure and the flavor-1 program state with its BAR
//! table, `bound_tensors` for the bound tensors with their BAR, dims, strides and element type),
//! then the TD chain from the first TD, each TD decoded by `td`.
//!
//! The chain starts at the start of `__text` and is followed by
//! `anec_backend_h13::chain::read` (NextPointer and NextSize, dense v4.2.1 TDs or the
//! current compiler's sparse records, bounded by `__text`); it must hold exactly the
//! program state's `td_count` tasks.

use super::error::SimError;
use super::memory::{check_disjoint, Fmt, BARS};
use super::td::{self, Task};
use anec_backend_h13::chain;
use anec_codegen::hwx::thread::{decode_program, ProgramState, FLAVOR_PROGRAM};
use anec_codegen::{parse_hwx_structure, BoundTensor, HwxFile, TensorRole};
use anec_ir::mil::SharedBytes;

/// Largest tensor buffer: BARs are 32-bit device addresses.
const MAX_BUFFER: u64 = 1 << 32;
/// cpusubtype of H13 (M1).
const H13: u32 = 4;

/// What a BAR points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `__TEXT,__text`.
    Text,
    /// `__TEXT,__const`.
    Const,
    /// Bound tensor `i` of [`Program::tensors`].
    Tensor(usize),
}

/// A bound tensor as the simulator uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Name as bound (`image`, `probs@output`).
    pub name: String,
    /// Input, output or intermediate.
    pub role: TensorRole,
    /// BAR index.
    pub bar: u8,
    /// Element format.
    pub fmt: Fmt,
    /// N, C, H, W, D.
    pub dims: [usize; 5],
    /// Byte strides of N, C, H, W, D.
    pub strides: [u64; 5],
    /// Bytes of the buffer (the `__FVMLIB` / `__DATA` section size).
    pub size: usize,
}

/// A loaded program.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// `__text` bytes.
    pub text: Vec<u8>,
    /// `__const` bytes.
    pub consts: SharedBytes,
    /// Every BAR that holds an address, with what it points at.
    pub bars: Vec<(u8, Target)>,
    /// The bound tensors, in segment order.
    pub tensors: Vec<Bound>,
    /// The TD chain, decoded.
    pub tasks: Vec<Task>,
}

/// Reads and decodes a program (its `__const` copied out of `bytes`).
pub fn load(bytes: &[u8]) -> Result<Program, SimError> {
    load_shared(SharedBytes::from_vec(bytes.to_vec()))
}

/// Reads and decodes a program held in a shared buffer: `__const` stays a window of it.
pub fn load_shared(bytes: SharedBytes) -> Result<Program, SimError> {
    let f = parse_hwx_structure(&bytes).map_err(SimError::Hwx)?;
    let consts = match f.section("__TEXT", "__const") {
        Some(c) => {
            let start = c.offset as usize;
            usize::try_from(c.size).ok().and_then(|n| start.checked_add(n)).and_then(|end| bytes.slice(start..end))
        }
        None => Some(SharedBytes::default()),
    };
    let consts = consts.ok_or_else(|| SimError::Program("__const lies outside the file".into()))?;
    decode(f, consts)
}

/// The program of a parsed file whose `__const` is `consts`.
fn decode(f: HwxFile, consts: SharedBytes) -> Result<Program, SimError> {
    if f.cpu_subtype != H13 {
        return Err(SimError::Program(format!("cpusubtype {}: only H13 (4) programs are modelled", f.cpu_subtype)));
    }
    let state = program_state(&f)?;
    let text_addr = section_addr(&f, "__text")?;
    let const_addr = section_addr(&f, "__const")?;
    let bound_tensors = anec_codegen::hwx::reader::bound_tensors(&f).map_err(SimError::Hwx)?;
    let tensors = bound_tensors.iter().map(bound).collect::<Result<Vec<_>, _>>()?;
    let bars = bar_map(&state, text_addr, const_addr, &tensors)?;
    let tasks = chain(&f.text, &state, text_addr)?;
    Ok(Program { text: f.text, consts, bars, tensors, tasks })
}

fn program_state(f: &HwxFile) -> Result<ProgramState, SimError> {
    let t = f
        .threads()
        .find(|t| t.flavor == FLAVOR_PROGRAM)
        .ok_or_else(|| SimError::Program("no flavor-1 LC_THREAD (program state)".into()))?;
    decode_program(t).map_err(SimError::Hwx)
}

fn section_addr(f: &HwxFile, name: &str) -> Result<u64, SimError> {
    f.section("__TEXT", name).map(|s| s.addr).ok_or_else(|| SimError::Program(format!("no __TEXT,{name} section")))
}

/// The element format of a thread-state dtype code (the stabs type numbers `int8:t2`,
/// `uint8:t3`, `float16:t5`).
fn dtype_fmt(code: u32) -> Option<Fmt> {
    match code {
        5 => Some(Fmt::F16),
        3 => Some(Fmt::U8),
        2 => Some(Fmt::I8),
        _ => None,
    }
}

fn bound(t: &BoundTensor) -> Result<Bound, SimError> {
    let err = |why: String| SimError::Program(format!("tensor {:?}: {why}", t.name));
    let fmt = dtype_fmt(t.dtype_code)
        .ok_or_else(|| err(format!("element type code {} (only 5 fp16, 3 u8 and 2 i8 are modelled)", t.dtype_code)))?;
    let dims = t.dims.map(|d| usize::try_from(d).unwrap_or(usize::MAX));
    if dims.contains(&0) {
        return Err(err(format!("a zero extent in N, C, H, W, D = {dims:?}")));
    }
    if t.section_size > MAX_BUFFER {
        return Err(err(format!("a {:#x}-byte section: BARs address at most 4 GiB", t.section_size)));
    }
    let size = usize::try_from(t.section_size).unwrap_or(usize::MAX);
    let layout: Vec<(usize, u64)> = dims.iter().copied().zip(t.strides).collect();
    check_disjoint(&layout, fmt.size()).map_err(|e| err(format!("its elements overlap: {e}")))?;
    let last: u64 = dims.iter().zip(&t.strides).map(|(&n, &s)| (n as u64 - 1).saturating_mul(s)).sum();
    let end = last.saturating_add(fmt.size() as u64);
    if end > t.section_size {
        return Err(err(format!("its last element ends at {end:#x}, past its {:#x}-byte section", t.section_size)));
    }
    Ok(Bound { name: t.name.clone(), role: t.role, bar: t.bar, fmt, dims, strides: t.strides, size })
}

fn bar_map(state: &ProgramState, text: u64, consts: u64, tensors: &[Bound]) -> Result<Vec<(u8, Target)>, SimError> {
    let mut out = Vec::new();
    for (i, &addr) in (0u8..).zip(state.bars.iter()).take(BARS) {
        let tensor = tensors.iter().position(|t| t.bar == i);
        let target = match (addr, tensor) {
            (0, _) => continue,
            (_, Some(k)) => Target::Tensor(k),
            (a, None) if a == text => Target::Text,
            (a, None) if a == consts => Target::Const,
            (a, None) => {
                return Err(SimError::Program(format!(
                    "BAR {i} = {a:#x} is neither __text, __const nor a bound tensor"
                )))
            }
        };
        out.push((i, target));
    }
    Ok(out)
}

fn chain(text: &[u8], state: &ProgramState, text_addr: u64) -> Result<Vec<Task>, SimError> {
    if state.first_td != text_addr {
        return Err(SimError::Program(format!(
            "the first TD at {:#x} is not at the start of __text ({text_addr:#x})",
            state.first_td
        )));
    }
    let count = usize::try_from(state.td_count).unwrap_or(usize::MAX);
    let read = chain::read(text, u64::from(state.td_words) + 1, count).map_err(|e| SimError::Program(e.to_string()))?;
    if read.len() != count {
        return Err(SimError::Program(format!(
            "the TD chain ends (EON) after {} TDs but the program state declares {count}",
            read.len()
        )));
    }
    read.iter().enumerate().map(|(i, t)| td::decode(&t.task.image, i)).collect()
}
