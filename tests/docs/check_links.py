#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every relative link of the Markdown files (README.md, docs/, the READMEs
of the tree) and every repository path they name in backticks exists:
renamed files and removed scripts show up here, not at a reader.

  tests/docs/check_links.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
TOP = ("src", "include", "hosted", "sim", "tools", "tests", "bench",
       "scripts", "docs", "examples", "hyp", "cmake", ".ci")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# `dir/file` names: a path under one of the tree's folders, no spaces, no
# wildcards or placeholders.
TICKED = re.compile(r"`((?:%s)/[A-Za-z0-9_./+-]*)`" % "|".join(
    re.escape(t) for t in TOP))


def markdown_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        dirnames[:] = [d for d in dirnames
                       if not d.startswith((".git", "build")) and
                       not (rel == "." and d in ("build",))]
        for f in filenames:
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


def exists(base, target):
    path = os.path.normpath(os.path.join(base, target))
    return os.path.exists(path)


def main():
    bad = []
    n = 0
    for md in sorted(markdown_files()):
        here = os.path.dirname(md)
        text = open(md, encoding="utf-8").read()
        # Code blocks may show output and commands, not links.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for line in prose.split("\n"):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                n += 1
                if not exists(here, target.split("#")[0]):
                    bad.append(f"{os.path.relpath(md, ROOT)}: link "
                               f"{target} (no such file)")
            for path in TICKED.findall(line):
                # NAME, FILE, ID: a placeholder, not a file
                if re.search(r"(^|[/.-])[A-Z]{2,}([/.-]|$)", path):
                    continue
                n += 1
                # from the top, or from the file's folder (tests/README.md)
                if not (exists(ROOT, path.rstrip(".")) or
                        exists(here, path.rstrip("."))):
                    bad.append(f"{os.path.relpath(md, ROOT)}: "
                               f"`{path}` (no such file)")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{n} links and paths checked, {len(bad)} missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
