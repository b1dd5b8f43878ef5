//! Symbol names: the content hash in weight-chunk names, and the label a symbol is
//! matched by in a diff.
//!
//! Apple names `__const` chunks `K<hash>_ne_<i>` (or `K<hash>` for a single table),
//! 64 upper-case hex digits of a hash over the content (ours: BLAKE3). Our hashes legitimately differ,
//! so conformance diffs compare these names with the hash replaced by `<hash>`.

/// `name` with the 64-hex-digit hash of `K<hash>` or `K<hash>_ne_<i>` replaced by
/// `<hash>`; any other name unchanged. Surrounding double quotes are kept.
pub(crate) fn without_hash(name: &str) -> String {
    let (open, inner, close) = match name.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => ("\"", inner, "\""),
        None => ("", name, ""),
    };
    let hashed = inner.strip_prefix('K').and_then(|rest| {
        let (hash, tail) = (rest.get(..64)?, rest.get(64..)?);
        let chunk = tail.strip_prefix("_ne_").map(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
        let tail_ok = tail.is_empty() || chunk == Some(true);
        (hash.bytes().all(|b| b.is_ascii_hexdigit()) && tail_ok).then_some(tail)
    });
    match hashed {
        Some(tail) => format!("{open}K<hash>{tail}{close}"),
        None => name.to_string(),
    }
}

/// The label a symbol is matched by across two files: its name without hash, cut at the
/// first `:` (stabs strings carry the shape after it), with `#2`, `#3`, ... for repeats
/// (`seen` holds the labels given so far).
pub(crate) fn symbol_label(name: &str, seen: &mut Vec<String>) -> String {
    let base = without_hash(name);
    let base = base.split(':').next().unwrap_or_default().to_string();
    let repeats = seen.iter().filter(|s| **s == base).count();
    seen.push(base.clone());
    match repeats {
        0 => base,
        n => format!("{base}#{}", n + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_only_differences_normalise() {
        let h = "A".repeat(64);
        assert_eq!(without_hash(&format!("\"K{h}_ne_3\"")), "\"K<hash>_ne_3\"");
        assert_eq!(without_hash(&format!("K{}", "0f".repeat(32))), "K<hash>");
        assert_eq!(without_hash(&format!("K{h}_ne_")), format!("K{h}_ne_"));
        assert_eq!(without_hash(&format!("K{h}x")), format!("K{h}x"));
        assert_eq!(without_hash("image"), "image");
        assert_eq!(without_hash("K"), "K");
    }

    #[test]
    fn labels_drop_hash_and_shape_and_count_repeats() {
        let mut seen = Vec::new();
        let h = "B".repeat(64);
        assert_eq!(symbol_label(&format!("K{h}"), &mut seen), "K<hash>");
        assert_eq!(symbol_label(&format!("K{}", "C".repeat(64)), &mut seen), "K<hash>#2");
        assert_eq!(symbol_label("image", &mut seen), "image");
        assert_eq!(symbol_label("image:t11=ar1;0;1", &mut seen), "image#2");
        assert_eq!(symbol_label("void:t1=1", &mut seen), "void");
    }
}
