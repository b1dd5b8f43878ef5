//! Tests of the register rules for pooling, per-channel gain/offset streams and window
//! geometry, on hand-built tasks.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::layout::Strides;
use crate::task::{ChannelVectors, ConvGeom, Engine, KernelChunk, PoolMode, Surface};
use anec_ir::{DType, Layout, TensorType};

fn surface(bar: u8, c: u32, h: u32, w: u32) -> Surface {
    let ty = TensorType::nchw(1, c, h, w, DType::F16);
    Surface { bar, ty, strides: Strides::of(&ty, &Layout::default()), offset: 0 }
}

fn task(engine: Engine, src: Surface, dest: Surface) -> Task {
    Task::new("t", engine, vec![src], dest)
}

fn pool(mode: PoolMode, k: u32) -> Task {
    let mut t = task(Engine::NePool, surface(5, 8, 28, 28), surface(4, 8, 14, 14));
    t.conv = ConvGeom { kh: k, kw: k, sy: 2, sx: 2, ..ConvGeom::default() };
    t.pool = Some(mode);
    t
}

fn encode(t: &Task) -> TdImage {
    encode_task(t, ChainPos { index: 0, count: 1 }, &crate::generation::V4_2).unwrap()
}

#[test]
fn max_pool_sets_the_max_bit_and_a_windowed_result() {
    let td = encode(&pool(PoolMode::Max, 2));
    assert_eq!(td.word(0x244) & (1 << 19), 1 << 19);
    assert_eq!(td.get("NE.MACCfg.OpMode"), Some(0));
    assert_eq!(td.get("NE.MACCfg.KernelMode"), Some(1));
    assert_eq!(td.get("L2.L2Cfg.PaddingMode"), Some(3));
    assert_eq!(td.get("L2.ResultCfg.L2BfrMode"), Some(0));
    assert_eq!(td.get("TileDMADst.DMAConfig.L2BfrMode"), Some(0));
    assert_eq!(td.get("Common.GroupConvCfg.UnicastEn"), Some(1));
    // Eight output channels: ActiveNE 3, ENE = ActiveNE + 1.
    assert_eq!(td.get("aneTD.Header[8].ENE"), Some(4));
    assert_eq!((td.get("Common.ConvCfg.Kh"), td.get("Common.ConvCfg.Sy")), (Some(2), Some(2)));
    assert_eq!((td.get("Common.OutDim.Hout"), td.get("Common.InDim.Win")), (Some(14), Some(28)));
    // A 14 x 8-channel fp16 result: channel stride 32 bytes, row stride 8 channels.
    assert_eq!(td.get("L2.ConvResultChannelStride.Stride"), Some(2));
    assert_eq!(td.get("L2.ConvResultRowStride.Stride"), Some(16));
    assert_eq!(td.get("aneTD.Header[9].KBE0"), Some(0));
}

#[test]
fn average_pool_scales_by_the_window_and_keeps_the_max_bit_clear() {
    let mut t = pool(PoolMode::Avg, 2);
    t.affine.scale = 0x3400;
    let td = encode(&t);
    assert_eq!(td.word(0x244) & (1 << 19), 0);
    assert_eq!(td.get("NE.PostScale.PostScale"), Some(0x3400));
    assert_eq!(td.get("L2.L2Cfg.PaddingMode"), Some(1));
}

#[test]
fn channel_vectors_use_the_bias_and_post_scale_streams() {
    let mut t = task(Engine::NePass, surface(5, 8, 2, 2), surface(4, 8, 2, 2));
    t.vectors = ChannelVectors {
        bias: Some(KernelChunk { offset: 0x40, size: 0x40 }),
        scale: Some(KernelChunk { offset: 0x80, size: 0x40 }),
    };
    let td = encode(&t);
    assert_eq!([td.word(0xF4), td.word(0xF8), td.word(0xFC), td.word(0x100)], [0x81, 0x81, 0x80, 0x80]);
    assert_eq!([td.word(0x104), td.word(0x108), td.word(0x10C)], [0x40, 0x80, 0]);
    assert_eq!([td.word(0x114), td.word(0x118), td.word(0x11C)], [0x40, 0x40, 0]);
    assert_eq!(td.get("NE.MACCfg.BiasMode"), Some(1));
    assert_eq!(td.get("NE.AccBias.AccBias"), Some(0x3C00));
    assert_eq!(td.get("NE.MACCfg.PostScaleMode"), Some(1));
    assert_eq!(td.get("NE.MACCfg.MatrixBiasEn"), Some(0));
    assert_eq!((td.get("aneTD.Header[9].KBE0"), td.word(0x2C)), (Some(1), 0x40));
    // No coefficient channel is enabled by the vectors.
    assert_eq!(td.get("KernelDMASrc.CoeffDMAConfig[0].En"), Some(0));
}

#[test]
fn without_vectors_the_header_streams_keep_apples_idle_words() {
    let td = encode(&task(Engine::NePass, surface(5, 1, 1, 77), surface(4, 1, 1, 77)));
    assert_eq!([td.word(0xF4), td.word(0x104), td.word(0x114)], [0x80, 0, 0]);
    assert_eq!(td.get("NE.MACCfg.BiasMode"), Some(0));
}

