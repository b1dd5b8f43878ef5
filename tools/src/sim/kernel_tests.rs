//! Tests of the coefficient reader on byte images built by hand, one per case of the
//! layout of Apple's current compiler (`docs/rationale/current-compiler/convolution.md`
//! §1), and of the header-stream vectors.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::sim::memory::Buffer;
use std::borrow::Cow;

fn mem(bytes: Vec<u8>) -> Memory<'static> {
    Memory::new(vec![(1, Buffer { name: "__const".into(), bytes: Cow::Owned(bytes), writable: false })])
}

fn push(out: &mut Vec<u8>, v: f32) {
    out.extend(half::f16::from_f32(v).to_le_bytes());
}

fn pad64(out: &mut Vec<u8>) {
    out.resize(out.len().div_ceil(64) * 64, 0);
}

/// Chunks laid back to back in one buffer, each with its own size.
fn section(chunks: &[Vec<u8>]) -> (Vec<u8>, [Option<Stream>; NES]) {
    let mut bytes = Vec::new();
    let mut streams = [None; NES];
    for (i, c) in chunks.iter().enumerate() {
        if !c.is_empty() {
            streams[i] = Some(Stream { addr: bytes.len() as u64, size: c.len() as u64 });
            bytes.extend(c);
        }
    }
    (bytes, streams)
}

fn layout(chunks: [Option<Stream>; NES], ocg_size: u32, bias: bool, groups: usize, shape: [usize; 4]) -> Layout {
    let [cout, cin, kh, kw] = shape;
    Layout { fmt: Fmt::F16, ocg_size, chunks, sparse: false, bias, groups, cin, cout, kh, kw, table: false }
}

/// A weight exact in fp16: distinct for every (co, ci, ky, kx) of the small shapes here.
fn wv(co: usize, ci: usize, ky: usize, kx: usize) -> f32 {
    (co * 16 + ci * 4 + ky * 2 + kx + 1) as f32 / 4.0
}

fn bv(co: usize) -> f32 {
    -(co as f32) - 0.5
}

/// The brief's first example: 64 -> 64 with OCGSize 2 (B = 4) and a bias; a 1x2 kernel
/// over 2 input channels keeps it small. Chunk i = [bias 4i..4i+3][for cin, kx, j:
/// W[4i + j][cin][0][kx]] padded to 64: 8 + 32 = 40 -> 0x40.
#[test]
fn blocks_of_four_channels_with_inline_bias_output_channel_fastest() {
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = Vec::new();
            (0..4).for_each(|j| push(&mut c, bv(4 * i + j)));
            for ci in 0..2 {
                for kx in 0..2 {
                    (0..4).for_each(|j| push(&mut c, wv(4 * i + j, ci, 0, kx)));
                }
            }
            pad64(&mut c);
            c
        })
        .collect();
    let (bytes, streams) = section(&chunks);
    let l = layout(streams, 2, true, 1, [64, 2, 1, 2]);
    assert_eq!(l.blocks(3), vec![Block { start: 12, len: 4 }]);
    assert_eq!(l.dense_chunk(3), 0x40);
    let k = read(&mem(bytes), 0, Some(1), &l).unwrap();
    for co in 0..64 {
        assert_eq!(k.bias[co], bv(co));
        for (ci, kx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            assert_eq!(k.at(co, ci, 0, kx), wv(co, ci, 0, kx), "W[{co}][{ci}][0][{kx}]");
        }
    }
}

