#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks of slat-perf's output: the selftests' lines in order (regular
# expressions built from their format strings), exact counts of a tiny run,
# --compare ratios, JSON and SVG, and errors. Usage: check.py TEST EXE.
import difflib, json, os, re, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

TS = r"\d+\.\d{9}s"  # %ld.%.9lds


# The cost table's keys (perf_cost_keys[] in common.c), and the default
# cost of a PML-full exit (docs/slat-perf.md, "Cost table").
NKEYS = 19
PML_FULL_NS = 12000


def run(exe, args, ok=True):
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        sys.exit(f"FAIL: {args}: exit {p.returncode}\n{p.stderr}")
    return p


def in_order(out, patterns):
    """Every pattern matches a whole line, in this order."""
    lines = out.split("\n")
    i = 0
    for pat in patterns:
        rx = re.compile(pat + r"\Z")
        while i < len(lines) and not rx.match(lines[i]):
            i += 1
        if i == len(lines):
            sys.exit(f"FAIL: no line matching {pat!r} in order in:\n{out}")
        i += 1


def dirty_log_lines(iters, manual=True, seed=None):
    p = [rf"Test iterations: {iters}",
         r"Testing guest mode: PA-bits:\S+, +VA-bits:\d+(?: or \d+)?, +\d+K pages",
         r"guest physical test memory: \[0x[0-9a-f]+, 0x[0-9a-f]+\)"]
    if seed is not None:
        p.append(rf"Random seed: 0x{seed:x}")
    p += [rf"Populate memory time: {TS}", rf"Enabling dirty logging time: {TS}", ""]
    for i in range(1, iters + 1):
        p += [rf"Iteration {i} dirty memory time: {TS}",
              rf"Iteration {i} get dirty log time: {TS}"]
        if manual:
            p.append(rf"Iteration {i} clear dirty log time: {TS}")
    p.append(rf"Disabling dirty logging time: {TS}")
    p.append(rf"Get dirty log over {iters} iterations took {TS}\. \(Avg {TS}/iteration\)")
    if manual:
        p.append(rf"Clear dirty log over {iters} iterations took {TS}\. \(Avg {TS}/iteration\)")
    return p


def t_dirty_log_lines(exe):
    out = run(exe, ["dirty-log", "-b", "4M", "-v", "2", "-s", "synthetic", "-i", "3"]).stdout
    in_order(out, dirty_log_lines(3))
    # -g: no clear lines at all
    out = run(exe, ["dirty-log", "-g", "-b", "2M", "-s", "synthetic", "-r", "7",
                    "-w", "50", "-a", "-o", "-v", "2", "-x", "2"]).stdout
    in_order(out, dirty_log_lines(2, manual=False, seed=7))
    if "clear dirty log" in out:
        sys.exit("FAIL: -g printed clear lines")
    # every other option is accepted
    run(exe, ["dirty-log", "-b", "2M", "-s", "synthetic", "-e", "-m", "9",
              "-p", "0x40000000", "-c", "0", "--arch", "x86"])
    # By default every supported mode of the architecture, in ID order.
    out = run(exe, ["dirty-log", "-b", "2M", "-s", "synthetic", "-i", "2"]).stdout
    modes = re.findall(r"^Testing guest mode: (.*)$", out, re.M)
    if len(modes) != 16 or modes[0] != "PA-bits:52,  VA-bits:48,  4K pages":
        sys.exit(f"FAIL: arm64 default modes {modes}")
    out = run(exe, ["--arch", "x86", "dirty-log", "-b", "2M", "-s", "synthetic"]).stdout
    if re.findall(r"^Testing guest mode: (.*)$", out, re.M) != [
            "PA-bits:ANY, VA-bits:48 or 57, 4K pages"]:
        sys.exit(f"FAIL: x86 default mode:\n{out}")
    # -m repeats; the modes run in ID order, as the real tools run them.
    out = run(exe, ["page-table", "-b", "2M", "-s", "synthetic", "-m", "8",
                    "-m", "3"]).stdout
    if re.findall(r"^Testing guest mode: (.*)$", out, re.M) != [
            "PA-bits:48,  VA-bits:48,  4K pages",
            "PA-bits:40,  VA-bits:48, 64K pages"]:
        sys.exit(f"FAIL: page-table -m -m:\n{out}")
    for sw in ["--cmo=before-map", "--recover=promote", "--flush=vm",
               "--split-skip=off", "--eager-split=clear:2M", "--dirty=hw",
               "--dirty=ring", "--dirty=ring-hw", "--eager-split=enable",
               "--clean-time=slept", "--block-fault=split", "--wp-partial=split"]:
        for back in ["synthetic", "synthetic_2mb"]:
            out = run(exe, ["dirty-log", "-b", "4M", "-s", back, "-m", "6", sw]).stdout
            in_order(out, dirty_log_lines(2, manual=True))


def t_page_table_lines(exe):
    out = run(exe, ["page-table", "-b", "8M", "-v", "2", "-s", "synthetic"]).stdout
    in_order(out, [
        r"Testing guest mode: PA-bits:\S+, +VA-bits:\d+(?: or \d+)?, +\d+K pages",
        r"Testing memory backing src type: synthetic",
        r"Testing memory backing src granularity: 0x[0-9a-f]+",
        r"Testing memory size\(aligned\): 0x800000",
        r"Guest physical test memory offset: 0x[0-9a-f]+",
        r"Host  virtual  test memory offset: 0x[0-9a-f]+",
        r"Number of testing vCPUs: 2",
        r"Started all vCPUs successfully",
        rf"KVM_CREATE_MAPPINGS: total execution time: {TS}", "",
        rf"KVM_UPDATE_MAPPINGS: total execution time: {TS}", "",
        rf"KVM_ADJUST_MAPPINGS: total execution time: {TS}", ""])


def t_compare(exe):
    p = run(exe, ["dirty-log", "-b", "8M", "-s", "synthetic_2mb",
                  "--eager-split=clear", "--compare", "recover=zap-leaf,promote",
                  "--flush=entry", "--repeat", "2"])
    out = p.stdout
    # seed 001 is KVM x86's; this run is arm64's: a warning, once on stderr
    warn = (r"seed 001's change is KVM x86's; this run models arm64 "
            r"\(--arch x86 runs it as the seed did\)")
    if len(re.findall(warn, p.stderr)) != 1:
        sys.exit("FAIL: seed 001 on arm64: one warning on stderr expected, "
                 "got:\n" + p.stderr)
    in_order(out, [r"== --recover=zap-leaf \(run 1 of 2\) ==", *dirty_log_lines(2),
                   r"== --recover=promote \(run 1 of 2\) ==", *dirty_log_lines(2),
                   r"== --recover=zap-leaf \(run 2 of 2\) ==",
                   r"== --recover=promote \(run 2 of 2\) ==",
                   r"Compare --recover: zap-leaf vs promote",
                   r"  seed 001, disabling dirty logging \(Ben Gardon, 2022; "
                   r"docs/seeds\.md\):",
                   r"  before the change --recover=zap-leaf, after it "
                   r"--recover=promote",
                   r"  warning: seed 001's change is KVM x86's and was "
                   r"measured there; this run models arm64 \(--arch x86 "
                   r"runs it as the seed did\)",
                   r"  measured in this run: exact counts .*",
                   r"phase +measure +zap-leaf \(before\) +promote \(after\) +"
                   r"promote vs zap-leaf",
                   r"disable +wall \(s\) +\d+\.\d{9} +\d+\.\d{9} +"
                   r"([\d.,]+x (faster|slower)|same)",
                   r" +modeled \(s\) +\d+\.\d{9} +\d+\.\d{9} +"
                   r"[\d.,]+x faster",
                   r" +entries written +\d+ +\d+ +[\d.,]+x fewer"])
    out = run(exe, ["mmio", "-b", "64M", "--flush=entry",
                    "--compare", "mmio-map=page,block"]).stdout
    in_order(out, [r"MMIO map time: " + TS, r"MMIO unmap time: " + TS,
                   r"MMIO map time: " + TS, r"MMIO unmap time: " + TS,
                   r"phase +measure +page \(before\) +block \(after\) +"
                   r"block vs page",
                   r"map +wall \(s\) .*x (faster|slower)",
                   r"unmap +wall \(s\) .*x (faster|slower)",
                   r" +TLBIs +16417 +33 +497x fewer"])
    if "warning" in out:
        sys.exit("FAIL: seed 004 on arm64, its own host: no warning expected")
    # a comparison that is no seed's: the values as given, no roles
    out = run(exe, ["mmio", "-b", "64M", "--compare", "flush=entry,vm"]).stdout
    in_order(out, [r"Compare --flush: entry vs vm",
                   r"  measured in this run: .*",
                   r"phase +measure +entry +vm +vm vs entry"])
    if "seed 0" in out.split("Compare --flush")[1]:
        sys.exit("FAIL: a comparison no seed made is labelled as one")


