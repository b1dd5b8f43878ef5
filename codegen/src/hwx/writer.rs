//! Lays out an [`Hwx`] as the bytes Apple's `zin_ane_compiler` v4.2.1 writes.
//!
//! Everything except the content of [`Hwx`] is derived here:
//! - load commands in the order `__PAGEZERO`, `__TEXT`, one `__FVMLIB` segment per
//!   input or output, one `__DATA` segment (section `__bss`) per intermediate, one
//!   `LC_LOADFVMLIB` per input or output, the flavor-1 thread, one flavor-3 thread per
//!   tensor (intermediates included), `LC_IDENT`, `LC_SYMTAB`;
//! - addresses: `__text` at 0x30000000, `__const` at `round_up(text, 0x40)` after it,
//!   `__TEXT` spanning both rounded to 0x4000, tensors on following 0x4000 pages in model
//!   order (intermediates last), each `round_up(section_size, 0x4000)` long;
//! - file: header, commands, symbols, strings, then (8-aligned) the `__text`
//!   relocations; zeros up to 0x4000, where `__TEXT` starts; the file ends with `__TEXT`.
//!   If the header part outgrows 0x4000 (never seen in a reference file), `__TEXT` moves
//!   to the next multiple of 0x4000.
//!
//! Every value written into a fixed-width field is range-checked.
//!
//! Intermediate tensors: no v4.2.1 reference file has one, so their layout is the one the
//! public evidence supports best (`docs/formats/hwx.md`, "Intermediate tensors"):
//! - segment `__DATA`, prot rw (3/3), one section, flags `SG_NORELOC` (4) without
//!   `SG_FVMLIB`: eiln/anecc (`anect/__init__.py`) recognises an intermediate buffer by
//!   exactly (maxprot, initprot, nsects, flags) = (3, 3, 1, 4), and Apple's own H17
//!   `cnn_frame_enhancer_96p.H17.espresso.hwx` lists a `__DATA` segment with a `__bss`
//!   section after its `__FVMLIB` windows;
//! - on the 0x4000 page right after the previous tensor: anecc walks the buffers as one
//!   contiguous chain starting at the page after `__TEXT`;
//! - no `LC_LOADFVMLIB` and no stabs shape string: the runtime hands the program one
//!   anonymous intermediate buffer (`intermediateBufferHandle`), only inputs and outputs
//!   are named ports, and anecc asserts that the `:t...:5` shape strings count exactly the
//!   inputs and outputs;
//! - inferred without evidence: section flags `S_ZEROFILL` (1), align 2^14, a flavor-3
//!   thread with role 3, and an `N_SECT|N_EXT` symbol with desc 0 (these keep the name
//!   and shape so that reading the file back gives the same [`Hwx`]).

use super::commands::{self, SectionSpec, SegmentSpec, RELOC_SIZE, SECTION_SIZE, SEGMENT_SIZE, SYMTAB_SIZE};
use super::file::{BAR_COUNT, CONST_ALIGN, HEADER_SIZE, PAGE, TEXT_VMADDR};
use super::model::{BoundTensor, Hwx, TensorRole};
use super::symtab;
use super::thread;
use crate::bytes::{add, len64, round_up, Output};
use crate::CodegenError;

/// `SG_NORELOC`: the segment has no relocations.
const SG_NORELOC: u32 = 0x4;
/// `SG_FVMLIB` | `SG_NORELOC`: flags of every `__FVMLIB` segment.
const FVMLIB_SEGMENT_FLAGS: u32 = 0x6;
/// `S_ATTR_LOC_RELOC`: the section has local relocations.
const S_ATTR_LOC_RELOC: u32 = 0x100;
/// Section flags of `__text` (before `S_ATTR_LOC_RELOC`).
const TEXT_FLAGS: u32 = 0x28;
/// Section flags of `__TEXT,__const`.
const CONST_FLAGS: u32 = 0x26;
/// Section flags of an input's `__FVMLIB,__const`.
const INPUT_FLAGS: u32 = 0x21;
/// Section flags of an output's `__FVMLIB,__data`.
const OUTPUT_FLAGS: u32 = 0x23;
/// Segment of an intermediate (eiln/anecc's flags 4 rule out `__FVMLIB`'s `SG_FVMLIB`;
/// Apple's H17 files name it `__DATA`).
pub const INTERMEDIATE_SEGMENT: &str = "__DATA";
/// Section of an intermediate (Apple's H17 files: `__DATA,__bss`).
pub const INTERMEDIATE_SECTION: &str = "__bss";
/// Protection of an intermediate's segment, rw (eiln/anecc).
pub const INTERMEDIATE_PROT: u32 = 3;
/// Section flags of an intermediate's `__DATA,__bss`: `S_ZEROFILL`, the standard type of
/// a `__bss` section. Inferred: Apple's tensor sections use non-standard types (0x21,
/// 0x23), so its real value may differ.
const INTERMEDIATE_FLAGS: u32 = 0x1;
/// log2 alignment of `__text` and of tensor sections.
const PAGE_ALIGN_LOG2: u32 = 14;
/// log2 alignment of `__TEXT,__const`.
const CONST_ALIGN_LOG2: u32 = 6;

