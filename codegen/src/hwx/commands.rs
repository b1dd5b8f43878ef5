//! Encoders for the generic Mach-O structures of an `.hwx`: header, segments with their
//! sections, `LC_LOADFVMLIB`, `LC_IDENT`, `LC_SYMTAB` and relocation entries.
//!
//! They take the values to write and know nothing about Apple's layout choices (that is
//! `writer`'s job). Every command is padded to a multiple of 8, as v4.2.1 pads them.

use super::file::{
    CPU_TYPE_ANE, FILE_TYPE, HEADER_FLAGS, HWX_MAGIC, LC_IDENT, LC_LOADFVMLIB, LC_SEGMENT_64, LC_SYMTAB,
};
use super::model::Relocation;
use crate::bytes::{fit_u32, string_bytes, Output};
use crate::CodegenError;

/// Size of a `segment_command_64` without its sections.
pub const SEGMENT_SIZE: u64 = 72;
/// Size of one `section_64`.
pub const SECTION_SIZE: u64 = 80;
/// Size of `LC_SYMTAB`.
pub const SYMTAB_SIZE: u64 = 24;
/// Offset of the name inside `LC_LOADFVMLIB`.
pub const FVMLIB_NAME_OFFSET: u32 = 0x14;
/// Size of one relocation entry.
pub const RELOC_SIZE: u64 = 8;

/// The values of one `section_64`.
#[derive(Debug, Clone)]
pub(crate) struct SectionSpec<'a> {
    /// `sectname`.
    pub name: &'a str,
    /// `segname`.
    pub segment: &'a str,
    /// `addr`.
    pub addr: u64,
    /// `size`.
    pub size: u64,
    /// `offset`.
    pub offset: u64,
    /// `align` (log2).
    pub align: u32,
    /// `reloff`.
    pub reloff: u64,
    /// `nreloc`.
    pub nreloc: u64,
    /// `flags`.
    pub flags: u32,
}

/// The values of one `segment_command_64`.
#[derive(Debug, Clone)]
pub(crate) struct SegmentSpec<'a> {
    /// `segname`.
    pub name: &'a str,
    /// `vmaddr`.
    pub vmaddr: u64,
    /// `vmsize`.
    pub vmsize: u64,
    /// `fileoff`.
    pub fileoff: u64,
    /// `filesize`.
    pub filesize: u64,
    /// `maxprot` and `initprot` (always equal in v4.2.1 files).
    pub prot: u32,
    /// `flags`.
    pub flags: u32,
    /// The sections.
    pub sections: Vec<SectionSpec<'a>>,
}

/// The 32-byte Mach-O header.
pub(crate) fn header(cpu_subtype: u32, ncmds: u64, sizeofcmds: u64) -> Result<Vec<u8>, CodegenError> {
    let mut out = Output::new();
    out.u32(HWX_MAGIC);
    out.u32(CPU_TYPE_ANE);
    out.u32(cpu_subtype);
    out.u32(FILE_TYPE);
    out.u32(fit_u32(ncmds, "ncmds")?);
    out.u32(fit_u32(sizeofcmds, "sizeofcmds")?);
    out.u32(HEADER_FLAGS);
    out.u32(0);
    Ok(out.finish())
}

/// An `LC_SEGMENT_64` command with its sections.
pub(crate) fn segment(s: &SegmentSpec<'_>) -> Result<Vec<u8>, CodegenError> {
    let nsects = s.sections.len() as u64;
    let size = SEGMENT_SIZE + SECTION_SIZE * nsects;
    let mut out = Output::new();
    out.u32(LC_SEGMENT_64);
    out.u32(fit_u32(size, "LC_SEGMENT_64 cmdsize")?);
    out.name16(s.name)?;
    out.u64(s.vmaddr);
    out.u64(s.vmsize);
    out.u64(s.fileoff);
    out.u64(s.filesize);
    out.u32(s.prot);
    out.u32(s.prot);
    out.u32(fit_u32(nsects, "nsects")?);
    out.u32(s.flags);
    for sect in &s.sections {
        section(&mut out, sect)?;
    }
    Ok(out.finish())
}

/// One `section_64`.
fn section(out: &mut Output, s: &SectionSpec<'_>) -> Result<(), CodegenError> {
    out.name16(s.name)?;
    out.name16(s.segment)?;
    out.u64(s.addr);
    out.u64(s.size);
    out.u32(fit_u32(s.offset, &format!("section {} file offset", s.name))?);
    out.u32(s.align);
    out.u32(fit_u32(s.reloff, &format!("section {} reloff", s.name))?);
    out.u32(fit_u32(s.nreloc, &format!("section {} nreloc", s.name))?);
    out.u32(s.flags);
    out.zeros(12)
}