def t_json_svg(exe):
    d = tempfile.mkdtemp()
    j, s = os.path.join(d, "o.json"), os.path.join(d, "o.svg")
    run(exe, ["dirty-log", "-b", "4M", "-s", "synthetic", "--json", j, "--svg", s,
              "--compare", "cmo=in-walker,before-map"])
    subprocess.run([sys.executable, "-m", "json.tool", j], check=True,
                   capture_output=True)
    doc = json.load(open(j))
    schema = json.load(open(os.path.join(os.path.dirname(__file__),
                                         "..", "slat-perf.schema.json")))
    validate(doc, schema, "$")
    cmp = doc["compare"]
    if len(doc["runs"]) != 2 or cmp["values"] != ["in-walker", "before-map"]:
        sys.exit("FAIL: JSON runs/compare")
    # the text table's labels and the seed, in the JSON and the SVG too
    if (cmp["labels"] != ["in-walker (after)", "before-map (before)"] or
            cmp["seed"]["id"] != "000" or cmp["seed"]["before"] != "before-map"):
        sys.exit(f"FAIL: JSON compare labels/seed: {cmp}")
    root = ET.parse(s).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        sys.exit("FAIL: SVG root")
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for want in ("in-walker (after)", "before-map (before)"):
        if want not in texts:
            sys.exit(f"FAIL: SVG legend lacks {want!r}: {texts}")
    if not any(t and t.startswith("seed 000, ") for t in texts):
        sys.exit(f"FAIL: SVG names no seed: {texts}")
    # the whole workload: every phase summed, in the JSON and the text
    for r in doc["runs"]:
        w = r["workload"]
        el = sum(p["modeled_ns"] for p in r["phases"])
        work = sum(p["total_work_ns"] for p in r["phases"])
        if el <= 0 or abs(w["modeled_ns"] - el) > 1 or \
                abs(w["total_work_ns"] - work) > 1:
            sys.exit(f"FAIL: workload {w}, phases sum to {el}, {work}")
    out = run(exe, ["dirty-log", "-b", "4M", "-s", "synthetic", "--compare",
                    "cmo=in-walker,before-map"]).stdout
    in_order(out, [r"^workload +modeled \(s\) +%.9f +%.9f .*" %
                   tuple(r["workload"]["modeled_ns"] / 1e9
                         for r in doc["runs"]),
                   r"^ +total work \(s\) +[0-9.]+ +[0-9.]+ .*"])
    out = run(exe, ["dirty-log", "-b", "4M", "-s", "synthetic"]).stdout
    in_order(out, [r"^whole workload \(every phase\): modeled elapsed "
                   r"%.9f s, total work [0-9.]+ s" %
                   (doc["runs"][0]["workload"]["modeled_ns"] / 1e9)])


def validate(v, sc, path):
    """The subset of JSON Schema the schema file uses."""
    t = sc.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool,
             "integer": int, "number": (int, float), "null": type(None)}
    if t:
        ts = t if isinstance(t, list) else [t]
        if not any(isinstance(v, types[x]) and not (x in ("integer", "number") and
                   isinstance(v, bool)) for x in ts):
            sys.exit(f"FAIL: schema: {path} is not {t}")
    for k in sc.get("required", []):
        if k not in v:
            sys.exit(f"FAIL: schema: {path}.{k} missing")
    if isinstance(v, dict):
        for k, sub in sc.get("properties", {}).items():
            if k in v:
                validate(v[k], sub, f"{path}.{k}")
    if isinstance(v, list) and "items" in sc:
        for i, x in enumerate(v):
            validate(x, sc["items"], f"{path}[{i}]")
    if "minimum" in sc and v < sc["minimum"]:
        sys.exit(f"FAIL: schema: {path} below {sc['minimum']}")


def t_exact_counts(exe):
    d = tempfile.mkdtemp()
    j = os.path.join(d, "o.json")
    # 1 vCPU x 2 MiB, 4K pages, at a 1 GiB-aligned IPA: one level-2 and one
    # level-3 table, 512 leaves, 512 translation faults, 512 page cleans.
    run(exe, ["dirty-log", "-b", "2M", "-s", "synthetic", "-p", "0x40000000",
              "-m", "6", "--json", j])
    ph = {p["name"]: p for p in json.load(open(j))["runs"][0]["phases"]
          if p["iteration"] in (0, 1)}
    c = ph["populate"]["counts"]
    want = {("written", "leaf"): 512, ("written", "table"): 2,
            ("table_pages", "allocated"): 2, ("faults", "translation"): 512,
            ("dcache_clean", "calls"): 512, ("dcache_clean", "bytes"): 2 << 20}
    for (a, b), n in want.items():
        if c[a][b] != n:
            sys.exit(f"FAIL: populate {a}.{b} = {c[a][b]}, want {n}")
    if c["accesses"] != 512:
        sys.exit(f"FAIL: populate accesses {c['accesses']}")
    # iteration 1 writes every page: 512 permission faults (INITIALLY_SET
    # protects nothing until the first clear... so none), then clear
    # write-protects all 512 pages.
    if ph["clear"]["counts"]["wrprotected_pages"] != 512:
        sys.exit("FAIL: clear re-protected %d pages" %
                 ph["clear"]["counts"]["wrprotected_pages"])
    # The same in the printed table.
    out = run(exe, ["dirty-log", "-b", "2M", "-s", "synthetic", "-p", "0x40000000",
                    "-m", "6"]).stdout
    in_order(out, [r"written: leaf +512 +0 +0 +0 +0 +0",
                   r"written: table +2 +0 +0 +0 +0 +0",
                   r"table pages allocated +2 +0 .*",
                   r"modeled elapsed time \(s\) +\d+\.\d{9} .*",
                   r"total work \(s\) +\d+\.\d{9} .*"])
    t_page_table_counts(exe)


def t_page_table_counts(exe):
    """kvm_page_table_test's stages on 2 blocks of 2M (4K pages, one
    writing vCPU, so every count is exact), with arm64 KVM's faults."""
    if os.sysconf("SC_PAGESIZE") != 4096:
        return  # the guest code's host pages are this host's
    d = tempfile.mkdtemp()
    j = os.path.join(d, "o.json")
    run(exe, ["page-table", "-b", "4M", "-s", "synthetic_2mb", "-m", "6",
              "--json", j])
    ph = {p["name"]: p["counts"] for p in json.load(open(j))["runs"][0]["phases"]}
    page, block = 4096, 2 << 20
    want = {
        # the first 8 bytes of each large page: a fault maps each block
        "create": {"accesses": 2, ("faults", "translation"): 2,
                   ("written", "leaf"): 2, ("dcache_clean", "bytes"): 2 * block},
        # logging write-protects both blocks in place
        "log-on": {("written", "attr"): 2, ("written", "leaf"): 0},
        # per block: the write of its first page breaks it (one break
        # store, one TLBI by IPA, a new table holding that page alone),
        # then 256 reads from its middle fault one read-only page each
        "update": {"accesses": 2 * (1 + 256), ("faults", "permission"): 2,
                   ("faults", "translation"): 2 * 256,
                   ("written", "clear"): 0, ("written", "break"): 2,
                   ("tlbi", "ipa"): 2,
                   ("table_pages", "allocated"): 2,
                   ("written", "leaf"): 2 * 257,
                   ("dcache_clean", "calls"): 2 * 257,
                   ("dcache_clean", "bytes"): 2 * 257 * page},
        # --recover=none: logging off changes no entry
        "log-off": {("written", "clear"): 0, ("table_pages", "freed"): 0},
        # every page read: page 1 of each block faults (page 0 is mapped),
        # its table is unlinked (one TLBI by range; the table is freed after
        # a grace period, so maybe after the phase) and the block mapped
        # again (one 2M clean); the other reads hit the block
        "adjust": {"accesses": 2 * 512, ("faults", "translation"): 2,
                   ("faults", "permission"): 0, ("written", "clear"): 2,
                   ("tlbi", "range"): 2,
                   ("written", "leaf"): 2, ("dcache_clean", "calls"): 2,
                   ("dcache_clean", "bytes"): 2 * block},
    }
    for name, counts in want.items():
        for k, n in counts.items():
            got = ph[name][k] if isinstance(k, str) else ph[name][k[0]][k[1]]
            if got != n:
                sys.exit(f"FAIL: page-table {name} {k} = {got}, want {n}")
    # x86 (the TDP MMU): the write splits the block whole, so the middle
    # reads and the adjust stage find every page mapped and fault nowhere.
    run(exe, ["--arch", "x86", "page-table", "-b", "4M", "-s", "synthetic_2mb",
              "--json", j])
    ph = {p["name"]: p["counts"] for p in json.load(open(j))["runs"][0]["phases"]}
    if (ph["update"]["faults"]["permission"] != 2 or
            ph["update"]["faults"]["translation"] != 0 or
            ph["update"]["written"]["leaf"] != 2 * 512 or
            ph["adjust"]["faults"]["translation"] != 0):
        sys.exit(f"FAIL: page-table x86 update {ph['update']}, "
                 f"adjust {ph['adjust']}")


