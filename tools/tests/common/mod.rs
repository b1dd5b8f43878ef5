//! Shared helpers of the integration tests: the Apple reference fixtures.

#![allow(dead_code)]

use std::path::PathBuf;

/// Directory of Apple's v4.2.1 H13 reference `.hwx` files.
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/apple-h13/hwx")
}

/// The bytes of fixture `name` (`relu.hwx`).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The fixture names, sorted.
pub const FIXTURES: [&str; 5] = ["conv.hwx", "model.hwx", "relu.hwx", "sigmoid.hwx", "sum.hwx"];