/// The brief's sizes: 64 -> 64 3x3 with OCGSize 2 and bias is 8 + 4608 -> 0x1240 per
/// chunk (record `env_conv_k3_c64_n64_s16_st1_g1_bias1`); 768 channels 1x1 with
/// OCGSize 5 deal 512 channels (32 per NE) then 256 (16 per NE), chunk 0x12080
/// (`env_conv_k1_c768_n768_s1_st1_g1_bias1`).
#[test]
fn passes_of_sixteen_blocks_and_a_partial_last_pass() {
    let l = layout([None; NES], 2, true, 1, [64, 64, 3, 3]);
    assert_eq!(l.dense_chunk(0), 0x1240);
    let l = layout([None; NES], 5, true, 1, [768, 768, 1, 1]);
    assert_eq!(l.blocks(2), vec![Block { start: 64, len: 32 }, Block { start: 512 + 32, len: 16 }]);
    assert_eq!(l.dense_chunk(15), 0x12080);
    // 3 channels, OCGSize 0: NEs 0..2 one channel each, the others none (Apple's v4.2.1
    // conv.hwx: chunks 0..2 of 0x40).
    let l = layout([None; NES], 0, false, 1, [3, 3, 1, 1]);
    assert_eq!(l.blocks(2), vec![Block { start: 2, len: 1 }]);
    assert!(l.blocks(3).is_empty());
    assert_eq!(l.dense_chunk(0), 0x40);
}

/// 40 channels with OCGSize 1 (B = 2): pass 0 gives NE i channels 2i, 2i + 1; the
/// partial pass 1 of 8 channels gives NEs 0..7 one channel each (b = 1), NEs 8..15 none.
/// 1x1 kernel over 3 input channels, no bias. The partial-pass rule is the one of record
/// `env_conv_k1_c768_n768_s1_st1_g1_bias1` (rationale §1, confirmed by its SHA-256).
#[test]
fn a_partial_pass_reads_after_the_full_one() {
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = Vec::new();
            for ci in 0..3 {
                (0..2).for_each(|j| push(&mut c, wv(2 * i + j, ci, 0, 0)));
            }
            if i < 8 {
                (0..3).for_each(|ci| push(&mut c, wv(32 + i, ci, 0, 0)));
            }
            pad64(&mut c);
            c
        })
        .collect();
    let (bytes, streams) = section(&chunks);
    let l = layout(streams, 1, false, 1, [40, 3, 1, 1]);
    assert_eq!(l.blocks(7), vec![Block { start: 14, len: 2 }, Block { start: 39, len: 1 }]);
    assert_eq!(l.blocks(8), vec![Block { start: 16, len: 2 }]);
    let k = read(&mem(bytes), 0, Some(1), &l).unwrap();
    assert!(k.bias.is_empty());
    for co in 0..40 {
        for ci in 0..3 {
            assert_eq!(k.at(co, ci, 0, 0), wv(co, ci, 0, 0), "W[{co}][{ci}]");
        }
    }
}

/// Grouped (NumGroups 2, 16 output and 3 input channels per group, OCGSize 0, bias):
/// chunk i = [group 0: bias of channel i, its 3 weights] padded to 64, then the same for
/// channel 16 + i (record `env_conv_k3_c64_n64_s16_st1_g4_bias1`: 4 x (2 + 288), each
/// group padded to 64, 0x500).
#[test]
fn groups_are_dealt_separately_each_padded_to_64_bytes() {
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = Vec::new();
            for g in 0..2 {
                push(&mut c, bv(16 * g + i));
                (0..3).for_each(|ci| push(&mut c, wv(16 * g + i, ci, 0, 0)));
                pad64(&mut c);
            }
            c
        })
        .collect();
    assert_eq!(chunks[0].len(), 0x80);
    let (bytes, streams) = section(&chunks);
    let l = layout(streams, 0, true, 2, [16, 3, 1, 1]);
    assert_eq!(l.dense_chunk(5), 0x80);
    assert_eq!(layout([None; NES], 0, true, 4, [16, 16, 3, 3]).dense_chunk(0), 0x500);
    let k = read(&mem(bytes), 0, Some(1), &l).unwrap();
    for co in 0..32 {
        assert_eq!(k.bias[co], bv(co));
        for ci in 0..3 {
            assert_eq!(k.at(co, ci, 0, 0), wv(co, ci, 0, 0), "W[{co}][{ci}]");
        }
    }
}

