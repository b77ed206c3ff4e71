#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the verdict table of run.sh from the kernels' console logs.

    verdict.py WORK KERNEL...

Reads WORK/<kernel>.log (the console, carriage returns removed) for the
lines init.sh prints (KS ...). A test's result is PASS (exit status 0),
SKIP (4, the selftests' KSFT_SKIP), TIMEOUT (killed by the time limit),
FAIL (any other status) or "-" (never ran: the kernel did not get there).
Exit status 0 when every test that passed on the first kernel passed on
every other, 1 otherwise.
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


def parse(path):
    """The kernel's KVM line, the results by run, the splat lines."""
    kvm, runs, splats, notes, cur = "", [], [], [], None
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return "no console log", runs, splats, notes
    for line in text.splitlines():
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
    return kvm, runs, splats, notes


def main():
    work, kernels = sys.argv[1], sys.argv[2:]
    logs = {k: parse("%s/%s.log" % (work, k)) for k in kernels}
    tests = []
    for k in kernels:
        for name, _, _ in logs[k][1]:
            if name not in tests:
                tests.append(name)
    for k in kernels:
        print("%-6s %s" % (k, logs[k][0]))
        for n in logs[k][3]:
            print("%-6s dmesg: %s" % (k, n))
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
    for k in kernels:
        print("%-6s kernel warnings and splats: %d" % (k, len(logs[k][2])))
        for s in logs[k][2][:20]:
            print("       " + s)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
