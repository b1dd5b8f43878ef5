//! The parsed, structure-level view of an `.hwx` file, for dump tools and the reader.
//!
//! [`HwxFile`] is what `parse_hwx` returns: the header, every load command with its
//! file offset and its fields as stored (nothing derived or checked beyond bounds), the
//! `__text` and `__const` bytes. Thread commands keep their raw state words; the
//! `thread` module names them. The constants here are the numbers v4.2.1 writes.

use super::model::Relocation;

/// `0xBEEFFACE`: the `.hwx` magic (Mach-O 64 uses `0xFEEDFACF`).
pub const HWX_MAGIC: u32 = 0xBEEF_FACE;
/// The Mach-O 64 magic; patching it in lets ordinary Mach-O parsers read an `.hwx`.
pub const MACHO64_MAGIC: u32 = 0xFEED_FACF;
/// Header cputype of every ANE program.
pub const CPU_TYPE_ANE: u32 = 0x80;
/// Header filetype (`MH_EXECUTE`).
pub const FILE_TYPE: u32 = 2;
/// Header flags v4.2.1 writes (`MH_PIE`).
pub const HEADER_FLAGS: u32 = 0x20_0000;
/// Size of the Mach-O 64 header.
pub const HEADER_SIZE: u64 = 32;

/// `LC_SEGMENT_64`.
pub const LC_SEGMENT_64: u32 = 0x19;
/// `LC_SYMTAB`.
pub const LC_SYMTAB: u32 = 0x2;
/// `LC_THREAD`.
pub const LC_THREAD: u32 = 0x4;
/// `LC_LOADFVMLIB`.
pub const LC_LOADFVMLIB: u32 = 0x6;
/// `LC_IDENT`.
pub const LC_IDENT: u32 = 0x8;

/// Page size of the file layout and of every segment's vmsize.
pub const PAGE: u64 = 0x4000;
/// Virtual address of `__TEXT` (and of the first TD).
pub const TEXT_VMADDR: u64 = 0x3000_0000;
/// Alignment of `__const` after `__text`.
pub const CONST_ALIGN: u64 = 0x40;
/// Number of entries of the BAR table.
pub const BAR_COUNT: usize = 32;

/// Where a load command sits and how big it says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandHeader {
    /// File offset of the command.
    pub offset: u64,
    /// `cmd`.
    pub cmd: u32,
    /// `cmdsize`.
    pub cmdsize: u32,
}

/// One section header (`section_64`) with its relocation entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `sectname`.
    pub name: String,
    /// `segname`.
    pub segment: String,
    /// `addr`.
    pub addr: u64,
    /// `size`.
    pub size: u64,
    /// `offset` (file offset; 0 for `__FVMLIB` sections).
    pub offset: u32,
    /// `align` (log2).
    pub align: u32,
    /// `reloff`.
    pub reloff: u32,
    /// `nreloc`.
    pub nreloc: u32,
    /// `flags` (type in the low byte, attributes above).
    pub flags: u32,
    /// `reserved1..3`.
    pub reserved: [u32; 3],
    /// The `nreloc` entries at `reloff`.
    pub relocations: Vec<Relocation>,
}

/// An `LC_SEGMENT_64` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Command position and size.
    pub header: CommandHeader,
    /// `segname`.
    pub name: String,
    /// `vmaddr`.
    pub vmaddr: u64,
    /// `vmsize`.
    pub vmsize: u64,
    /// `fileoff`.
    pub fileoff: u64,
    /// `filesize`.
    pub filesize: u64,
    /// `maxprot`.
    pub maxprot: u32,
    /// `initprot`.
    pub initprot: u32,
    /// `nsects`.
    pub nsects: u32,
    /// `flags`.
    pub flags: u32,
    /// The section headers.
    pub sections: Vec<Section>,
}

/// An `LC_LOADFVMLIB` command: binds a tensor name to a virtual address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFvmlib {
    /// Command position and size.
    pub header: CommandHeader,
    /// Offset of the name inside the command.
    pub name_offset: u32,
    /// The tensor name.
    pub name: String,
    /// `minor_version`.
    pub minor_version: u32,
    /// `header_addr`: the tensor's virtual address.
    pub header_addr: u32,
}

/// An `LC_THREAD` command: one flavor, its state words, and the bytes after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Command position and size.
    pub header: CommandHeader,
    /// `flavor` (1 = program state, 3 = tensor state).
    pub flavor: u32,
    /// `count` of 32-bit state words.
    pub count: u32,
    /// The state words (from command offset 0x10).
    pub words: Vec<u32>,
    /// The bytes after the state (strings and padding), from command offset
    /// `0x10 + 4 * count` to `cmdsize`.
    pub tail: Vec<u8>,
}