fn conv(cout: u32, chunks: usize, win: u32) -> Task {
    let mut t = task(Engine::NeConv, surface(5, 1, win, win), surface(4, cout, win, win));
    t.kernel = (0..chunks as u64).map(|i| KernelChunk { offset: 64 * i, size: 64 }).collect();
    t.kernel_fmt = Some(DType::F16);
    t.conv = ConvGeom { kh: 5, kw: 5, pad_top: 2, pad_left: 2, ..ConvGeom::default() };
    t
}

#[test]
fn active_ne_counts_weight_chunks_and_small_source_needs_a_narrow_row() {
    let td = encode(&conv(8, 8, 28));
    assert_eq!(td.get("Common.Cfg.ActiveNE"), Some(3));
    assert_eq!(td.get("Common.Cfg.SmallSourceMode"), Some(0));
    assert_eq!((td.get("Common.ConvCfg.Px"), td.get("Common.ConvCfg.Py")), (Some(2), Some(2)));
    let td = encode(&conv(10, 10, 4));
    assert_eq!(td.get("Common.Cfg.ActiveNE"), Some(4));
    assert_eq!(td.get("Common.Cfg.SmallSourceMode"), Some(1));
}

/// Rationale §3 of the convolution analysis: 8 wide with small chunks is SmallSourceMode
/// 4/4/4 (0x244405); 16x16 3x3 over 64 channels shares (0x233301); 1x1 over 64 only ShMax
/// (0x230001); depthwise reads one input channel (0x230001).
#[test]
fn convolution_scheduling_follows_width_chunks_and_taps() {
    let conv64 = |hw: u32, k: u32| {
        let mut t = task(Engine::NeConv, surface(4, 64, hw, hw), surface(5, 64, hw, hw));
        t.kernel = vec![KernelChunk { offset: 0, size: 0x1240 }; 16];
        t.conv = ConvGeom { kh: k, kw: k, ..ConvGeom::default() };
        t
    };
    assert_eq!(common::conv_schedule(&conv64(8, 3)), (true, [4, 4, 4]));
    assert_eq!(common::conv_schedule(&conv64(16, 3)), (false, [3, 3, 3]));
    assert_eq!(common::conv_schedule(&conv64(16, 1)), (false, [0, 0, 3]));
    let mut t = conv64(16, 3);
    t.conv.unicast = true;
    assert_eq!(common::conv_schedule(&t), (false, [0, 0, 3]));
}

/// Current-corpus NE pass tasks: 64x8x8 ShMax 3, 12x64x64 1, 8x128x128 0, one row 0.
#[test]
fn pass_tasks_share_by_the_rows_that_fit() {
    let cur = &crate::generation::CURRENT;
    let cfg = |c: u32, h: u32, w: u32| {
        let t = task(Engine::NePass, surface(4, c, h, w), surface(5, c, h, w));
        let td = encode_task(&t, ChainPos { index: 0, count: 1 }, cur).unwrap();
        (td.get("Common.Cfg.ShPref").unwrap(), td.get("Common.Cfg.ShMax").unwrap())
    };
    assert_eq!(cfg(64, 8, 8), (0, 3));
    assert_eq!(cfg(12, 64, 64), (0, 1));
    assert_eq!(cfg(8, 128, 128), (0, 0));
    assert_eq!(cfg(512, 1, 1), (0, 0));
}

/// The cast of an 8-bit input (Apple's `cast_b_to_f16_1x1x64x1`): the planar engine's
/// identity reads u8 (InFmt 0) and writes fp16; the source tile DMA moves the 8-bit format
/// with FmtMode 0 and Truncate 0 (Fmt word 0x1000000) and L2 SourceCfg.DMAFmt mirrors it
/// (0x500132); the destination keeps the fp16 fields (0x1302031).
#[test]
fn an_eight_bit_source_is_loaded_with_fmt_mode_0() {
    let cur = &crate::generation::CURRENT;
    let convert = |dtype: DType| {
        let ty = TensorType::nchw(1, 1, 64, 1, dtype);
        let src = Surface { bar: 5, ty, strides: Strides::of(&ty, &Layout::default()), offset: 0 };
        let mut t = task(Engine::Pe, src, surface(4, 1, 64, 1));
        t.pe = Some(crate::task::PeOp { mode: 0, negate: false, bias: 0, scale: 0x3C00, abs: false, relu: false });
        encode_task(&t, ChainPos { index: 0, count: 1 }, cur).unwrap()
    };
    let td = convert(DType::U8);
    assert_eq!((td.get("Common.ChCfg.InFmt"), td.get("Common.ChCfg.OutFmt")), (Some(0), Some(2)));
    assert_eq!(td.word(0x1A4), 0x0100_0000, "TileDMASrc.Fmt");
    assert_eq!(td.word(0x1E4), 0x0050_0132, "L2.SourceCfg");
    assert_eq!(td.word(0x270), 0x0130_2031, "TileDMADst.Fmt");
    let td = convert(DType::I8);
    assert_eq!((td.get("Common.ChCfg.InFmt"), td.word(0x1A4)), (Some(1), 0x0100_1000));
    assert_eq!(td.get("L2.SourceCfg.DMAFmt"), Some(0));
    // fp16: FmtMode 1, Truncate 3, MemFmt 2, and DMAFmt 1.
    let td = convert(DType::F16);
    assert_eq!((td.word(0x1A4), td.get("L2.SourceCfg.DMAFmt")), (0x0100_2031, Some(1)));
}
