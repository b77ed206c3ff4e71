#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every command README.md and docs/*.md show still works as shown: a
renamed make target, a dropped option or subcommand, a moved script or a
test renamed show up here, not at a reader.

  tests/docs/check_commands.py [-v] ROOT BUILD

ROOT is the source tree, BUILD a configured and built build directory of
it. The commands are the lines of the fenced blocks marked sh, bash,
shell or console, the lines of unmarked blocks that start with "$ " or
with one of the programs below, and the inline code spans that start with
one of them (-v lists them as they are checked). For each:

- make TARGET: TARGET is a target of the top-level Makefile (parsed);
- a program of the tree (an add_executable of the CMake files), by name
  or by its path in a build directory: it is a CMake target (built in
  that folder of the build directory); every long option shown (--foo) is
  in the output of BUILD's binary run with --help, and a subcommand
  shown right after the program (slat-perf dirty-log) is listed there
  too. A program with no --help, or not built in BUILD (its target
  depends on a configure option), is checked against the strings of its
  sources instead;
- a script of the tree (hyp/run.sh, scripts/x.sh, ...): it exists and is
  executable (unless run through an interpreter, python3 x.py, or a
  Python file only named in prose, which CMake may run through one);
  when the script handles --help, its long options and subcommand as
  above;
- cmake --build DIR --target X: X is a CMake target of the tree;
- ctest -R/-E REGEX, -L/-LE REGEX: some test of BUILD (what ctest -N
  lists) or of the CMake files matches, some label does.

Other programs (apt-get, git, qemu-system-aarch64, cc, ...) are skipped.
Nothing is run but --help.
"""
import os
import re
import shlex
import subprocess
import sys

ARGS = sys.argv[1:]
VERBOSE = "-v" in ARGS
if VERBOSE:
    ARGS.remove("-v")
if len(ARGS) != 2:
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)
ROOT = os.path.abspath(ARGS[0])
BUILD = os.path.abspath(ARGS[1])

# The tree's top folders: a path under one of them is a file of the tree.
TOP = ("src", "include", "hosted", "sim", "tools", "tests", "bench",
       "scripts", "docs", "examples", "hyp", "cmake")
# Prefixes that run the command after them.
WRAPPERS = {"sudo", "env", "nice", "time", "exec", "command", "nohup"}
# ... and those taking one argument first (timeout 60 x, taskset -c 1 x).
WRAPPERS_ARG = {"timeout", "taskset"}
INTERPRETERS = {"python3", "python", "sh", "bash"}
SHELL_LANGS = {"sh", "bash", "shell", "console"}
HELP_TIMEOUT = 10

bad = []
notes = []
counts = {"commands": 0, "options": 0, "subcommands": 0}


def rel(path):
    return os.path.relpath(path, ROOT)


def fail(where, what):
    bad.append(f"{where}: {what}")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# ---------------------------------------------------------------- the tree

def cmake_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith((".", "build")))
        for f in sorted(filenames):
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                yield os.path.join(dirpath, f)


def cmake_calls(text, command):
    """The argument lists of every call to command (comments dropped)."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(r"(?<![\w])%s\s*\(([^)]*)\)" % command, text, re.I):
        yield m.group(1).split()


def name_pattern(name):
    """A target name as a regex; ${var} parts match any name part. None
    for a name that is a variable only."""
    if not re.sub(r"\$\{[^}]*\}", "", name):
        return None
    parts = re.split(r"\$\{[^}]*\}", name)
    return re.compile("^" + r"[\w.+-]*".join(re.escape(p) for p in parts)
                      + "$")


