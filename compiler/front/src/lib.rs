//! Front ends: network descriptions to the anec dialect.
//!
//! The netplist front end ([`parse_netplist`]) reads Apple's `net.plist` (the version 1.0.9
//! `Networks`/`Units` form and the version 1.0.10 `ProcedureList` form, XML or binary) into
//! an [`anec_ir::Module`]; [`parse_netplist_procedures`] gives every procedure's module.
//! Errors are [`FrontError`]s whose message is one line naming the file, entry and key.

pub mod error;
pub mod mil;
pub mod mil_load;
pub mod milblob;
pub mod mlpackage;
pub mod netplist;

pub use error::{FrontError, Site, Subject};
pub use mil::parse_program as parse_mil_program;
pub use mil_load::load_mil;
pub use netplist::{
    parse_netplist, parse_netplist_bytes, parse_netplist_procedures, parse_netplist_procedures_bytes, Procedure,
};
