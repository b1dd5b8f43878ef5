//! Apple compiler generations: what differs between the programs of Apple's 2020
//! compiler (`zin_ane_compiler v4.2.1`, the programs of `shared/fixtures/apple-h13/hwx/`)
//! and of its current one (macOS 26, the decoded corpus of
//! `shared/fixtures/apple-h13-oracles/`) for the same network.
//!
//! Both write the same register file; they differ in how a task's register image is
//! serialized (every block in full, or sparse records) and in a few values. Every such
//! difference is a field of [`Generation`], so the encoders read one table of data instead
//! of testing the generation. `docs/conformance.md` lists the evidence of each row.

/// A named generation of Apple's compiler whose programs anec reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compat {
    /// Apple's current compiler (macOS 26): sparse register records. The default.
    #[default]
    Current,
    /// Apple's 2020 compiler v4.2.1: every register block written in full.
    V4_2,
}

impl Compat {
    /// Every generation with its command-line name (`--apple-compat NAME`).
    pub const ALL: [(Compat, &'static str); 2] = [(Compat::Current, "current"), (Compat::V4_2, "4.2")];

    /// The generation called `name` (`current`, `4.2`).
    pub fn from_name(name: &str) -> Option<Compat> {
        Compat::ALL.iter().find(|(_, n)| *n == name).map(|(c, _)| *c)
    }

    /// The generation's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Compat::Current => "current",
            Compat::V4_2 => "4.2",
        }
    }

    /// The generation's data.
    pub fn data(self) -> &'static Generation {
        match self {
            Compat::Current => &CURRENT,
            Compat::V4_2 => &V4_2,
        }
    }
}

/// How a task's register blocks are written into `__text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamForm {
    /// Each of the seven blocks as one record of all its words (the 0x274-byte TD).
    Dense,
    /// Each block as one record, except that a word run listed in [`Generation::omitted`]
    /// is left out (splitting its block into two records) when the task does not use it.
    Sparse,
}

/// A run of register words the sparse form leaves out of a task that does not use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OmittedRun {
    /// What the words are (for documentation and errors).
    pub what: &'static str,
    /// Register address of the first word.
    pub register: u32,
    /// Number of words.
    pub words: u32,
}

/// How inputs and outputs are numbered in the BAR table (BAR 0 is `__text`, 1 `__const`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarOrder {
    /// Outputs from BAR 4 in the network's order, then the inputs; intermediates at BARs
    /// 3, 2, then after the inputs (v4.2.1).
    OutputsThenInputs,
    /// Inputs and outputs together, sorted by name, from BAR 4 (`x, y, z` -> 4, 5, 6);
    /// every intermediate in BAR 3 (the current compiler).
    SortedByName,
}

/// How an NE pass task's ShPref, ShMin and ShMax are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassSharing {
    /// The same three values for every pass task.
    Fixed([u64; 3]),
    /// ShPref = ShMin = 0 and ShMax = min(3, floor(log2 H), floor(log2(256 / row bytes))),
    /// at least 0: the rows of 256 bytes that fit (every NE pass task of the current
    /// corpus that streams one source: 8x8 and 16x16 give 3, 64 wide 1, 128 wide and more
    /// or one row 0).
    ByRows,
}

