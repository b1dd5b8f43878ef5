//! Comparing one of our programs with a decoded Apple record, task by task: the header
//! words, every register word either side writes (named by field through the register
//! map), the record structure of each task's stream, the task count, the tensor
//! descriptors and the constant section's SHA-256.

use std::collections::BTreeMap;

use anec_backend_h13::chain::{self, ChainTask};
use anec_backend_h13::regmap::{self, FIELDS};
use anec_codegen::{read_hwx, Hwx, TensorRole};
use sha2::{Digest, Sha256};

use super::record::{Record, TaskRecord, TensorRecord};
use crate::diff::Difference;
use crate::ToolError;

/// The outcome of comparing a program with a record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Tasks in our program and in Apple's.
    pub tasks: (usize, usize),
    /// Header words equal, of Apple's header words (over the tasks both have).
    pub header_words: (usize, usize),
    /// Register words equal, of Apple's written register words (over the tasks both have).
    pub register_words: (usize, usize),
    /// Register words we write that Apple's task does not.
    pub extra_words: usize,
    /// Tasks whose record structure (addresses and counts) equals Apple's.
    pub records_equal: usize,
    /// Tensor descriptors equal (count, binding, shape, strides, bytes).
    pub tensors_equal: bool,
    /// The constant section's SHA-256 equals Apple's.
    pub constants_equal: bool,
    /// Every difference, located by task and field.
    pub differences: Vec<Difference>,
}

impl Comparison {
    /// True when nothing differs.
    pub fn identical(&self) -> bool {
        self.differences.is_empty()
    }
}

fn difference(location: String, ours: impl ToString, apple: impl ToString) -> Difference {
    Difference { location, left: ours.to_string(), right: apple.to_string() }
}

/// Compares an `.hwx` program with a record.
///
/// # Errors
/// [`ToolError::Hwx`] when the program does not read, [`ToolError::Record`] when the
/// record holds a malformed number.
pub fn compare_hwx(program: &[u8], record: &Record) -> Result<Comparison, ToolError> {
    let hwx = read_hwx(program).map_err(ToolError::Hwx)?;
    compare(&hwx, record)
}

/// Compares a program model with a record.
///
/// # Errors
/// [`ToolError::Record`] when the record holds a malformed number.
pub fn compare(hwx: &Hwx, record: &Record) -> Result<Comparison, ToolError> {
    let mut c = Comparison::default();
    let ours = match chain::read(&hwx.text, u64::from(hwx.td_words) + 1, hwx.td_count as usize) {
        Ok(t) => t,
        Err(e) => {
            c.differences.push(difference("__text".into(), e, "a readable task chain"));
            Vec::new()
        }
    };
    c.tasks = (ours.len(), record.task_descriptors.len());
    if c.tasks.0 != c.tasks.1 {
        c.differences.push(difference("task count".into(), c.tasks.0, c.tasks.1));
    }
    for (i, (o, a)) in ours.iter().zip(&record.task_descriptors).enumerate() {
        compare_task(&mut c, i, o, a)?;
    }
    compare_tensors(&mut c, hwx, &record.tensor_descriptors);
    let sha: String = Sha256::digest(&hwx.consts).iter().map(|b| format!("{b:02x}")).collect();
    c.constants_equal = sha == record.constant_section.sha256;
    if !c.constants_equal {
        let nonzero = hwx.consts.iter().filter(|&&b| b != 0).count();
        let ours = format!("{} bytes, {nonzero} non-zero, sha256 {sha}", hwx.consts.len());
        let cs = &record.constant_section;
        let apple = format!("{} bytes, {} non-zero, sha256 {}", cs.size, cs.nonzero_bytes, cs.sha256);
        c.differences.push(difference("__const".into(), ours, apple));
    }
    Ok(c)
}

fn compare_task(c: &mut Comparison, i: usize, ours: &ChainTask, apple: &TaskRecord) -> Result<(), ToolError> {
    let ah = apple.header()?;
    let oh = &ours.task.header;
    for (k, &a) in ah.iter().enumerate() {
        let o = oh.get(k).copied();
        c.header_words.1 += 1;
        if o == Some(a) {
            c.header_words.0 += 1;
        } else {
            c.differences.extend(word_differences(i, header_location(k), k as u16 * 4, o, Some(a)));
        }
    }
    if oh.len() > ah.len() {
        c.differences.push(difference(format!("TD {i} header"), format!("{} words", oh.len()), ah.len()));
    }
    let ar = apple.records()?;
    let or: Vec<(u32, u32)> = ours.task.records.iter().map(|r| (r.address, r.count)).collect();
    if ar == or {
        c.records_equal += 1;
    } else {
        c.differences.push(difference(format!("TD {i} records"), records_text(&or), records_text(&ar)));
    }
    let aw = apple.writes()?;
    let ow: BTreeMap<u32, u32> = ours.task.writes().into_iter().collect();
    for (&addr, &a) in &aw {
        c.register_words.1 += 1;
        let o = ow.get(&addr).copied();
        if o == Some(a) {
            c.register_words.0 += 1;
        } else {
            c.differences.extend(register_differences(i, addr, o, Some(a)));
        }
    }
    for (&addr, &o) in ow.iter().filter(|(a, _)| !aw.contains_key(a)) {
        c.extra_words += 1;
        c.differences.extend(register_differences(i, addr, Some(o), None));
    }
    Ok(())
}