def t_errors(exe):
    cases = [(["dirty-log", "-i", "1"], r"at least two iterations"),
             (["dirty-log", "-s", "bogus"], r"Unknown backing src type: bogus"),
             (["dirty-log", "-b", "abc"], r"not a size"),
             (["dirty-log", "-b", "12q"], r"unknown size suffix"),
             (["dirty-log", "-w", "101"], r"Write percentage"),
             (["dirty-log", "-v", "0"], r"greater than 0"),
             (["dirty-log", "-m", "17"], r"not supported"),
             (["dirty-log", "-z", "--strict"], r"unknown option"),
             (["page-table", "-s", "nope"], r"Unknown backing src type"),
             (["mmio", "-b", "3k"], r"multiple of the granule"),
             (["frob"], r"unknown command"),
             (["--recover=fast"], r"zap-leaf"),
             (["--compare", "recover=promote"], r"at least two values"),
             (["--compare", "speed=a,b"], r"unknown switch"),
             (["--cost", "/nonexistent/cost"], r"key = value"),
             (["--eager-split=clear:-1"], r"CHUNK must be a size"),
             (["--eager-split=clear:99999999999999999999"],
              r"CHUNK must be a size"),
             (["tlbi-trap", "-x", "hz=nan"], r"not a number"),
             (["tlbi-trap", "-L", "nan"], r"not a number")]
    for args, rx in cases:
        p = run(exe, args, ok=False)
        if p.returncode == 0 or not re.search(rx, p.stderr):
            sys.exit(f"FAIL: {args}: exit {p.returncode}, stderr {p.stderr!r}, "
                     f"want {rx!r}")
    d = tempfile.mkdtemp()
    cf = os.path.join(d, "cost")
    # strtod's nan and inf are not costs; a NUL byte does not end a line
    # A cost file is short lines: a long line, too many lines or an
    # endless file is refused at once; words come back escaped.
    for text, rx in [("dsb = nan\n", "non-negative number"),
                     ("dsb = inf\n", "non-negative number"),
                     ("dsb = 1\0\nwhat = 3\n", r":1: NUL byte at column 8"),
                     ("dsb = 1\n" + "#" * 2000 + "\n",
                      r":2: line longer than 1024 bytes"),
                     ("# c\n" * 5000, r": more than 4096 lines"),
                     ("ds\x1bb = 1\n", r'unknown key "ds\\x1bb"')]:
        open(cf, "w").write(text)
        p = run(exe, ["--cost", cf, "dirty-log"], ok=False)
        if p.returncode != 2 or not re.search(rx, p.stderr):
            sys.exit(f"FAIL: cost {text[:40]!r}: exit {p.returncode}, "
                     f"{p.stderr!r}")
    p = subprocess.run([exe, "--cost", "/dev/zero", "dirty-log"],
                       capture_output=True, text=True, timeout=10)
    if p.returncode != 2 or "/dev/zero:1: NUL byte at column 1" not in p.stderr:
        sys.exit(f"FAIL: --cost /dev/zero: exit {p.returncode}, {p.stderr!r}")
    open(cf, "w").write("tlbi_ipa = 5\nwhat = 3\n")
    p = run(exe, ["--cost", cf, "dirty-log"], ok=False)
    if p.returncode == 0 or 'unknown key "what"' not in p.stderr:
        sys.exit(f"FAIL: bad cost file accepted: {p.stderr}")
    # A cost file changes the model: every cost 0 but the fault exit.
    open(cf, "w").write("# only faults\n" + "".join(
        f"{k} = 0\n" for k in ["tlbi_ipa", "tlbi_ipa_local", "tlbi_range",
                               "tlbi_vmid", "dsb", "clean_line", "entry_visit",
                               "entry_write", "leaf_install"]) + "fault_exit = 1000000\n")
    out = run(exe, ["dirty-log", "-b", "2M", "-s", "synthetic", "-m", "6",
                    "--cost", cf]).stdout
    # one vCPU: its 512 faults one after the other, nothing to contend for
    in_order(out, [r"modeled elapsed time \(s\) +0\.512000000 .*",
                   r"total work \(s\) +0\.512000000 .*",
                   r"fault latency p50 \(us\) +1000\.000 .*",
                   r"fault latency max \(us\) +1000\.000 .*"])
    # four vCPUs share the faults: a quarter of the elapsed time, the
    # same total work. The dirty phase's (populate, enable, dirty): its
    # permission faults race for nothing, where populate's table links may
    # be lost and retried, one more fault each
    out = run(exe, ["dirty-log", "-b", "2M", "-v", "4", "-s", "synthetic",
                    "-m", "6", "--cost", cf]).stdout
    in_order(out, [r"modeled elapsed time \(s\) +\S+ +\S+ +0\.512000000 .*",
                   r"total work \(s\) +\S+ +\S+ +2\.048000000 .*"])


def t_stdout_full(exe):
    """A failed write to stdout is exit status 1 with a message, on every
    path (the commands' -h exit early)."""
    for args in [["--help"], ["--version"], ["mmio", "-h"], ["dirty-log", "-h"],
                 ["mmio", "-b", "2M"], ["mmio", "--no-counts", "-b", "2M"]]:
        with open("/dev/full", "w") as full:
            p = subprocess.run([exe] + args, stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=120)
        if p.returncode != 1 or "writing the output failed" not in p.stderr:
            sys.exit(f"FAIL: {args} > /dev/full: exit {p.returncode}, "
                     f"stderr {p.stderr!r}")
    for opt in ["--json", "--svg"]:
        p = run(exe, ["mmio", "-b", "2M", opt, "/dev/full"], ok=False)
        if p.returncode != 1 or "No space left" not in p.stderr:
            sys.exit(f"FAIL: {opt} /dev/full: exit {p.returncode}, {p.stderr!r}")


def t_help(exe):
    out = run(exe, ["--help"]).stdout
    for opt in ["--cmo", "--recover", "--flush", "--split-skip", "--eager-split",
                "--mmio-map", "--dirty", "--compare", "--repeat", "--cost",
                "--json", "--svg", "--ept-levels", "--no-counts",
                "--block-fault", "--wp-partial"]:
        if opt not in out:
            sys.exit(f"FAIL: --help does not explain {opt}")
    out = run(exe, ["dirty-log", "-h"]).stdout
    in_order(out, [r"Random seed: 0x6b8b4567",
                   r"         0:    PA-bits:52,  VA-bits:48,  4K pages \(supported\)",
                   r"         6:    PA-bits:40,  VA-bits:48,  4K pages \(supported\)",
                   r"         9:    PA-bits:ANY, VA-bits:48 or 57, 4K pages",
                   r"         17:    PA-bits:56,  VA-bits:57,  4K pages"])
    x86 = run(exe, ["--arch", "x86", "dirty-log", "-h"]).stdout
    if re.findall(r"\(supported\)", x86) != ["(supported)"] or not re.search(
            r"^         9:    PA-bits:ANY, VA-bits:48 or 57, 4K pages \(supported\)$",
            x86, re.M):
        sys.exit("FAIL: --arch x86 supports mode 9 only")
    for o in "abceghimnoprsvxw":
        if not re.search(rf"^ -{o}:", out, re.M) and o != "h":
            sys.exit(f"FAIL: dirty-log -h does not explain -{o}")
    run(exe, ["page-table", "-h"])
    run(exe, ["mmio", "-h"])


