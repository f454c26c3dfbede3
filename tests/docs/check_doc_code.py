#!/usr/bin/env python3
"""Checks that a document's C++ is code the test suite compiles and runs.

    check_doc_code.py DOC.md...

Every ```cpp block of each DOC must follow a line `<!-- tested in PATH -->` (PATH relative
to the repository), and its lines must appear, in order and adjacent, among PATH's lines;
both are compared without their leading and trailing blanks, so that a block may be shown at
another indentation than it has in the file (inside a list, or one row of a table). Exits 1
naming DOC:LINE for each block that is unmarked or no longer in its file, so that a document
cannot drift from the code that tests/docs builds and runs."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r"<!-- tested in (\S+) -->")


def blocks(lines):
    """(line number of the fence, marked path or None, the block's stripped lines)."""
    marked = None
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        if m := MARKER.fullmatch(text):
            marked = m.group(1)
        elif text.startswith("```"):
            fence, start = text, i + 1
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i].strip())
                i += 1
            if fence == "```cpp":
                yield start, marked, [line for line in body if line]
            marked = None
        elif text:
            marked = None
        i += 1


def contains(haystack, needle):
    return any(haystack[k:k + len(needle)] == needle for k in range(len(haystack) - len(needle) + 1))


def check(doc):
    """(failures, blocks checked) of one document."""
    with open(doc) as f:
        lines = f.read().splitlines()
    failures, checked = [], 0
    for line, path, body in blocks(lines):
        where = f"{doc}:{line}"
        if path is None:
            failures.append(f"{where}: a C++ block without `<!-- tested in PATH -->` on the line before it")
            continue
        try:
            with open(os.path.join(ROOT, path)) as f:
                code = [text.strip() for text in f.read().splitlines() if text.strip()]
        except OSError as e:
            failures.append(f"{where}: {path}: {e.strerror}")
            continue
        if not contains(code, body):
            failures.append(f"{where}: this block is no longer in {path}")
        checked += 1
    return failures, checked


def main(argv):
    if not argv:
        sys.exit(__doc__.split("\n\n")[1])
    failed = False
    for doc in argv:
        failures, checked = check(doc)
        for failure in failures:
            print(failure, file=sys.stderr)
        if not failures:
            print(f"{doc}: {checked} C++ blocks, each found in the file that tests it")
        failed = failed or bool(failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
