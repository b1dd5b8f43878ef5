//! `diff_files` on Apple's reference files: identity, weights-only changes, an
//! activation change, the options, and the `.anec` form of the same program.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_tools::{diff_files, diff_files_with, DiffOptions, ToolError};
use common::{fixture, FIXTURES};

#[test]
fn a_file_equals_itself() {
    for name in FIXTURES {
        let bytes = fixture(name);
        assert_eq!(diff_files(&bytes, &bytes).unwrap(), vec![], "{name}");
    }
}

#[test]
fn conv_and_model_differ_only_in_weights_and_symbol_hashes() {
    let (conv, model) = (fixture("conv.hwx"), fixture("model.hwx"));
    let all = diff_files(&conv, &model).unwrap();
    assert!(all.iter().any(|d| d.location.starts_with("__const ")), "{all:#?}");
    let names: Vec<_> = all.iter().filter(|d| d.location.ends_with(" name")).collect();
    assert!(!names.is_empty(), "{all:#?}");
    for d in &all {
        let symbol = d.location.starts_with("LC_SYMTAB[0] symbol \"K<hash>_ne_") && d.location.ends_with(" name");
        assert!(symbol || d.location.starts_with("__const "), "unexpected difference {d}");
    }
    for d in names {
        assert_eq!(d.left.len(), d.right.len(), "{d}");
        assert!(d.left.contains("_ne_"), "{d}");
    }
    let opts = DiffOptions { ignore_symbol_hashes: true, ..DiffOptions::default() };
    let relaxed = diff_files_with(&conv, &model, &opts).unwrap();
    assert!(!relaxed.is_empty());
    assert!(relaxed.iter().all(|d| d.location.starts_with("__const ")), "{relaxed:#?}");
}

#[test]
fn relu_and_sigmoid_differ_in_the_nonlinear_mode() {
    let (relu, sigmoid) = (fixture("relu.hwx"), fixture("sigmoid.hwx"));
    let d = diff_files(&relu, &sigmoid).unwrap();
    let mode = d.iter().find(|d| d.location == "TD 0 NE.MACCfg.NonlinearMode").expect("NonlinearMode differs");
    assert_ne!(mode.left, mode.right);
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("relu_vs_sigmoid", text.join("\n"));
}

#[test]
fn ignore_ident_skips_the_banner_and_the_offsets_it_moves() {
    // Their banners name different input plists.
    let (relu, sum) = (fixture("relu.hwx"), fixture("sum.hwx"));
    let all = diff_files(&relu, &sum).unwrap();
    assert!(all.iter().any(|d| d.location.starts_with("LC_IDENT[0] line ")), "{all:#?}");
    let opts = DiffOptions { ignore_ident: true, ..DiffOptions::default() };
    let relaxed = diff_files_with(&relu, &sum, &opts).unwrap();
    // The text and its size are skipped, and so are the file offsets its length moves
    // (sizeofcmds, load-command offsets, symoff, stroff, reloff); everything else is kept.
    let banner = |d: &&anec_tools::Difference| {
        let l = d.location.as_str();
        let in_ident =
            ["line ", "lines", "length", "cmdsize"].iter().any(|f| l.starts_with(&format!("LC_IDENT[0] {f}")));
        let layout = ["sizeofcmds", " offset", " symoff", " stroff", " reloff"].iter().any(|f| l.ends_with(f))
            && !l.contains("section[");
        in_ident || layout || (l.contains("section[") && l.ends_with(" reloff"))
    };
    assert!(all.iter().any(|d| banner(&d)));
    assert!(!relaxed.iter().any(|d| banner(&d)), "{relaxed:#?}");
    // Same places reported; a summary of a missing structure no longer lists offsets.
    let kept: Vec<&str> = all.iter().filter(|d| !banner(d)).map(|d| d.location.as_str()).collect();
    let got: Vec<&str> = relaxed.iter().map(|d| d.location.as_str()).collect();
    assert_eq!(got, kept);
}

#[test]
fn hwx_and_its_anec_have_the_same_tds_and_weights() {
    let hwx = fixture("sigmoid.hwx");
    let anec = anec_codegen::write_anec(&anec_codegen::read_hwx(&hwx).unwrap()).unwrap();
    let d = diff_files(&hwx, &anec).unwrap();
    assert!(d.iter().any(|d| d.location == "file format" && d.left == "hwx" && d.right == "anec"));
    for d in &d {
        assert!(!d.location.starts_with("TD ") && !d.location.starts_with("__const"), "{d}");
    }
}

#[test]
fn unreadable_inputs_name_their_side() {
    let good = fixture("relu.hwx");
    let err = diff_files(&good, b"junk").unwrap_err();
    assert!(matches!(err, ToolError::Input { side: "right", .. }), "{err}");
    let err = diff_files(&good[..100], &good).unwrap_err();
    assert!(matches!(err, ToolError::Input { side: "left", .. }), "{err}");
    assert!(err.to_string().starts_with("left input: malformed .hwx file"), "{err}");
}

#[test]
fn display_shows_location_and_both_values() {
    let d = anec_tools::Difference { location: "TD 0 Common.InDim.Win".into(), left: "1".into(), right: "2".into() };
    assert_eq!(d.to_string(), "TD 0 Common.InDim.Win: 1 -> 2");
}

#[test]
fn conv_vs_model_listing() {
    let d = diff_files(&fixture("conv.hwx"), &fixture("model.hwx")).unwrap();
    let text: Vec<String> = d.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("conv_vs_model", text.join("\n"));
}
