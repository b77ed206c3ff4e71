#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the verdict table of run.sh from the kernels' console logs.

    verdict.py WORK KERNEL...

Reads WORK/<kernel>.log (the console, carriage returns removed) for the
lines init.sh prints (KS ...). A test's result is PASS (exit status 0),
SKIP (4, the selftests' KSFT_SKIP), TIMEOUT (killed by the time limit),
FAIL (any other status) or "-" (never ran: the kernel did not get there).
A KASAN report ("BUG: KASAN" anywhere in the console, kept whole however
full the kernel's log buffer gets) is a failure of the test that was
running, or had last run, when it was printed: FAIL(KASAN). Exit status 0
when every test that passed on the first kernel passed on every other and
no kernel printed a KASAN report, 1 otherwise.

Then a table of counts per test: the hits of KVM's own tracepoints on
each kernel (KS trace), and on the libslat kernel the shim's counters
over the test (KS counts_before / counts_after): the fault handler's map,
relax and mkyoung calls, libslat's TLBIs and D-cache cleans.
"""
import re
import sys


def result(rc):
    if rc == 0:
        return "PASS"
    if rc == 4:
        return "SKIP"
    if rc in (124, 137, 143):
        return "TIMEOUT"
    return "FAIL(rc=%d)" % rc


def pairs(text):
    """name=value pairs as a dict of ints ("-": absent)."""
    out = {}
    for word in text.split():
        k, _, v = word.partition("=")
        if v.isdigit():
            out[k] = int(v)
    return out


def parse(path):
    """The kernel's KVM line, the results by run, the splat lines, the
    dmesg notes, the counts by run ({test: {name: value}}) and the KASAN
    reports as (test, line)."""
    kvm, runs, splats, notes, cur = "", [], [], [], None
    counts, before, kasan = {}, {}, []
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return "no console log", runs, splats, notes, counts, kasan
    for line in text.splitlines():
        # The report's first line, straight from the console (not KS
        # splat, which init.sh greps from dmesg after the last test).
        if "BUG: KASAN" in line and "KS splat" not in line:
            kasan.append((cur, line[line.index("BUG: KASAN"):]))
        m = re.search(r"KS (\w+) ?(.*)$", line)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2)
        if kind == "kvm":
            kvm = rest or "no KVM line in dmesg"
        elif kind == "begin":
            cur = rest.strip()
        elif kind == "end":
            e = re.match(r"(\S+) rc=(\d+) secs=(\d+)", rest)
            runs.append((cur, result(int(e.group(2))), int(e.group(3))))
        elif kind == "splat":
            splats.append(rest)
        elif kind == "dmesg":
            notes.append(rest)
        elif kind == "trace" and cur:
            counts.setdefault(cur, {}).update(pairs(rest.split(None, 1)[-1]))
        elif kind == "counts_before" and cur:
            before = pairs(rest)
        elif kind == "counts_after" and cur:
            after = pairs(rest)
            counts.setdefault(cur, {}).update(
                {"slat_" + k: v - before.get(k, 0) for k, v in after.items()})
    hit = {t for t, _ in kasan}
    runs = [(n, "FAIL(KASAN)" if n in hit else r, s) for n, r, s in runs]
    return kvm, runs, splats, notes, counts, kasan


# The counts table's columns: (heading, tracepoint) for every kernel,
# (heading, the shim's counters summed) for the libslat kernel.
COLUMNS = [
    ("guest_fault", "guest_fault"),
    ("access_fault", "access_fault"),
    ("mmio", "mmio_emulate"),
]
SLAT_COLUMNS = [
    ("map", ["slat_fault_map"]),
    ("again", ["slat_fault_again"]),
    ("relax", ["slat_relax"]),
    ("mkyoung", ["slat_mkyoung"]),
    ("tlbi", ["slat_tlbi_ipa", "slat_tlbi_ipa_local", "slat_tlbi_range",
              "slat_tlbi_vmid", "slat_tlbi_shim"]),
    ("dcache", ["slat_dcache_calls"]),
]


def print_counts(tests, kernels, logs):
    """Each test's tracepoint hits per kernel, then libslat's counts on
    the kernels that have them."""
    if not any(logs[k][4] for k in kernels):
        return
    slat = [k for k in kernels
            if any("slat_fault_map" in c for c in logs[k][4].values())]
    heads = ["%s:%s" % (k, h) for h, _ in COLUMNS for k in kernels]
    heads += ["%s:%s" % (k, h) for k in slat for h, _ in SLAT_COLUMNS]
    width = max([len(t) for t in tests] + [4])
    print("counts per test: KVM's tracepoints (hits) on each kernel; the "
          "shim's calls and libslat's TLBIs and D-cache cleans")
    cols = [len(h) for h in heads]
    print("%-*s  %s" % (width, "test",
                         " ".join("%*s" % (w, h) for w, h in zip(cols, heads))))
    for t in tests:
        cells = []
        for _, key in COLUMNS:
            for k in kernels:
                v = logs[k][4].get(t, {}).get(key)
                cells.append("-" if v is None else str(v))
        for k in slat:
            c = logs[k][4].get(t, {})
            for _, keys in SLAT_COLUMNS:
                vals = [c[x] for x in keys if x in c]
                cells.append(str(sum(vals)) if vals else "-")
        print("%-*s  %s" % (width, t,
                             " ".join("%*s" % (w, c) for w, c in zip(cols, cells))))
    print()


def main():
    work, kernels = sys.argv[1], sys.argv[2:]
    logs = {k: parse("%s/%s.log" % (work, k)) for k in kernels}
    tests = []
    for k in kernels:
        for name, _, _ in logs[k][1]:
            if name not in tests:
                tests.append(name)
    kw = max(len(k) for k in kernels)
    for k in kernels:
        print("%-*s %s" % (kw, k, logs[k][0]))
        for n in logs[k][3]:
            print("%-*s dmesg: %s" % (kw, k, n))
    width = max([len(t) for t in tests] + [4])
    print()
    print("%-*s  %s" % (width, "test", "  ".join("%-18s" % k for k in kernels)))
    ok = True
    for t in tests:
        cells = []
        for k in kernels:
            r = [(res, s) for n, res, s in logs[k][1] if n == t]
            cells.append("%s (%d s)" % r[0] if r else "-")
        print("%-*s  %s" % (width, t, "  ".join("%-18s" % c for c in cells)))
        if cells[0].startswith("PASS") and any(
                not c.startswith("PASS") for c in cells[1:]):
            ok = False
    print()
    print_counts(tests, kernels, logs)
    for k in kernels:
        print("%-*s kernel warnings and splats: %d, KASAN reports: %d"
              % (kw, k, len(logs[k][2]), len(logs[k][5])))
        for s in logs[k][2][:20]:
            print(" " * (kw + 1) + s)
        for t, s in logs[k][5][:20]:
            print(" " * (kw + 1) + "%s (during %s)" % (s, t))
        if logs[k][5]:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
