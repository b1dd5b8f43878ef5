#!/usr/bin/env python3
"""Predict the task descriptors (header words + register words, by register address) of Apple's
modern H13 program for a unary activation (and real_div), from the MIL op and the shape only,
and compare with the records.

    python3 predict.py        # per case: MATCH or the mismatching words with field names
"""
import os
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import mil_op, CASES, PATTERNS  # noqa: E402
from actlut import h  # noqa: E402

REGMAP = json.load(open(SHARED + "/fixtures/apple-h13/regmap/aneregs.json"))
# byte offset of each register block inside the dense v4.2.1 image the field map describes
BLOCKS = {0x1F800: (0x28, 62), 0x00000: (0x124, 16), 0x13800: (0x168, 28), 0x04800: (0x1DC, 18),
          0x08800: (0x228, 4), 0x0C800: (0x23C, 5), 0x17800: (0x254, 7)}
HEADER_NAMES = ["h0 TID/NID/LNID/EON", "h1 ExeCycles/NextSize", "h2 LogEvents", "h3 Exceptions",
                "h4 DebugLogEvents", "h5 DebugExceptions", "h6 SPL/TSR/TSE/SrcLoc/DstLoc/...",
                "h7 NextPointer", "h8 RBase/WBase/ENE...", "h9 KBase0/KBE0..."]


def field_names(addr):
    for base, (off, n) in BLOCKS.items():
        if base <= addr < base + 4 * n:
            o = off + 4 + (addr - base)
            names = [k.replace("aneRegs.", "") for k, (by, bi, sz) in REGMAP if o <= by < o + 4]
            return ",".join(names) if names else "(unnamed)"
    return "?"


def align(x, a):
    return (x + a - 1) // a * a


# ----------------------------------------------------------------------------- op classes
# How each MIL op is executed (one NE or PE task):
#   'lut'   NE, NonlinearMode 2, table through kernel-DMA coefficient channels 0..15
#   'relu'  NE, NonlinearMode 1 (native), no table
#   'pe'    planar engine op (abs), NE passes through
LUT_OPS = {"sigmoid", "tanh", "gelu", "silu", "exp", "sqrt", "rsqrt", "leaky_relu"}


def ne_words(op, params):
    """NE block 0xc800..0xc810."""
    if op == "abs":
        return {0xC800: 0x80, 0xC804: 0x00100000, 0xC808: 0, 0xC80C: 0, 0xC810: 0}
    kernel_cfg = 0x82                       # KernelFmt 2, PalettizedBits 8
    # MACCfg: OpMode 4 | KernelMode | BinaryPoint 0x1c | NonlinearMode | bit 20
    nl = 1 if op == "relu" else 2
    opmode = 0 if op == "rsqrt" else 4      # rsqrt: OpMode 0 (epsilon added through AccBias)
    mac = 0x100000 | (nl << 16) | (0x1C << 8) | 0x8 | opmode
    # rsqrt(x, epsilon): the NE adds AccBias = fp16(epsilon) before the table (1e-6 -> 0x0011)
    acc_bias = h(params.get("epsilon", 1e-4)) if op == "rsqrt" else 0
    post = 0x3C00
    if op == "exp":
        post = 0x3DC5                        # fp16(log2 e): exp(x) = 2^(x log2 e), table is 2^f
    return {0xC800: kernel_cfg, 0xC804: mac, 0xC808: 0, 0xC80C: acc_bias, 0xC810: post}


def kernel_dma(has_table, channels=16):
    w = {}
    if has_table:
        w[0x1F800] = 0x40
        w[0x1F804] = 0
        for i in range(16):
            w[0x1F808 + 4 * i] = 0x81 if i < channels else 0x80   # En | CacheHint 2
            w[0x1F848 + 4 * i] = 0                                # CoeffBaseAddr (relocated)
            w[0x1F888 + 4 * i] = 0x80 if i < channels else 0x40   # 128-byte table per channel
    else:
        w[0x1F800] = 0
        w[0x1F804] = 0
        for i in range(16):
            w[0x1F808 + 4 * i] = 0x80
    for i in range(4):
        w[0x1F8C8 + 4 * i] = 0x80
        w[0x1F8D8 + 4 * i] = 0
        w[0x1F8E8 + 4 * i] = 0x40
    return w


