//! Reading an input of either format: `.hwx` when it starts with the `0xBEEFFACE`
//! magic, `.anec` otherwise.

use anec_codegen::hwx::file::HWX_MAGIC;
use anec_codegen::{parse_hwx, read_anec, AnecFile, HwxFile};

use crate::ToolError;

/// A program read at the structure level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Program {
    /// An `.hwx` file as stored.
    Hwx(HwxFile),
    /// An `.anec` file.
    Anec(Box<AnecFile>),
}

impl Program {
    /// Detects the format of `bytes` and reads them.
    pub fn read(bytes: &[u8]) -> Result<Self, ToolError> {
        if is_hwx(bytes) {
            parse_hwx(bytes).map(Self::Hwx).map_err(ToolError::Hwx)
        } else {
            read_anec(bytes).map(|a| Self::Anec(Box::new(a))).map_err(ToolError::Anec)
        }
    }

    /// The format name (`hwx` or `anec`).
    pub fn format(&self) -> &'static str {
        match self {
            Self::Hwx(_) => "hwx",
            Self::Anec(_) => "anec",
        }
    }

    /// The weights: `__TEXT,__const` of an `.hwx`, the data after the TDs of an `.anec`.
    pub fn consts(&self) -> &[u8] {
        match self {
            Self::Hwx(f) => &f.consts,
            Self::Anec(a) => &a.consts,
        }
    }
}

/// True when `bytes` starts with the little-endian `.hwx` magic.
pub(crate) fn is_hwx(bytes: &[u8]) -> bool {
    bytes.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes) == Some(HWX_MAGIC)
}