/// An `LC_IDENT` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// Command position and size.
    pub header: CommandHeader,
    /// The text up to its first NUL.
    pub text: String,
}

/// One `nlist_64` entry with its name resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// `n_strx`.
    pub strx: u32,
    /// The name at `n_strx`.
    pub name: String,
    /// `n_type`.
    pub n_type: u8,
    /// `n_sect`.
    pub sect: u8,
    /// `n_desc`.
    pub desc: u16,
    /// `n_value`.
    pub value: u64,
}

/// An `LC_SYMTAB` command with its symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symtab {
    /// Command position and size.
    pub header: CommandHeader,
    /// `symoff`.
    pub symoff: u32,
    /// `nsyms`.
    pub nsyms: u32,
    /// `stroff`.
    pub stroff: u32,
    /// `strsize`.
    pub strsize: u32,
    /// The symbols.
    pub symbols: Vec<Symbol>,
}

/// One load command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadCommand {
    /// `LC_SEGMENT_64`.
    Segment(Segment),
    /// `LC_LOADFVMLIB`.
    LoadFvmlib(LoadFvmlib),
    /// `LC_THREAD`.
    Thread(Thread),
    /// `LC_IDENT`.
    Ident(Ident),
    /// `LC_SYMTAB`.
    Symtab(Symtab),
    /// Any other command, kept as raw bytes after `cmd`/`cmdsize`.
    Other {
        /// Command position and size.
        header: CommandHeader,
        /// The command body.
        data: Vec<u8>,
    },
}

impl LoadCommand {
    /// Position, `cmd` and `cmdsize` of the command.
    pub fn header(&self) -> &CommandHeader {
        match self {
            Self::Segment(c) => &c.header,
            Self::LoadFvmlib(c) => &c.header,
            Self::Thread(c) => &c.header,
            Self::Ident(c) => &c.header,
            Self::Symtab(c) => &c.header,
            Self::Other { header, .. } => header,
        }
    }
}

/// A whole `.hwx` file at the structure level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwxFile {
    /// `magic` (0xBEEFFACE).
    pub magic: u32,
    /// `cputype` (0x80).
    pub cpu_type: u32,
    /// `cpusubtype` (4 = H13).
    pub cpu_subtype: u32,
    /// `filetype` (2).
    pub file_type: u32,
    /// `ncmds`.
    pub ncmds: u32,
    /// `sizeofcmds`.
    pub sizeofcmds: u32,
    /// `flags` (0x200000).
    pub flags: u32,
    /// `reserved`.
    pub reserved: u32,
    /// The load commands in file order.
    pub load_commands: Vec<LoadCommand>,
    /// Contents of section `__TEXT,__text` (empty if absent).
    pub text: Vec<u8>,
    /// Contents of section `__TEXT,__const` (empty if absent).
    pub consts: Vec<u8>,
}

impl HwxFile {
    /// The segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.load_commands.iter().filter_map(|c| match c {
            LoadCommand::Segment(s) => Some(s),
            _ => None,
        })
    }

    /// The thread commands, in order.
    pub fn threads(&self) -> impl Iterator<Item = &Thread> {
        self.load_commands.iter().filter_map(|c| match c {
            LoadCommand::Thread(t) => Some(t),
            _ => None,
        })
    }

    /// The `LC_LOADFVMLIB` commands, in order.
    pub fn fvmlibs(&self) -> impl Iterator<Item = &LoadFvmlib> {
        self.load_commands.iter().filter_map(|c| match c {
            LoadCommand::LoadFvmlib(l) => Some(l),
            _ => None,
        })
    }

    /// The first `LC_IDENT`, if any.
    pub fn ident(&self) -> Option<&Ident> {
        self.load_commands.iter().find_map(|c| match c {
            LoadCommand::Ident(i) => Some(i),
            _ => None,
        })
    }

    /// The first `LC_SYMTAB`, if any.
    pub fn symtab(&self) -> Option<&Symtab> {
        self.load_commands.iter().find_map(|c| match c {
            LoadCommand::Symtab(s) => Some(s),
            _ => None,
        })
    }

    /// The section `segment,name`, if present.
    pub fn section(&self, segment: &str, name: &str) -> Option<&Section> {
        self.segments().filter(|s| s.name == segment).flat_map(|s| s.sections.iter()).find(|s| s.name == name)
    }
}