/// The values that differ between Apple's compiler generations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// The generation.
    pub compat: Compat,
    /// How blocks are serialized.
    pub form: StreamForm,
    /// Word runs the sparse form omits when unused (empty for the dense form).
    pub omitted: &'static [OmittedRun],
    /// BAR numbering of the bound tensors.
    pub bars: BarOrder,
    /// LogEvents bit of the first task (0x408 first, 0x400 middle, 0x422 last, 0x42a for a
    /// single task in the current compiler; v4.2.1's single tasks have 0x422).
    pub log_events_first: u64,
    /// Planar-engine tasks write the idle words of the blocks they do not run: kernel-DMA
    /// cache hints, NE KernelCfg.PalettizedBits 8 and MACCfg bit 20, tile-DMA word 0x1ac,
    /// the destination's ZeroPad bits (v4.2.1 leaves them zero: sum.hwx).
    pub pe_idle_words: bool,
    /// Bytes written as the size of an idle kernel-DMA header stream (0x40, one unit, in
    /// the current compiler; 0 in v4.2.1).
    pub idle_stream_size: u64,
    /// NE pass tasks write KernelFmt fp16 and BinaryPoint 0x1c as convolutions do.
    pub pass_binary_point: bool,
    /// Common.Cfg.AccDoubleBufEn of NE tasks.
    pub acc_double_buffer: bool,
    /// Common.Cfg (ShPref, ShMin, ShMax) of an NE pass task.
    pub pass_shared: PassSharing,
    /// The tile DMA writes GroupStride (the batch stride) for each source and the result.
    pub group_stride: bool,
    /// A scalar gain/offset that is not fused into a convolution runs on the planar engine
    /// (its BiasScale word; the current compiler's `mul`/`add`/`sub` by a scalar) rather
    /// than as an NE pass (inferred for v4.2.1, which has no such program).
    pub scalar_affine_on_pe: bool,
    /// Convolution sources get the NE's L2 row padding (the current compiler: 64x8x8 ->
    /// 0x430); v4.2.1's conv 3->3 has none.
    pub conv_source_pad: bool,
    /// An NE task that streams no coefficients still writes the one-unit size of every
    /// idle coefficient channel (v4.2.1's relu); the current compiler writes none then
    /// (and the sparse form leaves the arrays out), but one unit beside used channels.
    pub idle_channel_size_without_kernel: bool,
    /// A convolution's L2 result is aliased to the destination DMA (L2BfrMode 1, no
    /// result strides; every convolution of the current corpus) rather than laid out by
    /// the convolution result strides (v4.2.1's conv 3->3).
    pub conv_result_aliased: bool,
    /// A planar-engine operand that must be computed, broadcast or loaded first goes
    /// through L2: an NE task leaves it there for the PE task (the current compiler's
    /// real_div, broadcast operands and per-channel constants); v4.2.1 has no such
    /// program, and anec keeps such intermediates in memory there.
    pub l2_staging: bool,
}

/// The kernel DMA's 16 coefficient base addresses and 16 buffer sizes: the current
/// compiler writes them only for a task that streams coefficients (every record of the
/// corpus without a kernel stream splits the block into 18 + 12 words around them).
const COEFF_ARRAYS: OmittedRun =
    OmittedRun { what: "kernel-DMA coefficient base addresses and sizes", register: 0x1F848, words: 32 };

/// Apple's current compiler.
pub const CURRENT: Generation = Generation {
    compat: Compat::Current,
    form: StreamForm::Sparse,
    omitted: &[COEFF_ARRAYS],
    bars: BarOrder::SortedByName,
    log_events_first: 0x08,
    pe_idle_words: true,
    idle_stream_size: 0x40,
    pass_binary_point: true,
    acc_double_buffer: false,
    pass_shared: PassSharing::ByRows,
    group_stride: true,
    scalar_affine_on_pe: true,
    conv_source_pad: true,
    idle_channel_size_without_kernel: false,
    conv_result_aliased: true,
    l2_staging: true,
};

/// Apple's v4.2.1 compiler.
pub const V4_2: Generation = Generation {
    compat: Compat::V4_2,
    form: StreamForm::Dense,
    omitted: &[],
    bars: BarOrder::OutputsThenInputs,
    log_events_first: 0,
    pe_idle_words: false,
    idle_stream_size: 0,
    pass_binary_point: false,
    acc_double_buffer: true,
    // relu and sigmoid (one row); no several-row v4.2.1 pass task is known.
    pass_shared: PassSharing::Fixed([1, 0, 1]),
    group_stride: false,
    scalar_affine_on_pe: false,
    conv_source_pad: false,
    idle_channel_size_without_kernel: true,
    conv_result_aliased: false,
    l2_staging: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (c, n) in Compat::ALL {
            assert_eq!(Compat::from_name(n), Some(c));
            assert_eq!(c.name(), n);
            assert_eq!(c.data().compat, c);
        }
        assert_eq!(Compat::from_name("4.3"), None);
        assert_eq!(Compat::default(), Compat::Current);
    }
}
