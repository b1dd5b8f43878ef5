//! Reading an input of any of the three formats: `.hwx` when it starts with the
//! `0xBEEFFACE` magic, otherwise `.anec` when its header reads, otherwise `.e5` when the
//! E5 reader accepts it.

use anec_codegen::e5::{root_vtable, E5ProgramT};
use anec_codegen::hwx::file::HWX_MAGIC;
use anec_codegen::{parse_hwx, read_anec, read_e5, AnecFile, CodegenError, HwxFile};

use crate::ToolError;

/// A program read at the structure level.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Program {
    /// An `.hwx` file as stored.
    Hwx(HwxFile),
    /// An `.anec` file.
    Anec(Box<AnecFile>),
    /// An `.e5` dispatch descriptor.
    E5(Box<E5File>),
}

/// An `.e5` file: its content and the root vtable as stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct E5File {
    /// The object-API tree [`read_e5`] gives.
    pub program: E5ProgramT,
    /// The root table's vtable bytes.
    pub root_vtable: Vec<u8>,
}

impl Program {
    /// Detects the format of `bytes` and reads them.
    pub fn read(bytes: &[u8]) -> Result<Self, ToolError> {
        if is_hwx(bytes) {
            return parse_hwx(bytes).map(Self::Hwx).map_err(ToolError::Hwx);
        }
        let anec = match read_anec(bytes) {
            Ok(a) => return Ok(Self::Anec(Box::new(a))),
            Err(e) => e,
        };
        read_e5_file(bytes)
            .map(|f| Self::E5(Box::new(f)))
            .map_err(|e5| ToolError::Unrecognized { anec: Box::new(anec), e5: Box::new(e5) })
    }

    /// The format name (`hwx`, `anec` or `e5`).
    pub fn format(&self) -> &'static str {
        match self {
            Self::Hwx(_) => "hwx",
            Self::Anec(_) => "anec",
            Self::E5(_) => "e5",
        }
    }

    /// The weights: `__TEXT,__const` of an `.hwx`, the data after the TDs of an `.anec`;
    /// an `.e5` has none outside its fields.
    pub fn consts(&self) -> &[u8] {
        match self {
            Self::Hwx(f) => &f.consts,
            Self::Anec(a) => &a.consts,
            Self::E5(_) => &[],
        }
    }
}

/// The content and root vtable of `.e5` bytes.
fn read_e5_file(bytes: &[u8]) -> Result<E5File, CodegenError> {
    let program = read_e5(bytes)?;
    let root_vtable = root_vtable(bytes)?.to_vec();
    Ok(E5File { program, root_vtable })
}

/// True when `bytes` starts with the little-endian `.hwx` magic.
pub(crate) fn is_hwx(bytes: &[u8]) -> bool {
    bytes.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes) == Some(HWX_MAGIC)
}
