#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/REPRODUCING.md's table of the seeds' ratios is what
scripts/seed_ratios.py prints: the same rows, labels and seed ratios
(ROWS), both readings' verdicts as its rules give them for the printed
figures, and the sentence under the table counting them.

  check_reproducing.py SOURCE_DIR

A verdict whose quotient lies within the printed figures' rounding of a
boundary (0.5 or 2) is not judged: only the run's unrounded figures
decide it.
"""
import os
import re
import sys

HEADER = ("| seed result | seed after/before | modeled elapsed | within 2x, "
          "same way | the change within 2x | total work |")


def fail(msg):
    sys.exit("FAIL: docs/REPRODUCING.md: " + msg)


def rows_of(doc):
    """The table's rows, as lists of cells, after HEADER and its rule."""
    lines = doc.splitlines()
    try:
        i = lines.index(HEADER)
    except ValueError:
        fail("no table headed\n  " + HEADER)
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            return rows, lines[i + 2 + len(rows):]
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows, []


def near_edge(sr, seed, ours):
    """True when rounding @ours to the printed digits could move a reading
    across 0.5 or 2."""
    for d in (1.0005, 0.9995):
        for f in (sr.verdict, sr.verdict_strict):
            if f(seed, ours * d) != f(seed, ours):
                return True
    return False


def main(top):
    sys.path.insert(0, os.path.join(top, "scripts"))
    import seed_ratios as sr
    with open(os.path.join(top, "docs", "REPRODUCING.md")) as f:
        doc = f.read()
    rows, after = rows_of(doc)
    if len(rows) != len(sr.ROWS):
        fail("%d rows, seed_ratios.py has %d" % (len(rows), len(sr.ROWS)))
    loose = strict = 0
    for cells, (name, _, _, _, seed, label) in zip(rows, sr.ROWS):
        if len(cells) != 6:
            fail("row %r: %d cells, not 6" % (cells[0], len(cells)))
        want_seed = ("<= " if sr.bound(name) else "") + sr.fmt(seed)
        if cells[0] != label or cells[1] != want_seed:
            fail("row %r | %r, seed_ratios.py prints %r | %r" %
                 (cells[0], cells[1], label, want_seed))
        ours = float(cells[2])
        got = (cells[3], cells[4])
        want = ("no", "no") if sr.bound(name) else \
            (sr.verdict(seed, ours), sr.verdict_strict(seed, ours))
        if got != want and not near_edge(sr, seed, ours):
            fail("row %r: %s, the rules give %s for %s" %
                 (label, got, want, cells[2]))
        loose += got[0] == "yes"
        strict += got[1] == "yes"
    sentence = ("%d of %d rows within 2x the same way; %d of %d with the "
                "change within 2x." % (loose, len(rows), strict, len(rows)))
    if sentence not in " ".join(after[:4]):
        fail("the table is not followed by: " + sentence)
    print("ok: %d rows, %d and %d within 2x" % (len(rows), loose, strict))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
