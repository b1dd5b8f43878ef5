//! Container writers and readers for Apple Neural Engine programs.
//!
//! - [`hwx`]: the `.hwx` file Apple's `zin_ane_compiler` v4.2.1 writes (Mach-O shaped,
//!   magic `0xBEEFFACE`). [`write_hwx`] reproduces Apple's files byte for byte from the
//!   content model [`Hwx`]; [`read_hwx`] reads one back; [`parse_hwx`] gives the
//!   structure as stored, for dump tools.
//! - [`anec`]: the Asahi Linux `.anec` form (a 0x1000-byte header, then the TDs and the
//!   weights), written from the same [`Hwx`].
//! - [`e5`]: the E5 dispatch descriptor (`.e5`), the FlatBuffer naming a bundle's
//!   operations over its `.hwx` programs ([`write_e5`], [`read_e5`]).
//!
//! Every reader returns an error, never panics, on malformed input; every writer checks
//! that each value fits its field. Errors are [`CodegenError`]. Nothing here prints.

mod bytes;

pub mod anec;
pub mod e5;
pub mod error;
pub mod hwx;

pub use anec::{read_anec, write_anec, AnecFile};
pub use e5::{read_e5, write_e5};
pub use error::CodegenError;
pub use hwx::file::HwxFile;
pub use hwx::model::{BoundTensor, ConstSymbol, Hwx, Relocation, TensorRole};
pub use hwx::reader::{check_canonical, parse_hwx, parse_hwx_structure, read_hwx};
pub use hwx::writer::{hwx_pieces, tensor_addresses, write_hwx, HwxPieces};
