#!/usr/bin/python3
"""Reads XLA's buffer assignment of a compiled module as an offline planning problem, with
XLA's own placement of the same buffers.

    experiments/scripts/reproduce/xla_buffers.py MODULE_DUMP_DIR --out PROBLEM.csv [--xla-placement XLA.csv]
                                       [--temp-only]

MODULE_DUMP_DIR holds one module's `*buffer-assignment.txt` and `*live-range.txt`, as
`--xla_dump_to` writes them (experiments/scripts/reproduce/xla_models.py). PROBLEM.csv is
`id,lower,upper,size,alignment` with upper the last step live, for `fraglab plan
--lifetimes inclusive`; XLA.csv is the same buffers with XLA's offsets, a placement
tests/policies/offline/check_placement.py checks. Prints a CSV row of what XLA needs: its
height, its allocations and values.

What is planned (docs/offline.md, "XLA's buffer assignment"): every value XLA assigns to an
allocation other than an entry parameter's, a constant's or a thread-local one, live over
the inclusive range of steps its live-range dump gives. XLA's placement lays those
allocations end to end (each at a multiple of 64 bytes), each value at its offset in its
allocation; its height is the highest end of a value there; --temp-only keeps the preallocated temp allocation alone, the one XLA packs
with its heap simulator. Values of one allocation whose bytes and steps meet are one buffer
to XLA (an operand its user overwrites in place, the values of one loop variable): they are
merged, their bytes and steps spanned, so a placement of the problem is valid for XLA too.
"""

import argparse
import glob
import os
import re
import sys

from results_io import write_atomically

# XLA's CPU backend starts every buffer at a multiple of 64 bytes; the reader checks that its
# offsets are, and asks the planner for the same.
ALIGNMENT = 64

ALLOCATION = re.compile(r"allocation (\d+): size (\d+), (.*):$")
VALUE = re.compile(r" value: <(\d+) ([^\s{]+)(\{[0-9, ]*\})?( \(phi\))?(?: @\d+)?> \(size=(\d+),offset=(\d+)\): ")
LIVE_RANGE = re.compile(r"    ([^\s{]+)(\{[0-9, ]*\}):(-?\d+)-(-?\d+)$")
NOT_PLANNED = ("parameter", "constant", "thread-local")


class DumpError(Exception):
    pass


def only_file(folder, suffix):
    found = sorted(glob.glob(os.path.join(glob.escape(folder), f"*{suffix}")))
    if len(found) != 1:
        raise DumpError(f"{folder}: expected one *{suffix} (XLA's --xla_dump_to of one module), found {len(found)}")
    return found[0]


def allocation_kind(attributes):
    # The attributes list what the allocation holds, e.g. "parameter 0, shape |f32[8]| at
    # ShapeIndex {}" or "output shape is |(f32[2], f32[3])|, maybe-live-out"; shapes first
    # removed, since a tuple's may hold commas.
    words = [w.strip() for w in re.sub(r"\|[^|]*\|", "", attributes).split(",")]
    for kind in NOT_PLANNED + ("preallocated-temp",):
        if any(w == kind or w.startswith(kind + " ") for w in words):
            return kind
    return "other"


def read_assignment(path):
    """[(allocation, size, kind, [(name, index, size, offset)])] in the file's order."""
    allocations = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if number == 1 and line == "BufferAssignment:":
                continue
            if m := ALLOCATION.match(line):
                allocations.append((int(m[1]), int(m[2]), allocation_kind(m[3]), []))
            elif m := VALUE.match(line):
                if not allocations:
                    raise DumpError(f"{path}:{number}: a value before any allocation")
                index = (m[3] or "{}").replace(" ", "")
                allocations[-1][3].append((m[2], index, int(m[5]), int(m[6])))
            elif line.strip():
                raise DumpError(f"{path}:{number}: expected `allocation N: size S, ...:` or ` value: <...> "
                                f"(size=S,offset=O): ...`, found {line[:80]!r}")
    if not allocations:
        raise DumpError(f"{path}: no allocation in it")
    return allocations


