#!/usr/bin/env python3
"""Decoding of H13 task streams for the chain analysis (docs/rationale/current-compiler/chains.md).

Reads either a record of Apple's current compiler (`apple-h13-oracles/cases/<case>.json`)
or a program anec wrote (`.hwx`: the `__TEXT,__text` task chain), and turns every task into
a `Task`: the register words by address, and the decoded plan facts the chain analysis
needs (engine, operation, shapes, where each operand comes from and where the result goes,
the kernel stream, the header's section flags). No rule here looks at a case name.

Register addresses are the record addresses of the corpus README (common 0x00000, L2
0x04800, PE 0x08800, NE 0x0c800, tile-DMA source 0x13800, destination 0x17800, kernel DMA
0x1f800).
"""
import json
import os
import struct

SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
CASES = os.path.join(SHARED, "fixtures/apple-h13-oracles/cases")

PE_OPS = {0: "add", 1: "mul", 2: "max", 3: "min"}


def record(case):
    with open(os.path.join(CASES, case + ".json")) as f:
        return json.load(f)


class Task:
    """One task: header words `hw` and register words `w` (address -> value)."""

    def __init__(self, index, hw, w, records=None):
        self.i = index
        self.hw = hw
        self.w = w
        self.records = records or []

    # -- raw access ----------------------------------------------------------------------
    def g(self, a, default=0):
        return self.w.get(a, default)

    def has(self, a):
        return a in self.w

    # -- header ----------------------------------------------------------------------------
    @property
    def w6(self):
        return self.hw[6]

    def flag(self, bit):
        return self.hw[6] >> bit & 1

    def flags(self):
        names = [(8, "DA"), (11, "SPL"), (12, "TSR"), (13, "SPC"), (14, "DPC"), (15, "TSE"), (24, "TDE"), (28, "SrcLoc"), (29, "DstLoc")]
        return [n for b, n in names if self.flag(b)]

    def bars(self):
        w8, w9 = self.hw[8], self.hw[9]
        r0 = w8 & 31 if w8 >> 5 & 1 else None
        r1 = w8 >> 6 & 31 if w8 >> 11 & 1 else None
        wb = w8 >> 12 & 31 if w8 >> 17 & 1 else None
        k = w9 & 31 if w9 >> 5 & 1 else None
        return r0, r1, wb, k

    @property
    def exe(self):
        return self.hw[1] & 0xFFFF

    # -- engine and operation --------------------------------------------------------------
    @property
    def engine(self):
        return "PE" if self.g(0xC804) == 0x100000 else "NE"

    @property
    def cfg(self):
        return self.g(0x34)

    @property
    def transposed(self):
        """Common.Cfg bit 28: the NE writes its result transposed (C <-> W)."""
        return self.cfg >> 28 & 1

    @property
    def kernel_chunks(self):
        """(channel, base, size) of the enabled kernel-DMA channels."""
        if not self.has(0x1F848):
            return []
        out = []
        for i in range(16):
            if self.g(0x1F808 + 4 * i) & 1:
                out.append((i, self.g(0x1F848 + 4 * i), self.g(0x1F888 + 4 * i)))
        return out

    def op(self):
        """A short name of what the task computes."""
        if self.engine == "PE":
            p = self.g(0x8800)
            mode = self.cfg >> 4 & 7
            name = PE_OPS[p >> 2 & 3]
            two = p >> 19 & 1
            parts = []
            if mode in (5, 6):
                red = {0: "sum", 1: "op1", 2: "max", 3: "min"}[p & 3]  # unshifted op (reduction.md)
                if p & 0x10:
                    red = "sum-sq"
                parts.append("reduce-" + red)
                if two:
                    parts.append("(op2 %s)" % ("sub" if p >> 16 & 1 or p >> 18 & 1 else "add"))
            elif mode == 2:
                parts.append("copy" if p == 0 else name + "1")
            elif mode == 4:
                parts.append("ternary-" + ("sub" if p >> 18 & 1 else name) + "*op3")
            else:
                parts.append("sub" if (name == "add" and p >> 18 & 1) else name)
            if p & 0x1000:
                parts.append("+recip")
            if p & 0x2000:
                parts.append("+rsqrt")
            if p & 0x20:
                parts.append("+relu")
            if p & 0x40:
                parts.append("abs")
            bs = self.g(0x8804)
            if bs != 0x3C000000:
                parts.append("scale=%s bias=%s" % (hex(bs >> 16), hex(bs & 0xFFFF)))
            return " ".join(parts)
        mac = self.g(0xC804)
        opmode, kmode, nl = mac & 7, mac >> 3 & 1, mac >> 16 & 3
        runtime_kernel = self.g(0xC800) >> 16 & 1
        chunks = self.kernel_chunks
        table = nl == 2
        if opmode == 4 and kmode:
            s = "pass"
            if table:
                s = "table"
        elif opmode == 0 and kmode == 1:
            s = "chan-reduce"  # OpMode 0 on the unity kernel (channel sum)
            if table:
                s += "+table"
        elif opmode == 3:
            s = "chan-max"
        elif opmode == 0:
            s = "conv1x1" + ("(runtime kernel)" if runtime_kernel else "")
            if nl == 1:
                s += "+relu"
            elif nl == 2:
                s += "+table"
        else:
            s = "mac%x" % mac
        if self.transposed:
            s += " T"
        ps = self.g(0xC810)
        if ps not in (0, 0x3C00):
            s += " postscale=%s" % hex(ps)
        return s

    # -- shapes ----------------------------------------------------------------------------
    def dims(self):
        ind, outd = self.g(0x0), self.g(0x14)
        return dict(Win=ind & 0x7FFF, Hin=ind >> 16 & 0x7FFF, Cin=self.g(0xC), Cout=self.g(0x10),
                    Wout=outd & 0x7FFF, Hout=outd >> 16 & 0x7FFF)

    def shape_str(self):
        d = self.dims()
        s = "%dx%dx%d" % (d["Cin"], d["Hin"], d["Win"])
        o = "%dx%dx%d" % (d["Cout"], d["Hout"], d["Wout"])
        return s if s == o else s + "->" + o

    # -- L2 and DMA ---------------------------------------------------------------------------
    @property
    def src_dma(self):
        return self.g(0x13800) & 1

    @property
    def src2_dma(self):
        """L2 SourceCfg bit 24: the second source comes through the tile DMA (0x13804 then
        holds 0x33880; its bit 0 is not an enable)."""
        return self.g(0x4804) >> 24 & 1

    @property
    def dst_dma(self):
        return self.g(0x17800) & 1

    def operands(self):
        """Number of PE operands (Cfg mode), 1 for NE tasks."""
        if self.engine == "NE":
            return 1
        mode = self.cfg >> 4 & 7
        return {2: 1, 3: 2, 4: 3, 5: 1, 6: 2}.get(mode, 1)

    def src_region(self):
        """(base, size) of source 1 in L2 (staged by the tile DMA or read in place)."""
        d = self.dims()
        base, row = self.g(0x4808), self.g(0x4810)
        return base, max(row, 0x10) * max(d["Hin"], 1)

    def src2_region(self):
        if self.operands() < 2:
            return None
        d = self.dims()
        base, row = self.g(0x481C), self.g(0x4824)
        return base, max(row, 0x10) * max(d["Hin"], 1)

    def result_region(self):
        """(base, size) of the result in L2 (kept, or staged for the destination DMA)."""
        d = self.dims()
        base = self.g(0x4834)
        ch, row, plane = self.g(0x4838), self.g(0x483C), self.g(0x4840)
        if self.engine == "PE" and (self.cfg >> 4 & 7) in (5, 6) and row:
            # A reduction writes one value (line) per channel and group: its row word
            # already spans the groups; Common.OutDim repeats the input view.
            return base, max(row, plane)
        if row:
            return base, row * max(d["Hout"], 1)
        chs = -(-2 * d["Wout"] // 16) * 16
        return base, d["Cout"] * chs * max(d["Hout"], 1)

    def kept(self):
        """The result stays in L2 (no destination DMA)."""
        return not self.dst_dma

    def l2_words(self):
        return [self.g(a) for a in range(0x4800, 0x4844, 4)]


def parse_stream(words, start, limit):
    """Header words and register records of one task from a word list."""
    hw = words[start:start + 10]
    n = 10
    if hw[6] >> 24 & 1:
        hw = words[start:start + 11]
        n = 11
    w, recs = {}, []
    p = start + n
    while p < limit:
        h = words[p]
        if h == 0:
            break
        count = (h >> 26) + 1
        addr = h & 0x3FFFFFF
        recs.append((addr, count))
        for k in range(count):
            w[addr + 4 * k] = words[p + 1 + k]
        p += 1 + count
    return hw, w, recs


def tasks_of_record(r):
    out = []
    for i, t in enumerate(r["task_descriptors"]):
        w = {}
        for b in t["blocks"].values():
            for a, v in b["words"].items():
                w[int(a, 16)] = int(v, 16)
        hw = [int(x, 16) for x in t["header_words"]]
        out.append(Task(i, hw, w))
    return out


def hwx_sections(data):
    """{(segname, sectname): (offset, size)} of a Mach-O-like .hwx file."""
    magic, _cpu, _sub, _ft, ncmds, _sz, _fl, _res = struct.unpack_from("<8I", data, 0)
    off = 32
    out = {}
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<2I", data, off)
        if cmd == 0x19:
            nsects = struct.unpack_from("<I", data, off + 64)[0]
            s = off + 72
            for _k in range(nsects):
                sect = data[s:s + 16].rstrip(b"\0").decode()
                seg = data[s + 16:s + 32].rstrip(b"\0").decode()
                _addr, size = struct.unpack_from("<2Q", data, s + 32)
                foff = struct.unpack_from("<I", data, s + 48)[0]
                out[(seg, sect)] = (foff, size)
                s += 80
        off += cmdsize
    return out


def tasks_of_hwx(path):
    data = open(path, "rb").read()
    secs = hwx_sections(data)
    foff, size = secs[("__TEXT", "__text")]
    text = data[foff:foff + size]
    words = list(struct.unpack_from("<%dI" % (len(text) // 4), text, 0))
    out = []
    at = 0
    i = 0
    while True:
        hw0 = words[at // 4:at // 4 + 10]
        nxt = hw0[7]
        limit = nxt // 4 if nxt else len(words)
        hw, w, recs = parse_stream(words, at // 4, limit)
        out.append(Task(i, hw, w, recs))
        i += 1
        if not nxt or hw0[0] >> 25 & 1:
            break
        at = nxt
    const = secs.get(("__TEXT", "__const"))
    return out, const[1] if const else 0


def load(spec):
    """A case name (Apple's record) or a path to a .hwx (ours): (label, tasks, extra)."""
    if spec.endswith(".hwx"):
        tasks, csize = tasks_of_hwx(spec)
        return spec, tasks, {"const_size": csize}
    r = record(spec)
    return r["case"], tasks_of_record(r), {"const_size": r["constant_section"]["size"], "record": r}


def links(tasks):
    """For every L2 operand read in place, the earlier task whose L2 region holds it.

    Returns {task index: [(operand, producer index or None, 'result'|'staged', offset)]}.
    A region is a task's kept (or staged) result, or the L2 copy the tile DMA made of its
    source; the latest earlier task whose region contains the operand's base wins.
    """
    regions = []  # (task, kind, base, size)
    out = {}
    for t in tasks:
        reads = []
        if not t.src_dma:
            reads.append(("src1", t.src_region()[0]))
        r2 = t.src2_region()
        if r2 is not None and not t.src2_dma:
            reads.append(("src2", r2[0]))
        found = []
        for name, base in reads:
            hit = None
            for (p, kind, b, s) in reversed(regions):
                if b <= base < b + s:
                    hit = (name, p, kind, base - b)
                    break
            found.append(hit or (name, None, "?", base))
        out[t.i] = found
        if t.src_dma:
            b, s = t.src_region()
            regions.append((t.i, "staged", b, s))
        if t.operands() >= 2 and t.src2_dma:
            b, s = t.src2_region()
            regions.append((t.i, "staged2", b, s))
        b, s = t.result_region()
        regions.append((t.i, "result", b, s))
    return out


def src_cfg_str(v):
    parts = []
    st = v & 3
    if st:
        parts.append("type%d" % st)
    dep = v >> 2 & 3
    if dep:
        parts.append("Dep%d" % dep)
    if v >> 4 & 1:
        parts.append("aCS")
    if v >> 5 & 1:
        parts.append("aCR")
    if v >> 6 & 3:
        parts.append("fmt%d" % (v >> 6 & 3))
    if v >> 8 & 15:
        parts.append("il%d" % (v >> 8 & 15))
    if v >> 20 & 1:
        parts.append("aPS")
    if v >> 22 & 1:
        parts.append("aPR")
    if v >> 24 & 1:
        parts.append("src2dma")
    return "|".join(parts) or "0"


def res_cfg_str(v):
    parts = []
    rt = v & 3
    parts.append("DRAM" if rt == 2 else ("kept" if rt == 0 else "rt%d" % rt))
    if v >> 3 & 1:
        parts.append("bfr")
    if v >> 4 & 1:
        parts.append("aCS")
    if v >> 5 & 1:
        parts.append("aCR")
    if v >> 6 & 3:
        parts.append("fmt%d" % (v >> 6 & 3))
    if v >> 8 & 15:
        parts.append("il%d" % (v >> 8 & 15))
    if v >> 20 & 1:
        parts.append("aPS")
    if v >> 22 & 1:
        parts.append("aPR")
    return "|".join(parts)
