//! The `.hwx` container: Apple's Mach-O-shaped program file, as `zin_ane_compiler` v4.2.1
//! writes it for H13.
//!
//! [`model`] is the content (what the backend fills), [`writer`] lays it out byte for
//! byte, [`reader`] parses a file back ([`reader::parse_hwx`] for the structure as
//! stored, [`reader::read_hwx`] for the content). [`mod@file`] holds the structure-level
//! types, [`thread`] and [`symtab`] name and build the Apple-specific parts. The layout is
//! described in `docs/formats/hwx.md`.

pub(crate) mod commands;
pub mod file;
pub mod model;
pub mod reader;
pub mod symtab;
pub mod thread;
pub mod writer;
