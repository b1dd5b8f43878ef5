//! Reads `.hwx` files: [`parse_hwx`] gives the structure as stored ([`HwxFile`]), and
//! [`read_hwx`] turns it back into the content model [`Hwx`] that `write_hwx` lays out.
//!
//! Malformed input (truncated, wrong magic, offsets or counts past the end) is an error
//! naming the structure and offset; no input makes these functions panic. [`read_hwx`]
//! also refuses what [`Hwx`] cannot hold (unknown non-zero thread words, a second tensor
//! name that differs from the first, ...), so nothing is dropped silently.
//! [`check_canonical`] goes further: it fails unless writing the content back gives the
//! same bytes.

use super::commands::{relocation_from, FVMLIB_NAME_OFFSET, RELOC_SIZE, SECTION_SIZE, SEGMENT_SIZE};
use super::file::{
    CommandHeader, HwxFile, Ident, LoadCommand, LoadFvmlib, Section, Segment, Symbol, Symtab, Thread, HEADER_SIZE,
    HWX_MAGIC, LC_IDENT, LC_LOADFVMLIB, LC_SEGMENT_64, LC_SYMTAB, LC_THREAD,
};
use super::model::{BoundTensor, ConstSymbol, Hwx, TensorRole};
use super::symtab::{CONST_SECTION, NLIST_SIZE, N_SECT_EXT};
use super::thread::{self, ProgramState, TensorState, FLAVOR_PROGRAM, FLAVOR_TENSOR};
use super::writer::{write_hwx, INTERMEDIATE_PROT, INTERMEDIATE_SECTION, INTERMEDIATE_SEGMENT};
use crate::bytes::{add, Input};
use crate::CodegenError;

/// Parses the structure of an `.hwx` file.
///
/// # Errors
/// A wrong magic, a structure past the end of the input or of its load command, a
/// string without NUL or not UTF-8.
pub fn parse_hwx(bytes: &[u8]) -> Result<HwxFile, CodegenError> {
    parse(bytes, true)
}

/// [`parse_hwx`] without copying `__const` out of the input (`consts` is left empty; the
/// section's place is in its load command): for a reader that keeps the input's bytes.
pub fn parse_hwx_structure(bytes: &[u8]) -> Result<HwxFile, CodegenError> {
    parse(bytes, false)
}

fn parse(bytes: &[u8], with_consts: bool) -> Result<HwxFile, CodegenError> {
    let inp = Input::new(bytes);
    let magic = inp.u32(0, "header magic")?;
    if magic != HWX_MAGIC {
        return Err(CodegenError::bad("magic", 0, magic.into(), "0xbeefface"));
    }
    let word = |i: u64| inp.u32(4 * i, "header");
    let (ncmds, sizeofcmds) = (word(4)?, word(5)?);
    let load_commands = parse_commands(inp, ncmds, sizeofcmds)?;
    let mut file = HwxFile {
        magic,
        cpu_type: word(1)?,
        cpu_subtype: word(2)?,
        file_type: word(3)?,
        ncmds,
        sizeofcmds,
        flags: word(6)?,
        reserved: word(7)?,
        load_commands,
        text: Vec::new(),
        consts: Vec::new(),
    };
    file.text = section_bytes(inp, file.section("__TEXT", "__text"))?;
    let consts = file.section("__TEXT", "__const");
    if with_consts {
        file.consts = section_bytes(inp, consts)?;
    } else if let Some(c) = consts {
        inp.slice(c.offset.into(), c.size, &format!("section {}", c.name))?;
    }
    Ok(file)
}

/// The file bytes of a section, or nothing if it is absent.
fn section_bytes(inp: Input<'_>, s: Option<&Section>) -> Result<Vec<u8>, CodegenError> {
    match s {
        Some(s) => Ok(inp.slice(s.offset.into(), s.size, &format!("section {}", s.name))?.to_vec()),
        None => Ok(Vec::new()),
    }
}

