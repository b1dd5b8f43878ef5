//! A process-wide memo of the synthesised tables: the sampled and fitted rules search
//! every fp16 input (tens of milliseconds per table, more in debug builds), and a model
//! asks for the same table once per layer. Keyed by the function and the bits of its
//! parameters (so `-0.0` and `0.0`, which give different tables, stay apart). A poisoned
//! lock only disables the memo.

use std::collections::HashMap;
use std::mem::Discriminant;
use std::sync::{Mutex, OnceLock};

use super::function::TableFn;
use super::layout::Layout;

/// The function and the bits of its parameters.
type Key = (Discriminant<TableFn>, [u64; 2]);

static CACHE: OnceLock<Mutex<HashMap<Key, Layout>>> = OnceLock::new();

/// `build(f)`, computed once per process for each key.
pub(super) fn cached(f: TableFn, build: impl FnOnce(TableFn) -> Layout) -> Layout {
    let cache = CACHE.get_or_init(Mutex::default);
    let k = key(f);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&k).cloned()) {
        return hit;
    }
    let t = build(f);
    if let Ok(mut c) = cache.lock() {
        c.insert(k, t.clone());
    }
    t
}

fn key(f: TableFn) -> Key {
    let params = match f {
        TableFn::Elu(a) | TableFn::LeakyRelu(a) => [a.to_bits(), 0],
        TableFn::Clip(lo, hi) => [lo.to_bits(), hi.to_bits()],
        _ => [0, 0],
    };
    (std::mem::discriminant(&f), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_told_apart_by_their_bits() {
        assert_ne!(key(TableFn::LeakyRelu(0.0)), key(TableFn::LeakyRelu(-0.0)));
        assert_ne!(key(TableFn::Elu(1.0)), key(TableFn::LeakyRelu(1.0)));
        assert_ne!(key(TableFn::Clip(0.0, 6.0)), key(TableFn::Clip(6.0, 0.0)));
        assert_eq!(key(TableFn::Sigmoid), key(TableFn::Sigmoid));
        let words = |f| cached(f, super::super::rules::layout).words();
        assert_ne!(words(TableFn::LeakyRelu(0.0)), words(TableFn::LeakyRelu(-0.0)));
    }
}
