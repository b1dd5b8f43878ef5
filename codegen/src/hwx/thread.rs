//! The two `LC_THREAD` flavors of an `.hwx`: encoding (writer) and naming (reader).
//!
//! Offsets below are from the start of the command (`cmd` at 0, `cmdsize` at 4, `flavor`
//! at 8, `count` at 0xC, state words from 0x10). The strings a state points at follow
//! the `count` state words; offsets to them are command-relative; the command is padded
//! with zeros to a multiple of 8.
//!
//! Flavor 1, the program state (count 0x214):
//! - 0x010: u64 BAR table, 32 entries (\[0\] `__text`, \[1\] `__const`, tensors at their index)
//! - 0x110..0x810: zero in every reference file
//! - 0x810: u64 address of the first TD; 0x818 `td_words`; 0x81C `td_count`;
//!   0x824 `0xffff`; 0x83C offset of the network name; 0x850 and 0x858 two unknown
//!   words (0x11 and 3 in the reference files); 0x860 the network name.
//!
//! Flavor 3, one per bound tensor (count 0x1E; intermediates get one too, inferred):
//! - 0x10 `3`; 0x14 role (1 input, 2 output, 3 intermediate: see [`role_word`]);
//!   0x18 offset of the network name;
//!   0x20 offset of the tensor name; 0x24 dtype; 0x28 u32 N, C, H, W, D;
//!   0x3C..0x50 zero; 0x50 u64 byte strides N, C, H, W, D; 0x78 `1`;
//!   0x7C offset of a second copy of the tensor name; 0x80 u64 state size;
//!   0x88 the strings: network name, tensor name, tensor name.

use super::file::{Thread, BAR_COUNT, LC_THREAD};
use super::model::{BoundTensor, Hwx, TensorRole};
use crate::bytes::{fit_u32, len64, string_bytes, Output};
use crate::CodegenError;

/// Flavor of the program state.
pub const FLAVOR_PROGRAM: u32 = 1;
/// Flavor of a tensor state.
pub const FLAVOR_TENSOR: u32 = 3;
/// State words of flavor 1.
pub const PROGRAM_WORDS: u32 = 0x214;
/// State words of flavor 3.
pub const TENSOR_WORDS: u32 = 0x1E;
/// Value of flavor-1 word 0x824 in every reference file.
pub const PROGRAM_WORD_824: u32 = 0xFFFF;
/// Value of flavor-3 word 0x10 in every reference file.
pub const TENSOR_WORD_10: u32 = 3;
/// Value of flavor-3 word 0x78 in every reference file.
pub const TENSOR_WORD_78: u32 = 1;

/// Command offset where the state words start.
const STATE_START: u64 = 0x10;

/// The named fields of a flavor-1 thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramState {
    /// The BAR table.
    pub bars: [u64; BAR_COUNT],
    /// 0x810: address of the first TD.
    pub first_td: u64,
    /// 0x818: words per TD minus one.
    pub td_words: u32,
    /// 0x81C: number of TDs.
    pub td_count: u32,
    /// 0x824 (0xffff).
    pub word_824: u32,
    /// 0x83C: offset of the network name.
    pub name_offset: u32,
    /// 0x850 (unknown).
    pub word_850: u32,
    /// 0x858 (unknown).
    pub word_858: u32,
    /// The network name.
    pub name: String,
    /// Non-zero state words at offsets not named above, as (command offset, value).
    pub other_words: Vec<(u32, u32)>,
}

/// The named fields of a flavor-3 thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorState {
    /// 0x10 (3).
    pub word_10: u32,
    /// 0x14: 1 input, 2 output, 3 intermediate (inferred, see [`role_word`]).
    pub role: u32,
    /// 0x18: offset of the network name.
    pub network_offset: u32,
    /// 0x20: offset of the tensor name.
    pub name_offset: u32,
    /// 0x24: dtype code.
    pub dtype: u32,
    /// 0x28: N, C, H, W, D.
    pub dims: [u32; 5],
    /// 0x50: byte strides of N, C, H, W, D.
    pub strides: [u64; 5],
    /// 0x78 (1).
    pub word_78: u32,
    /// 0x7C: offset of the second tensor-name copy.
    pub name2_offset: u32,
    /// 0x80: the size word.
    pub state_size: u64,
    /// The network name.
    pub network: String,
    /// The tensor name.
    pub name: String,
    /// The second copy of the tensor name.
    pub name2: String,
    /// Non-zero state words at offsets not named above, as (command offset, value).
    pub other_words: Vec<(u32, u32)>,
}