class Tree:
    def __init__(self):
        self.programs = []       # (pattern, name, source dir, [sources])
        self.targets = []        # patterns of every add_* target
        self.test_names = set()  # literal add_test names
        self.labels = set()
        for path in cmake_files():
            text = read(path)
            here = os.path.dirname(path)
            for args in cmake_calls(text, "add_executable"):
                pat = name_pattern(args[0])
                if pat is None:
                    continue
                srcs = []
                for a in args[1:]:
                    a = a.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
                    a = a.replace("${PROJECT_SOURCE_DIR}", ROOT)
                    p = os.path.join(here, a)
                    if os.path.isfile(p):
                        srcs.append(p)
                self.programs.append((pat, args[0], rel(here), srcs))
                self.targets.append(pat)
            for cmd in ("add_library", "add_custom_target"):
                for args in cmake_calls(text, cmd):
                    pat = name_pattern(args[0])
                    if pat:
                        self.targets.append(pat)
            for args in cmake_calls(text, "add_test"):
                if len(args) > 1 and args[0] == "NAME" and "$" not in args[1]:
                    self.test_names.add(args[1])
            for m in re.finditer(r"\bLABELS\s+([^)\n]*)", text):
                for word in m.group(1).split():
                    if re.fullmatch(r"[a-z][\w-]*", word) and \
                            word.upper() != word:
                        self.labels.add(word)
                    else:
                        break

    def program(self, name):
        for pat, cname, folder, srcs in self.programs:
            if pat.match(name):
                return cname, folder, srcs
        return None

    def is_target(self, name):
        return any(p.match(name) for p in self.targets)


def makefile_targets():
    targets = set()
    for line in read(os.path.join(ROOT, "Makefile")).split("\n"):
        m = re.match(r"^([A-Za-z0-9_./ -]+?)\s*:(?!=)", line)
        if m and not line.startswith("\t"):
            targets.update(m.group(1).split())
    targets.discard(".PHONY")
    return targets


# ------------------------------------------------------------ the build

def build_targets():
    """name -> folder (relative) of every target configured in BUILD."""
    found = {}
    path = os.path.join(BUILD, "CMakeFiles", "TargetDirectories.txt")
    if not os.path.exists(path):
        fail(rel(BUILD) if BUILD.startswith(ROOT) else BUILD,
             "not a configured build directory (no "
             "CMakeFiles/TargetDirectories.txt)")
        return found
    for line in read(path).split("\n"):
        m = re.match(r"^(.*)/CMakeFiles/([^/]+)\.dir$", line.strip())
        if m:
            found[m.group(2)] = os.path.relpath(m.group(1), BUILD)
    return found


def build_tests_and_labels():
    """The tests ctest -N lists in BUILD and their labels, read from its
    CTestTestfile.cmake files (running ctest would rewrite BUILD's
    Testing/ logs, those of a ctest run this may be part of)."""
    tests, labels, todo = set(), set(), [BUILD]
    while todo:
        folder = todo.pop()
        path = os.path.join(folder, "CTestTestfile.cmake")
        if not os.path.exists(path):
            continue
        text = read(path)
        tests.update(m.group(2) for m in
                     re.finditer(r"add_test\(\[(=*)\[(.*?)\]\1\]", text))
        for m in re.finditer(r'set_tests_properties\(.*?PROPERTIES .*?'
                             r'\bLABELS "([^"]*)"', text):
            labels.update(l for l in m.group(1).split(";") if l)
        todo += [os.path.join(folder, d) for d in
                 re.findall(r'subdirs\("([^"]*)"\)', text)]
    if not tests:
        fail(BUILD, "no test registered (CTestTestfile.cmake)")
    return tests, labels


# ------------------------------------------------------- the Markdown

def markdown_files():
    yield os.path.join(ROOT, "README.md")
    docs = os.path.join(ROOT, "docs")
    for f in sorted(os.listdir(docs)):
        if f.endswith(".md"):
            yield os.path.join(docs, f)


