#!/usr/bin/python3
"""The speed table: fraglab's policies against glibc, jemalloc, mimalloc and tcmalloc, and
against a bump allocator that never reuses memory (the harness's floor).

    experiments/scripts/reproduce/speed_table.py [--build DIR] [--out-dir results] [--quick] [--iterations N] [--rounds N]
    experiments/scripts/reproduce/speed_table.py --redraw [--out-dir results]   (the figure again from speed_patterns.csv)

Runs the benchmark suite (benchmarks/, docs/performance.md), whose every subject goes
through the replay loop of `fraglab replay` over events parsed beforehand:

  replays   the host traces (../shared/traces/host), programs traced at run time
            (experiments/scripts/reproduce/program_traces.py), generated deep-learning workloads and the
            PyTorch snapshots (experiments/scripts/reproduce/dl_workloads.py), in --rounds rounds, each subject
            on a trace right after the others; a subject's ns/op is its minimum over rounds
  patterns  steady-state random sizes, LIFO, and batch alloc then shuffled free, at 1e3 to
            1e6 live blocks (benchmarks/alloc_patterns.hpp)
  callgrind instructions per operation of every subject on one trace (scp, or the smallest
            traced program in quick runs): a cost that machine noise cannot blur
  by address the replays and the instruction counts again for the presets a program plugs in,
            freed by address as a program plugged in by pointer frees (POLICY@address); the
            others free by the reference their allocation returned, as `fraglab replay` does

Each general-purpose allocator is loaded the way it is deployed under an unmodified
program, with LD_PRELOAD, and the benchmark names the library that actually served malloc.

Writes OUT/speed.csv (replays), speed_patterns.csv, speed_instructions.csv, speed.md, and
speed_vs_live.svg (ns/op against live blocks, per pattern). Timings on a shared machine
are noisy: compare ratios within one run.
"""

import argparse
import os
import shutil
import sys
import tempfile

import dl_workloads
import program_traces
from results_io import (ROOT, at_least_one, common_arguments, figures, markdown_table, provenance, read_table,
                        rounds_argument, rounds_of, trace_name, write_csv, write_markdown)
from speed_measurement import (BY_ADDRESS_KIND, GENERAL_PURPOSE, TARGET_RATIO, TARGETS, fmt, instructions,
                               measure_subjects, preload_env, worst_and_within)

# One per free index: bins, one tree per pool, seglist, dlmalloc's bins, tree, augmented
# address-ordered tree, buddy over the tree.
POLICIES = ["tf_bfc", "pytorch_caching", "tlsf", "dlmalloc", "best_fit", "first_fit", "next_fit", "bins_best",
            "seg_best", "buddy"]
SCAN = "list_ao_first"  # the classic address-ordered list, a scan by definition: patterns only
# Also freed by address, as a program plugged in by pointer frees them (the PyTorch plug-in):
# the presets a program plugs in, paying for the engine's address map (docs/performance.md,
# "Freeing by reference").
BY_ADDRESS = ["pytorch_caching", "tf_bfc", "tlsf"]
LIVE = [1000, 10000, 100000, 1000000]
# The scans (SCAN, seg_best) stop here: at 1e5 live blocks one steady-state allocation of the
# address-ordered list walks about 1e5 holes, about 1 ms, and a pattern's 2^19 events take
# hours. Two points, 1e3 and 1e4, already show the linear growth.
SCAN_LIVE_MAX = 10000


PATTERN_COLUMNS = ["trace", "subject", "live_blocks", "ns_per_op"]  # `trace`: the pattern (plot.py's panels)