/// Depthwise, 32 channels 3x3 with bias (one input channel per output channel): chunk
/// i = channels i and 16 + i, each block [1 bias][9 weights] -> 40 -> 0x40 (record
/// `env_conv_k3_c64_n64_s16_st1_g64_bias1`: 4 x 20 = 80 -> 0x80).
#[test]
fn depthwise_channels_go_to_ne_channel_mod_16() {
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = Vec::new();
            for co in [i, 16 + i] {
                push(&mut c, bv(co));
                for ky in 0..3 {
                    (0..3).for_each(|kx| push(&mut c, wv(co, 0, ky, kx)));
                }
            }
            pad64(&mut c);
            c
        })
        .collect();
    let (bytes, streams) = section(&chunks);
    let l = layout(streams, 0, true, 1, [32, 1, 3, 3]);
    assert_eq!(layout([None; NES], 0, true, 1, [64, 1, 3, 3]).dense_chunk(0), 0x80);
    let k = read(&mem(bytes), 0, Some(1), &l).unwrap();
    for co in 0..32 {
        assert_eq!(k.bias[co], bv(co));
        for (ky, kx) in [(0, 0), (1, 2), (2, 1)] {
            assert_eq!(k.at(co, 0, ky, kx), wv(co, 0, ky, kx));
        }
    }
}

/// One sparse block: [bias][u16 L][for cin: u16 mask (bit 8 + j), the stored values].
fn sparse_block(out: &mut Vec<u8>, first: usize, len: usize, cin: usize, w: &dyn Fn(usize, usize) -> f32) {
    (0..len).for_each(|j| push(out, bv(first + j)));
    let mut body = Vec::new();
    for ci in 0..cin {
        let stored: Vec<usize> = (0..len).filter(|&j| w(first + j, ci) != 0.0).collect();
        let mask: u16 = stored.iter().map(|j| 1u16 << (8 + j)).sum();
        body.extend(mask.to_le_bytes());
        stored.iter().for_each(|&j| push(&mut body, w(first + j, ci)));
    }
    out.extend((body.len() as u16).to_le_bytes());
    out.extend(body);
}

/// Sparse 1x1 (record `env_conv_k1_c64_n64_s16_st2_g1_bias1`, SHA-exact in the
/// rationale: lanes at bits 8..11, +0 and -0 not stored): 64 -> 64 with OCGSize 2, 3
/// input channels, bias; W[1][0] = +0 and W[6][2] = -0 are omitted.
#[test]
fn sparse_1x1_blocks_omit_zero_weights() {
    let w = |co: usize, ci: usize| match (co, ci) {
        (1, 0) => 0.0,
        (6, 2) => -0.0,
        _ => wv(co, ci, 0, 0),
    };
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = Vec::new();
            sparse_block(&mut c, 4 * i, 4, 3, &w);
            pad64(&mut c);
            c
        })
        .collect();
    // Chunk 0: 8 bias + 2 + 3 x 2 masks + 11 values x 2 = 38 -> 0x40.
    assert_eq!(u16::from_le_bytes([chunks[0][8], chunks[0][9]]), 6 + 22);
    assert_eq!(u16::from_le_bytes([chunks[0][10], chunks[0][11]]), 0x0D00);
    let (bytes, streams) = section(&chunks);
    let l = Layout { sparse: true, ..layout(streams, 2, true, 1, [64, 3, 1, 1]) };
    let k = read(&mem(bytes.clone()), 0, Some(1), &l).unwrap();
    for co in 0..64 {
        assert_eq!(k.bias[co], bv(co));
        for ci in 0..3 {
            assert_eq!(k.at(co, ci, 0, 0), w(co, ci), "W[{co}][{ci}]");
        }
    }
    // A mask bit outside the block's lanes (bit 0), and a wrong length word.
    let mut bad = bytes.clone();
    bad[10] = 1;
    let e = read(&mem(bad), 4, Some(1), &l).unwrap_err().to_string();
    assert!(e.starts_with("TD 4: the sparse mask at byte 0xa of chunk 0 (input channel 0) = 0xd01"), "{e}");
    let mut bad = bytes;
    bad[8] += 2;
    let e = read(&mem(bad), 4, Some(1), &l).unwrap_err().to_string();
    assert!(e.starts_with("TD 4: the sparse block's length word at byte 0x8 of chunk 0 = 0x1e"), "{e}");
}