def strip_comment(line):
    """line up to an unquoted '#' that starts a word."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def segments(line):
    """The simple commands of a line: split at unquoted && || ; and | (not
    inside [...], where | separates alternatives), subshell parentheses
    and $(...) dropped."""
    line = re.sub(r"\$\([^()]*\)", " ", line)
    line = re.sub(r"`[^`]*`", " ", line)
    out, cur, quote, depth, i = [], "", None, 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            cur += c
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur += c
        elif c == "[":
            depth += 1
            cur += c
        elif c == "]":
            depth = max(0, depth - 1)
            cur += c
        elif depth == 0 and line.startswith(("&&", "||"), i):
            out.append(cur)
            cur = ""
            i += 1
        elif depth == 0 and c in ";|":
            out.append(cur)
            cur = ""
        elif depth == 0 and c in "()" and not cur.strip():
            pass            # a subshell's "("
        elif depth == 0 and c == ")" and not line[i + 1:].strip(" ;&|"):
            pass            # ... and its ")"
        else:
            cur += c
        i += 1
    out.append(cur)
    result = []
    for s in out:
        try:
            words = shlex.split(s)
        except ValueError:
            words = s.split()
        if words:
            result.append(words)
    return result


def fenced_blocks(lines):
    """(first line number, language, [(number, line)]) of each block."""
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```\s*(\S*)", lines[i])
        if not m:
            i += 1
            continue
        lang, start, body = m.group(1).lower(), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```", lines[i]):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        yield start, lang, body


def join_continued(body):
    """Lines ending with a backslash joined to the next: (number, line)."""
    out, cur, first = [], None, 0
    for n, line in body:
        if cur is None:
            cur, first = line, n
        else:
            cur += " " + line.strip()
        if cur.rstrip().endswith("\\"):
            cur = cur.rstrip()[:-1]
            continue
        out.append((first, cur))
        cur = None
    if cur is not None:
        out.append((first, cur))
    return out


def is_listing(body):
    """A block of file names and what they are (hyp/run.sh  runs QEMU)."""
    rows = [l for _, l in body if l.strip()]
    files = [l for l in rows
             if re.match(r"^(\S+?),?\s{2,}\S", l) and
             os.path.exists(os.path.join(ROOT, l.split()[0].rstrip(",")))]
    return rows and len(files) * 2 >= len(rows)


# ------------------------------------------------------- the commands

class Checker:
    def __init__(self):
        self.tree = Tree()
        self.make = makefile_targets()
        self.built = build_targets()
        tests, labels = build_tests_and_labels()
        self.tests = tests | self.tree.test_names
        self.labels = labels | self.tree.labels
        self.helps = {}

    # What a command's first word is: ("make"|"cmake"|"ctest"|"program"|
    # "script", detail), or None for a program from outside the tree.
    def classify(self, word, alone):
        if word in ("make", "cmake", "ctest"):
            return (word, None)
        prog = self.tree.program(word)
        # A name alone in prose that only some add_executable(sim_${t})
        # pattern matches is rather a function's or a test's.
        if prog and (not alone or "$" not in prog[0] or word in self.built):
            return ("program", (word, None))
        m = re.match(r"^(?:\./)?(build[\w.-]*)/(?:(.*)/)?([^/]+)$", word)
        if m and self.tree.program(m.group(3)):
            return ("program", (m.group(3), m.group(2) or ""))
        path = word[2:] if word.startswith("./") else word
        if path.split("/")[0] in TOP and "/" in path:
            full = os.path.join(ROOT, path)
            if path.endswith((".sh", ".py")) or \
                    (os.path.isfile(full) and os.access(full, os.X_OK)):
                return ("script", path)
        return None

    def starts_command(self, words, inline):
        words = self.unwrap(words)[0]
        return bool(words) and \
            self.classify(words[0], inline and len(words) == 1) is not None

    @staticmethod
    def unwrap(words):
        """Drop NAME=value assignments and wrappers; (words, interpreter)."""
        words = list(words)
        interp = False
        while words:
            w = words[0]
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
                words.pop(0)
            elif w in WRAPPERS:
                words.pop(0)
            elif w in WRAPPERS_ARG:
                words.pop(0)
                while words and words[0].startswith("-"):
                    opt = words.pop(0)
                    if opt in ("-c", "-s", "-k", "--signal", "--kill-after") \
                            and words:
                        words.pop(0)
                if words:
                    words.pop(0)
            elif w in INTERPRETERS and len(words) > 1 and \
                    not words[1].startswith("-"):
                words.pop(0)
                interp = True
            else:
                break
        return words, interp

    # ---- --help
    def help_text(self, key, argv, cwd):
        if key not in self.helps:
            try:
                r = subprocess.run(argv + ["--help"], cwd=cwd,
                                   capture_output=True, text=True,
                                   timeout=HELP_TIMEOUT,
                                   stdin=subprocess.DEVNULL)
                text = r.stdout + r.stderr
                if r.returncode != 0:
                    fail(key, f"--help exits {r.returncode}")
            except (OSError, subprocess.TimeoutExpired) as e:
                fail(key, f"--help: {e}")
                text = ""
            self.helps[key] = text
        return self.helps[key]

    def program_help(self, name, folder, srcs):
        """(text, what it is) the options of program name are checked
        against: its --help, or its sources."""
        sources = "".join(read(s) for s in srcs)
        exe = os.path.join(BUILD, folder, name)
        if name in self.built and os.access(exe, os.X_OK) and \
                "--help" in sources:
            return self.help_text(name, [exe], BUILD), "--help"
        if name not in self.built:
            why = "not a target of this build directory"
        elif not os.access(exe, os.X_OK):
            why = "not built in this build directory"
        else:
            why = "it has no --help"
        return sources, f"its sources ({why})"

    def script_help(self, path):
        full = os.path.join(ROOT, path)
        text = read(full)
        # Its own --help: a case pattern, a test of $1, argparse or argv
        # (not a mention of another program's --help).
        if path.endswith(".py"):
            has = "argparse" in text or re.search(
                r"""^.*argv.*['"]--help['"]|^.*['"]--help['"].*argv""",
                text, re.M)
        else:
            has = re.search(
                r"""(^|[\s|(])--help\)|\$\{?1\b.*=\s*['"]?--help""",
                text, re.M)
        if not has:
            return None
        return self.help_text(path, [full], ROOT)

    # ---- the checks
    def check(self, where, words, inline):
        words, interp = self.unwrap(words)
        if not words:
            return
        kind = self.classify(words[0], inline and len(words) == 1)
        if kind is None:
            return
        what, detail = kind
        args = words[1:]
        if VERBOSE:
            print(f"{where}: [{what}] {shlex.join(words)}")
        if what == "make":
            self.check_make(where, args)
        elif what == "cmake":
            self.check_cmake(where, args)
        elif what == "ctest":
            self.check_ctest(where, args)
        elif what == "program":
            self.check_program(where, detail, args)
        else:
            self.check_script(where, detail, args, interp, inline)

    def check_make(self, where, args):
        targets, i = [], 0
        while i < len(args):
            a = args[i]
            if a in ("-C", "-f", "--directory", "--file"):
                if i + 1 < len(args) and a in ("-C", "--directory") and \
                        args[i + 1] not in (".", "./"):
                    return      # another Makefile (a CMake build's)
                i += 2
                continue
            if a in ("-j", "-l") and i + 1 < len(args) and \
                    args[i + 1].isdigit():
                i += 2          # make -j 7
                continue
            if not a.startswith("-") and "=" not in a:
                targets.append(a)
            i += 1
        if not targets:
            return              # make alone: another project's build
        counts["commands"] += 1
        for t in targets:
            if t not in self.make:
                fail(where, f"make {t}: no such target in the Makefile")

    def check_cmake(self, where, args):
        if "--build" not in args:
            return
        counts["commands"] += 1
        i = 0
        while i < len(args):
            if args[i] in ("--target", "-t"):
                i += 1
                while i < len(args) and not args[i].startswith("-"):
                    t = args[i]
                    if t not in ("all", "clean", "help", "install") and \
                            t not in self.built and not self.tree.is_target(t):
                        fail(where, f"cmake --build --target {t}: no such "
                                    f"CMake target")
                    i += 1
                continue
            i += 1

    def check_ctest(self, where, args):
        counts["commands"] += 1
        opts = {"-R": "tests", "--tests-regex": "tests", "-E": "tests",
                "--exclude-regex": "tests", "-L": "labels",
                "--label-regex": "labels", "-LE": "labels",
                "--label-exclude": "labels"}
        for i, a in enumerate(args):
            if a in opts and i + 1 < len(args):
                regex = args[i + 1]
                names = self.tests if opts[a] == "tests" else self.labels
                try:
                    ok = any(re.search(regex, n) for n in names)
                except re.error:
                    ok = False
                counts["options"] += 1
                if not ok:
                    fail(where, f"ctest {a} {regex}: matches no "
                                f"{opts[a][:-1]} of {BUILD}")

    def check_program(self, where, detail, args):
        name, path = detail
        counts["commands"] += 1
        cname, folder, srcs = self.tree.program(name)
        if path is not None and path != folder:
            fail(where, f"{name} is built in {folder}/ of a build "
                        f"directory, not in {path}/")
        text, against = self.program_help(name, folder, srcs)
        self.check_args(where, name, args, text, against)

    def check_script(self, where, path, args, interp, inline):
        counts["commands"] += 1
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            fail(where, f"{path}: no such file")
            return
        # A file named alone in prose, not run: a Python helper may be
        # run by CMake through the interpreter.
        named_only = inline and not args and path.endswith(".py")
        if not interp and not named_only and not os.access(full, os.X_OK):
            fail(where, f"{path}: not executable")
        text = self.script_help(path) if os.access(full, os.X_OK) else None
        if text is not None:
            self.check_args(where, path, args, text, "--help")

    def check_args(self, where, prog, args, text, against):
        def listed(word):
            return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word),
                             text)
        if against.startswith("its sources") and \
                any(a.startswith(("-", "[-")) for a in args):
            note = f"{prog}: options checked against {against}"
            if note not in notes:
                notes.append(note)
        shown = []
        for i, a in enumerate(args):
            for part in a.split("|"):
                m = re.match(r"^[\[(]*(--[a-z0-9][a-z0-9-]*)", part)
                if m:
                    shown.append(m.group(1))
            # --compare SWITCH=A,B names the switch --SWITCH (slat-perf)
            if a == "--compare" and i + 1 < len(args):
                m = re.match(r"^([a-z][a-z0-9-]*)=", args[i + 1])
                if m:
                    shown.append("--" + m.group(1))
        for opt in shown:
            counts["options"] += 1
            if not listed(opt):
                fail(where, f"{prog} {opt}: not in {against}")
        if not args:
            return
        # A subcommand right after the program: a word, or [a|b|c].
        first = args[0]
        words = []
        if re.fullmatch(r"[a-z][a-z0-9_-]*", first):
            words = [first]
        elif re.fullmatch(r"\[[a-z][a-z0-9_-]*(\|[a-z][a-z0-9_-]*)+\]",
                          first):
            words = first[1:-1].split("|")
        for w in words:
            counts["subcommands"] += 1
            if not listed(w):
                fail(where, f"{prog} {w}: no such subcommand in {against}")

    # ---- a Markdown file
    def check_file(self, md):
        name = rel(md)
        lines = read(md).split("\n")
        prose = list(lines)
        for start, lang, body in fenced_blocks(lines):
            for n, _ in body:
                prose[n - 1] = ""
            prose[start - 1] = ""
            end = body[-1][0] + 1 if body else start + 1
            if end - 1 < len(prose):
                prose[end - 1] = ""
            if lang not in SHELL_LANGS and lang != "":
                continue
            prompted = any(l.lstrip().startswith("$ ") for _, l in body)
            if lang == "" and not prompted and is_listing(body):
                continue
            for n, line in join_continued(body):
                text = line.strip()
                if prompted or lang == "console":
                    if not text.startswith("$ "):
                        continue        # output
                if text.startswith("$ "):
                    text = text[2:]
                text = strip_comment(text)
                for words in segments(text):
                    if lang == "" and not prompted and \
                            not self.starts_command(words, False):
                        continue
                    self.check(f"{name}:{n}", words, inline=False)
        # Inline spans, which may wrap onto the next line.
        text = "\n".join(prose)
        for m in re.finditer(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)?)`(?!`)", text):
            span = m.group(1).replace("\n", " ")
            n = text.count("\n", 0, m.start()) + 1
            for words in segments(strip_comment(span))[:1]:
                if self.starts_command(words, True):
                    self.check(f"{name}:{n}", words, inline=True)


def main():
    checker = Checker()
    for md in markdown_files():
        checker.check_file(md)
    for n in notes:
        print(f"note: {n}")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{counts['commands']} commands, {counts['options']} options and "
          f"{counts['subcommands']} subcommands checked, {len(bad)} missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
