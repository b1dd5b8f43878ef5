//! Matching two flattened field trees by location.
//!
//! A field both sides have is reported when its compared value differs. A field only one
//! side has is reported against `(absent)`; when the whole structure holding it is
//! missing on the other side (a relocation, a symbol, a TD), the structure is reported
//! once instead, with a summary of its fields.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::diff::{DiffOptions, Difference};
use crate::names::without_hash;
use crate::tree::{Field, Flat, Role};

/// Shown for a location only the other side has.
const ABSENT: &str = "(absent)";
/// A missing structure with at most this many fields is summarised field by field.
const SUMMARY_FIELDS: usize = 8;

/// One comparable field.
struct Item<'a> {
    location: &'a str,
    owners: &'a [String],
    /// The value compared (hash-free under `ignore_symbol_hashes`).
    compared: Cow<'a, str>,
    /// The value shown.
    shown: &'a str,
}

/// One side: its comparable fields, by location, and the paths of its structures.
struct Side<'a> {
    items: Vec<Item<'a>>,
    by_location: HashMap<&'a str, usize>,
    paths: HashSet<&'a str>,
}

/// The comparable fields of `flat` under `opts`.
fn items<'a>(flat: &'a [Flat<'a>], opts: &DiffOptions) -> Vec<Item<'a>> {
    flat.iter()
        .filter_map(|f| {
            let compared = comparable(f.field, opts)?;
            Some(Item { location: &f.location, owners: &f.owners, compared, shown: &f.field.value })
        })
        .collect()
}

impl<'a> Side<'a> {
    /// Indexes `items` by location, and collects the structure paths of `flat`.
    fn new(items: Vec<Item<'a>>, flat: &'a [Flat<'a>]) -> Self {
        let by_location = items.iter().enumerate().map(|(i, it)| (it.location, i)).collect();
        let mut paths = HashSet::new();
        let mut last: Option<&[String]> = None;
        for f in flat {
            if last != Some(f.owners.as_slice()) {
                paths.extend(f.owners.iter().map(String::as_str));
                last = Some(&f.owners);
            }
        }
        Self { items, by_location, paths }
    }

    /// `name=value ...` of the fields under structure `path`, or their count.
    fn summary(&self, path: &str) -> String {
        let prefix = format!("{path} ");
        let under: Vec<&Item<'_>> = self.items.iter().filter(|it| it.owners.iter().any(|o| o == path)).collect();
        if under.len() > SUMMARY_FIELDS {
            return format!("present ({} fields)", under.len());
        }
        let parts: Vec<String> = under
            .iter()
            .map(|it| format!("{}={}", it.location.strip_prefix(&prefix).unwrap_or(it.location), it.shown))
            .collect();
        parts.join(" ")
    }
}

/// The value a field is compared by under `opts`, or `None` when it is skipped.
fn comparable<'a>(f: &'a Field, opts: &DiffOptions) -> Option<Cow<'a, str>> {
    match f.role {
        Role::Derived => None,
        Role::Ident | Role::Layout if opts.ignore_ident => None,
        Role::SymbolName if opts.ignore_symbol_hashes => Some(Cow::Owned(without_hash(&f.value))),
        _ => Some(Cow::Borrowed(&f.value)),
    }
}

/// Every difference between two flattened trees: left order first, then what only the
/// right has. When both list the same locations in the same order (the common case),
/// they are compared pairwise without building indexes.
pub(crate) fn compare(left: &[Flat<'_>], right: &[Flat<'_>], opts: &DiffOptions) -> Vec<Difference> {
    let (li, ri) = (items(left, opts), items(right, opts));
    if li.len() == ri.len() && li.iter().zip(&ri).all(|(a, b)| a.location == b.location) {
        let pairs = li.iter().zip(&ri).filter(|(a, b)| a.compared != b.compared);
        return pairs.map(|(a, b)| diff(a.location, a.shown, b.shown)).collect();
    }
    let (l, r) = (Side::new(li, left), Side::new(ri, right));
    let mut out = Vec::new();
    let mut reported = HashSet::new();
    for it in &l.items {
        match r.by_location.get(it.location).and_then(|&i| r.items.get(i)) {
            Some(o) if o.compared == it.compared => {}
            Some(o) => out.push(diff(it.location, it.shown, o.shown)),
            None => out.extend(missing(it, &l, &r, &mut reported, false)),
        }
    }
    for it in r.items.iter().filter(|it| !l.by_location.contains_key(it.location)) {
        out.extend(missing(it, &r, &l, &mut reported, true));
    }
    out
}

/// The difference for `it`, present in `this` only: its outermost structure missing
/// from `other` (once), or the field alone. `right` says `this` is the right side.
fn missing(
    it: &Item<'_>,
    this: &Side<'_>,
    other: &Side<'_>,
    reported: &mut HashSet<String>,
    right: bool,
) -> Option<Difference> {
    let (location, shown) = match it.owners.iter().find(|p| !other.paths.contains(p.as_str())) {
        Some(p) if !reported.insert(p.clone()) => return None,
        Some(p) => (p.as_str(), this.summary(p)),
        None => (it.location, it.shown.to_string()),
    };
    Some(match right {
        false => diff(location, &shown, ABSENT),
        true => diff(location, ABSENT, &shown),
    })
}

/// A difference from borrowed parts.
pub(crate) fn diff(location: &str, left: &str, right: &str) -> Difference {
    Difference { location: location.into(), left: left.into(), right: right.into() }
}