/// Command offsets (of 32-bit words) the program state names.
fn program_named(off: u64) -> bool {
    off < STATE_START + 8 * BAR_COUNT as u64
        || matches!(off, 0x810 | 0x814 | 0x818 | 0x81C | 0x824 | 0x83C | 0x850 | 0x858)
}

/// Command offsets (of 32-bit words) the tensor state names.
fn tensor_named(off: u64) -> bool {
    matches!(off, 0x10..=0x24 | 0x28..=0x38 | 0x50..=0x74 | 0x78 | 0x7C | 0x80 | 0x84)
}

/// Read access to a thread's state by command offset.
struct View<'a> {
    t: &'a Thread,
}

impl View<'_> {
    /// The 32-bit state word at command offset `off`.
    fn u32(&self, off: u64) -> Result<u32, CodegenError> {
        let index = off.checked_sub(STATE_START).map(|o| o / 4).and_then(|i| usize::try_from(i).ok());
        index.and_then(|i| self.t.words.get(i)).copied().ok_or_else(|| {
            CodegenError::Malformed(format!(
                "thread flavor {} at {:#x}: state word +{off:#x} is past its {} words",
                self.t.flavor, self.t.header.offset, self.t.count
            ))
        })
    }

    /// The 64-bit state value at command offset `off`.
    fn u64(&self, off: u64) -> Result<u64, CodegenError> {
        Ok(u64::from(self.u32(off)?) | (u64::from(self.u32(off + 4)?) << 32))
    }

    /// The string at command offset `off` (it must lie in the tail after the state).
    fn string(&self, off: u32) -> Result<String, CodegenError> {
        let tail_start = STATE_START + 4 * u64::from(self.t.count);
        let at = u64::from(off).checked_sub(tail_start).and_then(|o| usize::try_from(o).ok());
        let bytes = at.and_then(|o| self.t.tail.get(o..)).ok_or_else(|| {
            CodegenError::bad(
                "thread string offset",
                self.t.header.offset,
                u64::from(off),
                format!("an offset into the string area from {tail_start:#x}"),
            )
        })?;
        let end = bytes.iter().position(|&b| b == 0).ok_or_else(|| {
            CodegenError::Malformed(format!("thread at {:#x}: string at +{off:#x} has no NUL", self.t.header.offset))
        })?;
        String::from_utf8(bytes.get(..end).unwrap_or_default().to_vec())
            .map_err(|_| CodegenError::Malformed(format!("thread at {:#x}: string is not UTF-8", self.t.header.offset)))
    }

    /// Non-zero words whose offsets `named` does not claim.
    fn others(&self, named: fn(u64) -> bool) -> Vec<(u32, u32)> {
        (0u64..)
            .zip(&self.t.words)
            .filter(|&(i, &w)| w != 0 && !named(STATE_START + 4 * i))
            .map(|(i, &w)| (u32::try_from(STATE_START + 4 * i).unwrap_or(u32::MAX), w))
            .collect()
    }
}

/// Names the fields of a flavor-1 thread.
///
/// # Errors
/// A state shorter than the named words, or a name offset outside the string area.
pub fn decode_program(t: &Thread) -> Result<ProgramState, CodegenError> {
    let v = View { t };
    let mut bars = [0u64; BAR_COUNT];
    for (i, bar) in (0u64..).zip(bars.iter_mut()) {
        *bar = v.u64(STATE_START + 8 * i)?;
    }
    let name_offset = v.u32(0x83C)?;
    Ok(ProgramState {
        bars,
        first_td: v.u64(0x810)?,
        td_words: v.u32(0x818)?,
        td_count: v.u32(0x81C)?,
        word_824: v.u32(0x824)?,
        name_offset,
        word_850: v.u32(0x850)?,
        word_858: v.u32(0x858)?,
        name: v.string(name_offset)?,
        other_words: v.others(program_named),
    })
}

/// Names the fields of a flavor-3 thread.
///
/// # Errors
/// A state shorter than the named words, or a name offset outside the string area.
pub fn decode_tensor(t: &Thread) -> Result<TensorState, CodegenError> {
    let v = View { t };
    let mut dims = [0u32; 5];
    let mut strides = [0u64; 5];
    for (i, (d, s)) in (0u64..).zip(dims.iter_mut().zip(strides.iter_mut())) {
        *d = v.u32(0x28 + 4 * i)?;
        *s = v.u64(0x50 + 8 * i)?;
    }
    let (network_offset, name_offset, name2_offset) = (v.u32(0x18)?, v.u32(0x20)?, v.u32(0x7C)?);
    Ok(TensorState {
        word_10: v.u32(0x10)?,
        role: v.u32(0x14)?,
        network_offset,
        name_offset,
        dtype: v.u32(0x24)?,
        dims,
        strides,
        word_78: v.u32(0x78)?,
        name2_offset,
        state_size: v.u64(0x80)?,
        network: v.string(network_offset)?,
        name: v.string(name_offset)?,
        name2: v.string(name2_offset)?,
        other_words: v.others(tensor_named),
    })
}

