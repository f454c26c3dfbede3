#!/usr/bin/python3
"""Instructions per operation now, against the record in results/speed_instructions.csv.

    experiments/check_instructions.py [--build DIR] [--record CSV] [--trace PATH]
                                      [--tolerance PERCENT] [--subjects S,S...]

Counts every fraglab subject of the record (the presets freed by reference, and POLICY@address
freed by address) under callgrind on the record's trace, exactly as speed_table.py counted
them, and prints the recorded count, today's, and the change. About 15 seconds here, where
the speed table takes twenty minutes: the check to run before committing a change to the
engine or a policy (docs/performance.md, "The benchmark suite").

Exits 1 when a subject costs more than --tolerance per cent (default 2) above its record,
0 otherwise. A subject below its record by more than the tolerance is reported as an
improvement that the record does not show yet (regenerate it with speed_table.py).

A count is exact for one build of one commit, but it depends on the compiler, the Boost
headers and the build type: compare only with a record made with the same toolchain (the
record's `machine` line says where it was made). The trace is the record's: a host trace
(../shared/traces/host/NAME.csv) unless --trace names it.
"""

import argparse
import os
import sys
import tempfile

from results_io import ROOT, SHARED_TRACES, InputError, read_table
from speed_table import BY_ADDRESS_KIND, instructions, preload_env

FRAGLAB_KINDS = ("fraglab", BY_ADDRESS_KIND)


def subject_args(subject):
    """count_instructions' arguments for a subject of the record (POLICY or POLICY@address)."""
    policy, _, how = subject.partition("@")
    return ["--policy", policy] + (["--free-by", "address"] if how == "address" else [])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the Meson build with benchmarks/")
    parser.add_argument("--record", default=os.path.join(ROOT, "results", "speed_instructions.csv"))
    parser.add_argument("--trace", help="the record's trace (default: the host trace of its name)")
    parser.add_argument("--tolerance", type=float, default=2.0, help="per cent above the record that still passes")
    parser.add_argument("--subjects", help="only these subjects of the record, comma-separated")
    args = parser.parse_args(argv)
    if args.tolerance < 0:
        parser.error("--tolerance: expected a percentage of at least 0")

    try:
        header, rows = read_table(args.record, ["subject", "kind", "trace", "operations", "instructions_per_op"])
    except InputError as e:
        sys.exit(f"check_instructions.py: {e}")
    rows = [r for r in rows if r["kind"] in FRAGLAB_KINDS]
    if args.subjects:
        wanted = args.subjects.split(",")
        unknown = sorted(set(wanted) - {r["subject"] for r in rows})
        if unknown:
            sys.exit(f"check_instructions.py: {args.record} records no fraglab subject {', '.join(unknown)}")
        rows = [r for r in rows if r["subject"] in wanted]
    if not rows:
        sys.exit(f"check_instructions.py: {args.record} records no fraglab subject")
    traces = {r["trace"] for r in rows}
    if len(traces) != 1:
        sys.exit(f"check_instructions.py: {args.record} counts on several traces ({sorted(traces)}); expected one")
    trace = args.trace or os.path.join(SHARED_TRACES, "host", f"{traces.pop()}.csv")
    if not os.path.exists(trace):
        sys.exit(f"check_instructions.py: {trace}: the record's trace is not there; give it with --trace")
    count_bin = os.path.join(args.build, "benchmarks", "count_instructions")
    if not os.access(count_bin, os.X_OK):
        sys.exit(f"check_instructions.py: {count_bin}: not built (a release build with valgrind's headers builds it)")

    print(f"record: {args.record}, commit {header.get('commit', '?')}, {header.get('machine', '?')}")
    print(f"{'subject':28} {'recorded':>9} {'now':>9} {'change':>8}")
    worse, better = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for r in rows:
            recorded = float(r["instructions_per_op"])
            # speed_table.py's environment: no preload and no glibc debugging (meson test's
            # MALLOC_PERTURB_ fills every block the backend takes from glibc).
            now, ops = instructions(count_bin, subject_args(r["subject"]), trace, preload_env(None), scratch)
            if ops != int(r["operations"]):
                sys.exit(f"check_instructions.py: {trace}: {ops} operations, where the record counted "
                         f"{r['operations']}: not the record's trace")
            change = round((now / recorded - 1) * 100, 1) + 0.0  # + 0.0: no "-0.0%"
            print(f"{r['subject']:28} {recorded:9.1f} {now:9.1f} {change:+7.1f}%", flush=True)
            if change > args.tolerance:
                worse.append(r["subject"])
            elif change < -args.tolerance:
                better.append(r["subject"])
    if better:
        print(f"below the record by more than {args.tolerance:g}%: {', '.join(better)} "
              "(regenerate the record with experiments/speed_table.py to show it)")
    if worse:
        print(f"above the record by more than {args.tolerance:g}%: {', '.join(worse)}", file=sys.stderr)
        return 1
    print(f"every subject within {args.tolerance:g}% of its record or below it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
