#!/usr/bin/env python3
"""An independent check of a placement in MiniMalloc's CSV (id,lower,upper,size[,alignment],offset),
written apart from the planner's own validator so that one mistake cannot hide in both.

Usage: check_placement.py PLACEMENT.csv [--height H] [--capacity C] [--inclusive]
Exits 0 if no two buffers live at the same time overlap in space (lifetimes are half-open,
[lower, upper); [lower, end] with an `end` column, and [lower, upper] with --inclusive), every offset is a whole number >= 0 and a multiple of its alignment, the highest end is H (if given) and
within C (if given); else 1, saying which buffers collide."""
import argparse
import csv
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("placement")
    parser.add_argument("--height", type=int)
    parser.add_argument("--capacity", type=int)
    parser.add_argument("--inclusive", action="store_true", help="the upper column is the last step live")
    args = parser.parse_args()
    with open(args.placement, newline="") as f:
        rows = list(csv.DictReader(f))
    buffers = []
    for n, row in enumerate(rows, start=2):
        last = "end" if "end" in row else "upper"
        lower, upper, size, offset = (int(row[k]) for k in ("lower", last, "size", "offset"))
        if last == "end" or args.inclusive:
            upper += 1
        if offset < 0 or lower > upper or size < 0:
            sys.exit(f"{args.placement}:{n}: bad row {row}")
        if offset % int(row.get("alignment") or 1) != 0:
            sys.exit(f"{args.placement}:{n}: offset {offset} is not a multiple of the alignment {row['alignment']}")
        if size > 0 and lower < upper:
            buffers.append((lower, upper, offset, offset + size, row["id"]))
    # Sweep over time: at each start, compare the new buffer with every buffer still live
    # (quadratic in the live ones, and deliberately simple).
    events = sorted([(b[0], 1, i) for i, b in enumerate(buffers)] + [(b[1], 0, i) for i, b in enumerate(buffers)])
    live = set()
    for time, starts, i in events:
        if not starts:
            live.discard(i)
            continue
        _, _, start, end, name = buffers[i]
        for j in live:
            if buffers[j][2] < end and start < buffers[j][3]:
                sys.exit(f"{args.placement}: buffers {buffers[j][4]} and {name} overlap at time {time}")
        live.add(i)
    height = max((b[3] for b in buffers), default=0)
    if args.height is not None and height != args.height:
        sys.exit(f"{args.placement}: the highest end is {height}, not the reported {args.height}")
    if args.capacity is not None and height > args.capacity:
        sys.exit(f"{args.placement}: the highest end {height} exceeds the capacity {args.capacity}")
    print(f"{args.placement}: {len(buffers)} buffers, height {height}: valid")


if __name__ == "__main__":
    main()
