//! Tests of the simulator on Apple's streamed copies: the NE copy of
//! `encoder_slice_lastdim` (8 x 375 rows of 375 values, source and result both in
//! 0x100-byte pieces, the result laid out by the result words) and the planar-engine copy
//! of `rrmm_r2rr_m64_k2048_n64_tx0_ty1` (64 rows of 2048 values in 0x400-byte pieces), from
//! the records of `shared/fixtures/apple-h13-oracles/` (Apple's own task streams). The
//! slice must equal its window of x exactly; result plane words other than the channels'
//! pieces of a row are a load error naming word 0x220.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::memory::Dims;
use super::pair_record_tests::{run, surfaces, x_of};
use super::record_tests::{decode, decode_changed, record};

const SLICE: &str = "encoder_slice_lastdim";

#[test]
fn apple_slice_streams_its_rows_in_and_out() {
    let (r, v) = record(SLICE);
    let x = x_of(SLICE, 0);
    let ran = run(SLICE, vec![0; r.constant_section.size as usize], std::slice::from_ref(&x));
    let t = &ran.tasks[0];
    assert!(t.streamed && t.result_streamed, "source and result stream");
    assert_eq!((t.source_dims().w, t.result_region_dims().w), (128, 128), "one 0x100-byte piece per row and channel");
    let (ins, out) = surfaces(&v);
    let [_, c, h, w] = out.shape;
    let xw = ins[0].shape[3];
    assert_eq!(ran.y.len(), c * h * w);
    for (i, &y) in ran.y.iter().enumerate() {
        let (ci, hi, wi) = (i / (h * w), i / w % h, i % w);
        assert_eq!(y, x[(ci * h + hi) * xw + wi], "y[{ci}, {hi}, {wi}]");
    }
}

#[test]
fn a_streamed_result_needs_the_pieces_of_a_row_as_its_plane() {
    let err = decode_changed(SLICE, 0, &|i| i.set_unnamed(0x220, 0x400).unwrap());
    assert!(err.contains("word 0x220 = 0x400"), "{err}");
    let err = decode_changed(SLICE, 0, &|i| i.set_unnamed(0x224, 0).unwrap());
    assert!(err.contains("word 0x220") && err.contains("0x224 is 0x0"), "{err}");
}

#[test]
fn apple_runtime_matmul_copy_streams_2048_wide_rows_on_the_planar_engine() {
    let r = record("rrmm_r2rr_m64_k2048_n64_tx0_ty1").0;
    let tasks: Vec<_> = decode(&r).into_iter().map(Result::unwrap).collect();
    let copy = &tasks[0];
    assert!(copy.streamed && !copy.result_streamed);
    assert_eq!(copy.source_dims(), Dims { c: 64, d: 1, h: 1, w: 512 });
    // The NE transposer of y streams in 0x100-byte pieces.
    assert!(tasks[1].streamed);
    assert_eq!(tasks[1].source_dims().w, 128);
}
