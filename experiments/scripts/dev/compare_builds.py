#!/usr/bin/python3
"""Two builds' replay speed compared in one run: the before/after measurement of a change
(docs/performance.md, "How to measure").

    experiments/scripts/dev/compare_builds.py --before BIN --after BIN [--policies P,P...] [--rounds N]
                                  [--iterations N] [--count TRACE]... [--out FILE.md] TRACE...

BIN is a bench_allocators binary. Each round takes the traces one at a time and replays each
under the policies with both builds, each build in a process of its own and the two in
turn, before first in odd rounds and after first in even ones, so that a shared machine's
drift falls on both alike (an even number of rounds puts each first equally often); a
(build, trace, policy)'s ns/op is its minimum over the rounds, as speed_table.py keeps it.
The table gives both and the ratio after/before; the summary gives each policy's median
ratio, its range, and on how many traces the after build was the faster. Giving one binary
twice measures the run's own noise.

--count TRACE also counts each policy's instructions per operation on TRACE under callgrind,
with the count_instructions binary beside each bench_allocators: a cost the machine's noise
cannot blur, the same from run to run.
"""

import argparse
import os
import statistics
import sys
import tempfile

# The modules the results scripts share (experiments/scripts/reproduce/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reproduce"))
from results_io import (at_least_one, distinct_names, file_digest, input_file, markdown_table, output_file, provenance,
                        repeated_trace_name, trace_name, write_markdown)
from speed_measurement import TARGETS, bench, fmt, instructions, preload_env

BUILDS = ("before", "after")
DEFAULT_POLICIES = TARGETS + ["pytorch_caching"]


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--before", required=True, metavar="BIN", type=input_file,
                        help="the bench_allocators binary of the baseline")
    parser.add_argument("--after", required=True, metavar="BIN", type=input_file,
                        help="the bench_allocators binary of the change")
    parser.add_argument("--policies", default=",".join(DEFAULT_POLICIES), type=distinct_names,
                        help="fraglab policies, comma-separated (default: %(default)s)")
    parser.add_argument("--rounds", type=at_least_one, default=6,
                        help="rounds of every measurement, the builds' order alternating; the minimum is kept")
    parser.add_argument("--iterations", type=at_least_one, default=3,
                        help="timed passes per benchmark (more for short traces)")
    parser.add_argument("--count", action="append", default=[], metavar="TRACE", type=input_file,
                        help="also count instructions per operation on TRACE under callgrind; repeatable")
    parser.add_argument("--out", type=output_file, help="also write the tables to this Markdown file")
    parser.add_argument("traces", nargs="+", metavar="TRACE", type=input_file)
    args = parser.parse_args(argv)
    if args.count:
        for build in BUILDS:
            counter = counter_of(getattr(args, build))
            if not os.path.isfile(counter):
                parser.error(f"--count needs {counter}, beside the --{build} binary: build it with the benchmarks")
    for group in (args.traces, args.count):
        clash = repeated_trace_name(group)
        if clash:
            parser.error(clash)
    return args


def counter_of(bench_binary):
    return os.path.join(os.path.dirname(os.path.abspath(bench_binary)), "count_instructions")


def measure_times(args):
    """{(build, trace, policy): least ns/op over the rounds}."""
    subject_args = ["--policies", ",".join(args.policies), "--patterns", "none", "--iterations", str(args.iterations),
                    "--min-events", "1000000"]
    least = {}
    with tempfile.TemporaryDirectory(prefix="compare_builds.") as scratch:
        for r in range(args.rounds):
            order = BUILDS if r % 2 == 0 else BUILDS[::-1]
            for path in args.traces:
                for build in order:
                    for name, row in bench(getattr(args, build), subject_args + [path], preload_env(None), scratch).items():
                        _, trace, policy = name.split("/")[:3]
                        key = (build, trace, policy)
                        least[key] = min(least.get(key, row["ns_per_op"]), row["ns_per_op"])
            print(f"compare_builds.py: round {r + 1} of {args.rounds} measured", file=sys.stderr)
    return least


def measure_instructions(args):
    """{(build, trace, policy): instructions per operation}."""
    counts = {}
    with tempfile.TemporaryDirectory(prefix="compare_builds.") as scratch:
        for path in args.count:
            for policy in args.policies:
                for build in BUILDS:
                    per_op, _ = instructions(counter_of(getattr(args, build)), ["--policy", policy], path,
                                             preload_env(None), scratch)
                    counts[(build, trace_name(path), policy)] = per_op
    return counts


def comparison(values, policies, digits):
    """(rows of trace, policy, before, after, after/before; summary rows per policy and over
    all) of {(build, trace, policy): value}."""
    traces = list(dict.fromkeys(trace for _, trace, _ in values))
    rows, ratios = [], {p: [] for p in policies}
    for trace in traces:
        for policy in policies:
            before, after = values[("before", trace, policy)], values[("after", trace, policy)]
            ratios[policy].append(after / before)
            rows.append([trace, policy, fmt(before, digits), fmt(after, digits), fmt(after / before, 3)])
    summary = []
    for label, rs in list(ratios.items()) + [("all", [r for rs in ratios.values() for r in rs])]:
        summary.append([label, fmt(statistics.median(rs), 3), f"{fmt(min(rs), 3)}-{fmt(max(rs), 3)}",
                        f"{sum(r < 1 for r in rs)} of {len(rs)}"])
    return rows, summary


def main(argv):
    args = parse_arguments(argv)
    times = measure_times(args)
    counts = measure_instructions(args) if args.count else {}
    sections = []
    rows, summary = comparison(times, args.policies, 1)
    sections.append(markdown_table(["trace", "policy", "before ns/op", "after ns/op", "after/before"], rows))
    sections.append(markdown_table(["policy", "median after/before", "range", "after faster on"], summary))
    if counts:
        rows, summary = comparison(counts, args.policies, 1)
        sections.append(markdown_table(["trace", "policy", "before instructions/op", "after instructions/op",
                                        "after/before"], rows))
        sections.append(markdown_table(["policy", "median after/before", "range", "after fewer on"], summary))
    print("\n\n".join("\n".join(s) for s in sections))
    if args.out:
        inputs = [(f"input {build}", f"{getattr(args, build)} sha256 {file_digest(getattr(args, build))}")
                  for build in BUILDS]
        inputs += [(f"input {os.path.basename(p)}", f"sha256 {file_digest(p)}") for p in dict.fromkeys(args.traces + args.count)]
        explanation = [f"The minimum of {args.rounds} rounds, ns per operation of a replay over host memory "
                       "(`bench_allocators --patterns none --iterations N --min-events 1000000`), each build in "
                       "a process of its own, the two in turn on each trace; after/before under 1 is a gain."
                       + (" Then instructions per operation under callgrind (`count_instructions --policy P "
                          "TRACE`)." if counts else "")]
        write_markdown(args.out, "Two builds compared", "compare_builds.py", provenance("compare_builds.py", argv, inputs),
                       [explanation] + sections)


if __name__ == "__main__":
    main(sys.argv[1:])
