#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare each seed's measured elapsed ratio (after / before) with
slat-perf's modeled elapsed ratio for the same comparison, from the JSON
files scripts/reproduce.sh writes.

  scripts/seed_ratios.py OUT                 the table for the runs in OUT
  scripts/seed_ratios.py --sensitivity KEY OUT [NAME ...]
        rerun the experiments NAME (default: all) with the cost KEY at half
        and at double its value (OUT/KEY-half, OUT/KEY-double), then print
        the modeled elapsed ratio at each value beside the default's

A row is "within 2x" when the two ratios differ by at most a factor of 2
and point the same way (both below 1: faster; both above: slower).
"""
import json
import os
import subprocess
import sys

# The seeds' figures: seconds before and after, or a ratio where the seed
# gives only a change in percent. Sources: docs/seeds.md (the five threads, cited).
# (experiment, phase, run "before", run "after", seed ratio, row label)
ROWS = [
    ("000-anon", "create", "cmo=before-map", "cmo=in-walker",
     90.42 / 104.35, "000 4K, KVM_CREATE_MAPPINGS"),
    ("000-anon", "update", "cmo=before-map", "cmo=in-walker",
     75.45 / 78.64, "000 4K, KVM_UPDATE_MAPPINGS"),
    ("000-thp", "create", "cmo=before-map", "cmo=in-walker",
     6.92 / 15.66, "000 THP, KVM_CREATE_MAPPINGS"),
    ("000-thp", "update", "cmo=before-map", "cmo=in-walker",
     123.35 / 178.80, "000 THP, KVM_UPDATE_MAPPINGS"),
    ("000-thp", "adjust", "cmo=before-map", "cmo=in-walker",
     131.76 / 187.34, "000 THP, KVM_REBUILD_BLOCKS"),
    ("000-hugetlb-1g", "create", "cmo=before-map", "cmo=in-walker",
     3.70 / 104.54, "000 1G, KVM_CREATE_MAPPINGS"),
    ("000-hugetlb-1g", "update", "cmo=before-map", "cmo=in-walker",
     115.94 / 174.20, "000 1G, KVM_UPDATE_MAPPINGS"),
    ("000-hugetlb-1g", "adjust", "cmo=before-map", "cmo=in-walker",
     2.96 / 103.95, "000 1G, KVM_REBUILD_BLOCKS"),
    ("001", "disable", "recover=zap-leaf", "recover=promote",
     3.169381810 / 256.682188868, "001 disable, zap-leaf -> promote (EPT)"),
    ("001-arm", "disable", "recover=zap-leaf", "recover=promote",
     3.169381810 / 256.682188868, "001 disable, the same on Arm"),
    ("002-enable-4k", "enable", "split-skip=off", "split-skip=on",
     1 - 0.4401, "002 scenario 1, 4K"),
    ("002-enable-thp", "enable", "split-skip=off", "split-skip=on",
     1 - 0.2466, "002 scenario 1, THP"),
    ("002-enable-1g", "enable", "split-skip=off", "split-skip=on",
     1 - 0.2478, "002 scenario 1, 1G"),
    ("002-clear-4k", "clear", "split-skip=off", "split-skip=on",
     1 - 0.3898, "002 scenario 2, 4K"),
    ("002-clear-thp", "clear", "split-skip=off", "split-skip=on",
     1 - 0.2549, "002 scenario 2, THP"),
    ("002-clear-1g", "clear", "split-skip=off", "split-skip=on",
     1 - 0.2424, "002 scenario 2, 1G"),
    ("003", "guest", "untrapped", "precise",
     371 / 365, "003 precise / untrapped"),
    ("003", "guest", "untrapped", "flush-all",
     393 / 365, "003 flush-all / untrapped"),
    # "30+ minutes" -> 949 ms: at most this ratio
    ("004-map", "unmap", "mmio-map=page", "mmio-map=block",
     0.949 / 1800, "004 unmap 8 GiB, pages -> blocks"),
]


def phase_ns(runs, label, phase, key):
    """Sum of @key over the phases named @phase of the run @label."""
    for r in runs:
        if r.get("label") == label:
            return sum(p[key] for p in r["phases"] if p["name"] == phase)
    raise KeyError(label)


def tlbi_trap_ns(doc, policy):
    """tlbi-trap: the guest time of @policy (its own model), in cycles."""
    for r in doc["settings"]["results"]:
        if r["policy"] == policy:
            return r["guest_cycles"]
    raise KeyError(policy)


def ratios(out, name, phase, before, after):
    """(modeled elapsed ratio, total work ratio) of one row, or None."""
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            doc = json.load(f)
    except ValueError:
        return None    # a run still writing it, or one that failed
    if doc["command"] == "tlbi-trap":
        r = tlbi_trap_ns(doc, after) / tlbi_trap_ns(doc, before)
        return r, r
    runs = doc["runs"]
    el = [phase_ns(runs, x, phase, "modeled_ns") for x in (before, after)]
    wk = [phase_ns(runs, x, phase, "total_work_ns") for x in (before, after)]
    return el[1] / el[0], wk[1] / wk[0]


def verdict(seed, ours):
    same_way = (seed < 1) == (ours < 1) and ours != 1
    close = 0.5 <= ours / seed <= 2 if ours > 0 else False
    return "yes" if same_way and close else "no"


def fmt(r):
    if r >= 0.1:
        return "%.3f" % r
    return "%.2e" % r


def table(out):
    print("| seed result | seed after/before | modeled elapsed | within 2x, "
          "same way | total work |")
    print("|---|---|---|---|---|")
    for name, phase, before, after, seed, label in ROWS:
        r = ratios(out, name, phase, before, after)
        if r is None:
            continue
        seed_s = ("<= " if name == "004-map" else "") + fmt(seed)
        print("| %s | %s | %s | %s | %s |" % (label, seed_s, fmt(r[0]),
              verdict(seed, r[0]), fmt(r[1])))


def cost_value(out, names, key):
    for n in names:
        path = os.path.join(out, n + ".json")
        if os.path.exists(path):
            with open(path) as f:
                doc = json.load(f)
            if key in doc.get("cost_ns", {}):
                return doc["cost_ns"][key]
    sys.exit("seed_ratios.py: no JSON in %s gives the cost %s" % (out, key))


def sensitivity(key, out, names):
    here = os.path.dirname(os.path.abspath(__file__))
    if not names:
        names = sorted({row[0] for row in ROWS})
    base = cost_value(out, names, key)
    dirs = []
    for tag, factor in (("half", 0.5), ("double", 2.0)):
        d = os.path.join(out, "%s-%s" % (key, tag))
        os.makedirs(d, exist_ok=True)
        cost = os.path.join(d, "cost")
        with open(cost, "w") as f:
            f.write("%s = %g\n" % (key, base * factor))
        env = dict(os.environ, SLAT_PERF_COST=cost)
        subprocess.run([os.path.join(here, "reproduce.sh"), d] + names,
                       env=env, check=True)
        dirs.append(d)
    print("| seed result | %s = %g | %g (default) | %g |" %
          (key, base / 2, base, base * 2))
    print("|---|---|---|---|")
    for name, phase, before, after, seed, label in ROWS:
        if name not in names:
            continue
        cells = [ratios(d, name, phase, before, after)
                 for d in (dirs[0], out, dirs[1])]
        if None in cells:
            continue
        print("| %s | %s |" % (label, " | ".join(fmt(c[0]) for c in cells)))


def main(argv):
    if len(argv) >= 3 and argv[0] == "--sensitivity":
        sensitivity(argv[1], argv[2], argv[3:])
    elif len(argv) == 1 and not argv[0].startswith("-"):
        table(argv[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
