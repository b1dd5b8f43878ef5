#!/usr/bin/env python3
"""One line per task: engine, L2 source / second source / result placement and the Cfg
words with the four alias bits spelled out. Usage: dump.py [substring of case names]."""
import sys
from load import load, cfg_fields


def ab(v):
    f = cfg_fields(v)
    return ''.join(c if f[k] else '.' for c, k in (('s', 'cs'), ('r', 'cr'), ('S', 'ps'), ('R', 'pr')))


def line(t):
    return ('%2d %s src %-9s %s t%d d%d b=%#7x ch=%#6x row=%#6x p=%#7x/%#7x | s2 b=%#7x ch=%#5x row=%#6x p=%#6x | '
            'res %-9s %s t%d b=%#7x ch=%#6x row=%#6x p=%#6x/%#6x | C %d->%d W %d->%d H %d->%d D%d %s%s%s' % (
                t['i'], t['engine'], hex(t['src_cfg']), ab(t['src_cfg']), t['src_cfg'] & 3, (t['src_cfg'] >> 2) & 3,
                t['src_base'], t['src_ch'], t['src_row'], t['src_p1'], t['src_p2'],
                t['src2_base'], t['src2_ch'], t['src2_row'], t['src2_p1'],
                hex(t['res_cfg']), ab(t['res_cfg']), t['res_cfg'] & 3, t['res_base'], t['res_ch'], t['res_row'],
                t['res_p1'], t['res_p2'], t['Cin'], t['Cout'], t['Win'], t['Wout'], t['Hin'], t['Hout'], t['Din'],
                ' dramS' if t['src_dram'] else '', ' dramD' if t['dst_dram'] else '', ' K' if t['kdma'] else ''))


if __name__ == '__main__':
    pat = sys.argv[1] if len(sys.argv) > 1 else ''
    for r in load():
        if pat in r['case']:
            print(r['case'])
            for t in r['tasks']:
                print(' ', line(t))