def t_tlbi_trap(exe):
    """tlbi-trap: a line per policy, the same guest events, the JSON."""
    d = tempfile.mkdtemp()
    j = os.path.join(d, "o.json")
    args = ["tlbi-trap", "-v", "2", "-P", "4", "-n", "200000", "-s", "200",
            "-u", "2000", "-r", "3"]
    out = run(exe, args + ["--json", j]).stdout
    num = r"(\d+)"
    pol = (r"policy (\S+): guest time (\d+) cycles \(\d+\.\d{3} ms\), TLB misses "
           + num + ", walk refs " + num + ", traps " + num +
           r", overhead ([+-]\d+\.\d\d)%")
    in_order(out, [r"Two-stage kernel build: 2 vCPUs, 4 processes, 200000 "
                   r"accesses per vCPU, seed 3",
                   r"TLB: 1024 entries, 4-way per vCPU; stage-2-only TLB: 64 entries",
                   pol, pol, pol, r"guest events: .*", r"guest TLBIs: .*"])
    rows = {m[0]: m[1:] for m in re.findall(pol, out)}
    if list(rows) != ["untrapped", "precise", "flush-all"]:
        sys.exit(f"FAIL: policies {list(rows)}")
    u, p, f = (tuple(float(x) for x in rows[k])
               for k in ("untrapped", "precise", "flush-all"))
    # (cycles, misses, refs, traps, overhead)
    if u[3] != 0 or u[4] != 0 or p[3] == 0 or p[3] != f[3]:
        sys.exit(f"FAIL: traps/overhead {rows}")
    if p[1] != u[1] or p[2] != u[2] or not f[1] > u[1]:
        sys.exit(f"FAIL: precise keeps the misses, flush-all adds some: {rows}")
    if not (0 < p[4] < f[4]) or abs(p[0] / u[0] - 1 - p[4] / 100) > 1e-3:
        sys.exit(f"FAIL: overheads {rows}")
    tl = re.search(r"guest TLBIs: vae1is (\d+), aside1is (\d+), vmalle1is (\d+), "
                   r"vmalle1 (\d+), in (\d+) flush calls", out)
    if not tl or sum(int(x) for x in tl.groups()[:4]) != p[3]:
        sys.exit(f"FAIL: every guest TLBI traps once: {tl and tl.groups()}")
    doc = json.load(open(j))
    schema = json.load(open(os.path.join(os.path.dirname(__file__),
                                         "..", "slat-perf.schema.json")))
    validate(doc, schema, "$")
    res = doc["settings"]["results"]
    if [r["policy"] for r in res] != ["untrapped", "precise", "flush-all"]:
        sys.exit("FAIL: JSON results")
    if res[2]["traps"] != p[3] or res[2]["hw_tlbi"]["vmalle1is"] != p[3]:
        sys.exit("FAIL: flush-all executes one VMALLE1IS per trap")
    if res[1]["tlb_misses"] != p[1] or round(res[2]["overhead_pct"], 2) != f[4]:
        sys.exit("FAIL: JSON and lines disagree")
    if [ph["name"] for ph in doc["runs"][0]["phases"]] != ["untrapped", "precise",
                                                           "flush-all"]:
        sys.exit("FAIL: JSON phases")
    # The same seed, the same figures; costs change the model.
    again = run(exe, args).stdout
    if re.findall(pol, again) != re.findall(pol, out):
        sys.exit("FAIL: not deterministic")
    free = run(exe, args + ["-x", "trap=0", "-x", "dsb=0", "-x", "tlbi_va=0",
                            "-x", "tlbi_asid=0", "-x", "tlbi_all=0"]).stdout
    fr = {m[0]: m for m in re.findall(pol, free)}
    if fr["precise"][5] != "+0.00":
        sys.exit(f"FAIL: free traps still cost: {fr['precise']}")
    help_out = run(exe, ["tlbi-trap", "-h"]).stdout
    for o in "vPnrtwWcsfuULCHSkAx":
        if not re.search(rf"^ -{o}:", help_out, re.M):
            sys.exit(f"FAIL: tlbi-trap -h does not explain -{o}")
    for bad, rx in [(["-A", "12"], r"8 or 16"), (["-t", "1000"], r"powers of two"),
                    (["-x", "speed=1"], r"KEY=VALUE"), (["-P", "1", "-v", "2"], r"-P 1"),
                    (["--compare", "cmo=in-walker,before-map"], r"compare")]:
        pr = run(exe, ["tlbi-trap"] + bad, ok=False)
        if pr.returncode == 0 or not re.search(rx, pr.stderr):
            sys.exit(f"FAIL: {bad}: exit {pr.returncode}, {pr.stderr!r}")


def fails(exe, args, code, rx, stream="stderr"):
    """@args exits with @code and @rx in @stream."""
    p = run(exe, args, ok=False)
    if p.returncode != code or not re.search(rx, getattr(p, stream)):
        sys.exit(f"FAIL: {args}: exit {p.returncode} (want {code}), "
                 f"{stream} {getattr(p, stream)[-600:]!r}, want {rx!r}")
    return p


def t_user_errors(exe):
    """What users hit: usage errors (exit 2) before any run, resources and
    overflows refused, outputs checked first, the real tools' statuses."""
    d = tempfile.mkdtemp()
    syn = ["-s", "synthetic", "-m", "6"]
    fails(exe, ["dirty-log", "-b", "0"], 2, r"-b 0: each vCPU needs")
    fails(exe, ["page-table", "-b", "0"], 2, r"-b 0: the test memory size")
    # output paths before the run: nothing runs
    p = fails(exe, ["dirty-log", "-b", "2M"] + syn + ["--json", "/nonexistent/o.json"],
              1, r"--json /nonexistent/o.json: No such file")
    if "Populate" in p.stdout:
        sys.exit("FAIL: --json checked after the run")
    fails(exe, ["mmio", "-b", "2M", "--svg", d], 1, r"--svg .*: Is a directory")
    # a run that fails leaves no empty output behind
    j = os.path.join(d, "never.json")
    fails(exe, ["dirty-log", "-i", "1", "--json", j], 254, r"two iterations")
    fails(exe, ["page-table", "-u", "--svg", j], 254, r"hugetlb backing")
    if os.path.exists(j):
        sys.exit("FAIL: a failed run left its --json/--svg file")
    # sizes that do not fit the host or wrap
    fails(exe, ["dirty-log", "-b", "1G", "-v", "512", "-s", "anonymous", "-m", "6"],
          1, r"more than this host has available")
    fails(exe, ["dirty-log", "-b", "0x4000000000000000", "-v", "4"], 2,
          r"does not fit in 64 bits")
    fails(exe, ["dirty-log", "-b", "2M", "-p", "0xfffffffffffff000"] + syn, 2,
          r"beyond the mode's 40-bit guest physical space")
    fails(exe, ["page-table", "-b", "2M", "-p", "0xfffffffffffff000"] + syn, 2,
          r"beyond the mode's 40-bit guest physical space")
    fails(exe, ["mmio", "-b", "2M", "-p", "0xfffffffffffff000"], 2, r"does not fit")
    # parse_size as lenient as the selftests': 1GB is 1G
    out = run(exe, ["page-table", "-b", "1GB", "--selftest-output"] + syn).stdout
    if "Testing memory size(aligned): 0x40000000" not in out:
        sys.exit(f"FAIL: -b 1GB:\n{out}")
    # tlbi-trap: no hang, no nan
    fails(exe, ["tlbi-trap", "-c", "1e12"], 2, r"-c 1e\+12: at most")
    fails(exe, ["tlbi-trap", "-f", "inf"], 2, r"not a number")
    j = os.path.join(d, "t.json")
    run(exe, ["tlbi-trap", "-n", "0", "--json", j])
    if "nan" in open(j).read().lower():
        sys.exit("FAIL: tlbi-trap -n 0 wrote nan to JSON")
    json.load(open(j))
    # --compare once, and not against its own switch
    fails(exe, ["--compare", "cmo=in-walker,before-map", "--compare",
                "recover=none,promote"], 2, r"--compare given twice")
    fails(exe, ["--compare", "recover=none,promote", "--recover=zap-leaf"], 2,
          r"contradict")
    fails(exe, ["--eager-split=enable:3M", "dirty-log", "-b", "4M"] + syn, 2,
          r"not a block size")
    fails(exe, ["--no-counts=yes"], 2, r"--no-counts takes no value")
    # global options before the command
    out = run(exe, ["--no-counts", "--arch", "x86", "page-table", "-b", "2M",
                    "-s", "synthetic"]).stdout
    if "PA-bits:ANY" not in out or "Counts per phase" in out:
        sys.exit(f"FAIL: global options before the command:\n{out}")
    # the real tools' statuses, and --strict
    p = fails(exe, ["dirty-log", "-f", "2"], 0, r"invalid option -- 'f'")
    if "usage: slat-perf dirty-log [-h] [-a]" not in p.stdout:
        sys.exit("FAIL: an unknown option prints the help")
    fails(exe, ["dirty-log", "-f", "2", "--strict"], 2, r"unknown option")
    fails(exe, ["dirty-log", "-m", "0", "--arch", "x86", "-b", "2M"], 254,
          r"Guest mode ID 0 \(PA-bits:52,  VA-bits:48,  4K pages\) not supported\.")
    fails(exe, ["dirty-log", "-m", "9", "-m", "6", "-b", "2M", "--strict"], 2,
          r"not supported.*--arch x86")
    # -m 9 alone is an x86 command line
    out = run(exe, ["dirty-log", "-m", "9", "-b", "2M", "-s", "synthetic"]).stdout
    if "Testing guest mode: PA-bits:ANY" not in out:
        sys.exit(f"FAIL: -m 9 without --arch:\n{out}")
    fails(exe, ["page-table", "-u", "-b", "2M"], 254,
          r"Memslot GPA misalignment requires hugetlb backing")
    p = fails(exe, ["dirty-log", "-n", "-b", "2M"] + syn, 4,
              r"no nested stage-2 tables")
    if "memstress_setup_nested() not support on this architecture" not in p.stdout:
        sys.exit(f"FAIL: -n on arm64:\n{p.stdout}")
    # a hugetlb source the host lacks: a stand-in, and one line says so
    out = run(exe, ["page-table", "-b", "4M", "-s", "anonymous_hugetlb_16mb",
                    "-m", "6"]).stdout
    if "granularity: 0x1000000" not in out or not re.search(
            r"^slat-perf: -s anonymous_hugetlb_16mb: .*ran on synthetic_2mb", out, re.M):
        sys.exit(f"FAIL: hugetlb stand-in:\n{out}")
    for src, size in [("shared_hugetlb", "2M"), ("shmem", "2M"),
                      ("anonymous_hugetlb_1gb", "1G")]:
        run(exe, ["dirty-log", "-b", size, "-s", src, "-m", "6", "--no-counts"])
    # -u with a hugetlb source runs
    run(exe, ["page-table", "-u", "-b", "4M", "-s", "anonymous_hugetlb", "-m", "6"])