/// Parses `ncmds` commands, which must fit in the `sizeofcmds` bytes after the header.
fn parse_commands(inp: Input<'_>, ncmds: u32, sizeofcmds: u32) -> Result<Vec<LoadCommand>, CodegenError> {
    let end = add(HEADER_SIZE, sizeofcmds.into(), "end of load commands")?;
    inp.slice(HEADER_SIZE, sizeofcmds.into(), "load commands")?;
    let mut offset = HEADER_SIZE;
    let mut out = Vec::new();
    for _ in 0..ncmds {
        let header = CommandHeader {
            offset,
            cmd: inp.u32(offset, "load command cmd")?,
            cmdsize: inp.u32(offset + 4, "load command cmdsize")?,
        };
        let next = offset + u64::from(header.cmdsize);
        if header.cmdsize < 8 || next > end {
            return Err(CodegenError::bad(
                "load command cmdsize",
                offset + 4,
                header.cmdsize.into(),
                format!("at least 8 and ending by {end:#x}, the end of sizeofcmds"),
            ));
        }
        out.push(parse_command(inp, header)?);
        offset = next;
    }
    Ok(out)
}

/// Parses one command according to its `cmd`.
fn parse_command(inp: Input<'_>, h: CommandHeader) -> Result<LoadCommand, CodegenError> {
    Ok(match h.cmd {
        LC_SEGMENT_64 => LoadCommand::Segment(parse_segment(inp, h)?),
        LC_LOADFVMLIB => LoadCommand::LoadFvmlib(parse_fvmlib(inp, h)?),
        LC_THREAD => LoadCommand::Thread(parse_thread(inp, h)?),
        LC_IDENT => LoadCommand::Ident(Ident { header: h, text: command_cstr(inp, h, 8, "LC_IDENT")? }),
        LC_SYMTAB => LoadCommand::Symtab(parse_symtab(inp, h)?),
        _ => LoadCommand::Other {
            header: h,
            data: inp.slice(h.offset + 8, u64::from(h.cmdsize) - 8, "load command")?.to_vec(),
        },
    })
}

/// The NUL-terminated string at `at` inside command `h`.
fn command_cstr(inp: Input<'_>, h: CommandHeader, at: u64, what: &str) -> Result<String, CodegenError> {
    let end = h.offset + u64::from(h.cmdsize);
    inp.cstr(h.offset + at, end, what)
}

/// Requires command `h` to be at least `size` bytes.
fn need(h: CommandHeader, size: u64, what: &str) -> Result<(), CodegenError> {
    if u64::from(h.cmdsize) < size {
        return Err(CodegenError::bad(
            format!("{what} cmdsize"),
            h.offset + 4,
            h.cmdsize.into(),
            format!("at least {size:#x}"),
        ));
    }
    Ok(())
}

/// Parses `LC_SEGMENT_64` and its sections.
fn parse_segment(inp: Input<'_>, h: CommandHeader) -> Result<Segment, CodegenError> {
    need(h, SEGMENT_SIZE, "LC_SEGMENT_64")?;
    let o = h.offset;
    let nsects = inp.u32(o + 64, "nsects")?;
    need(h, SEGMENT_SIZE + SECTION_SIZE * u64::from(nsects), "LC_SEGMENT_64 with its sections")?;
    let sections = (0..u64::from(nsects))
        .map(|i| parse_section(inp, o + SEGMENT_SIZE + SECTION_SIZE * i))
        .collect::<Result<_, _>>()?;
    Ok(Segment {
        header: h,
        name: inp.name16(o + 8, "segname")?,
        vmaddr: inp.u64(o + 24, "vmaddr")?,
        vmsize: inp.u64(o + 32, "vmsize")?,
        fileoff: inp.u64(o + 40, "fileoff")?,
        filesize: inp.u64(o + 48, "filesize")?,
        maxprot: inp.u32(o + 56, "maxprot")?,
        initprot: inp.u32(o + 60, "initprot")?,
        nsects,
        flags: inp.u32(o + 68, "segment flags")?,
        sections,
    })
}

