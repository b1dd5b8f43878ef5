//! The content of an `.hwx` file, independent of its byte layout.
//!
//! The backend fills a [`Hwx`]; `writer` lays it out exactly as Apple's compiler v4.2.1
//! does (see `docs/formats/hwx.md`), and `reader` parses a file back into the same struct.
//! Everything the layout derives (load-command sizes, virtual addresses, file offsets, the
//! BAR table, string offsets) is computed, not stored.

/// Role of a bound tensor; decides its segment, protection and section name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorRole {
    /// Program input: segment `__FVMLIB`, section `__const`, protection r (1/1), an
    /// `LC_LOADFVMLIB` binding, flavor-3 kind 1.
    Input,
    /// Program output: segment `__FVMLIB`, section `__data`, protection w (2/2), an
    /// `LC_LOADFVMLIB` binding, flavor-3 kind 2.
    Output,
    /// Intermediate buffer, written by one TD and read by a later one. No v4.2.1
    /// reference file has one; the layout is inferred (`docs/formats/hwx.md`):
    /// segment `__DATA`, section `__bss`, protection rw (3/3), segment flags 4, on the page
    /// after the previous tensor (as eiln/anecc reads them), no `LC_LOADFVMLIB` and no
    /// stabs string, a symbol and a flavor-3 thread of kind 3. Intermediates must follow
    /// every input and output in [`Hwx::tensors`]. The first goes to BAR 3 in the files
    /// eiln/anecc converts (`tiles[3]`); the writer accepts any free BAR in 2..32.
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
    /// extent up to the last element for outputs, as Apple writes them (no reference for
    /// intermediates: the writer stores what it is given).
    pub state_size: u64,
}

/// A symbol naming a chunk of `__const` (a weight chunk or an activation table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstSymbol {
    /// `K<hash>_ne_<i>` for weight chunks, `K<hash>` for a single table (64 hex digits).
    pub name: String,
    /// Byte offset inside `__const`.
    pub offset: u64,
}

/// A Mach-O relocation entry of the `__text` section (`relocation_info`, 8 bytes).
///
/// v4.2.1 emits one per kernel-DMA coefficient base address that points into `__const`
/// (TD word 0x74 + 4i): the loader adds the address of section `symbol_num` to the 32-bit
/// word at `address`. Apple's entries are `symbol_num = 2` (`__const`), `pc_rel = true`,
/// `length = 2` (4 bytes), `external = false`, `kind = 0`; see [`Relocation::const_word`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Relocation {
    /// `r_address`: byte offset inside `__text` of the patched word.
    pub address: u32,
    /// `r_symbolnum` (24 bits): a 1-based section number when `external` is false.
    pub symbol_num: u32,
    /// `r_pcrel` (bit 24 of the second word).
    pub pc_rel: bool,
    /// `r_length` (2 bits): log2 of the patched width.
    pub length: u8,
    /// `r_extern` (bit 27): `symbol_num` names a symbol rather than a section.
    pub external: bool,
    /// `r_type` (4 bits).
    pub kind: u8,
}

impl Relocation {
    /// The entry v4.2.1 writes for a 32-bit `__text` word holding a `__const` offset.
    pub fn const_word(address: u32) -> Self {
        Self { address, symbol_num: 2, pc_rel: true, length: 2, external: false, kind: 0 }
    }
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
    pub consts: anec_ir::mil::SharedBytes,
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
    /// Bound tensors in segment (and address) order: the inputs and outputs (`__FVMLIB`),
    /// then the intermediates (`__DATA`). An intermediate before an input or output is an
    /// error.
    pub tensors: Vec<BoundTensor>,
    /// Symbols into `__const`, in symbol-table order.
    pub const_symbols: Vec<ConstSymbol>,
    /// The `LC_IDENT` banner text.
    pub ident: String,
    /// Order of the flavor-3 `LC_THREAD` commands, as indices into `tensors` (every
    /// tensor has one, intermediates included); empty means `tensors` order. Added for byte-exact files: in sum.hwx the segments, bindings and
    /// symbols list `image2, image, probs@output` but the threads `image, image2,
    /// probs@output` (name order, or the network's declaration order: one file cannot
    /// tell). The writer requires a permutation.
    pub state_order: Vec<usize>,
    /// Relocations of `__text` (added for byte-exact files: Apple writes them after the
    /// string table and points the `__text` section's `reloff`/`nreloc` at them). When
    /// non-empty, `__text` carries `S_ATTR_LOC_RELOC` (0x100) and `__TEXT` loses
    /// `SG_NORELOC` (4).
    pub relocations: Vec<Relocation>,
    /// The layer each TD of `text` was lowered from, in chain order, for the compiler's
    /// messages about a TD (not stored in the file: empty when read back).
    pub task_layers: Vec<String>,
}

impl Hwx {
    /// The bound tensors in flavor-3 thread order: `state_order`, or `tensors` as they
    /// are when it is empty (indices out of range are skipped; the writer refuses them).
    pub fn tensors_in_state_order(&self) -> Vec<&BoundTensor> {
        if self.state_order.is_empty() {
            return self.tensors.iter().collect();
        }
        self.state_order.iter().filter_map(|&i| self.tensors.get(i)).collect()
    }
}