/// Starts a thread command: cmd, a placeholder cmdsize, flavor, count.
fn begin(flavor: u32, count: u32) -> Output {
    let mut out = Output::new();
    out.u32(LC_THREAD);
    out.u32(0);
    out.u32(flavor);
    out.u32(count);
    out
}

/// Appends NUL-terminated strings, pads to 8, and patches cmdsize.
fn finish(mut out: Output, strings: &[&[u8]]) -> Result<Vec<u8>, CodegenError> {
    for s in strings {
        out.bytes(s);
        out.u8(0);
    }
    out.align(8)?;
    let size = fit_u32(out.len(), "LC_THREAD cmdsize")?;
    let mut bytes = out.finish();
    if let Some(field) = bytes.get_mut(4..8) {
        field.copy_from_slice(&size.to_le_bytes());
    }
    Ok(bytes)
}

/// The flavor-1 command for `h`, given its BAR table and first TD address.
pub(crate) fn encode_program(h: &Hwx, bars: &[u64; BAR_COUNT], first_td: u64) -> Result<Vec<u8>, CodegenError> {
    let name = string_bytes(&h.network, "network name")?;
    let strings_at = STATE_START + 4 * u64::from(PROGRAM_WORDS);
    let mut out = begin(FLAVOR_PROGRAM, PROGRAM_WORDS);
    for &b in bars {
        out.u64(b);
    }
    out.pad_to(0x810, "program state")?;
    out.u64(first_td);
    out.u32(h.td_words);
    out.u32(h.td_count);
    out.u32(0);
    out.u32(PROGRAM_WORD_824);
    out.pad_to(0x83C, "program state")?;
    out.u32(fit_u32(strings_at, "network name offset")?);
    out.pad_to(0x850, "program state")?;
    out.u32(h.state_850);
    out.u32(0);
    out.u32(h.state_858);
    out.pad_to(strings_at, "program state")?;
    finish(out, &[&name])
}

/// Flavor-3 role word (+0x14) of a tensor.
///
/// 1 (input) and 2 (output) are what every reference file holds; in all of them the word
/// equals the protection of the tensor's segment (inputs r = 1, outputs w = 2). No
/// reference file has an intermediate, so its 3 is inferred from that pattern (its
/// `__DATA,__bss` segment is rw = 3, as eiln/anecc expects).
pub fn role_word(role: TensorRole) -> u32 {
    match role {
        TensorRole::Input => 1,
        TensorRole::Output => 2,
        TensorRole::Intermediate => 3,
    }
}

/// The flavor-3 command of tensor `t` of the network `network`.
pub(crate) fn encode_tensor(network: &str, t: &BoundTensor) -> Result<Vec<u8>, CodegenError> {
    let net = string_bytes(network, "network name")?;
    let name = string_bytes(&t.name, "tensor name")?;
    let net_at = STATE_START + 4 * u64::from(TENSOR_WORDS);
    let name_at = net_at + len64(&net) + 1;
    let name2_at = name_at + len64(&name) + 1;
    let mut out = begin(FLAVOR_TENSOR, TENSOR_WORDS);
    out.u32(TENSOR_WORD_10);
    out.u32(role_word(t.role));
    out.u32(fit_u32(net_at, "flavor-3 network name offset")?);
    out.u32(0);
    out.u32(fit_u32(name_at, "flavor-3 tensor name offset")?);
    out.u32(t.dtype_code);
    for (d, axis) in t.dims.iter().zip(["N", "C", "H", "W", "D"]) {
        out.u32(fit_u32(*d, &format!("tensor {:?} dim {axis}", t.name))?);
    }
    out.pad_to(0x50, "tensor state")?;
    t.strides.iter().for_each(|&s| out.u64(s));
    out.u32(TENSOR_WORD_78);
    out.u32(fit_u32(name2_at, "flavor-3 second name offset")?);
    out.u64(t.state_size);
    finish(out, &[&net, &name, &name])
}
