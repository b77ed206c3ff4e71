#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks of slat-dump as a reader of untrusted input: crafted raw images,
# pipes, a full stdout, arenas against the PA space, exit statuses, --help;
# and of its outputs: --json against the text listing, snapshots against
# the script up to them, stage-1 images, a split beyond the arena.
# Usage: check.py TEST EXE SRCDIR [sanitized]
import json, os, re, resource, struct, subprocess, sys, tempfile

EXE, SRC = sys.argv[2], sys.argv[3]
SANITIZED = len(sys.argv) > 4 and sys.argv[4] not in ("", "0", "OFF")
DEMO = os.path.join(SRC, "examples", "demo.slat")
RAW_MEM = 1 << 30  # for reading images of a few pages


def limit(mem):
    # A reader that loops or grows without bound fails here quickly
    # instead of taking the machine (sanitizers need the address space).
    def set_limit():
        if mem and not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    return set_limit


def run(args, stdin=None, stdout=subprocess.PIPE, timeout=30, mem=None,
        stdin_file=None):
    try:
        if stdin_file is not None:
            return subprocess.run([EXE] + args, stdin=stdin_file,
                                  stdout=stdout, stderr=subprocess.PIPE,
                                  timeout=timeout, preexec_fn=limit(mem))
        return subprocess.run([EXE] + args, input=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, timeout=timeout,
                              preexec_fn=limit(mem))
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: slat-dump {args}: still running after {timeout} s")


def expect(p, rc, rx, what):
    err = p.stderr.decode(errors="replace")
    if p.returncode != rc or not re.search(rx, err):
        sys.exit(f"FAIL: {what}: exit {p.returncode} (want {rc}), stderr "
                 f"{err!r} (want {rx!r})")


def header(nr, ia=48, pa=48, start=0, root_pages=1, root_pa=0, fmt=1,
           granule=4096):
    h = b"SLATIMG1" + struct.pack("<IIIBBbBIIQ", 1, fmt, granule, ia, pa,
                                  start, root_pages, 0, nr, root_pa)
    return h + bytes(64 - len(h))


def record(pa, words):
    return struct.pack("<Q", pa) + struct.pack("<512Q", *words)


def t_raw_shared_tables():
    """Root -> A x512 -> B x512 -> C x512: 16 KB that would list 512^4
    leaves. The second entry pointing to A is refused, naming both."""
    A, B, C = 0x1000, 0x2000, 0x3000
    table = lambda pa: pa | 3
    page = (0x40000000 | 0x400 | 0xc0 | 0x3c | 3)  # AF, S2AP rw, normal
    img = (header(4, root_pa=0) + record(0, [table(A)] * 512) +
           record(A, [table(B)] * 512) + record(B, [table(C)] * 512) +
           record(C, [page] * 512))
    d = tempfile.mkdtemp()
    path = os.path.join(d, "shared.img")
    open(path, "wb").write(img)
    p = run(["--read-raw", path], mem=RAW_MEM)
    expect(p, 2, r"table page 0x3000 is reached twice: from "
           r"0x0000000000002000\[0\] and from 0x0000000000002000\[1\]",
           "an image whose tables are shared")
    # The same through a 5-level EPT root: the loop is refused too.
    ept = lambda pa: pa | 7
    img = (header(3, ia=57, pa=52, start=-1, fmt=2) +
           record(0, [ept(A)] * 2 + [0] * 510) +
           record(A, [ept(B)] + [0] * 511) + record(B, [ept(A)] + [0] * 511))
    open(path, "wb").write(img)
    p = run(["--read-raw", path], mem=RAW_MEM)
    expect(p, 2, r"table page 0x1000 is reached twice", "an EPT loop")
    # A tree that is one (each table once) still reads.
    img = (header(2, root_pa=0) + record(0, [table(A)] + [0] * 511) +
           record(A, [0x40000000 | 0x400 | 0xc0 | 0x3c | 1] + [0] * 511))
    open(path, "wb").write(img)
    p = run(["--read-raw", path])
    expect(p, 0, r"^$", "a well-formed image")
    if b"L1 block" not in p.stdout:
        sys.exit(f"FAIL: the well-formed image lists {p.stdout!r}")


