//! Activation tables for the NE's table-driven nonlinear stage (NonlinearMode 2).
//!
//! A table is 0x80 bytes, loaded through the kernel DMA into every NE core: 64
//! little-endian 16-bit words, the same format in both Apple compiler generations:
//!
//! | words | meaning |
//! |---|---|
//! | 0..4 | `xL, xR, yL, yR` (fp16): an argument `u <= xL` gives `yL`, `u >= xR` gives `yR` |
//! | 4..37 | 33 knots (fp16), knot `i` at `u_i = base + i * 2^-k` |
//! | 37..41 | `mL, bL, mR, bR` (fp16): the lines `y = m u + b` below / above the knots |
//! | 41 | `k` (integer): the knot spacing is `2^-k` |
//! | 42 | the mode byte (integer, [`Mode`]): how the argument `u` is formed from `x` |
//! | 43..64 | zero |
//!
//! Every table is computed from its function ([`TableFn`]); the rules (one per family,
//! dispatched in `rules`) are those that reproduce the tables of Apple's compilers where a record
//! exists (sigmoid, tanh, exp, sqrt, rsqrt, reciprocal, leaky_relu: byte for byte), and
//! proposals in the same style elsewhere; `docs/rationale/activation-tables.md` gives the
//! evidence. [`Layout::eval`] is what the engine presumably computes from a table;
//! [`max_error`] measures a table with it.

mod accuracy;
mod cache;
mod eval;
mod fit;
mod fp16;
mod function;
mod layout;
mod range;
mod rules;
mod sampled;
mod tail;

#[cfg(test)]
mod tests;

pub use accuracy::max_error;
pub use function::TableFn;
pub use layout::{Layout, Line, Mode, KNOTS, TABLE_SIZE};

/// The table of `f`, as its typed layout (synthesised once per process and function).
pub fn layout(f: TableFn) -> Layout {
    cache::cached(f, rules::layout)
}

/// The 0x80-byte table of `f`.
pub fn table(f: TableFn) -> Vec<u8> {
    layout(f).to_bytes()
}
