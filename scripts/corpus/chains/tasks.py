#!/usr/bin/env python3
"""Task-by-task table of a program: what each task does and where its data lives.

    python3 tasks.py CASE [CASE|FILE.hwx ...] [--md | --brief]

CASE is a record of apple-h13-oracles (Apple's program); FILE.hwx is a program anec wrote
(`anec compile model.mil -t h13g -o DIR`). Per task: engine, operation, shapes
(Cin x Hin x Win -> Cout x Hout x Wout), where source 1 / source 2 / the kernel come from
(DRAM BAR through the tile DMA, an L2 region written by an earlier task, __const, the BAR-3
scratch), where the result goes (DRAM BAR, BAR-3 scratch, or kept in L2 at a base with its
channel/row strides), the header's section flags, L2 SourceCfg/ResultCfg and Common 0x30.
"""
import sys

from chainlib import links, load, res_cfg_str, src_cfg_str


def h(v):
    return "%#x" % v


def describe(tasks):
    lk = links(tasks)
    rows = []
    for t in tasks:
        r0, r1, wb, k = t.bars()
        reads = {n: (p, kind, off) for (n, p, kind, off) in lk[t.i]}

        def l2_read(name, base, ch, row):
            p, kind, off = reads.get(name, (None, "?", base))
            who = "T%d %s" % (p, kind) if p is not None else "?"
            if off and p is not None:
                who += "+%s" % h(off)
            return "L2@%s ch %s row %s <- %s" % (h(base), h(ch), h(row), who)

        if t.src_dma:
            src = "DRAM BAR%s (row %s plane %s) -> L2@%s" % (r0, h(t.g(0x1380C)), h(t.g(0x13810)), h(t.g(0x4808)))
        else:
            src = l2_read("src1", t.g(0x4808), t.g(0x480C), t.g(0x4810))
            if t.flag(13):
                src += " [SPC: BAR%s token]" % r0
        src2 = ""
        if t.operands() >= 2:
            if t.src2_dma:
                src2 = "DRAM BAR%s -> L2@%s" % (r1, h(t.g(0x481C)))
            else:
                src2 = l2_read("src2", t.g(0x481C), t.g(0x4820), t.g(0x4824))
        kern = ""
        ch = t.kernel_chunks
        if ch:
            total = sum(c[2] for c in ch)
            where = "__const" if k == 1 else ("BAR3 scratch" if k == 3 else "BAR%s" % k)
            kern = "%s @%s, %d ch x %s (%s B)" % (where, h(ch[0][1]), len(ch), h(ch[0][2]), h(total))
            if t.flag(24):
                kern += " TDE<-T%d" % t.hw[10]
        if t.dst_dma:
            il = t.g(0x17818) >> 24 & 15
            res = "DRAM BAR%s (row %s plane %s%s) staged L2@%s" % (wb, h(t.g(0x17808)), h(t.g(0x1780C)),
                                                               ", interleave %d" % il if il > 1 else "", h(t.g(0x4834)))
        else:
            res = "L2@%s ch %s row %s plane %s" % (h(t.g(0x4834)), h(t.g(0x4838)), h(t.g(0x483C)), h(t.g(0x4840)))
            if t.flag(14):
                res += " [DPC: BAR%s token]" % wb
        rows.append(dict(
            T="T%d" % t.i, eng=t.engine, op=t.op(), shape=t.shape_str(), src=src, src2=src2, kernel=kern, result=res,
            flags=",".join(t.flags()), scfg="%s=%s" % (h(t.g(0x4804)), src_cfg_str(t.g(0x4804))),
            rcfg="%s=%s" % (h(t.g(0x4830)), res_cfg_str(t.g(0x4830))), c30=h(t.g(0x30)), cfg=h(t.cfg),
            exe=str(t.exe)))
    return rows


def print_text(label, tasks, extra):
    print("=====", label, "tasks", len(tasks), "const", h(extra.get("const_size", 0)))
    for r in describe(tasks):
        print("%-3s %s %-34s %s  [%s] exe %s" % (r["T"], r["eng"], r["op"], r["shape"], r["flags"], r["exe"]))
        print("      src : %s" % r["src"])
        if r["src2"]:
            print("      src2: %s" % r["src2"])
        if r["kernel"]:
            print("      kern: %s" % r["kernel"])
        print("      out : %s" % r["result"])
        print("      SourceCfg %s  ResultCfg %s  0x30 %s  Cfg %s" % (r["scfg"], r["rcfg"], r["c30"], r["cfg"]))


def brief_lines(tasks):
    """One line per task: engine, operation, shape, where source/kernel/result live."""
    lk = links(tasks)
    out = []
    for t in tasks:
        r0, r1, wb, k = t.bars()
        reads = {n: (p, kind) for (n, p, kind, off) in lk[t.i]}

        def where(name):
            p, kind = reads.get(name, (None, "?"))
            return "L2<-T%d%s" % (p, "s" if kind.startswith("staged") else "") if p is not None else "L2<-?"
        src = "BAR%s" % r0 if t.src_dma else where("src1")
        if t.flag(13):
            src += "(tok)"
        if t.operands() >= 2:
            src += "," + ("BAR%s" % r1 if t.src2_dma else where("src2"))
        kern = ""
        if t.kernel_chunks:
            kern = " k=" + {1: "const", 3: "BAR3"}.get(k, "BAR%s" % k)
            if t.flag(24):
                kern += "<-T%d" % t.hw[10]
        if t.dst_dma:
            dst = "BAR%s" % wb
        else:
            dst = "L2@%#x" % t.g(0x4834) + ("(tok)" if t.flag(14) else "")
        op = t.op().replace("(runtime kernel)", "(rt)")
        out.append("T%d %s %s %s %s%s -> %s" % (t.i, t.engine, op, t.shape_str(), src, kern, dst))
    return out


def print_md(label, tasks, extra):
    print("**%s** (%d tasks, __const %s)\n" % (label, len(tasks), h(extra.get("const_size", 0))))
    print("| T | eng | operation | C x H x W | source 1 | source 2 / kernel | result | header 6 | SourceCfg / ResultCfg |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in describe(tasks):
        second = "; ".join(x for x in (r["src2"], r["kernel"]) if x)
        cells = (r["T"], r["eng"], r["op"], r["shape"], r["src"], second, r["result"], r["flags"], r["scfg"], r["rcfg"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s, %s |" % tuple(c.replace("|", "+") for c in cells))
    print()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--md" in sys.argv
    for spec in args:
        label, tasks, extra = load(spec)
        if "--brief" in sys.argv:
            print("=====", label, "tasks", len(tasks))
            print("\n".join(brief_lines(tasks)))
            continue
        (print_md if md else print_text)(label, tasks, extra)


if __name__ == "__main__":
    main()