def read_live_ranges(path):
    """(name, index) -> (first step, last step), the BufferLiveRange section's."""
    ranges = {}
    section = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("  ") and not line.startswith("   "):
                section = line.strip()
            elif section == "BufferLiveRange:":
                m = LIVE_RANGE.match(line)
                if not m:
                    raise DumpError(f"{path}:{number}: expected `    NAME{{INDEX}}:FIRST-LAST`, found {line[:80]!r}")
                first, last = int(m[3]), int(m[4])
                if last < first:
                    raise DumpError(f"{path}:{number}: {m[1]}{m[2]} ends at step {last}, before it starts at {first}")
                ranges[(m[1], m[2].replace(" ", ""))] = (first, last)
    if not ranges:
        raise DumpError(f"{path}: no BufferLiveRange section")
    return ranges


def merge_shared(values):
    """Values of one allocation, [offset, end, first, last], merged where bytes and steps meet."""
    merged = [list(v) for v in values]
    changed = True
    while changed:
        changed = False
        merged.sort(key=lambda v: (v[2], v[0]))
        out = []
        for v in merged:
            for u in out:
                if u[0] < v[1] and v[0] < u[1] and u[2] <= v[3] and v[2] <= u[3]:
                    u[0], u[1], u[2], u[3] = min(u[0], v[0]), max(u[1], v[1]), min(u[2], v[2]), max(u[3], v[3])
                    changed = True
                    break
            else:
                out.append(v)
        merged = out
    return merged


def problem(folder, temp_only=False):
    """The buffers to plan, [(lower, upper, size, XLA's offset)], and what XLA needs:
    {height, allocations, values}."""
    assignment = only_file(folder, "buffer-assignment.txt")
    allocations = read_assignment(assignment)
    ranges = read_live_ranges(only_file(folder, "live-range.txt"))
    buffers, base, used, values = [], 0, 0, 0
    for number, size, kind, held in allocations:
        if kind in NOT_PLANNED or (temp_only and kind != "preallocated-temp"):
            continue
        spans = []
        for name, index, value_size, offset in held:
            if (name, index) not in ranges:
                raise DumpError(f"{assignment}: allocation {number}'s value {name}{index} has no live range in the "
                                "live-range dump")
            if offset % ALIGNMENT or offset + value_size > size:
                raise DumpError(f"{assignment}: allocation {number}'s value {name}{index} at offset {offset} is not "
                                f"a multiple of {ALIGNMENT} within the allocation's {size} bytes")
            spans.append((offset, offset + value_size, *ranges[(name, index)]))
        values += len(spans)
        buffers += [(first, last, end - offset, base + offset) for offset, end, first, last in merge_shared(spans)]
        base += -(-size // ALIGNMENT) * ALIGNMENT
        used += 1
    height = max((offset + size for _, _, size, offset in buffers), default=0)
    return buffers, {"xla_height_bytes": height, "xla_allocations": used, "xla_values": values}


def write(path, buffers, offsets):
    lines = ["id,lower,upper,size,alignment" + (",offset" if offsets else "")]
    lines += [f"{i},{lower},{upper},{size},{ALIGNMENT}" + (f",{offset}" if offsets else "")
              for i, (lower, upper, size, offset) in enumerate(buffers)]
    write_atomically(path, "\n".join(lines) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("dump", help="the folder of one module's XLA dump")
    parser.add_argument("--out", required=True, help="PROBLEM.csv: the buffers, for fraglab plan --lifetimes inclusive")
    parser.add_argument("--xla-placement", help="XLA.csv: the same buffers at XLA's offsets")
    parser.add_argument("--temp-only", action="store_true", help="the preallocated temp allocation alone")
    args = parser.parse_args(argv)
    try:
        buffers, xla = problem(args.dump, args.temp_only)
    except (DumpError, OSError, UnicodeDecodeError) as e:
        sys.exit(f"xla_buffers.py: {e}")
    if not buffers:
        sys.exit(f"xla_buffers.py: {args.dump}: no value to plan" + (" in a preallocated temp allocation" if args.temp_only else ""))
    write(args.out, buffers, False)
    if args.xla_placement:
        write(args.xla_placement, buffers, True)
    print(",".join(["buffers"] + list(xla)))
    print(",".join(str(v) for v in [len(buffers)] + list(xla.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