/// Parses one `section_64` at file offset `o`, with its relocations.
fn parse_section(inp: Input<'_>, o: u64) -> Result<Section, CodegenError> {
    let (reloff, nreloc) = (inp.u32(o + 56, "reloff")?, inp.u32(o + 60, "nreloc")?);
    let table = match nreloc {
        0 => &[][..],
        n => inp.slice(reloff.into(), RELOC_SIZE * u64::from(n), "relocation entries")?,
    };
    let relocations = table
        .chunks_exact(8)
        .map(|e| {
            let word = |r: std::ops::Range<usize>| {
                e.get(r).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes).unwrap_or_default()
            };
            relocation_from(word(0..4), word(4..8))
        })
        .collect();
    Ok(Section {
        name: inp.name16(o, "sectname")?,
        segment: inp.name16(o + 16, "section segname")?,
        addr: inp.u64(o + 32, "section addr")?,
        size: inp.u64(o + 40, "section size")?,
        offset: inp.u32(o + 48, "section offset")?,
        align: inp.u32(o + 52, "section align")?,
        reloff,
        nreloc,
        flags: inp.u32(o + 64, "section flags")?,
        reserved: [
            inp.u32(o + 68, "section reserved1")?,
            inp.u32(o + 72, "section reserved2")?,
            inp.u32(o + 76, "section reserved3")?,
        ],
        relocations,
    })
}

/// Parses `LC_LOADFVMLIB`.
fn parse_fvmlib(inp: Input<'_>, h: CommandHeader) -> Result<LoadFvmlib, CodegenError> {
    need(h, u64::from(FVMLIB_NAME_OFFSET), "LC_LOADFVMLIB")?;
    let name_offset = inp.u32(h.offset + 8, "LC_LOADFVMLIB name offset")?;
    Ok(LoadFvmlib {
        header: h,
        name_offset,
        name: command_cstr(inp, h, name_offset.into(), "LC_LOADFVMLIB name")?,
        minor_version: inp.u32(h.offset + 12, "LC_LOADFVMLIB minor_version")?,
        header_addr: inp.u32(h.offset + 16, "LC_LOADFVMLIB header_addr")?,
    })
}

/// Parses `LC_THREAD`: flavor, count, the state words and the tail bytes.
fn parse_thread(inp: Input<'_>, h: CommandHeader) -> Result<Thread, CodegenError> {
    need(h, 16, "LC_THREAD")?;
    let count = inp.u32(h.offset + 12, "LC_THREAD count")?;
    let state_end = 16 + 4 * u64::from(count);
    need(h, state_end, "LC_THREAD with its state")?;
    let state = inp.slice(h.offset + 16, state_end - 16, "thread state")?;
    let words = state.chunks_exact(4).map(|w| w.try_into().map(u32::from_le_bytes).unwrap_or_default()).collect();
    let tail_len = u64::from(h.cmdsize) - state_end;
    Ok(Thread {
        header: h,
        flavor: inp.u32(h.offset + 8, "LC_THREAD flavor")?,
        count,
        words,
        tail: inp.slice(h.offset + state_end, tail_len, "thread strings")?.to_vec(),
    })
}

/// Parses `LC_SYMTAB` and its symbols.
fn parse_symtab(inp: Input<'_>, h: CommandHeader) -> Result<Symtab, CodegenError> {
    need(h, 24, "LC_SYMTAB")?;
    let field = |i: u64| inp.u32(h.offset + 8 + 4 * i, "LC_SYMTAB");
    let (symoff, nsyms, stroff, strsize) = (field(0)?, field(1)?, field(2)?, field(3)?);
    inp.slice(symoff.into(), NLIST_SIZE * u64::from(nsyms), "symbol table")?;
    let str_end = add(stroff.into(), strsize.into(), "string table end")?;
    inp.slice(stroff.into(), strsize.into(), "string table")?;
    let symbols = (0..u64::from(nsyms))
        .map(|i| parse_symbol(inp, u64::from(symoff) + NLIST_SIZE * i, stroff.into(), str_end))
        .collect::<Result<_, _>>()?;
    Ok(Symtab { header: h, symoff, nsyms, stroff, strsize, symbols })
}

/// Parses one `nlist_64` at `o`, resolving its name in the string table.
fn parse_symbol(inp: Input<'_>, o: u64, stroff: u64, str_end: u64) -> Result<Symbol, CodegenError> {
    let strx = inp.u32(o, "n_strx")?;
    let at = stroff + u64::from(strx);
    if at >= str_end {
        return Err(CodegenError::bad("n_strx", o, strx.into(), "an index inside the string table"));
    }
    Ok(Symbol {
        strx,
        name: inp.cstr(at, str_end, "symbol name")?,
        n_type: inp.u8(o + 4, "n_type")?,
        sect: inp.u8(o + 5, "n_sect")?,
        desc: inp.u16(o + 6, "n_desc")?,
        value: inp.u64(o + 8, "n_value")?,
    })
}

