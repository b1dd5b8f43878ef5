//! Snapshot tests of `dump_file` on Apple's reference files, and the `.anec` form.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_tools::dump_file;
use common::{fixture, FIXTURES};

#[test]
fn dump_snapshots_of_apple_fixtures() {
    for name in FIXTURES {
        let text = dump_file(&fixture(name)).unwrap();
        insta::assert_snapshot!(name.trim_end_matches(".hwx"), text);
    }
}

#[test]
fn dump_is_deterministic() {
    let bytes = fixture("sum.hwx");
    assert_eq!(dump_file(&bytes).unwrap(), dump_file(&bytes).unwrap());
}

#[test]
fn anec_dump_lists_header_bars_and_the_same_tds() {
    let hwx = fixture("relu.hwx");
    let anec = anec_codegen::write_anec(&anec_codegen::read_hwx(&hwx).unwrap()).unwrap();
    let text = dump_file(&anec).unwrap();
    insta::assert_snapshot!("relu_anec", text);
    let td_part = |t: &str| t[t.find("TD 0 at").unwrap()..t.find("weights:").unwrap()].to_string();
    assert_eq!(td_part(&text), td_part(&dump_file(&hwx).unwrap()));
}