def t_raw_count():
    """Counts from the header: the real count in the messages, impossible
    counts refused as input errors, memory only for records that arrive."""
    # 4K, 40-bit IPA: at most 2 + 1024 + 512 * 1024 table pages.
    hdr = header(1 << 22, ia=40, start=1, root_pages=2)
    p = run(["--read-raw", "-"], mem=RAW_MEM, stdin=hdr)
    expect(p, 2, r"announces 4194304 records; a table of this geometry .* "
           r"has at most 525314 pages", "2^22 records for a 40-bit table")
    if b"memory" in p.stderr:
        sys.exit(f"FAIL: blamed memory: {p.stderr!r}")
    # A plausible count on a pipe that delivers one record: truncated, with
    # the real count, and no 16 GB allocated first.
    hdr = header(1 << 22)
    p = run(["--read-raw", "-"], mem=RAW_MEM,
            stdin=hdr + record(0, [0] * 512))
    expect(p, 2, r"truncated in record 1 of the 4194304 the header announces",
           "a pipe shorter than its header says")
    # No more pages than the PA space holds.
    p = run(["--read-raw", "-"], mem=RAW_MEM, stdin=header(1000, pa=20))
    expect(p, 2, r"announces 1000 records; .* has at most 256 pages",
           "more records than the PA space has pages")
    # A record beyond pa_bits.
    img = header(2, ia=32, pa=32, start=1) + record(0, [0] * 512) + \
        record(1 << 32, [0] * 512)
    p = run(["--read-raw", "-"], mem=RAW_MEM, stdin=img)
    expect(p, 2, r"record 1: PA 0x100000000 is beyond the 32-bit PA space",
           "a record beyond the PA space")
    # A regular file whose size disagrees says both.
    d = tempfile.mkdtemp()
    path = os.path.join(d, "short.img")
    open(path, "wb").write(header(3) + record(0, [0] * 512))
    p = run(["--read-raw", path])
    expect(p, 2, r"announces 3 records \(12312 bytes after it\), the file "
           r"has 4104", "a short file")


def t_stdout_full():
    """A failed write to stdout is exit status 1 with a message."""
    d = tempfile.mkdtemp()
    img = os.path.join(d, "demo.img")
    run(["--raw", img, DEMO])
    for args in [[DEMO], ["--hex", "--stats", DEMO], ["--read-raw", img],
                 ["--help"], ["--version"]]:
        with open("/dev/full", "wb") as full:
            p = run(args, stdout=full)
        expect(p, 1, r"writing the output failed: No space left on device",
               f"{args} > /dev/full")
    # The SVG and the raw image too.
    for opt in ["--map-svg", "--raw"]:
        p = run([opt, "/dev/full", DEMO])
        expect(p, 1, r"/dev/full: .*No space left on device",
               f"{opt} /dev/full")


def t_arena_pa():
    """Table pages must lie inside the configured PA space."""
    script = b"config arm-s2 ia=32 pa=32\nmap 0 4K 0 rw\n"
    p = run(["--arena", "8G", "-"], stdin=script)
    expect(p, 2, r"--arena 8G is larger than the PA space \(pa=32: 4G\).*"
           r"give --arena 4G or less, or raise pa= \(up to 48\)",
           "an 8G arena in a 32-bit PA space")
    # As large as the PA space: the arena is the whole of it.
    p = run(["--arena", "4G", "--hex", "-"], stdin=script)
    expect(p, 0, r"^$", "a 4G arena in a 32-bit PA space")
    root = re.search(rb"at 0x([0-9a-f]+)", p.stdout)
    if not root or int(root.group(1), 16) >> 32:
        sys.exit(f"FAIL: root beyond 2^32: {p.stdout!r}")
    # At the largest PA size nothing can be raised; EPT at pa=52.
    p = run(["--arena", "4P", "-"], stdin=b"config ept\n")
    expect(p, 2, r"larger than the PA space \(pa=48: 256T\).*up to 52",
           "a 4P arena for a 48-bit EPT")
    p = run(["--arena", "2P", "-"], stdin=b"config arm-s2 granule=64k ia=52 "
            b"pa=52\n")
    expect(p, 2, r"hosted platform counts; give a smaller --arena\n",
           "more than 2^32 pages")