def t_chart_progress(exe):
    """The chart: values with units, the settings in the title, tlbi-trap's
    guest time; the progress bar moves inside a phase, with a rate."""
    d = tempfile.mkdtemp()
    s = os.path.join(d, "o.svg")
    run(exe, ["dirty-log", "-b", "4M", "-s", "synthetic", "-m", "6", "--svg", s])
    texts = [t.text for t in ET.parse(s).getroot().iter("{http://www.w3.org/2000/svg}text")]
    if "slat-perf dirty-log -b 4M -s synthetic -m 6" not in texts[0]:
        sys.exit(f"FAIL: chart title {texts[0]!r}")
    if not all(re.fullmatch(r"[\d.e+]+ (ns|us|ms|s)", t) for t in texts
               if re.match(r"[\d.]", t)):
        sys.exit(f"FAIL: chart values without units: {texts}")
    j = os.path.join(d, "t.json")
    run(exe, ["tlbi-trap", "-n", "100000", "--svg", s, "--json", j])
    texts = [t.text for t in ET.parse(s).getroot().iter("{http://www.w3.org/2000/svg}text")]
    if "modeled guest time" not in texts:
        sys.exit(f"FAIL: tlbi-trap chart: {texts}")
    res = json.load(open(j))
    hz = res["settings"]["cost_cycles"]["hz"]
    for ph, r in zip(res["runs"][0]["phases"], res["settings"]["results"]):
        if abs(ph["modeled_ns"] - r["guest_cycles"] / hz * 1e9) > 1:
            sys.exit(f"FAIL: tlbi-trap phase {ph['name']} is not its guest time")
    p = run(exe, ["dirty-log", "-b", "1G", "-s", "synthetic", "-m", "6",
                  "--progress", "--no-counts"])
    # (text mode reads each \r of the bar as a line end)
    ticks = re.findall(r"^\[[# ]+\] +(\d+)% (\S+(?: \S+)*?) +(\S+) accesses/s",
                       p.stderr, re.M)
    moved = {ph for ph in {t[1] for t in ticks}
             if len({t[0] for t in ticks if t[1] == ph}) >= 2}
    if not moved:
        sys.exit(f"FAIL: the progress bar does not move inside a phase: {ticks}")


def without_wall(v):
    """@v (parsed JSON) without the host's times."""
    if isinstance(v, dict):
        return {k: without_wall(x) for k, x in v.items() if k != "wall_ns"}
    if isinstance(v, list):
        return [without_wall(x) for x in v]
    return v


def t_repeatable(exe):
    """Racing command lines (vCPUs faulting on one block) give the same
    counts and modeled times in 10 runs, five at a time so that they load
    the machine: races are decided in virtual time, not by the host, and
    frees after a grace period count in their phase."""
    cases = [
        # the four vCPUs fault on their 1G block at once; one maps it
        (["dirty-log", "-m", "6", "-v", "4", "-b", "256M", "-s",
          "synthetic_1gb", "-i", "2"], 4),
        # the same, the winner's 84 ms clean overlapped by the others'
        # retries, 55,926 faults each
        (["dirty-log", "-m", "6", "-v", "4", "-b", "256M", "-s",
          "synthetic_1gb", "-i", "2", "--clean-time=slept"], 1 + 3 * 55926),
        # every stage of kvm_page_table_test, both placements
        (["page-table", "-m", "6", "-v", "4", "-b", "8M", "-s",
          "synthetic_2mb", "--clean-time=slept",
          "--compare", "cmo=in-walker,before-map"], None),
        # the unmap's tables are freed after a grace period, counted in it
        (["mmio", "-b", "1G", "--flush=entry", "-v", "2",
          "--compare", "mmio-map=page,block"],
         None),
    ]
    d = tempfile.mkdtemp()
    for args, populate_faults in cases:
        outs = []
        for batch in range(2):
            ps = []
            for i in range(5):
                j = os.path.join(d, f"{batch}-{i}.json")
                ps.append((subprocess.Popen([exe] + args + ["--json", j],
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, text=True), j))
            for p, j in ps:
                err = p.communicate(timeout=600)[1]
                if p.returncode:
                    sys.exit(f"FAIL: {args}: exit {p.returncode}\n{err}")
                outs.append(without_wall(json.load(open(j))))
        for i, o in enumerate(outs[1:], 2):
            if o != outs[0]:
                sys.exit(f"FAIL: {' '.join(args)}: run {i} differs from run 1")
        ph = outs[0]["runs"][0]["phases"][0]
        got = ph["counts"]["faults"]["translation"]
        if populate_faults is not None and got != populate_faults:
            sys.exit(f"FAIL: {' '.join(args)}: populate faults {got}, "
                     f"want {populate_faults}")


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
TOOLS = {"dirty_log_perf_test": "dlpt_", "kvm_page_table_test": "kptt_"}


def golden_read(path):
    """(command line, output, exit code) of a golden file."""
    text = open(path).read()
    cmd = re.search(r"^### command: *(.*)$", text, re.M).group(1)
    out = text.split("### ---- output (stdout+stderr) ----\n", 1)[1]
    out = out.split("### ---- end of output ----\n", 1)[0]
    code = int(re.search(r"^### exit code: (\d+)$", text, re.M).group(1))
    return cmd, out, code


def golden_mask(out):
    """What differs between machines and runs, masked: times, pid/tid,
    the host virtual address of the test memory; the backtrace lines of an
    assertion (addresses of that build) dropped."""
    out = re.sub(r"\d+\.\d{9}s", "<TIME>s", out)
    out = re.sub(r"pid=\d+ tid=\d+", "pid=<PID> tid=<TID>", out)
    out = re.sub(r"(Host  virtual  test memory offset: )0x[0-9a-f]+",
                 r"\g<1><HVA>", out)
    return "".join(l for l in out.splitlines(True)
                   if not re.match(r"     \d+\t", l))


