#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate lib/common/casefold_table.h from the Unicode Character Database.

    scripts/gen_casefold.py [CaseFolding.txt] [-o OUTPUT]

Reads CaseFolding.txt (default /usr/share/unicode/CaseFolding.txt, from
Debian's unicode-data package) and writes Unicode's *simple* case folding
(statuses C and S; F and T are left out) as the two-stage table pcw__fold()
in lib/common/name.h looks code points up in. `make casefold-table` runs it;
`make check-casefold` (part of `make check`) regenerates into a temporary
file and fails if the checked-in table differs.

The table: code points are cut into blocks of 2^SHIFT. Stage 1 (uint8_t,
one entry per block up to the last code point that has a mapping) names a
block of stage 2; stage 2 holds, for each code point of the block, the
difference to its folding modulo 2^16 (uint16_t). Identical blocks are
stored once; block 0 is the all-zero block, so every code point without a
mapping folds to itself. The modulo-2^16 delta is exact because every
simple folding stays inside its plane (checked below), so
    fold(c) = (c & ~0xFFFF) | ((c + delta) & 0xFFFF).
The script refuses input that breaks any assumption the lookup relies on,
rather than emit a table that would fold wrongly.
"""

import argparse
import os
import re
import sys

DEFAULT_INPUT = "/usr/share/unicode/CaseFolding.txt"
SHIFT = 5  # 32 code points per block: the smallest two-stage table for Unicode 15
BLOCK = 1 << SHIFT


def fail(msg):
    sys.stderr.write("gen_casefold.py: %s\n" % msg)
    sys.exit(1)


def parse(path):
    """Return (version, {code point: simple folding}) from CaseFolding.txt."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail("cannot read %s (%s); on Debian: apt-get install unicode-data" % (path, e.strerror))
    m = re.match(r"#\s*CaseFolding-(\d+\.\d+\.\d+)\.txt", lines[0] if lines else "")
    if not m:
        fail("%s: first line does not name the Unicode version (CaseFolding-X.Y.Z.txt)" % path)
    version = m.group(1)
    fold = {}
    for n, line in enumerate(lines, 1):
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        fields = [x.strip() for x in data.split(";")]
        if len(fields) < 3 or fields[1] not in ("C", "S", "F", "T"):
            fail("%s:%d: not a CaseFolding entry: %r" % (path, n, line))
        if fields[1] not in ("C", "S"):
            continue  # full (F) and Turkic (T) foldings are not simple
        try:
            src = int(fields[0], 16)
            dst = [int(x, 16) for x in fields[2].split()]
        except ValueError:
            fail("%s:%d: bad code point in %r" % (path, n, line))
        if len(dst) != 1:
            fail("%s:%d: a simple folding maps to one code point: %r" % (path, n, line))
        if src in fold:
            fail("%s:%d: U+%04X has two simple foldings" % (path, n, src))
        fold[src] = dst[0]
    if not fold:
        fail("%s: no C or S entries" % path)
    for src, dst in fold.items():
        if not (0 <= src <= 0x10FFFF and 0 <= dst <= 0x10FFFF):
            fail("U+%04X -> U+%04X: outside Unicode" % (src, dst))
        if src >> 16 != dst >> 16:
            fail("U+%04X -> U+%04X crosses a plane: the 16-bit deltas cannot hold it" % (src, dst))
        if dst in fold:
            fail("U+%04X -> U+%04X is not a fixed point: folding would not be stable" % (src, dst))
        if src < 0x80 and not (0x41 <= src <= 0x5A and dst == src + 32):
            fail("U+%04X: ASCII must fold A-Z to a-z only (pcw__fold's fast path)" % src)
    if sorted(fold)[:26] != list(range(0x41, 0x5B)):
        fail("ASCII A-Z must all fold (pcw__fold's fast path)")
    return version, fold


def build(fold):
    """Return (stage1, stage2 blocks, limit) for the folding map."""
    limit = (max(fold) // BLOCK + 1) * BLOCK
    blocks = {tuple([0] * BLOCK): 0}
    stage1 = []
    for b in range(limit // BLOCK):
        block = tuple(((fold.get(c, c) - c) & 0xFFFF) for c in range(b * BLOCK, (b + 1) * BLOCK))
        stage1.append(blocks.setdefault(block, len(blocks)))
    if len(blocks) > 256:
        fail("%d stage-2 blocks do not fit stage 1's uint8_t" % len(blocks))
    stage2 = [blk for blk, _ in sorted(blocks.items(), key=lambda kv: kv[1])]
    # Check the table against the map, code point by code point.
    for c in range(0x110000):
        want = fold.get(c, c)
        if c >= limit:
            got = c
        else:
            d = stage2[stage1[c >> SHIFT]][c & (BLOCK - 1)]
            got = (c & ~0xFFFF) | ((c + d) & 0xFFFF)
        if got != want:
            fail("table folds U+%04X to U+%04X, not U+%04X" % (c, got, want))
    return stage1, stage2, limit


def rows(values, fmt, per_line):
    out = []
    for i in range(0, len(values), per_line):
        out.append("    " + ", ".join(fmt % v for v in values[i : i + per_line]) + ",")
    return out


def render(version, fold, stage1, stage2, limit, source_name):
    n1 = len(stage1)
    n2 = len(stage2) * BLOCK
    size = n1 * 1 + n2 * 2
    out = []
    out.append("/* SPDX-License-Identifier: MIT */")
    out.append("/*")
    out.append(" * common/casefold_table.h - Unicode simple case folding, as the two-stage")
    out.append(" * table pcw__fold() (common/name.h) looks code points up in.")
    out.append(" *")
    out.append(" * GENERATED by scripts/gen_casefold.py from %s" % source_name)
    out.append(" * (Unicode %s, statuses C and S). Do not edit: `make casefold-table`" % version)
    out.append(" * regenerates it, and `make check` fails if it differs from what the script")
    out.append(" * makes of the installed Unicode Character Database.")
    out.append(" *")
    out.append(" * %d code points fold. For c < PCW__CASEFOLD_LIMIT:" % len(fold))
    out.append(" *   block = pcw__casefold_stage1[c / %d]" % BLOCK)
    out.append(" *   delta = pcw__casefold_stage2[block * %d + c %% %d]" % (BLOCK, BLOCK))
    out.append(" *   fold  = (c & ~0xFFFF) | ((c + delta) & 0xFFFF)")
    out.append(" * (every simple folding stays in its plane); c >= PCW__CASEFOLD_LIMIT and")
    out.append(" * block 0 fold to themselves.")
    out.append(" * Size: stage 1 %d x uint8_t + stage 2 %d blocks x %d x uint16_t = %d bytes."
               % (n1, len(stage2), BLOCK, size))
    out.append(" */")
    out.append("#ifndef PCW_CASEFOLD_TABLE_H")
    out.append("#define PCW_CASEFOLD_TABLE_H")
    out.append("")
    out.append("#include <stdint.h>")
    out.append("")
    out.append("/* clang-format off */")
    out.append('#define PCW_CASEFOLD_UNICODE_VERSION "%s"' % version)
    out.append("#define PCW__CASEFOLD_SHIFT %d" % SHIFT)
    out.append("#define PCW__CASEFOLD_LIMIT 0x%XU" % limit)
    out.append("")
    out.append("static const uint8_t pcw__casefold_stage1[%d] = {" % n1)
    out += rows(stage1, "%d", 24)
    out.append("};")
    out.append("")
    out.append("static const uint16_t pcw__casefold_stage2[%d] = {" % n2)
    for i, blk in enumerate(stage2):
        out.append("    /* block %d */" % i)
        out += rows(list(blk), "0x%04X", 8)
    out.append("};")
    out.append("/* clang-format on */")
    out.append("")
    out.append("#endif /* PCW_CASEFOLD_TABLE_H */")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Generate pcw's case-folding table.")
    ap.add_argument("input", nargs="?", default=DEFAULT_INPUT, help="CaseFolding.txt")
    ap.add_argument("-o", "--output", help="write here (default: standard output)")
    args = ap.parse_args()
    version, fold = parse(args.input)
    stage1, stage2, limit = build(fold)
    text = render(version, fold, stage1, stage2, limit, "CaseFolding-%s.txt" % version)
    if not args.output:
        sys.stdout.write(text)
        return
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
