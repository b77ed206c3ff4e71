#!/usr/bin/env python3
"""Helpers of run.sh.

table.py --slat-args SLAT_PERF SUB PHASES.TSV ARGS...
    ARGS for slat-perf SUB: the test's -m options replaced by slat-perf's
    IDs of the modes the real test ran (matched by mode string: Linux 6.1
    and slat-perf number the modes differently).
table.py --table SUB PHASES.TSV [SLAT.JSON]
    The side-by-side table: per phase, the real KVM's stage-2 faults (from
    the guest's RK phase lines) and slat-perf's (from its --json).
"""
import json
import re
import subprocess
import sys

# The real test's line that ends a phase -> slat-perf's phase name.
PHASES = [
    (r"^Populate memory time", "populate"),
    (r"^Enabling dirty logging time", "enable"),
    (r"^Iteration (\d+) dirty memory time", "dirty"),
    (r"^Iteration (\d+) get dirty log time", "get"),
    (r"^Iteration (\d+) clear dirty log time", "clear"),
    (r"^Disabling dirty logging time", "disable"),
    (r"^KVM_CREATE_MAPPINGS:", "create"),
    (r"^KVM_UPDATE_MAPPINGS:", "update"),
    (r"^KVM_ADJUST_MAPPINGS:", "adjust"),
    (r"^\(teardown\)", "teardown"),
]
MODE_LINE = "Testing guest mode: "
# The counts of an RK phase line, in count.awk's order.
KEYS = ("faults", "translation", "permission", "access", "mmio", "exits",
        "outside", "map", "unmap", "wrprotect", "relax", "tlbi_ipa",
        "tlbi_vmid")
CALLS = KEYS[7:]


def norm_mode(s):
    """A mode string without spacing, and PA-bits:ANY's VA part dropped."""
    s = re.sub(r"\s+", "", s.replace("(supported)", ""))
    return re.sub(r"^PA-bits:ANY,VA-bits:[^,]*,", "PA-bits:ANY,", s)


def read_phases(path):
    """RK phase lines -> rows (counts dict, text)."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < len(KEYS) + 2 or parts[0] != "RK phase":
                continue
            counts = dict(zip(KEYS, (int(p) for p in parts[1:len(KEYS) + 1])))
            rows.append((counts, "\t".join(parts[len(KEYS) + 1:])))
    return rows


def slat_args(slat, sub, tsv, args):
    help_text = subprocess.run([slat, sub, "-h"], capture_output=True,
                               text=True).stdout
    ids = {}
    for m in re.finditer(r"^\s*(\d+):\s+(PA-bits:.*)$", help_text, re.M):
        ids.setdefault(norm_mode(m.group(2)), m.group(1))
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-m":
            skip = True
            continue
        if a.startswith("-m") and len(a) > 2:
            continue
        out.append(a)
    for counts, text in read_phases(tsv):
        if text.startswith(MODE_LINE):
            mode = norm_mode(text[len(MODE_LINE):])
            if mode not in ids:
                sys.exit("table.py: slat-perf has no mode '%s'" % text)
            out += ["-m", ids[mode]]
    print(" ".join(out))


def real_rows(tsv):
    """(mode index, phase, iteration, counts) per phase line of the run, and
    the lines that are not phases but had faults before them."""
    mode = -1
    for counts, text in read_phases(tsv):
        if text.startswith(MODE_LINE):
            # Since the last line of the mode before: its VM's teardown.
            if mode >= 0:
                yield mode, "teardown", 0, counts
                counts = dict.fromkeys(KEYS, 0)
            mode += 1
        for pat, name in PHASES:
            m = re.match(pat, text)
            if m:
                it = int(m.group(1)) if m.groups() else 0
                yield mode, name, it, counts
                break
        else:
            if any(counts[k] for k in KEYS if k != "exits"):
                what = "setup"
                if text.startswith("Started all vCPUs"):
                    what = "vCPUs start"
                yield mode, what, None, counts


def mode_names(tsv):
    """Short names of the modes the test ran, in order: PA40/4K."""
    names = []
    for counts, text in read_phases(tsv):
        if text.startswith(MODE_LINE):
            m = re.search(r"PA-bits:(\w+).*?(\d+K) pages", text)
            names.append("PA%s/%s" % m.groups() if m else "?")
    return names


def slat_faults(path):
    """(mode index, phase, iteration) -> faults by kind, from --json."""
    with open(path) as f:
        doc = json.load(f)
    res = {}
    for run in doc["runs"][:1]:
        mode, first = -1, None
        for p in run["phases"]:
            if first is None:
                first = p["name"]
            if p["name"] == first:
                mode += 1
            res[(mode, p["name"], p["iteration"])] = p["counts"]["faults"]
    return res


def fmt_kinds(t, p, a):
    parts = []
    for n, k in ((t, "T"), (p, "P"), (a, "A")):
        if n:
            parts.append("%d%s" % (n, k))
    return " ".join(parts) or "0"


def table(sub, tsv, json_path):
    slat = slat_faults(json_path) if json_path else {}
    rows = list(real_rows(tsv))
    names = mode_names(tsv)
    print("%-22s %9s %-20s %7s %5s %6s %9s %-14s %6s" % (
        "phase", "real KVM", "(kinds)", "outside", "ucall", "exits",
        "slat-perf", "(kinds)", "ratio"))
    labels = []
    for mode, name, it, c in rows:
        if it is None and not (c["faults"] or c["mmio"]):
            labels.append(name if mode < 0 or len(names) < 2
                          else "%s %s" % (names[mode], name))
            continue
        label = name if it is None or it == 0 else "%s %d" % (name, it)
        if len(names) > 1 and mode >= 0:
            label = "%s %s" % (names[mode], label)
        labels.append(label)
        real_k = fmt_kinds(c["translation"], c["permission"], c["access"])
        line = "%-22s %9d %-20s %7d %5d %6d" % (
            label, c["faults"], real_k, c["outside"], c["mmio"], c["exits"])
        s = slat.get((max(mode, 0), name, it)) if it is not None else None
        if s is not None:
            n = s["translation"] + s["permission"] + s["access_flag"]
            kinds = fmt_kinds(s["translation"], s["permission"], s["access_flag"])
            ratio = "%.3f" % (n / c["faults"]) if c["faults"] else (
                "-" if n == 0 else "inf")
            line += " %9d %-14s %6s" % (n, kinds, ratio)
        elif slat:
            line += " %9s" % "-"
        print(line.rstrip())
    print("(real KVM: stage-2 aborts KVM handled, kvm:kvm_guest_fault, the "
          "ucalls' MMIO aborts taken out and shown as ucall; outside: of "
          "them, those outside the test memory (guest code, stack, page "
          "tables); kinds: T translation, P permission, A access flag, from "
          "the ESR; exits: kvm:kvm_exit; ratio: slat-perf / real KVM)")
    print()
    print("Real KVM's stage-2 calls per phase (kprobes):")
    print("%-22s" % "phase" + "".join("%10s" % k for k in CALLS))
    for label, (mode, name, it, c) in zip(labels, rows):
        print("%-22s" % label + "".join("%10d" % c[k] for k in CALLS))


def main(argv):
    if len(argv) >= 4 and argv[0] == "--slat-args":
        slat_args(argv[1], argv[2], argv[3], argv[4:])
    elif len(argv) in (3, 4) and argv[0] == "--table":
        table(argv[1], argv[2], argv[3] if len(argv) == 4 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
