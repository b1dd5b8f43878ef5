//! Shared helpers of the integration, conformance and snapshot tests.
//!
//! [`agree`]: compile a model, simulate the program and compare with the reference
//! interpreter within the fp16 tolerance of [`tolerance`].

pub mod agree;
pub mod oracle;
pub mod tolerance;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `../shared/fixtures` beside the workspace.
pub fn fixtures() -> PathBuf {
    workspace().join("../shared/fixtures")
}

/// Apple's compiled programs.
pub fn apple_hwx(name: &str) -> PathBuf {
    fixtures().join("apple-h13/hwx").join(format!("{name}.hwx"))
}

/// Our conformance netplists.
pub fn conformance_input(name: &str) -> PathBuf {
    workspace().join("tests/conformance").join(format!("{name}.plist"))
}