def draw_speed_vs_live(out_dir, pattern_rows):
    figures(out_dir, PATTERN_COLUMNS, pattern_rows,
            [("sweep", "speed_vs_live.svg", ["-x", "live_blocks", "-y", "ns_per_op", "--group", "subject", "--log-x", "--log-y"])])
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the Meson build with benchmarks/")
    parser.add_argument("--iterations", type=at_least_one, default=3, help="timed passes per benchmark (more for short traces)")
    rounds_argument(parser, "each subject's ns/op is its minimum over them")
    parser.add_argument("--redraw", action="store_true",
                        help="draw speed_vs_live.svg again from OUT/speed_patterns.csv, measuring nothing")
    args = parser.parse_args(argv)
    args.rounds = rounds_of(args)
    if args.redraw:
        return draw_speed_vs_live(args.out_dir, [[r[c] for c in PATTERN_COLUMNS] for r in read_table(
            os.path.join(args.out_dir, "speed_patterns.csv"), PATTERN_COLUMNS)[1]])

    bench_bin = os.path.join(args.build, "benchmarks", "bench_allocators")
    count_bin = os.path.join(args.build, "benchmarks", "count_instructions")
    for b in (bench_bin, count_bin):
        if not os.path.exists(b):
            sys.exit(f"speed_table.py: {b} is missing: build with `meson compile -C {args.build}` (needs "
                     "libbenchmark-dev and valgrind, from .ci/install-deps)")
    if shutil.which("valgrind") is None:
        sys.exit("speed_table.py: valgrind is missing: run .ci/install-deps")

    suffix = "-quick" if args.quick else ""
    programs, versions = program_traces.capture(args.fraglab, os.path.join(args.work_dir, "programs" + suffix),
                                                args.quick)
    host, checksums = program_traces.host_traces(args.quick)
    dl, made = dl_workloads.workloads(args.fraglab, os.path.join(args.work_dir, "dl" + suffix), args.quick)
    families = [("host", host), ("program", programs), ("deep learning", dl)]
    traces = [(family, name, path) for family, group in families for name, path in group.items()]
    inputs = [(f"input {k}", v) for k, v in (versions | checksums | made).items()]

    live = LIVE[:2] if args.quick else LIVE
    # Every benchmark times at least a million events (a PyTorch snapshot has 4k): more
    # passes over the short traces, never fewer than --iterations.
    iterations = ["--iterations", "1" if args.quick else str(args.iterations)] + \
        ([] if args.quick else ["--min-events", "1000000"])
    pattern_args = ["--live", ",".join(map(str, live)), "--scan-live-max", str(SCAN_LIVE_MAX)] + \
        (["--pattern-events", "16384"] if args.quick else [])
    paths = [path for _, _, path in traces]
    with tempfile.TemporaryDirectory(prefix="speed_table.") as scratch:
        def measure_all(subject_args, policies, by_address=()):
            return measure_subjects(bench_bin, subject_args, policies, by_address, scratch)

        # Replays: every round takes the traces one at a time and measures every subject on a
        # trace before moving on, so that a trace's ratios compare runs a minute or two apart;
        # a subject's ns/op is its minimum over the rounds, the estimate of the unloaded time
        # that a shared machine's load disturbs least.
        results = {}
        rounds = args.rounds
        for r in range(rounds):
            for path in paths:
                for key, row in measure_all(["--patterns", "none"] + iterations + [path], POLICIES, BY_ADDRESS).items():
                    if key not in results or row["ns_per_op"] < results[key]["ns_per_op"]:
                        results[key] = row
            print(f"speed_table.py: replays, round {r + 1} of {rounds} measured", file=sys.stderr)
        # Patterns: the classic scan joins fraglab's policies.
        results |= measure_all(pattern_args + iterations, POLICIES + [SCAN])
        print("speed_table.py: patterns measured", file=sys.stderr)

        # scp: a real program's 71k events; without the shared traces, the smallest traced program.
        cg_trace = host.get("scp") or min(programs.values(), key=os.path.getsize)
        cg = []
        for name, library in GENERAL_PURPOSE:
            cg.append((name, "general-purpose", instructions(count_bin, ["--malloc"], cg_trace, preload_env(library),
                                                              scratch)))
        for p in POLICIES:
            cg.append((p, "fraglab", instructions(count_bin, ["--policy", p], cg_trace, preload_env(None), scratch)))
        for p in BY_ADDRESS:
            cg.append((f"{p}@address", BY_ADDRESS_KIND,
                       instructions(count_bin, ["--policy", p, "--free-by", "address"], cg_trace, preload_env(None),
                                    scratch)))
        cg.append(("bump", "floor", instructions(count_bin, ["--floor"], cg_trace, preload_env(None), scratch)))

    subjects = [(p, "fraglab") for p in POLICIES] + [(n, "general-purpose") for n, _ in GENERAL_PURPOSE] + \
        [("bump", "floor")] + [(f"{p}@address", BY_ADDRESS_KIND) for p in BY_ADDRESS]
    replay_rows = []
    summary = {}  # trace -> {subject: ns/op}
    for family, trace, _ in traces:
        ns = {s: results[f"replay/{trace}/{s}"]["ns_per_op"] for s, _ in subjects}
        fastest = min(ns[n] for n, _ in GENERAL_PURPOSE)
        summary[trace] = (family, ns, fastest)
        for s, kind in subjects:
            r = results[f"replay/{trace}/{s}"]
            replay_rows.append([family, trace, s, kind, int(r["events"]), fmt(ns[s], 2), fmt(ns[s] / fastest, 2),
                                fmt(ns[s] / ns["bump"], 1), fmt(r["failed_allocs"], 0)])
    pattern_rows = []
    for name, r in results.items():
        parts = name.split("/")
        if parts[0] in ("steady", "lifo", "shuffled"):
            pattern_rows.append([parts[0], parts[1], int(parts[2]), fmt(r["ns_per_op"], 2)])
    pattern_rows.sort(key=lambda row: (["steady", "lifo", "shuffled"].index(row[0]), row[1], row[2]))
    cg_rows = [[s, kind, trace_name(cg_trace), ops, fmt(ir, 1)] for s, kind, (ir, ops) in cg]

    header = provenance("speed_table.py", argv, inputs)
    os.makedirs(args.out_dir, exist_ok=True)
    replay_columns = ["family", "trace", "subject", "kind", "events", "ns_per_op", "ratio_to_fastest_general_purpose",
                      "ratio_to_floor", "failed_allocs"]
    write_csv(os.path.join(args.out_dir, "speed.csv"), header, replay_columns, replay_rows)
    write_csv(os.path.join(args.out_dir, "speed_patterns.csv"), header, PATTERN_COLUMNS, pattern_rows)
    cg_columns = ["subject", "kind", "trace", "operations", "instructions_per_op"]
    write_csv(os.path.join(args.out_dir, "speed_instructions.csv"), header, cg_columns, cg_rows)
    draw_speed_vs_live(args.out_dir, pattern_rows)

    names = [s for s, kind in subjects if kind != BY_ADDRESS_KIND]
    table = [[t, fam] + [fmt(ns[s]) for s in names] for t, (fam, ns, _) in summary.items()]
    by_address = [[t] + [f"{fmt(ns[p + '@address'])} ({ns[p + '@address'] / ns[p]:.2f}x)" for p in BY_ADDRESS] +
                  [fmt(ns[p + "@address"] / fastest, 2) for p in BY_ADDRESS] for t, (_, ns, fastest) in summary.items()]
    ratios = [[t] + [fmt(ns[s] / fastest, 2) for s in POLICIES] + [fmt(fastest)]
              for t, (_, ns, fastest) in summary.items()]
    real = [t for t, (fam, _, _) in summary.items() if fam in ("host", "program")]
    # Each target preset against the line (the fastest general-purpose allocator) and
    # against glibc, the one coalescing allocator among the four (docs/performance.md, "Where
    # things stand"), computed here so that its numbers come from the run, not by hand.
    target_rows = []
    for p in TARGETS if real else []:
        row = [p]
        for line_of in (lambda t: summary[t][2], lambda t: summary[t][1]["glibc"]):
            trace, ratio, within = worst_and_within({t: summary[t][1][p] / line_of(t) for t in real})
            row += [f"{ratio:.2f} ({trace})", f"{within} of {len(real)}"]
        target_rows.append(row)
    snapshots = [t for t, (fam, _, _) in summary.items() if fam == "deep learning" and not t.startswith(("gpt2", "llama"))]
    sections = [
        ["Every subject runs through the replay loop of `fraglab replay` over events parsed beforehand "
         "(docs/performance.md). ns/op is allocator time per event, the mean of the timed passes after one "
         "warm-up pass (in a full run, at least a million timed events per benchmark); fraglab's policies "
         "run over the host backend and are freed by the reference their allocation returned, as `fraglab replay` "
         "frees them (no address lookup; a program that frees by pointer pays for the address map, docs/performance.md, "
         "\"Freeing by reference\", and the section freed by address below); glibc, jemalloc, mimalloc and tcmalloc are loaded by LD_PRELOAD; bump "
         "never reuses memory and is the floor of the harness itself. "
         + (f"Each replay is the minimum of {args.rounds} rounds; a round" if args.rounds > 1 else "The one round")
         + " measures every subject on one trace before it moves to the next, so that a trace's ratios compare "
         "runs a minute or two apart on this shared machine."],
        ["## ns per operation", ""] + markdown_table(["trace", "family"] + names, table),
        ["## Ratio to the fastest general-purpose allocator", ""] +
        markdown_table(["trace"] + POLICIES + ["fastest general-purpose ns/op"], ratios),
        ["## Targets", "",
         f"Over the replays of real programs (the host and traced-program families): each preset's worst ratio "
         f"and the trace it is on, and on how many traces it is within {TARGET_RATIO:g}x, first of the fastest "
         "general-purpose allocator (the target's line), then of glibc, the one coalescing allocator among the four "
         "(docs/performance.md, \"Where things stand\").", ""] +
        (markdown_table(["preset", "worst ratio to the fastest", f"within {TARGET_RATIO:g}x of the fastest",
                         "worst ratio to glibc", f"within {TARGET_RATIO:g}x of glibc"], target_rows) + [""]
         if target_rows else ["- no replays of real programs here", ""]) +
        ["- pytorch_caching on the PyTorch snapshots: " +
         ", ".join(f"{t} {summary[t][1]['pytorch_caching']:.1f} ns/op" for t in snapshots) + " (target 50)"
         if snapshots else "- no PyTorch snapshots here"],
        ["## Freed by address", "",
         "A program plugged in by pointer (the PyTorch plug-in) frees by address, and the engine then keeps an "
         "address map; the same presets, measured in the same rounds, freed that way. ns/op freed by address "
         "(and its ratio to the same preset freed by reference), then the ratio to the fastest general-purpose "
         "allocator.", ""] +
        markdown_table(["trace"] + [f"{p} ns/op" for p in BY_ADDRESS] + [f"{p} ratio" for p in BY_ADDRESS],
                       by_address),
        [f"## Instructions per operation under callgrind ({cg_rows[0][2]})", "",
         "One pass after a warm-up pass; operations are the trace's events and the frees of the blocks it "
         "leaves live. Deterministic for a given build: a regression shows here whatever the machine's noise.",
         ""] + markdown_table(cg_columns, cg_rows),
        ["## ns/op against live blocks", "", "![ns/op against live blocks](speed_vs_live.svg)", "",
         f"Full data: speed_patterns.csv. {SCAN} is the classic address-ordered first fit, a scan by "
         f"definition, run to {SCAN_LIVE_MAX} live blocks (seg_best, whose exact best fit scans a size "
         f"class's list, too); first_fit makes the same decisions in O(log n) "
         "(tests/engine/test_equivalence.cpp, Equivalence)."],
    ]
    write_markdown(os.path.join(args.out_dir, "speed.md"), "Speed", "speed_table.py", header, sections)
    print(f"wrote {args.out_dir}/speed.csv, speed.md, speed_patterns.csv, speed_instructions.csv, speed_vs_live.svg",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