def records_for(has_table):
    if has_table:
        return [(0x1F800, 62), (0x00000, 16), (0x13800, 28), (0x04800, 18), (0x08800, 4), (0x0C800, 5), (0x17800, 7)]
    return [(0x1F800, 18), (0x1F8C8, 12), (0x00000, 16), (0x13800, 28), (0x04800, 18), (0x08800, 4), (0x0C800, 5), (0x17800, 7)]


def predict_unary(op, params, shape):
    N, C, H, W = shape
    has_table = op in LUT_OPS
    pe = op == "abs"
    row = align(2 * W, 64)              # DRAM row stride (bytes)
    plane = H * row
    depth = C * plane
    cs = align(2 * W, 16)               # L2 channel stride
    l2row = C * cs + (0x20 if pe else (0x30 if H > 1 else 0))
    hdr = [0x02000000,
           (C * H * N) // 256,          # ExeCycles: cost estimate; fits the 1x1 cases only
           0x42A, 0,
           0x00FFD86A if op in ("sqrt", "rsqrt") else 0x00FFF86A,
           0, 0x30009800, 0,
           0x00025024 if pe else 0x05025024,
           0x21 if has_table else 0]
    w = {}
    w.update(kernel_dma(has_table))
    w.update({0x00: W | (H << 16), 0x04: 1, 0x08: 0x22, 0x0C: C, 0x10: C, 0x14: W | (H << 16), 0x18: 1,
              0x1C: 0x5000A021, 0x20: 0x2041, 0x24: 0x10001 if pe else 0x14001, 0x28: H,
              0x2C: 4 if pe else 0, 0x30: 0,
              0x34: 0x21 if pe else (0x230001 if H > 1 else 0x200001),
              0x38: 0 if pe else 0x100000,
              0x3C: 1 if op == "rsqrt" else 0})
    l2 = {0x4800: 0, 0x4804: 0x500172, 0x4808: 0, 0x480C: cs, 0x4810: l2row, 0x4814: C * cs, 0x4818: C * cs,
          0x4830: 0x50017A, 0x4834: H * l2row}
    for a in range(0x481C, 0x4830, 4):
        l2[a] = 0
    for a in range(0x4838, 0x4848, 4):
        l2[a] = 0
    w.update(l2)
    w.update({0x8800: 0x40 if pe else 0, 0x8804: 0x3C000000 if pe else 0, 0x8808: 0x3C000000 if pe else 0,
              0x880C: 0x3F800000 if pe else 0})
    w.update(ne_words(op, params))
    src = {a: 0 for a in range(0x13800, 0x13870, 4)}
    src.update({0x13800: 0x33881, 0x13804: 0x8880, 0x1380C: row, 0x13810: plane, 0x13814: depth, 0x13818: depth,
                0x13838: 0x01002031, 0x13840: 0x100})
    w.update(src)
    w.update({0x17800: 0x040000C1, 0x17804: 0, 0x17808: row, 0x1780C: plane, 0x17810: depth, 0x17814: depth,
              0x17818: 0x01302031})
    return [{"header": hdr, "words": w, "records": records_for(has_table)}]