def t_usage_exit():
    """Command-line mistakes exit 2 (as --help says), host failures 1."""
    for args, rx in [(["--arena", "1E", DEMO], r"from 1M to 4P"),
                     (["--arena", "16E", DEMO], r"from 1M to 4P"),
                     (["--arena", "0x", DEMO], r"from 1M to 4P"),
                     (["--arena", "512K", DEMO], r"from 1M to 4P"),
                     (["--arena"], r"needs a size"),
                     (["--arena", "1G", "--arena", "2G", DEMO], r"once"),
                     (["--raw", "a", "--raw", "b", DEMO], r"once"),
                     (["--frob", DEMO], r"unknown option"),
                     ([DEMO, DEMO], r"one script only"),
                     ([], r"no script"),
                     (["--read-raw", "x.img", "--stats"], r"without libslat"),
                     (["--read-raw", "x.img", "--arena", "2G"],
                      r"without libslat"),
                     (["--read-raw", "x.img", DEMO], r"not both")]:
        expect(run(args), 2, rx + r".*\(see slat-dump --help\)", str(args))
    for args in [["/nonexistent/x.slat"], ["--read-raw", "/nonexistent/x"]]:
        expect(run(args), 1, r"No such file", str(args))
    # --help says so, and so do the docs.
    out = run(["--help"]).stdout.decode()
    doc = open(os.path.join(SRC, "docs", "slat-dump.md")).read()
    for text in (out, doc):
        flat = " ".join(text.split())
        if not re.search(r"1 host failure.*2 an error in the input", flat):
            sys.exit("FAIL: the exit statuses are not described alike in "
                     "--help and docs/slat-dump.md")


def t_help():
    """Every option the parser knows is in --help and in the docs."""
    src = open(os.path.join(SRC, "tools", "slat-dump", "slat-dump.c")).read()
    opts = set(re.findall(r'strcmp\(a, "(-[-a-z]+)"\)', src))
    if len(opts) < 10:
        sys.exit(f"FAIL: found only {sorted(opts)} in slat-dump.c")
    out = run(["--help"]).stdout.decode()
    doc = open(os.path.join(SRC, "docs", "slat-dump.md")).read()
    for o in sorted(opts):
        if not re.search(rf"(^|[ ,`]){re.escape(o)}([ ,`]|$)", out, re.M):
            sys.exit(f"FAIL: --help does not explain {o}")
        if f"`{o}" not in doc:
            sys.exit(f"FAIL: docs/slat-dump.md does not explain {o}")


EXAMPLES = sorted(os.path.join(SRC, "examples", f)
                  for f in os.listdir(os.path.join(SRC, "examples"))
                  if f.endswith(".slat"))


def ok(args, what, stdin=None):
    p = run(args, stdin=stdin)
    if p.returncode != 0:
        sys.exit(f"FAIL: {what}: exit {p.returncode}: {p.stderr!r}")
    return p.stdout.decode()


def size_text(n):
    """dump_size(): 4K, 2M, 1536M, or hex when no unit divides."""
    if n == 0:
        return "0"
    for u in range(5, -1, -1):
        unit = 1 << (10 * (u + 1))
        if n >= unit and n % unit == 0:
            return f"{n // unit}{'KMGTPE'[u]}"
    return hex(n)