/// Reads an `.hwx` file into the content model.
///
/// # Errors
/// What [`parse_hwx`] rejects, a missing structure (`__TEXT` sections, thread,
/// `LC_IDENT`, `LC_SYMTAB`), or content the model cannot hold
/// ([`CodegenError::Unsupported`]).
pub fn read_hwx(bytes: &[u8]) -> Result<Hwx, CodegenError> {
    let mut f = parse_hwx(bytes)?;
    let program = single_program(&f)?;
    let const_addr = f.section("__TEXT", "__const").map(|s| s.addr).ok_or_else(|| missing("__TEXT,__const"))?;
    let text = f.section("__TEXT", "__text").ok_or_else(|| missing("__TEXT,__text"))?;
    let relocations = text.relocations.clone();
    let (tensors, state_order) = read_tensors(&f, &program)?;
    let const_symbols = read_const_symbols(&f, const_addr)?;
    let ident = f.ident().map(|i| i.text.clone()).ok_or_else(|| missing("LC_IDENT"))?;
    Ok(Hwx {
        cpu_subtype: f.cpu_subtype,
        text: std::mem::take(&mut f.text),
        consts: std::mem::take(&mut f.consts).into(),
        td_count: program.td_count,
        td_words: program.td_words,
        state_850: program.word_850,
        state_858: program.word_858,
        network: program.name.clone(),
        tensors,
        state_order,
        const_symbols,
        ident,
        relocations,
        task_layers: Vec::new(),
    })
}

/// The bound tensors of a parsed file, in segment order (what [`read_hwx`] gives as
/// `tensors`, without copying the sections again).
pub fn bound_tensors(f: &HwxFile) -> Result<Vec<crate::BoundTensor>, CodegenError> {
    let program = single_program(f)?;
    Ok(read_tensors(f, &program)?.0)
}

/// Reads `bytes` and fails unless writing the content back reproduces them exactly.
///
/// # Errors
/// What [`read_hwx`] and [`write_hwx`] reject, or [`CodegenError::NotCanonical`] with
/// the first differing offset.
pub fn check_canonical(bytes: &[u8]) -> Result<Hwx, CodegenError> {
    let h = read_hwx(bytes)?;
    let again = write_hwx(&h)?;
    if again == bytes {
        return Ok(h);
    }
    let i = bytes.iter().zip(&again).position(|(a, b)| a != b).unwrap_or(bytes.len().min(again.len()));
    Err(CodegenError::NotCanonical {
        offset: i as u64,
        found: bytes.get(i).copied().unwrap_or(0),
        expected: again.get(i).map_or_else(|| "end of file".into(), |b| format!("{b:#04x}")),
    })
}

/// The error for a structure `read_hwx` needs but the file lacks.
fn missing(what: &str) -> CodegenError {
    CodegenError::Malformed(format!("no {what}"))
}

/// The one flavor-1 thread, decoded and checked for words the model cannot hold.
fn single_program(f: &HwxFile) -> Result<ProgramState, CodegenError> {
    let mut programs = f.threads().filter(|t| t.flavor == FLAVOR_PROGRAM);
    let t = programs.next().ok_or_else(|| missing("flavor-1 LC_THREAD"))?;
    if programs.next().is_some() {
        return Err(CodegenError::Unsupported("more than one flavor-1 LC_THREAD".into()));
    }
    let p = thread::decode_program(t)?;
    if p.word_824 != thread::PROGRAM_WORD_824 || !p.other_words.is_empty() {
        return Err(CodegenError::Unsupported(format!(
            "flavor-1 thread at {:#x} has words the model does not hold: +0x824 = {:#x}, others {:x?}",
            t.header.offset, p.word_824, p.other_words
        )));
    }
    Ok(p)
}

