//! The `.anec` listing: every header field by name, the tiles and N, C, H, W and strides
//! of each non-empty BAR, the TDs (the same `__text` as the `.hwx`) and the weights.

use anec_codegen::AnecFile;

use super::{consts, td};
use crate::tree::Node;

/// Header, BARs, TDs, weights.
pub(super) fn nodes(a: &AnecFile) -> Vec<Node> {
    let mut out = vec![header(a), bars(a)];
    out.extend(td::text_nodes(&a.text, a.td_count, u64::from(a.td_size / 4), "anec header"));
    out.push(consts::anec_weights(&a.consts));
    out
}

/// The scalar header fields.
fn header(a: &AnecFile) -> Node {
    let mut n = Node::new("header", "header");
    n.hex("size", a.size);
    n.hex("td_size", a.td_size);
    n.num("td_count", a.td_count);
    n.hex("tsk_size", a.tsk_size);
    n.hex("krn_size", a.krn_size);
    n.num("src_count", a.src_count);
    n.num("dst_count", a.dst_count);
    n
}

/// One line per BAR; empty BARs are compared by diff but not shown.
fn bars(a: &AnecFile) -> Node {
    let mut n = Node::new("", "BARs (tiles of 16 KiB; N, C, H, W, plane and row strides)");
    let mut empty = 0;
    for (i, (tiles, nchw)) in a.tiles.iter().zip(&a.nchw).enumerate() {
        let key = format!("bar[{i}]");
        let mut c = Node::new(key.clone(), key).compact();
        c.num("tiles", *tiles);
        for (name, v) in ["N", "C", "H", "W", "plane_stride", "row_stride"].iter().zip(nchw) {
            c.num(*name, *v);
        }
        c.hidden = *tiles == 0 && nchw.iter().all(|&v| v == 0);
        empty += usize::from(c.hidden);
        n.children.push(c);
    }
    if empty > 0 {
        n.notes.push(format!("{empty} empty BARs not shown"));
    }
    n
}