fn header_location(k: usize) -> String {
    if k < 10 {
        format!("Header[{k}]")
    } else {
        "extra header word".into()
    }
}

fn records_text(r: &[(u32, u32)]) -> String {
    r.iter().map(|(a, n)| format!("{a:#07x}+{n}")).collect::<Vec<_>>().join(" ")
}

fn show(v: Option<u32>) -> String {
    v.map_or_else(|| "(not written)".into(), |v| format!("{v:#010x}"))
}

fn register_differences(i: usize, addr: u32, ours: Option<u32>, apple: Option<u32>) -> Vec<Difference> {
    match regmap::td_offset_of_register(addr) {
        Some(off) => {
            let block = regmap::block_of(off).map_or("?", |b| b.name);
            word_differences(i, format!("{block} register {addr:#07x}"), off, ours, apple)
        }
        None => vec![difference(format!("TD {i} register {addr:#07x}"), show(ours), show(apple))],
    }
}

/// The differences of one word: each named field that differs (`TD 0 Common.Cfg.ShPref`)
/// and the unnamed bits, or the whole word when one side does not write it.
fn word_differences(i: usize, place: String, off: u16, ours: Option<u32>, apple: Option<u32>) -> Vec<Difference> {
    let (Some(o), Some(a)) = (ours, apple) else {
        return vec![difference(format!("TD {i} {place}"), show(ours), show(apple))];
    };
    let mut out = Vec::new();
    let mut named = 0u32;
    for f in FIELDS.iter().filter(|f| f.word == off) {
        let mask = f.max() as u32;
        named |= mask << f.shift;
        let (fo, fa) = ((o >> f.shift) & mask, (a >> f.shift) & mask);
        if fo != fa {
            out.push(difference(format!("TD {i} {}", f.short_name()), format!("{fo:#x}"), format!("{fa:#x}")));
        }
    }
    if (o & !named) != (a & !named) {
        let what = if named == 0 { String::new() } else { " other bits".into() };
        out.push(difference(
            format!("TD {i} {place}{what}"),
            format!("{:#010x}", o & !named),
            format!("{:#010x}", a & !named),
        ));
    }
    out
}

/// Our tensor descriptors in Apple's order (inputs, then outputs): shape N, C, H, W,
/// strides of each, and the bytes of one batch.
fn our_tensors(hwx: &Hwx) -> Vec<TensorRecord> {
    // The descriptors follow the thread states: inputs sorted by name, then outputs
    // (Apple's `rrmm_*` list `w` before `x`).
    let states = hwx.tensors_in_state_order();
    let role = |r: TensorRole| states.clone().into_iter().filter(move |t| t.role == r);
    let bound = role(TensorRole::Input).chain(role(TensorRole::Output));
    bound
        .map(|t| TensorRecord {
            binding: if t.role == TensorRole::Input { 1 } else { 2 },
            element_code: t.dtype_code,
            shape: t.dims[..4].to_vec(),
            strides: t.strides[..4].to_vec(),
            total_bytes: t.strides[0],
        })
        .collect()
}

fn compare_tensors(c: &mut Comparison, hwx: &Hwx, apple: &[TensorRecord]) {
    let ours = our_tensors(hwx);
    c.tensors_equal = ours == apple;
    if ours.len() != apple.len() {
        c.differences.push(difference("tensor descriptors".into(), ours.len(), apple.len()));
    }
    for (k, (o, a)) in ours.iter().zip(apple).enumerate() {
        if o != a {
            c.differences.push(difference(format!("tensor {k}"), tensor_text(o), tensor_text(a)));
        }
    }
}

fn tensor_text(t: &TensorRecord) -> String {
    format!(
        "binding {} code {} shape {:?} strides {:?} bytes {}",
        t.binding, t.element_code, t.shape, t.strides, t.total_bytes
    )
}