def predict_real_div(shape):
    """real_div(x, z) = x * (1/z): task 0 (NE) reciprocal table on z (mode 0x67), result kept in
    L2; task 1 (PE) multiplies x by it.  Only the 1x64x1x1 record exists: the shape-dependent
    words follow the unary rules; the rest is as observed."""
    N, C, H, W = shape
    row = align(2 * W, 64)
    plane = H * row
    depth = C * plane
    cs = align(2 * W, 16)
    t0h = [0x00000000, (125 << 16), 0x408, 0, 0x00FFD868, 0, 0x10000800, 0x300, 0x04800026, 0x21]
    t0 = kernel_dma(True, channels=8)
    t0.update({0x00: W | (H << 16), 0x04: 1, 0x08: 0x22, 0x0C: C, 0x10: C, 0x14: W | (H << 16), 0x18: 1,
               0x1C: 0x5000A021, 0x20: 0x2041, 0x24: 0x14001, 0x28: H, 0x2C: 0, 0x30: 0, 0x34: 0x10180001,
               0x38: 0x100000, 0x3C: 0})
    l2 = {a: 0 for a in range(0x4800, 0x4848, 4)}
    l2.update({0x4804: 0x500172, 0x4808: 0x80, 0x480C: cs, 0x4810: C * cs, 0x4814: C * cs, 0x4818: C * cs,
               0x4830: 0x500170, 0x4838: 0x80, 0x483C: 0x80, 0x4840: 0x80})
    t0.update(l2)
    t0.update({0x8800: 0, 0x8804: 0, 0x8808: 0, 0x880C: 0})
    t0.update({0xC800: 0x82, 0xC804: 0x121C0C, 0xC808: 0, 0xC80C: 0, 0xC810: 0x3C00})
    src = {a: 0 for a in range(0x13800, 0x13870, 4)}
    src.update({0x13800: 0x33881, 0x13804: 0x8880, 0x1380C: row, 0x13810: plane, 0x13814: depth, 0x13818: depth,
                0x13838: 0x01002031, 0x13840: 0x100})
    t0.update(src)
    t0.update({0x17800: 0xC0, 0x17804: 0, 0x17808: 0, 0x1780C: 0, 0x17810: 0, 0x17814: 0, 0x17818: 0x01000000})
    t1h = [0x03000001, 0, 0x422, 0, 0x00FFF86A, 0, 0x30009000, 0, 0x00025024, 0]
    t1 = kernel_dma(False)
    t1.update({0x00: W | (H << 16), 0x04: 1, 0x08: 0x2A, 0x0C: C, 0x10: C, 0x14: W | (H << 16), 0x18: 1,
               0x1C: 0x5000A021, 0x20: 0x2041, 0x24: 0x10001, 0x28: H, 0x2C: 4, 0x30: 0x200, 0x34: 0x31,
               0x38: 0, 0x3C: 0})
    l2 = {a: 0 for a in range(0x4800, 0x4848, 4)}
    l2.update({0x4804: 0x172, 0x4808: 0x80, 0x480C: cs, 0x4810: C * cs + 0x20, 0x4814: C * cs, 0x4818: C * cs,
               0x4820: 0x80, 0x4824: 0x80, 0x4828: 0x80, 0x4830: 0x14A, 0x4834: C * cs + 0xA0})
    t1.update(l2)
    t1.update({0x8800: 0x80004, 0x8804: 0x3C000000, 0x8808: 0x3C000000, 0x880C: 0x3F800000})
    t1.update({0xC800: 0x80, 0xC804: 0x100000, 0xC808: 0, 0xC80C: 0, 0xC810: 0})
    t1.update(src)
    t1.update({0x17800: 0x040000C1, 0x17804: 0, 0x17808: row, 0x1780C: plane, 0x17810: depth, 0x17814: depth,
               0x17818: 0x01302031})
    return [{"header": t0h, "words": t0, "records": records_for(True)},
            {"header": t1h, "words": t1, "records": records_for(False)}]


def predict(rec):
    op, params = mil_op(rec)
    shape = rec["tensor_descriptors"][0]["shape"]
    if op == "real_div":
        return predict_real_div(shape)
    return predict_unary(op, params, shape)


def compare(rec, pred):
    out = []
    tds = rec["task_descriptors"]
    if len(tds) != len(pred):
        out.append("task count: predicted %d, Apple %d" % (len(pred), len(tds)))
    for ti, (t, p) in enumerate(zip(tds, pred)):
        hw = [int(x, 16) for x in t["header_words"]]
        for i, (a, b) in enumerate(zip(p["header"], hw)):
            if a != b:
                out.append("task %d header %-34s predicted 0x%08x Apple 0x%08x" % (ti, HEADER_NAMES[i], a, b))
        recs = [(int(r["address"], 16), r["count"]) for r in t["records"]]
        if recs != p["records"]:
            out.append("task %d record layout predicted %s Apple %s" % (ti, p["records"], recs))
        words = {}
        for b, bv in t["blocks"].items():
            for a, v in bv["words"].items():
                words[int(a, 16)] = int(v, 16)
        for a in sorted(set(words) | set(p["words"])):
            pa, ap = p["words"].get(a), words.get(a)
            if pa != ap:
                out.append("task %d reg 0x%05x %-45s predicted %s Apple %s" % (
                    ti, a, field_names(a)[:45], "-" if pa is None else "0x%08x" % pa, "-" if ap is None else "0x%08x" % ap))
    return out


def main():
    files = sorted(set(f for p in PATTERNS for f in glob.glob(os.path.join(CASES, p))))
    n_ok = 0
    for f in files:
        rec = json.load(open(f))
        mism = compare(rec, predict(rec))
        n_ok += not mism
        print("%-9s %s" % ("MATCH" if not mism else "MISMATCH", rec["case"]))
        for m in mism:
            print("    " + m)
    print("%d/%d cases: every header and register word predicted" % (n_ok, len(files)))


if __name__ == "__main__":
    main()