/// Chunk bounds: CoeffBfrSize is the chunk's size (every record's chunks are exactly their
/// padded blocks), a kernel cannot exceed its chunks, and a chunk that holds channels must
/// be enabled (records: all 16 enabled whenever Cout >= 16).
#[test]
fn reading_past_a_chunk_is_an_error_naming_its_size_field() {
    // One output channel (NE 0 only) of 32 taps: 64 bytes fit one 0x40 chunk, 33 do not.
    let (bytes, streams) = section(&[vec![0; 0x40]]);
    let l = layout(streams, 2, false, 1, [1, 32, 1, 1]);
    assert!(read(&mem(bytes.clone()), 3, Some(1), &l).is_ok());
    let l = layout(streams, 2, false, 1, [1, 33, 1, 1]);
    let e = read(&mem(bytes.clone()), 3, Some(1), &l).unwrap_err().to_string();
    assert!(e.starts_with("TD 3: KernelDMASrc.CoeffBfrSize[0].MemBfrSize = 0x1: reading the coefficients"), "{e}");
    // A kernel far larger than its chunks is refused before it is allocated.
    let l = Layout { sparse: true, ..layout(streams, 0, false, 8000, [1, 1 << 20, 1, 1]) };
    let e = read(&mem(bytes.clone()), 3, Some(1), &l).unwrap_err().to_string();
    assert!(e.starts_with("TD 3: Common.Cout.Cout = 0x1: 8000 output channels"), "{e}");
    // A chunk that NE 1 needs but that is not enabled.
    let l = layout(streams, 0, false, 1, [2, 3, 1, 1]);
    let e = read(&mem(bytes), 3, Some(1), &l).unwrap_err().to_string();
    assert!(e.starts_with("TD 3: KernelDMASrc.CoeffDMAConfig[1].En = 0x0"), "{e}");
}

/// The bias and post-scale header streams (our encoder's inference, conformance.md).
#[test]
fn short_streams_are_errors_naming_the_size_field() {
    let s = Stream { addr: 0xC0, size: 0x40 };
    assert!(vector(&mem(vec![0; 0x100]), 0, Some(1), &s, 40, "bias", 0x114).is_err());
    assert!(vector(&mem(vec![0; 0x100]), 0, Some(1), &s, 4, "bias", 0x114).is_ok());
    assert!(vector(&mem(vec![0; 0x100]), 0, None, &s, 4, "bias", 0x114).is_err());
}

/// A convolution with NonlinearMode 2 (`matmul.md` §2): every chunk is [table 0x80][its
/// blocks]; the coefficients are read after the table, the table from the chunks' heads,
/// which must agree.
#[test]
fn a_table_heads_every_chunk_before_the_coefficients() {
    let table = anec_backend_h13::activation::table(anec_backend_h13::activation::TableFn::Sigmoid);
    let chunks: Vec<Vec<u8>> = (0..16)
        .map(|i| {
            let mut c = table.clone();
            push(&mut c, bv(i));
            (0..2).for_each(|ci| push(&mut c, wv(i, ci, 0, 0)));
            pad64(&mut c);
            c
        })
        .collect();
    let (mut bytes, streams) = section(&chunks);
    let l = Layout { table: true, ..layout(streams, 0, true, 1, [16, 2, 1, 1]) };
    assert_eq!(l.dense_chunk(5), 0xc0);
    let k = read(&mem(bytes.clone()), 0, Some(1), &l).unwrap();
    for co in 0..16 {
        assert_eq!((k.bias[co], k.at(co, 1, 0, 0)), (bv(co), wv(co, 1, 0, 0)));
    }
    assert!(chunk_table(&mem(bytes.clone()), 0, Some(1), &l).is_ok());
    bytes[3 * 0xc0 + 5] ^= 1;
    let e = chunk_table(&mem(bytes), 0, Some(1), &l).unwrap_err().to_string();
    assert!(e.contains("CoeffBaseAddr[3]"), "{e}");
}
