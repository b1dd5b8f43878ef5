//! The content of an `.hwx` file, independent of its byte layout.
//!
//! The backend fills a [`Hwx`]; `writer` lays it out exactly as Apple's compiler v4.2.1
//! does (see `docs/formats/hwx.md`), and `reader` parses a file back into the same struct.
//! Everything the layout derives (load-command sizes, virtual addresses, file offsets, the
//! BAR table, string offsets) is computed, not stored.

/// Role of a bound tensor; decides its segment protection and its section name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorRole {
    /// Program input: section `__const`, protection r (1/1), flavor-3 kind 1.
    Input,
    /// Program output: section `__data`, protection w (2/2), flavor-3 kind 2.
    Output,
    /// Intermediate buffer: protection rw (3/3).
    Intermediate,
}

/// One tensor bound through an `__FVMLIB` segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundTensor {
    /// Name as the runtime binds it (`image`, `probs@output`).
    pub name: String,
    /// Input, output or intermediate.
    pub role: TensorRole,
    /// Index of this tensor in the BAR table (TD headers name buffers by this index).
    pub bar: u8,
    /// Element type code of the flavor-3 thread state and the stabs string (5 = fp16).
    pub dtype_code: u32,
    /// Extents N, C, H, W, D.
    pub dims: [u64; 5],
    /// Byte strides of N, C, H, W, D.
    pub strides: [u64; 5],
    /// Section size: the exact byte extent of the buffer (`__FVMLIB` section size).
    pub section_size: u64,
    /// The size word of the flavor-3 state (+0x80): the whole buffer for inputs, the byte
    /// extent up to the last element for outputs, as Apple writes them.
    pub state_size: u64,
}

/// A symbol naming a chunk of `__const` (a weight chunk or an activation table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstSymbol {
    /// `K<sha256>_ne_<i>` for weight chunks, `K<sha256>` for a single table.
    pub name: String,
    /// Byte offset inside `__const`.
    pub offset: u64,
}

/// A whole `.hwx` program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hwx {
    /// Mach-O cpusubtype: 4 = H13.
    pub cpu_subtype: u32,
    /// The `__text` section: the TD chain.
    pub text: Vec<u8>,
    /// The `__const` section: weight chunks and activation tables (exact section size;
    /// Apple writes 0x4000 zero bytes when there is nothing).
    pub consts: Vec<u8>,
    /// Number of TDs in `text`.
    pub td_count: u32,
    /// `td_words` of the flavor-1 state (0x9c for the 0x274-byte H13 TD).
    pub td_words: u32,
    /// Flavor-1 state word at +0x850 (0x11; 7 seen for concat; meaning unknown).
    pub state_850: u32,
    /// Flavor-1 state word at +0x858 (3 or 4; meaning unknown).
    pub state_858: u32,
    /// Procedure / network name (`net`).
    pub network: String,
    /// Bound tensors in `__FVMLIB` segment order.
    pub tensors: Vec<BoundTensor>,
    /// Symbols into `__const`, in symbol-table order.
    pub const_symbols: Vec<ConstSymbol>,
    /// The `LC_IDENT` banner text.
    pub ident: String,
}
