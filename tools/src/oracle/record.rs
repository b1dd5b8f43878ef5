//! A decoded program of Apple's current compiler, as the corpus of
//! `shared/fixtures/apple-h13-oracles/cases/*.json` records it: the MIL that was compiled,
//! how its weight file was filled, and the program's task headers, register writes,
//! tensor descriptors and constant-section hash. Only the keys the comparison uses are
//! read; numbers written as hex strings (`"0x1f800"`) are parsed here.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::ToolError;

/// One record.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    /// Case name.
    pub case: String,
    /// Family (`binary_runtime`, `convolution`, ...).
    pub family: String,
    /// The MIL program text.
    pub mil: String,
    /// How the weight file was filled (see [`Weights`]).
    pub weights: Weights,
    /// Task count and first-task size.
    pub program_descriptor: ProgramDescriptor,
    /// The tasks.
    pub task_descriptors: Vec<TaskRecord>,
    /// Inputs then outputs.
    pub tensor_descriptors: Vec<TensorRecord>,
    /// The `__TEXT,__const` section's size and hashes.
    pub constant_section: ConstantSection,
}

/// The weights form of a record (README "Weights").
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Weights {
    /// `none` or `BLOBFILE`.
    pub storage: String,
    /// Form A: the one constant's shape.
    #[serde(default)]
    pub shape: Option<Vec<u64>>,
    /// Forms B and C: each constant's shape.
    #[serde(default)]
    pub shapes: Option<Vec<Vec<u64>>>,
    /// Form C: each constant's record offset in Apple's file.
    #[serde(default)]
    pub record_offsets: Option<Vec<u64>>,
    /// Forms A and B: payload bytes after the header.
    #[serde(default)]
    pub payload_bytes: Option<u64>,
    /// `fp16(0x1p-1)`, `distinct`, or the form-C description.
    #[serde(default)]
    pub value: Option<String>,
}

/// Halfword `e` of the weight file the corpus tool wrote for forms A and B (README
/// "Weights"): a 128-byte header (`u32 1, u32 2`; at byte 64 the packed `<IQQ` of
/// 0xDEADBEEF, the payload size and 128), then the fill. Apple's compiler read every
/// constant from byte 0 of that file, so element `e` of each constant is this halfword.
pub fn form_ab_halfword(e: u64, payload: u64, fill: u16) -> u16 {
    let mut header = [0u8; 128];
    header[0..4].copy_from_slice(&1u32.to_le_bytes());
    header[4..8].copy_from_slice(&2u32.to_le_bytes());
    header[64..68].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
    header[68..76].copy_from_slice(&payload.to_le_bytes());
    header[76..84].copy_from_slice(&128u64.to_le_bytes());
    match usize::try_from(e).ok().filter(|&e| e < 64) {
        Some(e) => u16::from_le_bytes([header[2 * e], header[2 * e + 1]]),
        None => fill,
    }
}

/// The program descriptor command.
#[derive(Debug, Clone, Deserialize)]
pub struct ProgramDescriptor {
    /// Number of tasks.
    pub task_count: usize,
    /// Size of task 0 in words, minus one.
    pub task_words_minus_one: u64,
}

/// One task.
#[derive(Debug, Clone, Deserialize)]
pub struct TaskRecord {
    /// Header words (10 or 11), as hex strings.
    pub header_words: Vec<String>,
    /// Register records in stream order.
    pub records: Vec<RegisterRecord>,
    /// Register values by block.
    pub blocks: BTreeMap<String, BlockRecord>,
}

/// One register record.
#[derive(Debug, Clone, Deserialize)]
pub struct RegisterRecord {
    /// Register address (hex string).
    pub address: String,
    /// Number of words.
    pub count: u32,
}

/// The values of one block.
#[derive(Debug, Clone, Deserialize)]
pub struct BlockRecord {
    /// Block name.
    pub name: String,
    /// Register address (hex string) to value (hex string).
    pub words: BTreeMap<String, String>,
}

/// One tensor descriptor.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct TensorRecord {
    /// 1 input, 2 output.
    pub binding: u32,
    /// 5 = fp16.
    pub element_code: u32,
    /// N, C, H, W.
    pub shape: Vec<u64>,
    /// Byte strides of N, C, H, W.
    pub strides: Vec<u64>,
    /// Bytes of one batch (the N stride in every record).
    pub total_bytes: u64,
}

/// The constant section.
#[derive(Debug, Clone, Deserialize)]
pub struct ConstantSection {
    /// Size in bytes.
    pub size: u64,
    /// SHA-256, lower-case hex.
    pub sha256: String,
    /// Non-zero bytes.
    pub nonzero_bytes: u64,
}

/// Parses a `0x...` hex string.
pub fn hex(s: &str) -> Result<u32, ToolError> {
    let digits = s.strip_prefix("0x").unwrap_or(s);
    u32::from_str_radix(digits, 16).map_err(|_| ToolError::Record(format!("'{s}' is not a hex number")))
}

impl Record {
    /// Reads a record from its JSON text.
    pub fn parse(text: &str) -> Result<Record, ToolError> {
        serde_json::from_str(text).map_err(|e| ToolError::Record(e.to_string()))
    }
}

impl TaskRecord {
    /// The header words.
    pub fn header(&self) -> Result<Vec<u32>, ToolError> {
        self.header_words.iter().map(|w| hex(w)).collect()
    }

    /// The register records as (address, count).
    pub fn records(&self) -> Result<Vec<(u32, u32)>, ToolError> {
        self.records.iter().map(|r| Ok((hex(&r.address)?, r.count))).collect()
    }

    /// Every register value written, by address.
    pub fn writes(&self) -> Result<BTreeMap<u32, u32>, ToolError> {
        let mut out = BTreeMap::new();
        for b in self.blocks.values() {
            for (a, v) in &b.words {
                out.insert(hex(a)?, hex(v)?);
            }
        }
        Ok(out)
    }
}
