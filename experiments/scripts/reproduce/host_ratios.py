#!/usr/bin/python3
"""The 3x speed targets measured on any x86-64 machine from a bench_allocators binary and
trace files alone: for a machine that cannot run speed_table.py (no build, no traced
programs, nothing to install), such as the GPU machine's host (docs/performance.md).

    experiments/scripts/reproduce/host_ratios.py --bench BIN [--libdir DIR] [--rounds N] [--iterations N]
                               [--variant LABEL=SPEC]... [--out FILE.md [--run NAME]] TRACE...
    experiments/scripts/reproduce/host_ratios.py --import ONE_RUN.md --run NAME --out FILE.md

Each round takes the traces one at a time and replays each under glibc, jemalloc, mimalloc
and tcmalloc (each preloaded in a process of its own, as speed_table.py loads them), then
under the targeted presets and the floor in one more process; a subject's ns/op is its
minimum over the rounds. The table gives each preset's ns/op and its ratio to the fastest
general-purpose allocator on that trace, as results/speed.md does; --libdir says where the
general-purpose allocators' libraries are (Debian's names: libjemalloc.so.2,
libmimalloc.so.2, libtcmalloc_minimal.so.4), for a machine that has them only in a copy.
--variant adds a configuration beside the presets, measured in their process and reported
as they are: a policy or compose: spec under a short label, such as segregated_pow2 or
tlsf's mapping with sli=4. The allocator stays warm from pass to pass, so a configuration
whose free chunks only ever get smaller (a splitting policy with coalesce=never) measures
a state that worsens with every pass.

--out is a file of runs, one section each (results/host_ratios.md holds every machine's): the
run's name (--run; by default the processor, its cores and the variants' labels) is its
section, replaced or added; the other runs are kept. --import takes a report of one run that
an earlier version of this script wrote (its provenance and tables as they are) into such a
file as the run NAME, measuring nothing; with --out naming the same file, it becomes a file of
runs holding that one.
"""

import argparse
import os
import shlex
import sys
import tempfile

from results_io import (InputError, at_least_one, file_digest, input_file, markdown_table, output_file, provenance,
                        processor, repeated_trace_name, runs_of, script_path, write_markdown_run, written_by)
from speed_measurement import GENERAL_PURPOSE, LIBDIR, TARGET_RATIO, TARGETS, fmt, measure_subjects, worst_and_within

SCRIPT = "host_ratios.py"
TITLE = "Host speed: each preset against the fastest general-purpose allocator"
ABOUT = ("Each section is one run on one machine (its command, commit, machine and inputs, then its tables); "
         "a run rewrites its own section and keeps the others.")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--bench", type=input_file, help="a bench_allocators binary")
    parser.add_argument("--libdir", default=LIBDIR, help="where the general-purpose allocators' libraries are")
    parser.add_argument("--rounds", type=at_least_one, default=3, help="rounds of every measurement; the minimum is kept")
    parser.add_argument("--iterations", type=at_least_one, default=3,
                        help="timed passes per benchmark (more for short traces)")
    parser.add_argument("--variant", action="append", default=[], type=variant, metavar="LABEL=SPEC",
                        help="also measure SPEC (a policy name or compose: spec) and report it as LABEL; repeatable")
    parser.add_argument("--out", type=output_file, help="also write the tables, as the run --run names, into this "
                        "Markdown file of runs")
    parser.add_argument("--run", type=run_name,
                        help="the run's section in --out, replaced if there, else added (default: the processor and "
                             "its cores, then the variants' labels)")
    parser.add_argument("--import", dest="imported", type=input_file, metavar="ONE_RUN.md",
                        help="put this report of one run into --out as the run --run names, measuring nothing")
    parser.add_argument("traces", nargs="*", metavar="TRACE", type=input_file)
    args = parser.parse_args(argv)
    converting = args.imported and args.out and os.path.realpath(args.imported) == os.path.realpath(args.out)
    if args.out and not converting:
        try:  # before minutes of measuring: the file must be one this script keeps runs in
            runs_of(args.out, SCRIPT)
        except InputError as e:
            parser.error(f"--out: {e}")
    if args.imported:
        if args.traces or args.bench or args.variant or not args.out or args.run is None:
            parser.error("--import takes --run and --out, and no --bench, --variant or TRACE")
        return args
    if not args.bench or not args.traces:
        parser.error("the arguments --bench and TRACE are required")
    if args.run is None:
        args.run = processor() + "".join(f", with {label}" for label, _ in args.variant)
    # A label or spec may name no other subject: each is a key of the measurements.
    taken = TARGETS + ["bump"] + [name for name, _ in GENERAL_PURPOSE]
    for i, part in enumerate(("label", "spec")):
        names = [v[i] for v in args.variant]
        clashes = sorted({n for n in names if names.count(n) > 1 or n in taken})
        if clashes:
            parser.error(f"--variant: each {part} must name a new subject, once: {', '.join(clashes)}")
    clash = repeated_trace_name(args.traces)
    if clash:
        parser.error(clash)
    return args