def golden_run(exe, cmd, extra):
    """Run @cmd's tool, a link to slat-perf under the real tool's name, with
    the real command line plus @extra; stdout and stderr in one stream."""
    d = tempfile.mkdtemp()
    for tool in TOOLS:
        os.symlink(os.path.abspath(exe), os.path.join(d, tool))
    args = cmd.split()
    p = subprocess.run(args + extra, cwd=d, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    return p.stdout, p.returncode


def golden(exe, prefix):
    """slat-perf --arch x86 against the real tools' outputs, times and
    machine-specific values masked: with --selftest-output byte for byte,
    exit code included; by default the real lines first, exactly, then only
    slat-perf's own."""
    files = sorted(f for f in os.listdir(GOLDEN) if f.startswith(prefix))
    if not files:
        sys.exit("FAIL: no golden files")
    for name in files:
        cmd, want, code = golden_read(os.path.join(GOLDEN, name))
        want = golden_mask(want)
        got, rc = golden_run(exe, cmd, ["--arch", "x86", "--selftest-output"])
        if golden_mask(got) != want or rc != code:
            diff = "".join(difflib.unified_diff(
                want.splitlines(True), golden_mask(got).splitlines(True),
                "real", "slat-perf"))
            sys.exit(f"FAIL: {name}: {cmd}: exit {rc} (real {code})\n{diff}")
        got, rc = golden_run(exe, cmd, ["--arch", "x86"])
        if not golden_mask(got).startswith(want) or rc != code:
            sys.exit(f"FAIL: {name}: {cmd} (default output): the real lines "
                     f"are not its start, or exit {rc} != {code}:\n{got}")
        print(f"{name}: matches")


def t_golden_dirty_log(exe):
    golden(exe, "dlpt_")


def t_golden_page_table(exe):
    golden(exe, "kptt_")


def t_seed_ratios(exe):
    """scripts/seed_ratios.py: the seeds' rows from reproduce.sh's JSON, and
    --sensitivity's rerun at half and double a cost."""
    top = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    script = os.path.join(top, "scripts", "seed_ratios.py")
    d = tempfile.mkdtemp()
    env = dict(os.environ, SLAT_PERF=os.path.abspath(exe))
    subprocess.run([os.path.join(top, "scripts", "reproduce.sh"), d, "003",
                    "004-map"], env=env, check=True, capture_output=True,
                   timeout=360)
    out = subprocess.run([sys.executable, script, d], env=env, check=True,
                         capture_output=True, text=True).stdout
    # 2,101,256 entries and invalidations against 8: 8.805 us / 2.313 s
    # 003 precise: 0.4 % slower against the seed's 1.6 %, within 2x as ratios
    # but not as changes; flush-all: 4.3 % against 7.7 %
    in_order(out, [r"\| 003 precise / untrapped \| 1\.016 \| 1\.004 \| yes \| no \| 1\.004 \|",
                   r"\| 003 flush-all / untrapped \| 1\.077 \| 1\.043 \| yes \| yes \| 1\.043 \|",
                   r"\| 004 unmap 8 GiB, pages -> blocks \| <= 5\.27e-04 \| "
                   r"3\.81e-06 \| no \| no \| 3\.81e-06 \|",
                   r"2 of 3 rows within 2x the same way; 1 of 3 with the "
                   r"change within 2x\."])
    if "000 " in out or "001 " in out:
        sys.exit("FAIL: rows of experiments that did not run:\n" + out)
    # the two readings at their edges
    sys.path.insert(0, os.path.dirname(script))
    import seed_ratios as sr
    for seed, ours, loose, strict in ((0.867, 0.449, "yes", "no"),
                                      (0.442, 0.403, "yes", "yes"),
                                      (0.0354, 0.400, "no", "no"),
                                      (0.752, 0.505, "yes", "yes"),
                                      (0.752, 0.5030, "yes", "no"),
                                      (0.0123, 0.0062, "yes", "yes"),
                                      (0.0123, 0.0061, "no", "no"),
                                      (0.9, 1.05, "no", "no"),
                                      (1.077, 1.043, "yes", "yes"),
                                      (0.959, 1.0, "no", "no")):
        got = (sr.verdict(seed, ours), sr.verdict_strict(seed, ours))
        if got != (loose, strict):
            sys.exit("FAIL: seed %g, ours %g: %s, not %s" %
                     (seed, ours, got, (loose, strict)))
    out = subprocess.run([sys.executable, script, "--sensitivity", "tlbi_ipa",
                          d, "004-map"], env=env, check=True,
                         capture_output=True, text=True).stdout
    in_order(out, [r"\| seed result \| tlbi_ipa = 50 \| 100 \(default\) \| 200 \|",
                   r"\|---\|---\|---\|---\|",
                   r"\| 004 unmap 8 GiB, pages -> blocks \| 3\.81e-06 \| "
                   r"3\.81e-06 \| 3\.81e-06 \|"])
    # the reruns ran with the cost; both unmaps invalidate by IPA, one per
    # entry, so the ratio stays the count ratio, 8 / 2,101,256
    for tag, want in (("half", 50), ("double", 200)):
        doc = json.load(open(os.path.join(d, "tlbi_ipa-" + tag, "004-map.json")))
        if doc["cost_ns"]["tlbi_ipa"] != want:
            sys.exit("FAIL: %s run: tlbi_ipa %r" % (tag, doc["cost_ns"]))


def t_costs(exe):
    """Each assumed cost is marked where the figures are printed, a cost
    file's values are not, and a comparison gives the band of each modeled
    ratio: the same counts replayed with each assumed cost at half and
    double."""
    args = ["mmio", "-b", "64M", "--flush=entry", "--compare",
            "mmio-map=page,block"]
    out = run(exe, args).stdout
    # 32,768 page leaves against one block: every cost scales both sides
    # but the walk's, so the band stays near the count ratio
    in_order(out, [r"unmap +wall \(s\).*",
                   r" +modeled \(s\) +[0-9.]+ +[0-9.]+  [0-9,]+x faster",
                   r" +modeled band +[0-9,.]+(-[0-9,.]+x faster|x faster, "
                   r"unmoved)",
                   r"Costs \(docs/slat-perf\.md, \"Cost table\"; \* assumed: "
                   r"no published measurement\):",
                   r"  tlbi_ipa 100 ns\* .*",
                   r".*cache_line 64 bytes fault_exit 1500 ns\*.*",
                   # measured: KVM's pgtable.c (docs/slat-perf.md)
                   r"  entry_visit 4\.765 ns entry_write 2\.272 ns "
                   r"leaf_install 21\.606 ns",
                   r"  ipi_send 200 ns\* ipi_exit 1500 ns\* mem_bw 204\.8 "
                   r"bytes/ns",
                   r"  %d of %d assumed; .*" % (NKEYS - 5, NKEYS)])
    d = tempfile.mkdtemp()
    cost = os.path.join(d, "cost")
    with open(cost, "w") as f:
        f.write("tlbi_ipa = 50\ndsb = 800\n")
    js = os.path.join(d, "out.json")
    out = run(exe, args + ["--cost", cost, "--json", js]).stdout
    in_order(out, [r"Costs \(.*; set by " + re.escape(cost) + r"\):",
                   r"  tlbi_ipa 50 ns \(file\) tlbi_ipa_local 20 ns\* .*",
                   r".*dsb 800 ns \(file\) clean_line 5 ns\* .*",
                   r"  %d of %d assumed; .*" % (NKEYS - 7, NKEYS)])
    doc = json.load(open(js))
    if len(doc["cost_ns"]) != NKEYS:
        sys.exit("FAIL: cost_ns has %d keys, the table %d" %
                 (len(doc["cost_ns"]), NKEYS))
    if "tlbi_ipa" in doc["cost_assumed"] or "fault_exit" not in \
            doc["cost_assumed"] or len(doc["cost_assumed"]) != NKEYS - 7:
        sys.exit("FAIL: cost_assumed %r" % doc["cost_assumed"])
    if doc["cost_ns"]["tlbi_ipa"] != 50 or doc["cost_ns"]["mem_bw"] != 204.8:
        sys.exit("FAIL: cost_ns %r" % doc["cost_ns"])
    # a run without --compare marks the costs too
    out = run(exe, ["mmio", "-b", "64M", "--flush=entry"]).stdout
    in_order(out, [r"Costs \(.*\):", r"  %d of %d assumed; .*" %
                   (NKEYS - 5, NKEYS)])


def first_run_phases(exe, args, cost=None):
    """The phases of the first run of slat-perf @args (its JSON), with the
    costs of @cost given as a --cost file."""
    d = tempfile.mkdtemp()
    j = os.path.join(d, "o.json")
    extra = []
    if cost:
        c = os.path.join(d, "cost")
        with open(c, "w") as f:
            f.write("".join(f"{k} = {v}\n" for k, v in cost.items()))
        extra = ["--cost", c]
    run(exe, args + extra + ["--json", j])
    return json.load(open(j))["runs"][0]["phases"]


def x86_phases(exe, args, cost=None):
    """The phases of an x86 dirty-log run, by name, iterations apart."""
    return {(p["name"], p["iteration"]): p for p in
            first_run_phases(exe, ["--arch", "x86", "dirty-log"] + args,
                             cost)}


def t_x86_pml(exe):
    """KVM x86's dirty logging with PML on EPT: 4K pages made clean, the
    guest's writes logged by the CPU (a PML-full exit when a write finds
    the 512 entries used; every exit, the end of a pass included, empties
    the buffer), no write faults; flushes as kvm_flush_remote_tlbs():
    a request per vCPU, one INVEPT each at its next entry; GET_DIRTY_LOG
    copies the CPU's log (no walk of the dirty bits). Every figure is
    derived from the command line: V vCPUs of P pages, I iterations."""
    V, I = 2, 3
    for backing, P in (("synthetic_2mb", 1024), ("synthetic", 1025)):
        args = ["-v", str(V), "-b", f"{P * 4}K", "-s", backing, "-i", str(I)]
        ph = x86_phases(exe, args)
        # Iteration 1: INITIALLY_SET, nothing made clean yet: no log.
        c = ph[("dirty", 1)]["counts"]
        if c["pml_logged"] or c["pml_full_exits"]:
            sys.exit(f"FAIL: x86 {backing} iteration 1 logged {c}")
        for it in range(2, I + 1):
            c = ph[("dirty", it)]["counts"]
            faults = sum(c["faults"].values())
            # the 513th log of a pass exits first: ceil(P / 512) - 1
            full = V * ((P + 511) // 512 - 1)
            if (c["pml_logged"], c["pml_full_exits"], faults) != \
                    (V * P, full, 0):
                sys.exit(f"FAIL: x86 {backing} iteration {it}: logged "
                         f"{c['pml_logged']} (want {V * P}), full exits "
                         f"{c['pml_full_exits']} (want {full}), faults "
                         f"{faults} (want 0)")
            # the exits are the pass's only work, each vCPU its own: in
            # parallel, V times over in total work
            each = (full // V) * PML_FULL_NS
            # GET_DIRTY_LOG copies the CPU's log: no dirty bit is read
            g = ph[("get", it)]["counts"]
            if g["visited"] or sum(g["written"].values()):
                sys.exit(f"FAIL: x86 {backing} get {it} walked the table: "
                         f"{g['visited']} entries visited, written "
                         f"{g['written']} (want none)")
            d = ph[("dirty", it)]
            if abs(d["modeled_ns"] - each) > 1e-6 or \
                    abs(d["total_work_ns"] - V * each) > 1e-6:
                sys.exit(f"FAIL: x86 {backing} iteration {it}: modeled "
                         f"{d['modeled_ns']} (want {each}), total work "
                         f"{d['total_work_ns']} (want {V * each})")
        for it in range(1, I + 1):
            c = ph[("clear", it)]
            # every page cleared made clean; one flush for the slot, a
            # request to each vCPU, each doing one all-context INVEPT (no
            # vCPU in the guest to kick), no local one
            want = {"flushes": 1, "requests": V, "kicks": 0, "invept": V,
                    "invept_single": 0}
            if c["x86_flush"] != want or \
                    c["counts"]["wrprotected_pages"] != V * P:
                sys.exit(f"FAIL: x86 {backing} clear {it}: {c['x86_flush']}, "
                         f"{c['counts']['wrprotected_pages']} pages, want "
                         f"{want}, {V * P}")
    # The flush is charged as INVEPTs and requests, not Arm's TLBI + DSB:
    # one more ns per all-context INVEPT (a request's) adds V ns to a
    # clear; the single-context one (a vCPU's local flush), TLBI and DSB
    # costs move nothing.
    args = ["-v", str(V), "-b", "4M", "-s", "synthetic_2mb", "-i", "2"]
    base = x86_phases(exe, args)[("clear", 2)]["total_work_ns"]
    more = x86_phases(exe, args, {"invept_all": 501})[("clear", 2)]
    single = x86_phases(exe, args, {"invept_single": 501})[("clear", 2)]
    arm = x86_phases(exe, args, {"tlbi_vmid": 400, "tlbi_range": 300,
                                 "dsb": 2000})[("clear", 2)]
    if abs(more["total_work_ns"] - base - V) > 1e-6 or \
            single["total_work_ns"] != base or \
            arm["total_work_ns"] != base:
        sys.exit(f"FAIL: x86 clear total work {base}, with invept_all "
                 f"+1: {more['total_work_ns']} (want +{V}), with "
                 f"invept_single +1: {single['total_work_ns']}, with Arm's "
                 f"costs doubled {arm['total_work_ns']} (both want the "
                 f"same)")
    # Without manual protect (-g), GET_DIRTY_LOG makes the logged pages
    # clean, each 64-page word of the log one masked clean: every page
    # written, nothing else, 64 leaves read per word plus its descent
    g = x86_phases(exe, args + ["-g"])[("get", 2)]["counts"]
    P = 1024
    if (g["written"]["attr"], g["wrprotected_pages"]) != (V * P, V * P) or \
            g["visited"] % (V * P // 64) or g["visited"] < V * P:
        sys.exit(f"FAIL: x86 -g get 2: {g['written']}, "
                 f"{g['wrprotected_pages']} pages, {g['visited']} visited "
                 f"(want {V * P} made clean, {V * P // 64} masks)")
    # --x86-dirty=wp: write protection, one write fault per page of a pass
    # (the blocks split when the first clear protects them: eager split)
    ph = x86_phases(exe, args + ["--x86-dirty=wp"])
    c = ph[("dirty", 2)]["counts"]
    if c["faults"]["permission"] != V * 1024 or c["pml_logged"]:
        sys.exit(f"FAIL: --x86-dirty=wp dirty 2: {c}")


def pt_phases(exe, args):
    """The counts of a page-table run's phases, by name (one mode)."""
    return {p["name"]: p["counts"] for p in
            first_run_phases(exe, ["page-table", "-m", "6"] + args)}


def t_host_memory(exe):
    """--host-memory=linux: kvm_page_table_test's CREATE has even vCPUs
    write each block's first page and odd ones read it. With two vCPUs in
    step, each of the B blocks is read into the huge zero page, then the
    write splits it (B splits, B copies, B notifier unmaps); from then on
    the host has small pages, so ADJUST rebuilds no block: it maps the
    P - 1 - P/2 pages of each block UPDATE left unmapped, one by one.
    Populated memory rebuilds the B blocks (one range TLBI each). One vCPU
    (a writer only) meets no zero page: the same counts either way."""
    B, P = 32, 512
    args = ["-s", "synthetic_2mb", "-b", f"{B * 2}M", "-v", "2"]
    lin = pt_phases(exe, args + ["--host-memory=linux"])
    pop = pt_phases(exe, args)
    host = lin["create"]["host"]
    if host != {"cow": B, "thp_splits": B, "notifier_unmaps": B}:
        sys.exit(f"FAIL: --host-memory=linux create: host {host}, want "
                 f"{B} of each")
    a = lin["adjust"]
    if a["tlbi"]["range"] or a["written"]["leaf"] != B * (P - 1 - P // 2):
        sys.exit(f"FAIL: linux adjust: {a['tlbi']['range']} range TLBIs "
                 f"(want 0), {a['written']['leaf']} leaves (want "
                 f"{B * (P - 1 - P // 2)})")
    a = pop["adjust"]
    if a["tlbi"]["range"] != B or a["written"]["leaf"] != B or \
            pop["create"]["host"]["cow"]:
        sys.exit(f"FAIL: populated adjust: {a['tlbi']['range']} range "
                 f"TLBIs, {a['written']['leaf']} leaves (want {B}, {B})")
    one = ["-s", "synthetic_2mb", "-b", f"{B * 2}M", "-v", "1"]
    lin, pop = pt_phases(exe, one + ["--host-memory=linux"]), \
        pt_phases(exe, one)
    for name in lin:
        lin[name].pop("host")
        pop[name].pop("host")
    if lin != pop:
        sys.exit(f"FAIL: one writer: linux {lin} against populated {pop}")


def t_fault_lock(exe):
    """--fault-lock=write (arm64 before Linux 6.2, seed 000's kernel): V
    vCPUs fault on each of B blocks at once and take mmu_lock one after
    another, so none retries: V faults a block with either placement.
    Before the map every fault cleans the block, inside the lock as
    user_mem_abort() did, so the V x B cleans of 2 MiB follow one another
    in modeled time; in the walker only the fault that installs it does.
    With the lock for reading, the walker's losers retry while the winner
    cleans."""
    V, B, block = 4, 16, 2 << 20
    clean_ns = block / 64 * 5.0  # clean_line's default per 64-byte line
    args = ["page-table", "-m", "6", "-s", "synthetic_2mb", "-b",
            f"{B * 2}M", "-v", str(V), "--clean-time=slept"]

    def create(extra):
        d = tempfile.mkdtemp()
        j = os.path.join(d, "o.json")
        run(exe, args + extra + ["--json", j])
        r = json.load(open(j))["runs"][0]
        return r["switches"], r["phases"][0]

    for cmo, cleans in (("before-map", V * B), ("in-walker", B)):
        sw, p = create([f"--cmo={cmo}", "--fault-lock=write"])
        c = p["counts"]
        if sw["fault-lock"] != "write" or \
                c["faults"]["translation"] != V * B or \
                c["dcache_clean"]["calls"] != cleans or \
                c["dcache_clean"]["bytes"] != cleans * block:
            sys.exit(f"FAIL: --fault-lock=write --cmo={cmo}: switches {sw}, "
                     f"faults {c['faults']}, cleans {c['dcache_clean']} "
                     f"(want {V * B} faults, {cleans} cleans)")
        if p["modeled_ns"] < cleans * clean_ns:
            sys.exit(f"FAIL: --fault-lock=write --cmo={cmo}: modeled "
                     f"{p['modeled_ns']} ns, less than its {cleans} cleans "
                     f"one after another ({cleans * clean_ns} ns)")
    sw, p = create(["--cmo=in-walker"])
    if sw["fault-lock"] != "read" or \
            p["counts"]["faults"]["translation"] <= V * B:
        sys.exit(f"FAIL: --fault-lock=read: switches {sw}, faults "
                 f"{p['counts']['faults']} (want more than {V * B}: retries)")
    _, p = create(["--cmo=before-map"])
    if p["modeled_ns"] >= V * B * clean_ns:
        sys.exit(f"FAIL: --fault-lock=read --cmo=before-map: modeled "
                 f"{p['modeled_ns']} ns, the cleans were not overlapped")
    fails(exe, args + ["--fault-lock=both"], 2,
          r"--fault-lock=both: use read or write")


def seed001_want(fmt, V, B):
    """Seed 001's counts, small: V vCPUs of B 2M blocks each (P = 512 B
    pages), -i 2, recover zap-leaf (before) and promote (after), derived
    from the command line. Keys: (run, phase, iteration) -> {count: n}."""
    P = 512 * B
    npt = fmt == "npt"
    vflush = "asid_flush" if npt else "invept"
    # the region lies in one 1G range: one level-1 and one level-2 table
    upper = 2
    w = {}
    for run in ("zap-leaf", "promote"):
        w[(run, "populate", 0)] = {"faults.translation": V * B,
                                   "written.leaf": V * B,
                                   "written.table": upper}
        # the first clear splits every block eagerly (a table each) and
        # protects its pages; NPT breaks each block first and flushes the
        # ASID for it (AMD erratum 383), then one flush for the slot
        w[(run, "clear", 1)] = {"written.leaf": V * P, "written.table": V * B,
                                "written.break": V * B, "written.attr": V * P,
                                "wrprotected_pages": V * P,
                                "x86_flush.flushes": 1 + (V * B if npt else 0),
                                "x86_flush.kicks": 0,
                                "x86_flush." + vflush: V}
        if npt:
            # no PML on AMD: a write fault per page, the leaf made
            # writable and (a nested page fault drops nothing) its ASID
            # flushed: a kick of each other vCPU, a flush by every vCPU
            w[(run, "dirty", 2)] = {"faults.permission": V * P,
                                    "written.attr": V * P,
                                    "pml_logged": 0, "pml_full_exits": 0,
                                    "x86_flush.flushes": V * P,
                                    "x86_flush.kicks": V * P * (V - 1),
                                    "x86_flush.asid_flush": V * P * V}
        else:
            # PML: every write logged, no fault; the 513th log of a pass
            # exits first
            w[(run, "dirty", 2)] = {"faults.permission": 0,
                                    "pml_logged": V * P,
                                    "pml_full_exits": V * (B - 1),
                                    "x86_flush.flushes": 0}
        w[(run, "clear", 2)] = {"written.attr": V * P,
                                "wrprotected_pages": V * P,
                                "x86_flush.flushes": 1,
                                "x86_flush." + vflush: V}
    # disable, before: every leaf and every table entry zapped, each
    # flushed (--flush=entry), a request to each vCPU, one flush each
    zap = V * P + V * B + upper
    w[("zap-leaf", "disable", 0)] = {"written.clear": zap,
                                     "x86_flush.flushes": zap,
                                     "x86_flush.requests": zap * V,
                                     "x86_flush.kicks": 0,
                                     "x86_flush." + vflush: V}
    # after: each table promoted to its block in place, one flush each
    # (NPT: the table broken first)
    w[("promote", "disable", 0)] = {"written.leaf": V * B,
                                    "written.clear": 0,
                                    "written.break": V * B if npt else 0,
                                    "x86_flush.flushes": V * B,
                                    "x86_flush.requests": V * B * V,
                                    "x86_flush." + vflush: V}
    return w


def seed001_mismatches(doc, want):
    """The counts of @doc's runs that differ from @want, as text."""
    got = {}
    for r in doc["runs"]:
        run = r["label"].split("=", 1)[1]
        for p in r["phases"]:
            got[(run, p["name"], p["iteration"])] = p
    bad = []
    for key, counts in want.items():
        p = got.get(key)
        if p is None:
            bad.append(f"{key}: no such phase")
            continue
        for name, n in counts.items():
            # "x86_flush.kicks" is the phase's; "written.leaf" a count's
            v = p if name.startswith("x86_flush.") else p["counts"]
            for part in name.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if v != n:
                bad.append(f"{key} {name} = {v}, want {n}")
    return bad


def t_x86_npt(exe):
    """Seed 001's before and after (recover=zap-leaf,promote), small, on
    Intel EPT and AMD NPT (--format): exact counts derived from the
    command line, the format named in the JSON; expectations of the other
    format fail, and so does one count off by one; --x86-dirty=pml and
    --arch arm64 with --format npt are usage errors."""
    V, B, cases = 2, 2, 0
    d = tempfile.mkdtemp()
    docs = {}
    for fmt in ("ept", "npt"):
        j = os.path.join(d, fmt + ".json")
        run(exe, ["dirty-log", "-m", "9", "-v", str(V), "-b", f"{2 * B}M",
                  "-s", "synthetic_2mb", "-i", "2", "--flush=entry",
                  "--format", fmt, "--compare", "recover=zap-leaf,promote",
                  "--json", j])
        doc = json.load(open(j))
        schema = json.load(open(os.path.join(os.path.dirname(__file__), "..",
                                             "slat-perf.schema.json")))
        validate(doc, schema, "$")
        if (doc["settings"]["format"], doc["settings"]["arch"]) != (fmt, "x86"):
            sys.exit(f"FAIL: --format {fmt}: settings {doc['settings']}")
        if doc["compare"]["seed"]["id"] != "001":
            sys.exit(f"FAIL: --format {fmt}: not seed 001: {doc['compare']}")
        want = seed001_want(fmt, V, B)
        bad = seed001_mismatches(doc, want)
        if bad:
            sys.exit(f"FAIL: --format {fmt}:\n  " + "\n  ".join(bad))
        cases += sum(len(c) for c in want.values())
        docs[fmt] = doc
    # the check can fail: the other format's figures, and one count off
    for fmt, other in (("ept", "npt"), ("npt", "ept")):
        if not seed001_mismatches(docs[fmt], seed001_want(other, V, B)):
            sys.exit(f"FAIL: {fmt}'s run passes {other}'s counts")
        want = seed001_want(fmt, V, B)
        want[("promote", "disable", 0)]["x86_flush.flushes"] += 1
        if not seed001_mismatches(docs[fmt], want):
            sys.exit(f"FAIL: {fmt}'s run passes a flush count off by one")
    # every default cost but the flush's own is the same on both formats:
    # one more ns per ASID flush adds V ns to NPT's clear 2, none to EPT's
    base = {f: x86_phases(exe, ["--format", f, "-v", str(V), "-b", "4M", "-s",
                                "synthetic_2mb", "-i", "2"])
            for f in ("ept", "npt")}
    more = {f: x86_phases(exe, ["--format", f, "-v", str(V), "-b", "4M", "-s",
                                "synthetic_2mb", "-i", "2"],
                          {"asid_flush": 501}) for f in ("ept", "npt")}
    for f, dv in (("ept", 0), ("npt", V)):
        a = base[f][("clear", 2)]["total_work_ns"]
        b = more[f][("clear", 2)]["total_work_ns"]
        if abs(b - a - dv) > 1e-6:
            sys.exit(f"FAIL: --format {f}: asid_flush +1 moved clear 2 by "
                     f"{b - a} ns, want {dv}")
    # invalid combinations: the message says why
    for args, rx in (
            (["--format", "npt", "--x86-dirty=pml"], r"AMD has no Page-Modification"),
            (["--format", "npt", "--compare", "x86-dirty=wp,pml"],
             r"AMD has no Page-Modification"),
            (["--format", "npt", "--arch", "arm64"], r"--format npt is an x86 table"),
            (["--format", "ppt"], r"--format ppt: use ept \(Intel\) or npt")):
        fails(exe, ["dirty-log", "-b", "4M", "-s", "synthetic"] + args, 2, rx)
        cases += 1
    print(f"{cases} counts and errors checked on ept and npt")


if __name__ == "__main__":
    globals()["t_" + sys.argv[1]](sys.argv[2])
    print("ok")
