#!/usr/bin/env python3
"""Rows streamed through L2 in pieces (header-common-l2.md §4c): for every task of the
150 records whose tile DMA loads its source, compare the L2 channel stride with the row
(Win x element size rounded up to 16 bytes) and check the rule

  * NE: the channel stride is min(row, 0x100);
  * planar engine, one source loaded for itself, outside a reduction: min(row, 0x400);
  * a stream (channel stride shorter than the row): rows unpadded and the result aliased
    (L2BfrMode 1) or kept, except an NE copy of several channels filling whole banks
    (C x 0x100 a multiple of 0x400) over several rows to memory: source row + 0x50,
    result by the result words in the same pieces, row + 0xa0, ShMax 4 (one record).

Reductions (Cfg 0x51 / 0x61: views and 0x80 strips, reduction.md) and the NE's W -> C
transposers with 0x40-byte pieces (Cfg bit 28, matmul.md) are listed apart. No rule
looks at a case name.

Usage: python3 streams.py [-v]   (-v lists every task checked)
"""
import glob
import json
import os
import sys

SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
CASES = SHARED + "/fixtures/apple-h13-oracles/cases"
VERBOSE = "-v" in sys.argv
NE_PIECE, PE_PIECE, BANK_SPAN = 0x100, 0x400, 0x400


def words(t):
    w = {}
    for b in t["blocks"].values():
        for a, v in b["words"].items():
            w[int(a, 16)] = int(v, 16)
    return w


def ru(v, a):
    return (v + a - 1) // a * a


def tasks():
    for f in sorted(glob.glob(CASES + "/*.json")):
        r = json.load(open(f))
        for i, t in enumerate(r["task_descriptors"]):
            w = words(t)
            h = [int(x, 16) for x in t["header_words"]]
            yield r["case"], i, w, h


def main():
    checked, streams, misses, apart = 0, [], [], []
    for case, i, w, h in tasks():
        if not w.get(0x13800, 0) & 1:
            continue  # the source is not loaded by the tile DMA
        ne = (h[8] >> 24) & 7 != 0
        cfg = w.get(0x34, 0)
        W, H = w.get(0, 0) & 0x7FFF, (w.get(0, 0) >> 16) & 0x7FFF
        C = w.get(0xC, 0)
        size = 1 if (w.get(0x8, 0) & 3) in (0, 1) else 2
        row = ru(W * size, 16)
        ch = w.get(0x480C, 0)
        label = "%s T%d %s %dx%dx%d" % (case, i, "NE" if ne else "PE", C, H, W)
        reduction = not ne and (cfg >> 4) & 0xF in (5, 6)
        transposer = ne and (cfg >> 28) & 1 and ch < NE_PIECE and row > ch
        if reduction or transposer:
            if ch < row:
                apart.append("%s: channel %#x of a %#x row (%s)" % (label, ch, row, "reduction" if reduction else "transposer"))
            continue
        one_source = not w.get(0x4804, 0) & (1 << 24) and (cfg & 0xF0) in (0x20, 0) if not ne else True
        piece = NE_PIECE if ne else (PE_PIECE if one_source else 1 << 30)
        want = min(row, piece)
        checked += 1
        ok = ch == want
        detail = ""
        if ch < row:
            plane = C * ch
            pad = w.get(0x4810, 0) - plane
            rcfg = w.get(0x4830, 0)
            kept = rcfg & 3 == 0
            copy = ne and w.get(0xC804, 0) == 0x101C0C
            padded = copy and H > 1 and plane % BANK_SPAN == 0 and not kept and not (cfg >> 28) & 1
            shmax = (cfg >> 16) & 7
            if padded:
                rpad = w.get(0x483C, 0) - plane
                form_ok = (pad, (rcfg >> 3) & 1, w.get(0x4838, 0), rpad, shmax) == (0x50, 0, ch, 0xA0, 4)
                detail = "padded: source +%#x, result L2BfrMode %d channel %#x +%#x, ShMax %d" % (
                    pad, (rcfg >> 3) & 1, w.get(0x4838, 0), rpad, shmax)
            else:
                form_ok = pad == 0 and (kept or (rcfg >> 3) & 1 == 1)
                detail = "unpadded (+%#x), result %s" % (pad, "kept" if kept else "L2BfrMode %d" % ((rcfg >> 3) & 1))
            ok = ok and form_ok
            streams.append("%s: channel %#x of a %#x row, %s%s" % (label, ch, row, detail, "" if ok else "  MISS"))
        if not ok:
            misses.append("%s: channel %#x, rule %#x %s" % (label, ch, want, detail))
        elif VERBOSE and ch >= row:
            print("  whole rows  %s: channel %#x" % (label, ch))
    print("loaded sources checked: %d, rule holds on %d" % (checked, checked - len(misses)))
    print("streamed (channel stride shorter than the row): %d" % len(streams))
    for s in streams:
        print("  " + s)
    print("listed apart (reductions' views and strips, the NE transposers' 0x40 pieces): %d" % len(apart))
    for s in apart:
        print("  " + s)
    for m in misses:
        print("MISS " + m)


if __name__ == "__main__":
    main()
