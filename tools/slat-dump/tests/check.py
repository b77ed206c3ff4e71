#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks of slat-dump as a reader of untrusted input: crafted raw images,
# pipes, a full stdout, arenas against the PA space, exit statuses, --help.
# Usage: check.py TEST EXE SRCDIR [sanitized]
import os, re, resource, struct, subprocess, sys, tempfile

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


def run(args, stdin=None, stdout=subprocess.PIPE, timeout=30, mem=None):
    try:
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


if __name__ == "__main__":
    globals()["t_" + sys.argv[1]]()
    print("ok")