/// An `LC_LOADFVMLIB` binding `name` at `addr`.
pub(crate) fn loadfvmlib(name: &str, addr: u64) -> Result<Vec<u8>, CodegenError> {
    let name_bytes = string_bytes(name, "tensor name")?;
    let mut out = Output::new();
    out.u32(LC_LOADFVMLIB);
    out.u32(0);
    out.u32(FVMLIB_NAME_OFFSET);
    out.u32(0);
    out.u32(fit_u32(addr, &format!("LC_LOADFVMLIB header_addr of {name:?}"))?);
    out.bytes(&name_bytes);
    out.u8(0);
    finish(out, "LC_LOADFVMLIB cmdsize")
}

/// An `LC_IDENT` holding `text`.
pub(crate) fn ident(text: &str) -> Result<Vec<u8>, CodegenError> {
    let bytes = string_bytes(text, "ident text")?;
    let mut out = Output::new();
    out.u32(LC_IDENT);
    out.u32(0);
    out.bytes(&bytes);
    out.u8(0);
    finish(out, "LC_IDENT cmdsize")
}

/// An `LC_SYMTAB` command.
pub(crate) fn symtab(symoff: u64, nsyms: u64, stroff: u64, strsize: u64) -> Result<Vec<u8>, CodegenError> {
    let mut out = Output::new();
    out.u32(LC_SYMTAB);
    out.u32(fit_u32(SYMTAB_SIZE, "LC_SYMTAB cmdsize")?);
    out.u32(fit_u32(symoff, "symoff")?);
    out.u32(fit_u32(nsyms, "nsyms")?);
    out.u32(fit_u32(stroff, "stroff")?);
    out.u32(fit_u32(strsize, "strsize")?);
    Ok(out.finish())
}

/// Pads a command to 8 bytes and patches its cmdsize.
fn finish(mut out: Output, what: &str) -> Result<Vec<u8>, CodegenError> {
    out.align(8)?;
    let size = fit_u32(out.len(), what)?;
    let mut bytes = out.finish();
    if let Some(field) = bytes.get_mut(4..8) {
        field.copy_from_slice(&size.to_le_bytes());
    }
    Ok(bytes)
}

/// The second word of a relocation entry, with every field range-checked.
pub(crate) fn relocation_info(r: &Relocation) -> Result<u32, CodegenError> {
    if r.symbol_num >= 1 << 24 {
        return Err(CodegenError::overflow("relocation r_symbolnum", r.symbol_num.into(), 0xFF_FFFF));
    }
    if r.length > 3 {
        return Err(CodegenError::overflow("relocation r_length", r.length.into(), 3));
    }
    if r.kind > 15 {
        return Err(CodegenError::overflow("relocation r_type", r.kind.into(), 15));
    }
    Ok(r.symbol_num
        | u32::from(r.pc_rel) << 24
        | u32::from(r.length) << 25
        | u32::from(r.external) << 27
        | u32::from(r.kind) << 28)
}

/// Decodes the second word of a relocation entry at `address`.
pub(crate) fn relocation_from(address: u32, info: u32) -> Relocation {
    Relocation {
        address,
        symbol_num: info & 0xFF_FFFF,
        pc_rel: info >> 24 & 1 == 1,
        length: (info >> 25 & 3) as u8,
        external: info >> 27 & 1 == 1,
        kind: (info >> 28) as u8,
    }
}

/// Appends the relocation entries of `relocs`.
pub(crate) fn relocations(out: &mut Output, relocs: &[Relocation]) -> Result<(), CodegenError> {
    for r in relocs {
        out.u32(r.address);
        out.u32(relocation_info(r)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn apple_relocation_word() {
        // conv.hwx: 74 00 00 00 02 00 00 05
        let r = Relocation::const_word(0x74);
        assert_eq!(relocation_info(&r).unwrap(), 0x0500_0002);
        assert_eq!(relocation_from(0x74, 0x0500_0002), r);
    }

    #[test]
    fn fvmlib_and_ident_are_padded_to_8() {
        let lib = loadfvmlib("image", 0x3000_8000).unwrap();
        assert_eq!(lib.len(), 0x20);
        assert_eq!(&lib[4..8], &[0x20, 0, 0, 0]);
        assert_eq!(loadfvmlib("probs@output", 0x3000_c000).unwrap().len(), 0x28);
        assert!(loadfvmlib("x", 1 << 32).is_err());
        assert_eq!(ident("1234567").unwrap().len(), 16);
        assert_eq!(ident("12345678").unwrap().len(), 24);
    }
}