/// The bound tensors and the flavor-3 thread order. Inputs and outputs are the
/// `__FVMLIB` segments, matched in order with the `LC_LOADFVMLIB`s that name them;
/// intermediates are the `__DATA` segments, named by the symbol at their address (see
/// `writer` for this inferred layout). Flavor-3 threads are matched to tensors by name.
fn read_tensors(f: &HwxFile, p: &ProgramState) -> Result<(Vec<BoundTensor>, Vec<usize>), CodegenError> {
    let fvmlib: Vec<_> = f.segments().filter(|s| s.name == "__FVMLIB").collect();
    let intermediate: Vec<_> = f.segments().filter(|s| s.name == INTERMEDIATE_SEGMENT).collect();
    let libs: Vec<_> = f.fvmlibs().collect();
    let states =
        f.threads().filter(|t| t.flavor == FLAVOR_TENSOR).map(thread::decode_tensor).collect::<Result<Vec<_>, _>>()?;
    if libs.len() != fvmlib.len() || states.len() != fvmlib.len() + intermediate.len() {
        return Err(CodegenError::Unsupported(format!(
            "{} __FVMLIB segments, {} LC_LOADFVMLIB, {} {INTERMEDIATE_SEGMENT} segments, {} flavor-3 threads: \
             expected one binding per __FVMLIB segment and one thread per segment",
            fvmlib.len(),
            libs.len(),
            intermediate.len(),
            states.len()
        )));
    }
    let mut bound = Vec::new();
    for (seg, lib) in fvmlib.iter().zip(&libs) {
        if u64::from(lib.header_addr) != seg.vmaddr {
            return Err(CodegenError::Unsupported(format!(
                "LC_LOADFVMLIB {:?} at {:#x} binds {:#x}, but the matching __FVMLIB segment is at {:#x}",
                lib.name, lib.header.offset, lib.header_addr, seg.vmaddr
            )));
        }
        bound.push((*seg, lib.name.clone()));
    }
    for seg in intermediate {
        bound.push((seg, intermediate_name(f, seg)?));
    }
    let order = states
        .iter()
        .map(|st| {
            let mut hits = bound.iter().enumerate().filter(|(_, (_, name))| *name == st.name);
            match (hits.next(), hits.next()) {
                (Some((i, _)), None) => Ok(i),
                _ => Err(CodegenError::Unsupported(format!(
                    "flavor-3 thread of {:?} matches no single bound tensor",
                    st.name
                ))),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(k, &i)| k != i) {
        return Err(CodegenError::Unsupported(format!("flavor-3 threads {order:?} do not name each tensor once")));
    }
    let tensors = bound
        .iter()
        .enumerate()
        .map(|(i, (seg, name))| {
            let k = order.iter().position(|&o| o == i).unwrap_or(i);
            let st = states.get(k).ok_or_else(|| missing("flavor-3 thread"))?;
            read_tensor(seg, name, st, p)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let identity = order.iter().enumerate().all(|(k, &i)| k == i);
    Ok((tensors, if identity { Vec::new() } else { order }))
}

/// The name of the intermediate whose segment is `seg`: the `N_SECT|N_EXT` symbol defined
/// in its section at its address.
fn intermediate_name(f: &HwxFile, seg: &Segment) -> Result<String, CodegenError> {
    let mut number = 0u64;
    for s in f.segments() {
        if s.header.offset == seg.header.offset {
            break;
        }
        number += s.sections.len() as u64;
    }
    let sect = number + 1;
    let symtab = f.symtab().ok_or_else(|| missing("LC_SYMTAB"))?;
    let mut hits =
        symtab.symbols.iter().filter(|s| s.n_type == N_SECT_EXT && u64::from(s.sect) == sect && s.value == seg.vmaddr);
    match (hits.next(), hits.next()) {
        (Some(s), None) => Ok(s.name.clone()),
        _ => Err(CodegenError::Unsupported(format!(
            "{INTERMEDIATE_SEGMENT} segment at {:#x} (section {sect}, address {:#x}) is named by no single symbol",
            seg.header.offset, seg.vmaddr
        ))),
    }
}

/// One bound tensor from its segment, its name and its thread state.
fn read_tensor(seg: &Segment, name: &str, st: &TensorState, p: &ProgramState) -> Result<BoundTensor, CodegenError> {
    let at = seg.header.offset;
    let sect = match seg.sections.as_slice() {
        [s] => s,
        _ => return Err(CodegenError::bad(format!("{} nsects", seg.name), at + 64, seg.nsects.into(), "1")),
    };
    let role = role_of(seg)?;
    check_tensor_state(st, name, &p.name, role)?;
    Ok(BoundTensor {
        name: name.to_string(),
        role,
        bar: bar_of(p, seg.vmaddr, name)?,
        dtype_code: st.dtype,
        dims: st.dims.map(u64::from),
        strides: st.strides,
        section_size: sect.size,
        state_size: st.state_size,
    })
}

/// The role a tensor segment's name and protection give: `__FVMLIB` r = input,
/// `__FVMLIB` w = output, `__DATA` rw = intermediate.
fn role_of(seg: &Segment) -> Result<TensorRole, CodegenError> {
    match (seg.name.as_str(), seg.initprot) {
        ("__FVMLIB", 1) => Ok(TensorRole::Input),
        ("__FVMLIB", 2) => Ok(TensorRole::Output),
        (INTERMEDIATE_SEGMENT, INTERMEDIATE_PROT) => Ok(TensorRole::Intermediate),
        ("__FVMLIB", 3) => Err(CodegenError::Unsupported(format!(
            "__FVMLIB segment at {:#x} with protection 3: intermediates are read as \
             {INTERMEDIATE_SEGMENT},{INTERMEDIATE_SECTION} segments",
            seg.header.offset
        ))),
        (name, other) => Err(CodegenError::bad(
            format!("{name} initprot"),
            seg.header.offset + 60,
            other.into(),
            "1 or 2 for __FVMLIB, 3 for __DATA",
        )),
    }
}

/// The BAR index (2..32) holding `addr`.
fn bar_of(p: &ProgramState, addr: u64, name: &str) -> Result<u8, CodegenError> {
    (2u8..)
        .zip(p.bars.iter().skip(2))
        .find(|&(_, &a)| a == addr)
        .map(|(i, _)| i)
        .ok_or_else(|| CodegenError::Malformed(format!("tensor {name:?} at {addr:#x} is in no BAR")))
}

/// Refuses a flavor-3 state holding what [`BoundTensor`] cannot, or a role word other
/// than the one the segment's role gives.
fn check_tensor_state(st: &TensorState, name: &str, network: &str, role: TensorRole) -> Result<(), CodegenError> {
    if st.role != thread::role_word(role) {
        return Err(CodegenError::Unsupported(format!(
            "flavor-3 thread of {name:?} has role word {} but its segment makes it {role:?} ({})",
            st.role,
            thread::role_word(role)
        )));
    }
    let fixed = st.word_10 == thread::TENSOR_WORD_10 && st.word_78 == thread::TENSOR_WORD_78;
    if !fixed || !st.other_words.is_empty() {
        return Err(CodegenError::Unsupported(format!(
            "flavor-3 thread of {name:?} has words the model does not hold: +0x10 = {:#x}, \
             +0x78 = {:#x}, others {:x?}",
            st.word_10, st.word_78, st.other_words
        )));
    }
    if st.name != name || st.name2 != name || st.network != network {
        return Err(CodegenError::Unsupported(format!(
            "flavor-3 names ({:?}, {:?}, network {:?}) differ from the binding {name:?} / network {network:?}",
            st.name, st.name2, st.network
        )));
    }
    Ok(())
}

/// The `__const` symbols (defined in section 2), as offsets into `__const`.
fn read_const_symbols(f: &HwxFile, const_addr: u64) -> Result<Vec<ConstSymbol>, CodegenError> {
    let symtab = f.symtab().ok_or_else(|| missing("LC_SYMTAB"))?;
    symtab
        .symbols
        .iter()
        .filter(|s| s.n_type == N_SECT_EXT && s.sect == CONST_SECTION)
        .map(|s| {
            let offset = s.value.checked_sub(const_addr).ok_or_else(|| {
                CodegenError::Malformed(format!("symbol {:?} at {:#x} is below __const", s.name, s.value))
            })?;
            Ok(ConstSymbol { name: s.name.clone(), offset })
        })
        .collect()
}
