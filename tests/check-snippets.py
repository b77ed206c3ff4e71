#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that a guide's code blocks are the marked regions of its examples.

Usage: check-snippets.py GUIDE.md SOURCE_ROOT

In the guide, every ```c block must follow a line

    <!-- snippet: examples/platform/FILE.c NAME -->

and its text must be, byte for byte, the lines between

    /* [snippet:NAME] */
    ...
    /* [end] */

in that file (the marker lines excluded). Every region marked in a file
the guide quotes must be quoted at least once, so that neither side can
change without the other. Exit status 0 when all agree, 1 otherwise.
"""
import os
import re
import sys

REF = re.compile(r'^<!-- snippet: (\S+) (\S+) -->$')
START = re.compile(r'^\s*/\* \[snippet:([A-Za-z0-9_-]+)\] \*/$')
END = re.compile(r'^\s*/\* \[end\] \*/$')


def regions(path):
    """The marked regions of @path: {name: text}, and the errors found."""
    out, errors, name, body = {}, [], None, []
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for no, line in enumerate(lines, 1):
        if START.match(line):
            if name:
                errors.append(f'{path}:{no}: snippet inside snippet {name}')
            name, body = START.match(line).group(1), []
            if name in out:
                errors.append(f'{path}:{no}: snippet {name} marked twice')
        elif END.match(line):
            if not name:
                errors.append(f'{path}:{no}: [end] without a snippet')
            else:
                out[name] = '\n'.join(body) + '\n'
            name = None
        elif name:
            body.append(line)
    if name:
        errors.append(f'{path}: snippet {name} has no [end]')
    return out, errors


def guide_blocks(path):
    """The guide's code blocks: (line, reference or None, fence, text)."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].startswith('```') and lines[i] != '```':
            fence, start = lines[i][3:].strip(), i
            ref = REF.match(lines[i - 1]) if i > 0 else None
            j = i + 1
            while j < len(lines) and lines[j] != '```':
                j += 1
            text = '\n'.join(lines[i + 1:j]) + '\n'
            blocks.append((start + 1, ref.groups() if ref else None, fence,
                           text))
            i = j + 1
        else:
            i += 1
    return blocks


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split('\n')[2], file=sys.stderr)
        return 2
    guide, root = sys.argv[1], sys.argv[2]
    errors, files, used = [], {}, set()
    blocks = guide_blocks(guide)
    for line, ref, fence, text in blocks:
        where = f'{guide}:{line}'
        if ref is None:
            if fence == 'c':
                errors.append(f'{where}: a C block without a snippet '
                              'reference (<!-- snippet: FILE NAME -->)')
            continue
        rel, name = ref
        if rel not in files:
            path = os.path.join(root, rel)
            if not os.path.isfile(path):
                errors.append(f'{where}: no file {rel}')
                files[rel] = {}
                continue
            files[rel], errs = regions(path)
            errors += errs
        if name not in files[rel]:
            errors.append(f'{where}: {rel} marks no snippet {name}')
            continue
        used.add((rel, name))
        if files[rel][name] != text:
            errors.append(f'{where}: differs from {rel} [snippet:{name}]')
            want = files[rel][name].split('\n')
            got = text.split('\n')
            for k, (a, b) in enumerate(zip(want, got)):
                if a != b:
                    errors.append(f'  first difference, line {k + 1}:\n'
                                  f'  example: {a!r}\n  guide:   {b!r}')
                    break
            else:
                errors.append(f'  lengths differ: example {len(want)} '
                              f'lines, guide {len(got)}')
    for rel, marked in files.items():
        for name in marked:
            if (rel, name) not in used:
                errors.append(f'{rel}: snippet {name} is quoted nowhere '
                              f'in {guide}')
    for e in errors:
        print(e)
    quoted = sum(1 for b in blocks if b[1])
    print(f'{quoted} snippets from {len(files)} files checked, '
          f'{len(errors)} problems')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
