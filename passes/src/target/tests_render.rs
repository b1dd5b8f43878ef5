//! Tests of the renderings: snapshots of the two `--print` texts and the check that
//! `docs/targets.md` holds the generated tables.
//!
//! To regenerate the docs after changing the tables:
//! `ANEC_BLESS_DOCS=1 cargo test -p anec-passes target::tests_render`.

#![allow(clippy::panic)]

use super::*;

/// The line after which `docs/targets.md` is generated.
const MARKER: &str = "<!-- generated from passes/src/target; do not edit below this line -->";

fn t(name: &str) -> Target {
    match lookup(name) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn target_list_snapshot() {
    insta::assert_snapshot!(target_list_text());
}

#[test]
fn target_features_h13g_snapshot() {
    insta::assert_snapshot!(target_features_text(t("h13g")));
}

#[test]
fn target_features_h17_snapshot() {
    insta::assert_snapshot!(target_features_text(t("h17")));
}

#[test]
fn features_text_names_every_byte_and_limit() {
    let text = target_features_text(t("h14g"));
    for b in FeatureByte::ALL {
        assert!(text.contains(&format!("{:#05x}  ", b.offset())), "{}", b.name());
    }
    for r in t("h14g").limits().rows() {
        assert!(text.contains(r.key), "{}", r.key);
    }
    assert!(text.contains("0x81d  1  texture-engine"));
    assert!(text.contains("REAL (51)"), "{text}");
}

#[test]
fn docs_targets_md_matches_the_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/targets.md");
    let current = std::fs::read_to_string(path).unwrap_or_default();
    let (head, tail) = current.split_once(MARKER).unwrap_or((current.as_str(), ""));
    let want = format!("\n\n{}", targets_markdown());
    if tail != want && std::env::var_os("ANEC_BLESS_DOCS").is_some() {
        let written = std::fs::write(path, format!("{head}{MARKER}{want}"));
        assert!(written.is_ok(), "writing {path}: {written:?}");
        return;
    }
    assert!(current.contains(MARKER), "{path} lacks the marker line {MARKER:?}");
    assert!(tail == want, "{path} is out of date; rerun with ANEC_BLESS_DOCS=1 and review the diff");
}

#[test]
fn markdown_tables_have_a_separator_cell_per_column() {
    let md = targets_markdown();
    let lines: Vec<&str> = md.lines().collect();
    let mut tables = 0;
    for pair in lines.windows(2) {
        if pair[0].starts_with('|') && pair[1].starts_with("|---") {
            tables += 1;
            assert_eq!(pair[0].matches('|').count(), pair[1].matches('|').count(), "{}\n{}", pair[0], pair[1]);
        }
    }
    // chips, feature matrix, 9 feature sources, limit matrix, 17 limit sources, setters
    assert_eq!(tables, 1 + 1 + 9 + 1 + 17 + 1);
}
