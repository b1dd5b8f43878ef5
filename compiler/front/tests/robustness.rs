//! No panics on any input: corrupted bytes, truncations, and every leaf of real netplists
//! replaced by extreme or ill-typed values must give `Ok` or a one-line error.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use anec_front::{parse_netplist_bytes, FrontError};
use common::*;
use plist::{Dictionary, Value};

const FILES: [&str; 5] =
    ["net.plist", "simple/convuint8.plist", "plists/broadcast.plist", "plists/inputview.plist", "plists/concat.plist"];

fn check(result: Result<anec_ir::Module, FrontError>) {
    if let Err(e) = result {
        let msg = e.to_string();
        assert!(!msg.contains('\n') && !msg.is_empty(), "{msg:?}");
    }
}

#[test]
fn corrupted_and_truncated_bytes() {
    let base = fixtures();
    let bytes = std::fs::read(base.join("net.plist")).expect("fixture");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..400 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut b = bytes.clone();
        let at = (seed as usize) % b.len();
        b[at] = (seed >> 32) as u8;
        check(parse_netplist_bytes(&b, "net.plist", &base));
    }
    for len in (0..bytes.len()).step_by(7) {
        check(parse_netplist_bytes(&bytes[..len], "net.plist", &base));
    }
}

/// Every path to a leaf (dictionary keys and array indices) of a value.
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Dictionary(d) => {
            for (k, child) in d {
                path.push(k.clone());
                leaves(child, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push(format!("#{i}"));
                leaves(child, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn leaf_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match (v, k.strip_prefix('#')) {
        (Value::Array(a), Some(i)) => a.get_mut(i.parse::<usize>().ok()?),
        (Value::Dictionary(d), None) => d.get_mut(k),
        _ => None,
    })
}

#[test]
fn every_leaf_replaced_by_extreme_values() {
    let replacements = [
        Value::Integer(0.into()),
        Value::Integer((-1).into()),
        Value::Integer(i64::from(u32::MAX).into()),
        Value::Integer(i64::MAX.into()),
        Value::Integer(u64::MAX.into()),
        Value::Real(f64::NAN),
        Value::String(String::new()),
        Value::Boolean(true),
        Value::Dictionary(Dictionary::new()),
        Value::Array(Vec::new()),
    ];
    for rel in FILES {
        let path = fixture(rel);
        let dir = path.parent().expect("dir").to_path_buf();
        let original = Value::from_file(&path).expect("fixture");
        let mut paths = Vec::new();
        leaves(&original, &mut Vec::new(), &mut paths);
        for p in &paths {
            for r in &replacements {
                let mut v = original.clone();
                if let Some(leaf) = leaf_mut(&mut v, p) {
                    *leaf = r.clone();
                }
                let mut bytes = Vec::new();
                v.to_writer_xml(&mut bytes).expect("xml");
                check(parse_netplist_bytes(&bytes, rel, &dir));
            }
        }
    }
}