/// Addresses and sizes derived from an [`Hwx`].
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Offset of `__const` from the start of `__text`.
    pub const_rel: u64,
    /// Virtual address of `__const`.
    pub const_addr: u64,
    /// Size of the `__TEXT` segment (vm and file).
    pub text_seg_size: u64,
    /// Virtual address of each tensor.
    pub tensor_addrs: Vec<u64>,
    /// vmsize of each tensor's segment.
    pub tensor_sizes: Vec<u64>,
    /// The BAR table.
    pub bars: [u64; BAR_COUNT],
}

impl Layout {
    /// Derives the layout, checking the tensors' roles and BAR indices.
    pub(crate) fn new(h: &Hwx) -> Result<Self, CodegenError> {
        let const_rel = round_up(len64(&h.text), CONST_ALIGN, "__text size")?;
        let const_addr = add(TEXT_VMADDR, const_rel, "__const address")?;
        let text_end = add(const_rel, len64(&h.consts), "__TEXT size")?;
        let text_seg_size = round_up(text_end, PAGE, "__TEXT size")?;
        let mut next = add(TEXT_VMADDR, text_seg_size, "tensor address")?;
        let mut bars = [0u64; BAR_COUNT];
        bars[0] = TEXT_VMADDR;
        bars[1] = const_addr;
        let (mut tensor_addrs, mut tensor_sizes) = (Vec::new(), Vec::new());
        for t in &h.tensors {
            let size = round_up(t.section_size, PAGE, "tensor segment size")?;
            set_bar(&mut bars, t.bar, next, &t.name)?;
            tensor_addrs.push(next);
            tensor_sizes.push(size);
            next = add(next, size, "tensor address")?;
        }
        Ok(Self { const_rel, const_addr, text_seg_size, tensor_addrs, tensor_sizes, bars })
    }
}

/// Puts `addr` at BAR `index`, which must be free and in 2..32.
fn set_bar(bars: &mut [u64; BAR_COUNT], index: u8, addr: u64, name: &str) -> Result<(), CodegenError> {
    let slot = bars.get_mut(usize::from(index)).filter(|_| index >= 2).ok_or_else(|| {
        CodegenError::Invalid(format!(
            "tensor {name:?} has BAR index {index}; tensors use 2..{BAR_COUNT} (0 and 1 are __text and __const)"
        ))
    })?;
    if *slot != 0 {
        return Err(CodegenError::Invalid(format!("tensor {name:?} reuses BAR index {index}")));
    }
    *slot = addr;
    Ok(())
}

/// The virtual address the program gives each of `h.tensors` (the address of its
/// segment), as [`write_hwx`] lays them out.
pub fn tensor_addresses(h: &Hwx) -> Result<Vec<u64>, CodegenError> {
    Ok(Layout::new(h)?.tensor_addrs)
}

/// Writes `h` as an `.hwx` file, in memory ([`hwx_pieces`] writes it to a file without
/// building it whole).
///
/// # Errors
/// [`CodegenError::Invalid`] for inconsistent content (a BAR index outside 2..32 or
/// taken twice, a relocation or symbol outside its section, a NUL in a name, a tensor
/// name used twice, an intermediate listed before an input or output, a `state_order`
/// that is not a permutation), [`CodegenError::Overflow`] for a value too wide for its
/// field.
pub fn write_hwx(h: &Hwx) -> Result<Vec<u8>, CodegenError> {
    let p = hwx_pieces(h)?;
    let mut out = Vec::with_capacity(usize::try_from(p.len()).unwrap_or(0));
    out.extend_from_slice(&p.head);
    out.extend_from_slice(p.consts);
    out.resize(out.len() + p.tail, 0);
    Ok(out)
}