def entry_text(e):
    """The --hex listing line of a JSON entry."""
    head = f"{e['ipa']}-{e['end']} L{e['level']}"
    if e["kind"] == "table":
        line = f"{head} table -> {e['pa']}"
    else:
        flags = "".join(f" {k}" for k in ("ipat", "sve", "user", "ng")
                        if e[k])
        sw = f" sw={e['sw']}" if e["sw"] else ""
        line = (f"{head} {e['type']} -> {e['pa']} {e['perms']} "
                f"{e['memtype']}{flags}{sw} "
                f"{'young' if e['young'] else 'old'}"
                f"{' dirty' if e['dirty'] else ''}")
        x = {(True, True): "x", (True, False): "xk", (False, True): "xu",
             (False, False): "-"}[(e["exec_el1"], e["exec_el0"])]
        perms = ("r" if e["read"] else "-") + ("w" if e["write"] else "-") + x
        if perms != e["perms"]:
            sys.exit(f"FAIL: JSON perms {e['perms']!r} but flags say "
                     f"{perms!r}: {e}")
    if int(e["end"], 16) - int(e["ipa"], 16) != e["size"]:
        sys.exit(f"FAIL: JSON size does not match ipa..end: {e}")
    return f"{line}  pte {e['pte']} @ {e['table_pa']}[{e['index']}]"


def stats_text(st):
    """The --stats lines of the JSON stats object."""
    w, t, pg = st["writes"], st["tlbi"], st["pages"]
    return [
        f"stats: entries visited {st['visited']}",
        f"stats: descriptor writes: leaf {w['leaf']}, table {w['table']}, "
        f"clear {w['clear']}, break {w['break']}, attr {w['attr']}",
        f"stats: tlbi: ipa {t['ipa']}, ipa-local {t['ipa_local']}, "
        f"range {t['range']}, vmid {t['vmid']}",
        f"stats: d-cache clean+invalidate: {st['dcache']['calls']} calls, "
        f"{size_text(st['dcache']['bytes'])}; i-cache invalidate: "
        f"{st['icache']['calls']} calls, {size_text(st['icache']['bytes'])}"
        f"; left to the caller (skip-cmo): {st['cmo_skipped']}",
        f"stats: table pages: {pg['allocated']} allocated, {pg['freed']} "
        f"freed ({pg['deferred']} deferred), {pg['in_use']} in use with "
        f"the root; retries {st['retries']}"]


def check_json(doc, text, what):
    """A --json document against the --hex (--stats) text of the same run."""
    lines = text.splitlines()
    want = [l for l in lines if l.startswith("0x")]
    got = [entry_text(e) for e in doc["entries"]]
    if got != want:
        bad = next(i for i in range(min(len(got), len(want)) + 1)
                   if i >= len(got) or i >= len(want) or got[i] != want[i])
        sys.exit(f"FAIL: {what}: JSON entry {bad} differs from the listing:"
                 f"\n  json {got[bad] if bad < len(got) else None}"
                 f"\n  text {want[bad] if bad < len(want) else None}")
    leaves = sum(e["kind"] == "leaf" for e in doc["entries"])
    if (doc["leaves"], doc["tables"]) != (leaves, len(got) - leaves):
        sys.exit(f"FAIL: {what}: leaves/tables counts are wrong")
    if f"# {leaves} lea" not in text:
        sys.exit(f"FAIL: {what}: the text listing counts other leaves")
    cfg = doc["config"]
    if f"# config {cfg['format']} " not in text:
        sys.exit(f"FAIL: {what}: format {cfg['format']} not in the header")
    hdr = re.search(r"# start level (-?\d+), root: (\d+) entr\S+ in (\d+) "
                    r"concatenated pages? at (0x[0-9a-f]+)", text)
    if not hdr or [int(hdr.group(1)), int(hdr.group(2)), int(hdr.group(3)),
                   hdr.group(4)] != [cfg["start_level"], cfg["root_entries"],
                                     cfg["root_pages"], cfg["root_pa"]]:
        sys.exit(f"FAIL: {what}: JSON config {cfg} against {hdr}")
    for key in ("ia", "pa"):
        if not re.search(rf" {key}={cfg[key + '_bits']}( |$)", text, re.M):
            sys.exit(f"FAIL: {what}: {key}_bits {cfg[key + '_bits']} is "
                     f"not in the header")
    if "stats" in doc:
        if stats_text(doc["stats"]) != [l for l in lines
                                        if l.startswith("stats: ")]:
            sys.exit(f"FAIL: {what}: JSON stats differ from --stats")
    return doc


