#!/usr/bin/python3
"""Instructions per operation now, against the record in results/speed_instructions.csv.

    experiments/scripts/dev/check_instructions.py [--build DIR] [--record CSV] [--trace PATH]
                                      [--tolerance PERCENT] [--subjects S,S...]

Counts every fraglab subject of the record (the presets freed by reference, and POLICY@address
freed by address) under callgrind on the record's trace, exactly as speed_table.py counted
them, and prints the recorded count, today's, and the change. About 15 seconds here, where
the speed table takes twenty minutes: the check to run before committing a change to the
engine or a policy (docs/performance.md, "How to measure").

Exits 1 when a subject costs more than --tolerance per cent (default 2) above its record,
0 otherwise. A subject below its record by more than the tolerance is reported as an
improvement that the record does not show yet (regenerate it with speed_table.py).

Exits 77, the status of a skipped test to meson test, when the counts cannot be compared
here, and says why: valgrind is not installed, the record's host trace is not in
../shared/traces (and no --trace names it), or the build's compiler is not the one the
record was counted with. A count is exact for one build of one commit, but it depends on the
compiler: the build's is the one its compile_commands.json calls, and the record's is its
`input g++` line (speed_table.py builds with the system's g++, the compiler it traces). The
build type matters too, and the record does not name it: the test suite runs this check only
in release builds, the kind speed_table.py counts in.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

# The modules the results scripts share (experiments/scripts/reproduce/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reproduce"))
from results_io import ROOT, SHARED_TRACES, InputError, distinct_names, input_file, read_table
from speed_measurement import BY_ADDRESS_KIND, instructions, preload_env

FRAGLAB_KINDS = ("fraglab", BY_ADDRESS_KIND)
CANNOT_COMPARE = 77  # meson test's (and automake's) status for a skipped test


def compiler_version(command):
    """The first line of `COMMAND --version` without the program's name, which differs between
    `c++` and `g++` of one compiler: "(Debian 12.2.0-14+deb12u1) 12.2.0"."""
    try:
        done = subprocess.run(command + ["--version"], capture_output=True, text=True)
    except OSError:
        return None
    first = done.stdout.partition("\n")[0] if done.returncode == 0 else ""
    return first.partition(" ")[2] or None


def build_compiler(build):
    """The compiler command that compiles `build`'s C++ (ccache and the like skipped), or None."""
    try:
        with open(os.path.join(build, "compile_commands.json")) as f:
            commands = json.load(f)
    except (OSError, ValueError):
        return None
    for entry in commands:
        if entry["file"].endswith(".cpp"):
            words = entry["command"].split()
            while words and os.path.basename(words[0]) in ("ccache", "sccache"):
                words.pop(0)
            return words[:1] or None
    return None


def why_not_comparable(recorded_compiler, build, trace, trace_named):
    """Why this machine cannot count what the record counted, or None when it can."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (bash .ci/install-deps installs it)"
    if not trace_named and not os.path.exists(trace):
        return f"the record's trace {os.path.normpath(trace)} is not here (--trace gives another place)"
    compiler = build_compiler(build)
    ours = compiler and compiler_version(compiler)
    if ours is None:
        return (f"no compiler that builds {build} answers --version (from its compile_commands.json), and "
                f"the record was counted in a build by '{recorded_compiler}'")
    if ours != recorded_compiler.partition(" ")[2]:
        return (f"the record was counted in a build by '{recorded_compiler}'; {build} is built by "
                f"'{compiler[0]} {ours}', and counts compare only within one compiler")
    return None


def subject_args(subject):
    """count_instructions' arguments for a subject of the record (POLICY or POLICY@address)."""
    policy, _, how = subject.partition("@")
    return ["--policy", policy] + (["--free-by", "address"] if how == "address" else [])


def percentage(text):
    """argparse type of --tolerance: a finite number of at least 0. float() also reads "nan",
    which every comparison is false against, so that no count could fail the check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite percentage of at least 0, got {text!r}")
    return value


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the Meson build with benchmarks/")
    parser.add_argument("--record", default=os.path.join(ROOT, "results", "speed_instructions.csv"))
    parser.add_argument("--trace", type=input_file, help="the record's trace (default: the host trace of its name)")
    parser.add_argument("--tolerance", type=percentage, default=2.0, help="per cent above the record that still passes")
    parser.add_argument("--subjects", type=distinct_names, help="only these subjects of the record, comma-separated")
    args = parser.parse_args(argv)

    try:
        header, rows = read_table(args.record, ["subject", "kind", "trace", "operations", "instructions_per_op"])
    except InputError as e:
        sys.exit(f"check_instructions.py: {e}")
    rows = [r for r in rows if r["kind"] in FRAGLAB_KINDS]
    if args.subjects:
        wanted = args.subjects
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
    if "input g++" not in header:
        sys.exit(f"check_instructions.py: {args.record}: expected an '# input g++:' line naming the compiler "
                 "the record was counted with")
    reason = why_not_comparable(header["input g++"], args.build, trace, args.trace is not None)
    if reason:
        print(f"SKIP: cannot compare here: {reason}")
        return CANNOT_COMPARE
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
              "(regenerate the record with experiments/scripts/reproduce/speed_table.py to show it)")
    if worse:
        print(f"above the record by more than {args.tolerance:g}%: {', '.join(worse)}. If that is the price "
              "of the change, record it by running experiments/scripts/reproduce/speed_table.py again", file=sys.stderr)
        return 1
    print(f"every subject within {args.tolerance:g}% of its record or below it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