/// An `.hwx` file as three runs of bytes, one after the other: everything up to
/// `__TEXT,__const` (header, load commands, tables, `__text`), the constants (borrowed from
/// the program, not copied) and the zeros that end `__TEXT` on its page.
#[derive(Debug)]
pub struct HwxPieces<'a> {
    /// The bytes before `__const`.
    pub head: Vec<u8>,
    /// `__const`.
    pub consts: &'a [u8],
    /// Zero bytes after `__const`.
    pub tail: usize,
}

impl HwxPieces<'_> {
    /// The file's length.
    pub fn len(&self) -> u64 {
        len64(&self.head) + len64(self.consts) + self.tail as u64
    }

    /// Never: a file has at least its header.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the file to `w`, piece by piece.
    pub fn write_to(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(&self.head)?;
        w.write_all(self.consts)?;
        let zeros = [0u8; 0x4000];
        let mut left = self.tail;
        while left > 0 {
            let n = left.min(zeros.len());
            w.write_all(&zeros[..n])?;
            left -= n;
        }
        Ok(())
    }
}

/// Lays out `h` as [`write_hwx`] does, returning the file as [`HwxPieces`].
///
/// # Errors
/// As [`write_hwx`].
pub fn hwx_pieces(h: &Hwx) -> Result<HwxPieces<'_>, CodegenError> {
    check_content(h)?;
    let layout = Layout::new(h)?;
    let parts = Parts::new(h, &layout)?;
    let text_off = round_up(parts.header_end()?, PAGE, "header size")?.max(PAGE);
    parts.assemble(h, &layout, text_off)
}

/// Checks what the layout does not: relocation targets, symbol offsets, tensor names and
/// the place of intermediates.
fn check_content(h: &Hwx) -> Result<(), CodegenError> {
    check_tensors(&h.tensors)?;
    for r in &h.relocations {
        commands::relocation_info(r)?;
        let end = u64::from(r.address) + (1u64 << r.length);
        if end > len64(&h.text) {
            return Err(CodegenError::Invalid(format!(
                "relocation at {:#x} patches past the end of __text ({:#x} bytes)",
                r.address,
                h.text.len()
            )));
        }
    }
    for s in &h.const_symbols {
        if s.offset >= len64(&h.consts) {
            return Err(CodegenError::Invalid(format!(
                "symbol {:?} at __const offset {:#x} is past its end ({:#x} bytes)",
                s.name,
                s.offset,
                h.consts.len()
            )));
        }
    }
    Ok(())
}