def t_json():
    """--json lists what the text listing lists, parsed by Python's json."""
    d = tempfile.mkdtemp()
    for script in EXAMPLES:
        name = os.path.basename(script)
        text = ok(["--hex", "--stats", script], name)
        doc = json.loads(ok(["--json", "--stats", script], name))
        check_json(doc, text, name)
        # what the script printed as it ran, in order
        ran = [l for l in text.splitlines()
               if not l.startswith(("#", "0x", "stats: "))]
        if doc["output"] != ran or doc["source"] != "script":
            sys.exit(f"FAIL: {name}: JSON output {doc['output'][:3]} "
                     f"against {ran[:3]}")
        img = os.path.join(d, name + ".img")
        ok(["--raw", img, script], name)
        text = ok(["--hex", "--read-raw", img], name)
        doc = json.loads(ok(["--json", "--read-raw", img], name))
        check_json(doc, text, name + " image")
        records = int(re.search(r"(\d+) page records", text).group(1))
        if doc["image"] != {"version": 1, "records": records} or \
                doc["source"] != "raw-image":
            sys.exit(f"FAIL: {name}: JSON image {doc['image']}")
    # Any file name is a valid JSON string; an empty table an empty list.
    odd = os.path.join(d, 'a"b\\\t\xff.slat'.encode("utf-8",
                                                    "surrogateescape")
                       .decode("utf-8", "replace"))
    open(odd, "w").write("# nothing\n")
    doc = json.loads(ok(["--json", odd], "an odd name"))
    if doc["entries"] != [] or doc["output"] != [] or \
            doc["name"] != odd:
        sys.exit(f"FAIL: an empty script: {doc}")
    # A name that is not UTF-8: the byte becomes U+FFFD.
    bad = os.path.join(d.encode(), b"n\xff.slat")
    open(bad, "w").write("# nothing\n")
    doc = json.loads(ok(["--json", bad], "a name that is not UTF-8"))
    if doc["name"] != d + "/n\ufffd.slat":
        sys.exit(f"FAIL: the name {bad!r} in JSON is {doc['name']!r}")
    p = run(["--json", "-"], stdin=b"lookup 0\nconfig ept\n")
    expect(p, 2, r"config: too late", "--json and a script error")
    if p.stdout:
        sys.exit(f"FAIL: a failed script printed JSON: {p.stdout!r}")
    expect(run(["--json", "--hex", DEMO]), 2, r"drop --hex", "--json --hex")