def run_name(text):
    """A run's name: one line that a Markdown heading can hold."""
    if not text.strip() or "\n" in text or text != text.strip():
        raise argparse.ArgumentTypeError(f"expected a name on one line, without leading or trailing blanks, got '{text}'")
    return text


def variant(text):
    """LABEL=SPEC, split at the first '=' (a compose: spec has more of its own)."""
    label, eq, spec = text.partition("=")
    if not eq or not label or not spec or "/" in label or "/" in spec:
        raise argparse.ArgumentTypeError(f"expected LABEL=SPEC without '/', got '{text}'")
    return label, spec


def measure(args):
    """{(trace, subject): least ns/op over the rounds}; a variant's subject is its label."""
    subject_args = ["--patterns", "none", "--iterations", str(args.iterations), "--min-events", "1000000"]
    label_of = {spec: label for label, spec in args.variant}
    least = {}
    with tempfile.TemporaryDirectory(prefix="host_ratios.") as scratch:
        for r in range(args.rounds):
            for path in args.traces:
                rows = measure_subjects(args.bench, subject_args + [path], TARGETS, (), scratch, args.libdir,
                                        specs=list(label_of))
                for name, row in rows.items():
                    _, trace, subject = name.split("/")[:3]
                    key = (trace, label_of.get(subject, subject))
                    least[key] = min(least.get(key, row["ns_per_op"]), row["ns_per_op"])
            print(f"host_ratios.py: round {r + 1} of {args.rounds} measured", file=sys.stderr)
    return least


def tables(least, columns):
    """(per-trace rows, per-column summary rows) of the Markdown report; `columns` are the
    presets and the variants' labels."""
    traces = list(dict.fromkeys(trace for trace, _ in least))
    rows, ratios = [], {t: {} for t in columns}
    for trace in traces:
        fastest = min((least[(trace, name)], name) for name, _ in GENERAL_PURPOSE)
        row = [trace, f"{fastest[1]} {fmt(fastest[0])}"]
        for target in columns:
            ratio = least[(trace, target)] / fastest[0]
            ratios[target][trace] = ratio
            row.append(f"{fmt(least[(trace, target)])} ({fmt(ratio, 2)}x)")
        row.append(fmt(least[(trace, "bump")]))
        rows.append(row)
    summary = []
    for target in columns:
        worst, ratio, met = worst_and_within(ratios[target])
        summary.append([target, f"{fmt(ratio, 2)}x ({worst})", f"{met} of {len(traces)}"])
    return rows, summary


def imported_run(path):
    """The provenance and tables of a one-run report, as lines of a run's section."""
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) < 5 or not lines[0].startswith("# ") or not written_by(lines[2], SCRIPT) \
            or not lines[4].startswith("- command: "):
        raise InputError(f"{path}:1: expected a report of one run written by {script_path(SCRIPT)}")
    return lines[4:]


def main(argv):
    args = parse_arguments(argv)
    if args.imported:
        try:
            body = imported_run(args.imported)
            imported_by = f"- imported by: `{shlex.join([script_path(SCRIPT)] + argv)}`"
            write_markdown_run(args.out, TITLE, SCRIPT, ABOUT, args.run, [], [[imported_by] + body],
                               replace_all=os.path.realpath(args.imported) == os.path.realpath(args.out))
        except InputError as e:
            sys.exit(f"{SCRIPT}: {e}")
        return
    least = measure(args)
    columns = TARGETS + [label for label, _ in args.variant]
    rows, summary = tables(least, columns)
    per_trace = markdown_table(["trace", "fastest general-purpose"] + columns + ["bump"], rows)
    targets = markdown_table(["subject", "worst ratio", f"traces within {TARGET_RATIO:g}x"], summary)
    legend = [f"- {label}: `{spec}`" for label, spec in args.variant]
    print("\n".join(per_trace + [""] + targets + ([""] + legend if legend else [])))
    if args.out:
        inputs = [(f"input {os.path.basename(p)}", f"sha256 {file_digest(p)}") for p in args.traces]
        write_markdown_run(args.out, TITLE, SCRIPT, ABOUT, args.run,
                           provenance(SCRIPT, argv, inputs),
                           [[f"The minimum of {args.rounds} rounds, ns per operation of a replay over host memory "
                             "(`bench_allocators --patterns none --iterations N --min-events 1000000`), and in "
                             "brackets the ratio to the fastest of glibc, jemalloc, mimalloc and tcmalloc on that "
                             "trace, each loaded with LD_PRELOAD in a process of its own."
                             + (" The variants, measured in the presets' process:" if legend else "")]]
                           + ([legend] if legend else []) + [per_trace, targets])


if __name__ == "__main__":
    main(sys.argv[1:])