/// Tensor names must be unique (the reader matches threads to segments by name), and
/// intermediates must follow every input and output: their `__DATA` segments come after
/// the `__FVMLIB` ones, and load-command order is address order.
fn check_tensors(tensors: &[BoundTensor]) -> Result<(), CodegenError> {
    let mut names = std::collections::HashSet::new();
    let mut seen_intermediate = None;
    for t in tensors {
        if !names.insert(t.name.as_str()) {
            return Err(CodegenError::Invalid(format!("tensor name {:?} is used twice", t.name)));
        }
        match (t.role, seen_intermediate) {
            (TensorRole::Intermediate, _) => seen_intermediate = Some(&t.name),
            (_, Some(before)) => {
                return Err(CodegenError::Invalid(format!(
                    "{:?} tensor {:?} follows intermediate {before:?}; intermediates go after every input and output",
                    t.role, t.name
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The pieces of the header part whose sizes do not depend on where `__TEXT` goes.
struct Parts {
    /// `__FVMLIB` segments, `LC_LOADFVMLIB`s, threads and `LC_IDENT`, in order.
    middle: Vec<Vec<u8>>,
    /// Symbol and string tables.
    tables: symtab::Tables,
    /// Number of `__text` relocations.
    nreloc: u64,
}

impl Parts {
    /// Encodes everything but `__PAGEZERO`, `__TEXT` and `LC_SYMTAB`.
    fn new(h: &Hwx, l: &Layout) -> Result<Self, CodegenError> {
        let mut middle = Vec::new();
        for (i, t) in h.tensors.iter().enumerate() {
            let (addr, size) = (at(&l.tensor_addrs, i)?, at(&l.tensor_sizes, i)?);
            middle.push(commands::segment(&tensor_segment(t.role, t.section_size, addr, size))?);
        }
        for (t, &addr) in h.tensors.iter().zip(&l.tensor_addrs) {
            if t.role != TensorRole::Intermediate {
                middle.push(commands::loadfvmlib(&t.name, addr)?);
            }
        }
        middle.push(thread::encode_program(h, &l.bars, TEXT_VMADDR)?);
        for t in state_order(h)? {
            middle.push(thread::encode_tensor(&h.network, t)?);
        }
        middle.push(commands::ident(&h.ident)?);
        let entries = symtab::entries(h, l.const_addr, &l.tensor_addrs)?;
        let nreloc = h.relocations.len() as u64;
        Ok(Self { middle, tables: symtab::encode(&entries)?, nreloc })
    }

    /// Total size of the load commands.
    fn sizeofcmds(&self) -> u64 {
        let fixed = 2 * SEGMENT_SIZE + 2 * SECTION_SIZE + SYMTAB_SIZE;
        fixed + self.middle.iter().map(|c| len64(c)).sum::<u64>()
    }

    /// File offsets of symbols, strings and relocations.
    fn offsets(&self) -> Result<(u64, u64, u64), CodegenError> {
        let symoff = add(HEADER_SIZE, self.sizeofcmds(), "symoff")?;
        let stroff = add(symoff, len64(&self.tables.nlist), "stroff")?;
        let str_end = add(stroff, len64(&self.tables.strings), "string table end")?;
        Ok((symoff, stroff, round_up(str_end, 8, "reloff")?))
    }

    /// End of the header part (after the relocations, if any).
    fn header_end(&self) -> Result<u64, CodegenError> {
        let (_, stroff, reloff) = self.offsets()?;
        if self.nreloc == 0 {
            return add(stroff, len64(&self.tables.strings), "string table end");
        }
        add(reloff, self.nreloc * RELOC_SIZE, "relocations end")
    }

    /// The whole file with `__TEXT` at file offset `text_off`.
    fn assemble<'h>(&self, h: &'h Hwx, l: &Layout, text_off: u64) -> Result<HwxPieces<'h>, CodegenError> {
        let (symoff, stroff, reloff) = self.offsets()?;
        let reloff = if self.nreloc == 0 { 0 } else { reloff };
        let ncmds = 3 + self.middle.len() as u64;
        let const_off = add(text_off, l.const_rel, "__const file offset")?;
        let mut out = Output::with_capacity(usize::try_from(const_off).unwrap_or(0));
        out.bytes(&commands::header(h.cpu_subtype, ncmds, self.sizeofcmds())?);
        out.bytes(&commands::segment(&pagezero())?);
        out.bytes(&commands::segment(&text_segment(h, l, text_off, reloff)?)?);
        self.middle.iter().for_each(|c| out.bytes(c));
        let nsyms = self.tables.count;
        out.bytes(&commands::symtab(symoff, nsyms, stroff, len64(&self.tables.strings))?);
        out.bytes(&self.tables.nlist);
        out.bytes(&self.tables.strings);
        if self.nreloc > 0 {
            out.pad_to(reloff, "string table")?;
            commands::relocations(&mut out, &h.relocations)?;
        }
        out.pad_to(text_off, "header part")?;
        out.bytes(&h.text);
        out.pad_to(const_off, "__text")?;
        let end = add(text_off, l.text_seg_size, "file size")?;
        let tail = end.checked_sub(add(const_off, len64(&h.consts), "__const end")?);
        let tail = tail
            .and_then(|t| usize::try_from(t).ok())
            .ok_or_else(|| CodegenError::Invalid(format!("__const ends past the end of __TEXT ({end:#x})")))?;
        Ok(HwxPieces { head: out.finish(), consts: &h.consts, tail })
    }
}

/// The tensors in flavor-3 thread order, checking that `state_order` is a permutation.
fn state_order(h: &Hwx) -> Result<Vec<&BoundTensor>, CodegenError> {
    if h.state_order.is_empty() {
        return Ok(h.tensors.iter().collect());
    }
    let mut seen = vec![false; h.tensors.len()];
    let mut out = Vec::new();
    for &i in &h.state_order {
        match (h.tensors.get(i), seen.get_mut(i)) {
            (Some(t), Some(s)) if !*s => {
                *s = true;
                out.push(t);
            }
            _ => return Err(not_permutation(h)),
        }
    }
    if out.len() != h.tensors.len() {
        return Err(not_permutation(h));
    }
    Ok(out)
}

/// The error for a `state_order` that is not a permutation of the tensors.
fn not_permutation(h: &Hwx) -> CodegenError {
    CodegenError::Invalid(format!(
        "state_order {:?} is not a permutation of the {} tensors",
        h.state_order,
        h.tensors.len()
    ))
}

/// Element `i` of a per-tensor list.
fn at(list: &[u64], i: usize) -> Result<u64, CodegenError> {
    list.get(i).copied().ok_or_else(|| CodegenError::Invalid(format!("no layout for tensor {i}")))
}

/// `__PAGEZERO`: 0x4000 bytes of unmapped vm at 0.
fn pagezero() -> SegmentSpec<'static> {
    SegmentSpec {
        name: "__PAGEZERO",
        vmaddr: 0,
        vmsize: PAGE,
        fileoff: 0,
        filesize: 0,
        prot: 0,
        flags: SG_NORELOC,
        sections: Vec::new(),
    }
}

/// `__TEXT` with `__text` (the TDs) and `__const` (weights).
fn text_segment(h: &Hwx, l: &Layout, text_off: u64, reloff: u64) -> Result<SegmentSpec<'static>, CodegenError> {
    let relocated = !h.relocations.is_empty();
    let text = SectionSpec {
        name: "__text",
        segment: "__TEXT",
        addr: TEXT_VMADDR,
        size: len64(&h.text),
        offset: text_off,
        align: PAGE_ALIGN_LOG2,
        reloff,
        nreloc: h.relocations.len() as u64,
        flags: TEXT_FLAGS | if relocated { S_ATTR_LOC_RELOC } else { 0 },
    };
    let consts = SectionSpec {
        name: "__const",
        segment: "__TEXT",
        addr: l.const_addr,
        size: len64(&h.consts),
        offset: add(text_off, l.const_rel, "__const file offset")?,
        align: CONST_ALIGN_LOG2,
        reloff: 0,
        nreloc: 0,
        flags: CONST_FLAGS,
    };
    Ok(SegmentSpec {
        name: "__TEXT",
        vmaddr: TEXT_VMADDR,
        vmsize: l.text_seg_size,
        fileoff: text_off,
        filesize: l.text_seg_size,
        prot: 5,
        flags: if relocated { 0 } else { SG_NORELOC },
        sections: vec![text, consts],
    })
}

/// The segment of a tensor: no file bytes, one section. Inputs and outputs get an
/// `__FVMLIB` segment (as in every reference file), intermediates a `__DATA,__bss` one
/// (see the module documentation for the evidence).
fn tensor_segment(role: TensorRole, section_size: u64, addr: u64, vmsize: u64) -> SegmentSpec<'static> {
    let (seg, sect, prot, seg_flags, flags) = match role {
        TensorRole::Input => ("__FVMLIB", "__const", 1, FVMLIB_SEGMENT_FLAGS, INPUT_FLAGS),
        TensorRole::Output => ("__FVMLIB", "__data", 2, FVMLIB_SEGMENT_FLAGS, OUTPUT_FLAGS),
        TensorRole::Intermediate => {
            (INTERMEDIATE_SEGMENT, INTERMEDIATE_SECTION, INTERMEDIATE_PROT, SG_NORELOC, INTERMEDIATE_FLAGS)
        }
    };
    SegmentSpec {
        name: seg,
        vmaddr: addr,
        vmsize,
        fileoff: 0,
        filesize: 0,
        prot,
        flags: seg_flags,
        sections: vec![SectionSpec {
            name: sect,
            segment: seg,
            addr,
            size: section_size,
            offset: 0,
            align: PAGE_ALIGN_LOG2,
            reloff: 0,
            nreloc: 0,
            flags,
        }],
    }
}