def t_snapshot():
    """snapshot FILE: the image at that line lists what the script had
    built up to there; at the end it is the --raw image, byte for byte."""
    d = tempfile.mkdtemp()
    checked = 0
    for script in EXAMPLES:
        name = os.path.basename(script)
        lines = open(script).read().splitlines(keepends=True)
        ops = [i for i, l in enumerate(lines)
               if l.split("#")[0].strip() and not l.startswith("config")]
        for cut in sorted({ops[len(ops) // 3], ops[2 * len(ops) // 3]}):
            mid = os.path.join(d, f"{name}-{cut}.img")
            end = os.path.join(d, f"{name}-end.img")
            snap = lines[:cut + 1] + [f"snapshot {mid}\n"] + \
                lines[cut + 1:] + [f"snapshot {end}\n"]
            out = ok(["--hex", "-"], name, stdin="".join(snap).encode())
            m = re.search(rf"snapshot {re.escape(mid)}: (\d+) page records?,"
                          rf" (\d+) lea", out)
            if not m:
                sys.exit(f"FAIL: {name}: no snapshot line in {out!r}")
            # the state at that point: the script cut there
            upto = ok(["--hex", "-"], name,
                      stdin="".join(lines[:cut + 1]).encode())
            image = ok(["--hex", "--read-raw", mid], name)
            live = [l for l in upto.splitlines() if l.startswith("0x")]
            read = [l for l in image.splitlines() if l.startswith("0x")]
            if live != read:
                sys.exit(f"FAIL: {name}: the snapshot after line {cut + 1} "
                         f"lists {len(read)} entries, the script up to "
                         f"there {len(live)}")
            if int(m.group(2)) != sum(" table -> " not in l for l in live):
                sys.exit(f"FAIL: {name}: the snapshot line counts "
                         f"{m.group(2)} leaves")
            full = os.path.join(d, f"{name}-raw.img")
            ok(["--raw", full, script], name)
            if open(full, "rb").read() != open(end, "rb").read():
                sys.exit(f"FAIL: {name}: a snapshot at the end is not the "
                         f"--raw image")
            checked += 1
    if checked < 2 * len(EXAMPLES) - 2:
        sys.exit(f"FAIL: only {checked} snapshots checked")
    # A snapshot where nothing can be written is a host failure (1).
    p = run(["-"], stdin=b"map 0 4K 0 rw\nsnapshot /nonexistent/x.img\n")
    expect(p, 1, r"<stdin>:2: snapshot: /nonexistent/x.img: No such file.*"
           r"check that the directory exists", "an unwritable snapshot")
    p = run(["-"], stdin=b"snapshot\n")
    expect(p, 2, r"snapshot: missing arguments \(write: snapshot FILE\)",
           "snapshot without a file")


def t_raw_s1():
    """Stage-1 images (format 3) decoded from the architecture."""
    A, B, C = 0x1000, 0x2000, 0x3000
    table = lambda pa: pa | 3
    # AP[1] user, AP[2]=0 (EL0 writable): EL1 cannot execute it even with
    # PXN clear; UXN set; AF; AttrIndx 0
    page = 0x40000000 | (1 << 54) | 0x400 | 0x40 | 3
    odd = 0x40001000 | (5 << 2) | 0x400 | 0x80 | 3  # AttrIndx 5, read-only
    img = (header(4, ia=48, start=0, fmt=3) +
           record(0, [table(A)] + [0] * 511) +
           record(A, [table(B) | (1 << 61)] + [0] * 511) +
           record(B, [table(C)] + [0] * 511) +
           record(C, [page, odd] + [0] * 510))
    p = run(["--read-raw", "-"], stdin=img)
    expect(p, 0, r"APTable.*listed without them[\s\S]*AttrIndx other than "
           r"0, 1 or 2", "a stage-1 image")
    out = p.stdout.decode()
    for want in ["# config arm-s1 granule=4K ia=48 pa=48 hwdirty=off",
                 "L3 page -> 0x0000000040000000 rw- normal user young",
                 "L3 page -> 0x0000000040001000 r-x mt3 young"]:
        if want not in out:
            sys.exit(f"FAIL: the stage-1 image lacks {want!r}:\n{out}")
    p = run(["--read-raw", "-"], stdin=header(2, ia=48, fmt=3, root_pages=2)
            + record(0, [0] * 512) + record(0x1000, [0] * 512))
    expect(p, 2, r"an arm-s1 image has one root page", "two s1 root pages")
    p = run(["--read-raw", "-"], stdin=header(1, fmt=5) + record(0, [0] * 512))
    expect(p, 2, r"unknown format 5 \(this reader knows 1 arm-s2, 2 ept, "
           r"3 arm-s1 and 4 npt\)", "format 5")


def t_raw_npt():
    """AMD nested page table images (format 4) decoded from the APM: P is
    present, U/S is needed on every entry, PAT:PCD:PWT is the host PAT
    index (bit 7 of a PTE, bit 12 of a large page), NX is bit 63."""
    A, B, C = 0x1000, 0x2000, 0x3000
    table = lambda pa: pa | 7  # P, R/W, U/S
    nx = 1 << 63
    page = nx | 0x40000000 | 0x67        # RW, A, D: WB
    uc = 0x40001000 | 0x18 | 0x25         # PCD|PWT: UC, executable
    no_us = nx | 0x40002000 | 0x63       # U/S clear: faults always
    pat2 = nx | 0x40003000 | 0x10 | 0x25  # PCD alone: index 2 (UC-)
    big = 0x80000000 | 0x1000 | 0xa5     # 2M, PAT bit 12: index 4
    img = (header(4, ia=48, start=0, fmt=4) +
           record(0, [table(A)] + [0] * 511) +
           record(A, [table(B) | (1 << 5)] + [0] * 511) +
           record(B, [table(C), 0x80000000 | 0xe7 | nx, big] + [0] * 509) +
           record(C, [page, uc, no_us, pat2] + [0] * 508))
    p = run(["--hex", "--read-raw", "-"], stdin=img)
    expect(p, 0, r"U/S clear[\s\S]*host PAT entry other than 0, 1 or 3",
           "an NPT image")
    out = p.stdout.decode()
    for want in ["# config npt levels=4 ia=48 pa=48",
                 "L3 page -> 0x0000000040000000 rw- wb young dirty",
                 "L3 page -> 0x0000000040001000 r-x uc young",
                 "L3 page -> 0x0000000040003000 r-- mt? young",
                 "L2 block -> 0x0000000080000000 rw- wb young dirty",
                 "L2 block -> 0x0000000080000000 r-x mt? young",
                 "L1 table -> 0x0000000000002000  pte 0x0000000000002027"]:
        if want not in out:
            sys.exit(f"FAIL: the NPT image lacks {want!r}:\n{out}")
    if "0x0000000040002000" in out:
        sys.exit(f"FAIL: the leaf without U/S is listed:\n{out}")


def t_split_nomem():
    """A split that runs out of table pages stops at a block boundary and
    says how far it got."""
    script = b"map 0x40000000 1G 0x80000000 rw cap=2M\nsplit 0x40000000 1G\n"
    p = run(["--arena", "1M", "-"], stdin=script)
    expect(p, 2, r"<stdin>:2: split: .*the 1M table-page arena is exhausted; "
           r"run slat-dump with a larger --arena; 0x[0-9a-f]+ bytes were "
           r"done\)", "a split beyond the arena")
    done = int(re.search(rb"; (0x[0-9a-f]+) bytes were done", p.stderr)
               .group(1), 16)
    if done % (2 << 20) or not 0 < done < 1 << 30:
        sys.exit(f"FAIL: a split stopped at 0x{done:x}, not at a 2M block")
    ok(["--arena", "4M", "-"], "the same split with room", stdin=script)


def t_unbounded_input():
    """Endless or huge input ends in a clear error, at once and in a few
    MB: a line is read a byte at a time up to its limit, never whole."""
    mem = 64 << 20
    # /dev/zero as a file and on stdin: a NUL at the first byte
    p = run(["/dev/zero"], timeout=10, mem=mem)
    expect(p, 2, r"^/dev/zero:1: NUL byte at column 1 \(a script is text",
           "/dev/zero as a script")
    with open("/dev/zero", "rb") as zero:
        p = run(["-"], stdin=None, timeout=10, mem=mem, stdin_file=zero)
    expect(p, 2, r"^<stdin>:1: NUL byte at column 1", "/dev/zero on stdin")
    # an endless line without a NUL: `yes` with a 10000-byte word
    y = subprocess.Popen(["yes", "a" * 10000], stdout=subprocess.PIPE)
    p = run(["-"], timeout=10, mem=mem, stdin_file=y.stdout)
    y.kill()
    y.wait()
    expect(p, 2, r"^<stdin>:1: line longer than 8192 bytes \(a script line "
           r"is short", "an endless line")
    # 20 MB without a newline after a valid start
    p = run(["-"], stdin=b"map 0 4K 0 " + b"r" * (20 << 20), timeout=10,
            mem=mem)
    expect(p, 2, r"^<stdin>:1: line longer than 8192 bytes", "a 20 MB word")
    if len(p.stderr) > 300:
        sys.exit(f"FAIL: a 20 MB word: {len(p.stderr)} bytes of error")


def t_quoted_words():
    """Errors quote a short prefix of the user's word, its bytes that a
    terminal would act on escaped."""
    p = run(["-"], stdin=b"map 0 4K 0 rw %s\n" % (b"q" * 1000))
    expect(p, 2, r'unknown flag \("q{40}\.\.\.": map flags are',
           "a long word")
    quoted = re.search(rb'"([^"]*)"', p.stderr).group(1)
    if len(quoted) != 43:
        sys.exit(f"FAIL: a 1000-byte word quoted as {len(quoted)} bytes")
    p = run(["-"], stdin=b"map 0 4K 0 rw,\x01\x1b[31m\xff\n")
    expect(p, 2, r'unknown attribute word "\\x01\\x1b\[31m\\xff"',
           "control bytes in a word")
    p = run(["-"], stdin=b"x" * 5000 + b" 0 4K\n")
    expect(p, 2, r"^<stdin>:1: x{40}\.\.\.: unknown operation",
           "a long operation name")
    for q in (p.stderr,):
        if any(b < 0x20 and b != 0x0a or b >= 0x7f for b in q):
            sys.exit(f"FAIL: raw bytes in {q!r}")


def t_verbose_stats():
    """-v --stats: each operation's line says what it cost, and the costs
    add up to --stats' totals."""
    script = os.path.join(SRC, "examples", "dirty-log.slat")
    p = run(["-v", "--stats", script])
    expect(p, 0, r"^$", "-v --stats")
    out = p.stdout.decode()
    want = [r":\d+: wrprotect: ok, write attr 2048, tlbi range 1, "
            r"visited 2053$",
            r":\d+: split: ok, write leaf 2048, write table 4, write break 4, "
            r"tlbi ipa 4, visited 5, pages allocated 4$",
            r":\d+: lookup: ok$"]
    for rx in want:
        if not re.search(rx, out, re.M):
            sys.exit(f"FAIL: -v --stats: no line {rx!r}")
    moved = sum(int(n) for n in re.findall(r", tlbi range (\d+)", out))
    total = int(re.search(r"tlbi: ipa \d+, ipa-local \d+, range (\d+)",
                          out).group(1))
    if moved != total:
        sys.exit(f"FAIL: per-step range TLBIs {moved}, total {total}")


def t_restrict_holes():
    """restrict removes exactly its permissions; wrprotect, restrict and
    relax skip holes, or with no-holes refuse them with a line naming the
    fix and the table unchanged."""
    head = ("config arm-s2 granule=4k ia=40 pa=40\n"
            "map 0x40000000 16K 0x100000000 rwx\n"
            "unmap 0x40002000 4K\n")
    p = run(["-"], stdin=(head + "restrict 0x40000000 16K x\n"
                          "relax 0x40000000 16K x\n"
                          "restrict 0x40003000 4K w\n").encode())
    expect(p, 0, r"^$", "restrict over a hole")
    out = p.stdout.decode()
    for rx in [r"^0x0*40000000-0x0*40001000 L3 page -> 0x0*100000000 rwx ",
               r"^0x0*40003000-0x0*40004000 L3 page -> 0x0*100003000 r-x "]:
        if not re.search(rx, out, re.M):
            sys.exit(f"FAIL: restrict: no leaf {rx!r} in:\n{out}")
    if re.search(r"^0x0*40002000-", out, re.M):
        sys.exit("FAIL: restrict mapped the hole")
    for op in ["wrprotect 0x40000000 16K no-holes",
               "restrict 0x40000000 16K w no-holes",
               "relax 0x40000000 16K w no-holes"]:
        p = run(["-"], stdin=(head + op + "\n").encode())
        expect(p, 2, r"^<stdin>:4: \w+: .*no-holes refuses a hole; map it first, "
               r"or drop no-holes", op)
    p = run(["-"], stdin=(head + "restrict 0x40000000 4K q\n").encode())
    expect(p, 2, r"^<stdin>:4: restrict: .*PERMS is like", "restrict q")
    p = run(["-"], stdin=("config ept levels=4 ia=48 pa=48\n"
                          "map 0x40000000 4K 0x1000 rw\n"
                          "restrict 0x40000000 4K r\n").encode())
    expect(p, 2, r"^<stdin>:3: restrict: .*no write without read", "ept restrict r")


if __name__ == "__main__":
    globals()["t_" + sys.argv[1]]()
    print("ok")
