//! The `LC_SYMTAB` contents v4.2.1 writes: symbols, stabs type strings, string table.
//!
//! Symbol order: the `__const` chunk symbols (type `N_SECT|N_EXT` 0xF, section 2, desc
//! 2, value = `__const` address + offset); one symbol per bound tensor (0xF, section
//! 3 + i, desc 2 for inputs and 0 for outputs and intermediates, value = its virtual
//! address); the ten fixed stabs base types ([`BASE_TYPES`], type `N_LSYM` 0x80, all
//! else 0); one stabs shape string per input or output (type `N_GSYM` 0x20, desc = its
//! first type number).
//!
//! Intermediates (no reference file has one): their symbol, with desc 0, is inferred;
//! they get no stabs string because eiln/anecc counts the `:t...:5` shape strings of
//! real files and asserts there is one per input and output. Intermediates come after
//! every input and output, so neither choice moves the section or type numbers of the
//! others.
//!
//! The string table starts with one NUL (index 0 is the empty name), then every name
//! with its NUL in symbol order, no sharing; `strsize` is exact (no padding).

use super::model::{BoundTensor, Hwx, TensorRole};
use crate::bytes::{add, fit_u16, fit_u32, fit_u8, mul, string_bytes, Output};
use crate::CodegenError;

/// The ten stabs base types every v4.2.1 file declares, type numbers 1..=10.
pub const BASE_TYPES: [&str; 10] = [
    "void:t1=1",
    "int8:t2=r2;0;127",
    "uint8:t3=r1;0;255",
    "int16:t4=r1;-32768;32767",
    "float16:t5=r1;2;0",
    "float:t6=r1;4;0",
    "raw10:t7=r1;-512;511",
    "lut:t8=",
    "uint4:t9=r1;0;15",
    "uint6:t10=r1;0;63",
];
/// `N_SECT | N_EXT`: a defined external symbol.
pub const N_SECT_EXT: u8 = 0x0F;
/// `N_LSYM`: a stabs local type symbol.
pub const N_LSYM: u8 = 0x80;
/// `N_GSYM`: a stabs global symbol.
pub const N_GSYM: u8 = 0x20;
/// Section number of `__TEXT,__const`.
pub const CONST_SECTION: u8 = 2;
/// `n_desc` of `__const` symbols and input tensors.
pub const DESC_DEFINED: u16 = 2;
/// Type number of the first tensor's stabs string; each tensor uses five.
pub const FIRST_TENSOR_TYPE: u64 = 11;
/// Size of one `nlist_64` entry.
pub const NLIST_SIZE: u64 = 16;

/// The stabs shape string of `t` whose type numbers start at `first`:
/// `name:tA=ar1;0;N;A+1=sSNn:ar1;0;C;A+2=sSCc:ar1;0;H;A+3=sSHh:ar1;0;W;A+4=sSWw:DTYPE`
/// (an array of N structs of N-stride bytes named `n`, each an array of C structs
/// named `c`, ..., W elements of W-stride bytes of the stabs type `dtype_code`).
pub fn stabs_string(t: &BoundTensor, first: u64) -> String {
    let [n, c, h, w, _] = t.dims;
    let [sn, sc, sh, sw, _] = t.strides;
    format!(
        "{name}:t{first}=ar1;0;{n};{t1}=s{sn}n:ar1;0;{c};{t2}=s{sc}c:ar1;0;{h};{t3}=s{sh}h:\
         ar1;0;{w};{t4}=s{sw}w:{dtype}",
        name = t.name,
        t1 = first + 1,
        t2 = first + 2,
        t3 = first + 3,
        t4 = first + 4,
        dtype = t.dtype_code,
    )
}

/// One symbol before encoding.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    name: Vec<u8>,
    n_type: u8,
    sect: u8,
    desc: u16,
    value: u64,
}

/// The encoded symbol and string tables.
#[derive(Debug)]
pub(crate) struct Tables {
    /// The `nlist_64` entries.
    pub nlist: Vec<u8>,
    /// The string table (exact size).
    pub strings: Vec<u8>,
    /// Number of symbols.
    pub count: u64,
}

/// All symbols of `h`, given the `__const` address and each tensor's address.
pub(crate) fn entries(h: &Hwx, const_addr: u64, addrs: &[u64]) -> Result<Vec<Entry>, CodegenError> {
    let mut out = Vec::new();
    for s in &h.const_symbols {
        let value = add(const_addr, s.offset, "const symbol address")?;
        out.push(entry(&s.name, N_SECT_EXT, CONST_SECTION, DESC_DEFINED, value)?);
    }
    for (i, (t, &addr)) in (0u64..).zip(h.tensors.iter().zip(addrs)) {
        let sect = fit_u8(3 + i, "tensor section number")?;
        let desc = if t.role == TensorRole::Input { DESC_DEFINED } else { 0 };
        out.push(entry(&t.name, N_SECT_EXT, sect, desc, addr)?);
    }
    for base in BASE_TYPES {
        out.push(entry(base, N_LSYM, 0, 0, 0)?);
    }
    for (i, t) in (0u64..).zip(h.tensors.iter().filter(|t| t.role != TensorRole::Intermediate)) {
        let first = add(FIRST_TENSOR_TYPE, mul(i, 5, "stabs type number")?, "stabs type number")?;
        let desc = fit_u16(first, "first stabs type number (n_desc)")?;
        out.push(entry(&stabs_string(t, first), N_GSYM, 0, desc, 0)?);
    }
    Ok(out)
}

/// One entry, checking its name.
fn entry(name: &str, n_type: u8, sect: u8, desc: u16, value: u64) -> Result<Entry, CodegenError> {
    Ok(Entry { name: string_bytes(name, "symbol name")?, n_type, sect, desc, value })
}

/// Encodes `entries` into `nlist_64` records and the string table.
pub(crate) fn encode(entries: &[Entry]) -> Result<Tables, CodegenError> {
    let mut nlist = Output::new();
    let mut strings = Output::new();
    strings.u8(0);
    for e in entries {
        nlist.u32(fit_u32(strings.len(), "symbol string index")?);
        nlist.u8(e.n_type);
        nlist.u8(e.sect);
        nlist.u16(e.desc);
        nlist.u64(e.value);
        strings.bytes(&e.name);
        strings.u8(0);
    }
    Ok(Tables { nlist: nlist.finish(), strings: strings.finish(), count: entries.len() as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stabs_string_lists_counts_then_strides() {
        let t = BoundTensor {
            name: "probs@output".into(),
            role: TensorRole::Output,
            bar: 4,
            dtype_code: 5,
            dims: [1, 3, 1, 1, 1],
            strides: [192, 64, 64, 2, 192],
            section_size: 192,
            state_size: 130,
        };
        assert_eq!(
            stabs_string(&t, 16),
            "probs@output:t16=ar1;0;1;17=s192n:ar1;0;3;18=s64c:ar1;0;1;19=s64h:ar1;0;1;20=s2w:5"
        );
    }
}
