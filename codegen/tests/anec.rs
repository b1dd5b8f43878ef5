//! The Asahi `.anec` form: fields derived from reference programs, byte round trips,
//! and errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use anec_codegen::anec::{AnecFile, ANEC_HEADER_SIZE};
use anec_codegen::{read_anec, read_hwx, write_anec, TensorRole};

#[test]
fn relu_header_fields() {
    let h = read_hwx(&common::fixture("relu.hwx")).unwrap();
    let bytes = write_anec(&h).unwrap();
    let f = read_anec(&bytes).unwrap();
    assert_eq!((f.size, f.td_size, f.td_count), (0x280 + 0x4000, 0x274, 1));
    assert_eq!((f.tsk_size, f.krn_size, f.src_count, f.dst_count), (0x274, 0x4000, 1, 1));
    let mut tiles = [0u32; 32];
    tiles[0] = 2; // 0x4280 bytes of TDs and weights
    tiles[4] = 1; // probs@output
    tiles[5] = 1; // image
    assert_eq!(f.tiles, tiles);
    assert_eq!(f.nchw[5], [1, 1, 1, 77, 0xc0, 0xc0]);
    assert_eq!(f.nchw[4], [1, 1, 1, 77, 0xc0, 0xc0]);
    assert!(f.nchw.iter().enumerate().all(|(i, v)| i == 4 || i == 5 || *v == [0; 6]));
    assert_eq!(bytes.len() as u64, ANEC_HEADER_SIZE + f.size);
    assert_eq!(&bytes[0x1000..0x1274], h.text.as_slice());
    assert_eq!(&bytes[0x1280..], h.consts.as_slice());
}

#[test]
fn conv_places_weights_where_the_driver_expects_them() {
    let h = read_hwx(&common::fixture("conv.hwx")).unwrap();
    let f = AnecFile::from_hwx(&h).unwrap();
    assert_eq!((f.size, f.tiles[0]), (0x280 + 0xc0, 1));
    assert_eq!(f.nchw[5], [1, 3, 1, 1, 0x40, 0x40]);
    let bytes = f.to_bytes().unwrap();
    assert_eq!(&bytes[0x1280..], h.consts.as_slice());
    assert!(bytes[0x1274..0x1280].iter().all(|&b| b == 0));
}

#[test]
fn every_program_round_trips_through_anec_bytes() {
    let mut programs: Vec<_> = common::fixtures().iter().map(|(_, b)| read_hwx(b).unwrap()).collect();
    programs.push(common::synthetic());
    for h in programs {
        let bytes = write_anec(&h).unwrap();
        let f = read_anec(&bytes).unwrap();
        assert_eq!(f, AnecFile::from_hwx(&h).unwrap());
        assert_eq!(f.to_bytes().unwrap(), bytes);
        assert_eq!((f.text, f.consts), (h.text.clone(), h.consts.to_vec()));
        let inputs = h.tensors.iter().filter(|t| t.role == TensorRole::Input).count() as u32;
        assert_eq!(f.src_count, inputs);
    }
}

#[test]
fn anec_accepts_intermediates_at_their_bar() {
    let mut h = common::synthetic();
    h.tensors.push(common::tensor("tmp", TensorRole::Intermediate, 3, 64, 300));
    let f = AnecFile::from_hwx(&h).unwrap();
    assert_eq!((f.tiles[3], f.src_count, f.dst_count), (3, 2, 1));
    assert_eq!(f.nchw[3], [0; 6], "eiln/anecc gives intermediates tiles only");
}

#[test]
fn anec_errors() {
    let mut h = common::synthetic();
    h.tensors[0].bar = 0;
    assert!(write_anec(&h).unwrap_err().to_string().contains("BAR index 0"));
    let mut h = common::synthetic();
    h.td_words = u32::MAX;
    assert!(write_anec(&h).unwrap_err().to_string().contains("td_size"));
    let mut f = AnecFile::from_hwx(&common::synthetic()).unwrap();
    f.krn_size += 1;
    assert!(f.to_bytes().is_err());
    let good = write_anec(&common::synthetic()).unwrap();
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(read_anec(&trailing).unwrap_err().to_string().contains("file length"));
    let mut dirty = good.clone();
    dirty[0x800] = 1;
    assert!(read_anec(&dirty).unwrap_err().to_string().contains("header padding"));
    let mut size = good;
    size[0] ^= 0x10;
    assert!(read_anec(&size).is_err());
}
