"""Check, on all 150 records, the row padding of regions kept in L2 between tasks and the
4-row split of reductions (softmax.md §5, reduction.md §5, header-common-l2.md §4).

Kept regions: every task result kept in L2 (ResultType 0) with several rows (Hout > 1),
written fresh (not in place over its own source) by the planar engine (not a reduction,
whose results are statistic lines) or by an NE pass (MACCfg 0x101c0c / 0x121c0c) from L2
or a runtime input (not the [bias; scale] rows of a constant, `l2_pair.rs` ROWS_PAD, nor
an NE transposer, Cfg bit 28). The rule (`backend-h13/src/encode/l2.rs`
`kept_region`, `ne_rows_unpadded`):
  * an NE task writing channels of 0x100 bytes or more: no padding;
  * otherwise 0x20 when the unpadded row C*ch is a multiple of 0x400, 0x10 when it is a
    multiple of 0x200, else 0; for an NE pass, further 16-byte granules until the
    2^ShMax rows it writes together put each channel's ch bytes on distinct banks of the
    0x400-byte span.

Split reductions: every PE reduction (Cfg 0x51/0x61) over a row of W >= 128; the rule
(`lower/softmax.rs`, `lower/normalization.rs`, `lower/reduction.rs`): split (4 rows of
W/4) when W is a multiple of 128 and the reduction either loads the row from DRAM for
itself alone (SourceType 2) or reads in place a region an NE pass wrote in a plan over
several rows (x's rows as groups, or as channels).

    python3 kept_rows.py [-v]
"""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../conv'))
import glob, json
from common import CASES, words

BANK_SPAN = 0x400


def distinct_banks(row, chunk, rows):
    starts = [i * row % BANK_SPAN for i in range(rows)]
    for i, a in enumerate(starts):
        for b in starts[i + 1:]:
            gap = abs(a - b)
            if gap < chunk or BANK_SPAN - gap < chunk:
                return False
    return True


def predicted_pad(plane, ch, ne, ne_rows):
    if ne and ch >= 0x100:
        return 0
    pad = 0x20 if plane % 0x400 == 0 else 0x10 if plane % 0x200 == 0 else 0
    if ne and ne_rows > 1:
        for p in range(pad, BANK_SPAN, 0x10):
            if distinct_banks(plane + p, ch, ne_rows):
                return p
    return pad


def task_info(t):
    w = words(t)
    g = lambda a: w.get(a, 0)
    h = [int(x, 16) if isinstance(x, str) else x for x in t['header_words']]
    return g, h


def is_split(g):
    """A PE reduction reading each channel's row as several rows (row stride < channel)."""
    return g(0x38) != 0x100000 and (g(0x34) & 0xff) in (0x51, 0x61) and (g(0) >> 16) == 4 \
        and g(0x4810) < g(0x480c)


def main():
    verbose = '-v' in sys.argv
    kept_ok = kept_n = 0
    split_ok = split_n = 0
    for f in sorted(glob.glob(CASES + '/*.json')):
        r = json.load(open(f))
        tasks = [task_info(t) for t in r['task_descriptors']]
        for i, (g, h) in enumerate(tasks):
            ne = g(0x38) == 0x100000
            hout = g(0x14) >> 16
            if (g(0x4830) & 3) != 0 or hout <= 1:
                continue
            if not ne and (g(0x34) & 0xff) in (0x51, 0x61):
                continue  # a reduction's statistics
            if ne and (g(0xc804) not in (0x101c0c, 0x121c0c) or (h[8] & 0x1f) == 1):
                continue  # a convolution, or a constant's [bias; scale] rows
            base, ch, row, plane = g(0x4834), g(0x4838), g(0x483c), g(0x4840)
            if g(0x4808) == base and (g(0x4804) & 3) == 0:
                continue  # in place over its source: the source's layout
            if ne and (g(0x34) >> 28) & 1:
                continue  # a transposer: l2_pair.rs's Transposed rows, matmul.md's x^T
            c = g(0x10)
            unpadded = ((g(0x14) & 0xffff) * 2 + 15) // 16 * 16 * c
            ch = unpadded // max(c, 1)
            ne_rows = 1 << ((g(0x34) >> 16) & 7) if ne else 1
            pred = predicted_pad(unpadded, ch, ne, ne_rows)
            ok = pred == row - unpadded
            kept_n += 1
            kept_ok += ok
            if verbose or not ok:
                print('%s kept %-40s T%d %s C%d H%d ch %#x row %#x (pad %#x) predicted %#x' % (
                    'ok  ' if ok else 'MISS', r['case'], i, 'NE' if ne else 'PE', c, hout, ch, row,
                    row - unpadded, pred))
        for i, (g, h) in enumerate(tasks):
            if g(0x38) == 0x100000 or (g(0x34) & 0xff) not in (0x51, 0x61):
                continue
            split = is_split(g) or (g(0) >> 16) == 4 and (g(0x4804) & 3) == 2
            width = (g(0) & 0xffff) * (4 if split else 1)
            if width < 128:
                continue
            in_place = (g(0x4804) & 3) == 0
            writer = next((j for j in range(i - 1, -1, -1)
                           if (tasks[j][0](0x4830) & 3) == 0 and tasks[j][0](0x4834) == g(0x4808)), None)
            by_ne = writer is not None and tasks[writer][0](0x38) == 0x100000
            several = writer is not None and (tasks[writer][0](0x14) >> 16) > 1
            loads_alone = (h[6] >> 28) & 1 and (g(0x4804) & 3) == 2
            pred = width % 128 == 0 and (loads_alone or (in_place and by_ne and several))
            ok = pred == split
            split_n += 1
            split_ok += ok
            if verbose or not ok:
                print('%s split %-39s T%d W%d split %s predicted %s (SourceCfg %#x, writer %s)' % (
                    'ok  ' if ok else 'MISS', r['case'], i, width, split, pred, g(0x4804),
                    'T%d' % writer if writer is not None else 'DRAM'))
    print('kept regions with several rows: row padding %d/%d' % (kept_ok, kept_n))
    print('PE reductions over rows of 128 or more: split %d/%d' % (split_ok, split_n))


if __name__ == '__main__':
    main()
