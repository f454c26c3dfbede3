#!/usr/bin/python3
"""The offline planner at compiler scale: instances of 6,000 to 62,000 buffers, above the
size where the exact search stops and the reorder search takes over, each planned for 10 s
and for 60 s.

    experiments/scripts/reproduce/offline_scale.py [--fraglab PATH] [--out-dir results] [--work-dir DIR] [--quick]

Two kinds of generated instance, each at three sizes:
- perfect packings: a rectangle of 1 MiB by as many steps as buffers, cut at random across
  time or across offsets into the buffers (MiniMalloc's challenging benchmarks are of this
  kind). LOAD is 1 MiB at every step, so the optimum is known: 1 MiB.
- random lifetimes: starts uniform over half as many steps as buffers, nine in ten lifetimes
  short and heavy-tailed (Pareto, 3 steps and up), one in ten long (up to a quarter of the
  steps), sizes log-normal (median 22 KiB) in 64-byte multiples: the shape of the tensors of
  compiled training steps, where greedy placements end 2-3% above LOAD.

Each row: the best heuristic's height, the planner's at the time limit, the lower bound and
the gap between them, when the best was found, and the planner's peak memory (GNU time's
maximum resident set). Writes OUT/offline_scale.csv and .md.
"""

import argparse
import csv
import os
import random
import subprocess
import sys

from results_io import common_arguments, markdown_table, percent, provenance, write_atomically, write_csv, \
    write_markdown

HEIGHT = 1 << 20
SIZES = {"perfect": [6000, 20000, 60000], "random": [6000, 28000, 62000]}
QUICK_SIZES = {"perfect": [5000], "random": [5000]}
LIMITS, QUICK_LIMITS = ["10", "60"], ["1", "2"]


def perfect_packing(n, seed):
    rng = random.Random(seed)
    pieces = [(0, n, 0, HEIGHT)]
    while len(pieces) < n:
        k = rng.randrange(len(pieces))
        t0, t1, o0, o1 = pieces[k]
        across_time = t1 - t0 >= 2 and (o1 - o0 < 2 or rng.random() < 0.5)
        if across_time:
            cut = rng.randint(t0 + 1, t1 - 1)
            pieces[k], second = (t0, cut, o0, o1), (cut, t1, o0, o1)
        elif o1 - o0 >= 2:
            cut = rng.randint(o0 + 1, o1 - 1)
            pieces[k], second = (t0, t1, o0, cut), (t0, t1, cut, o1)
        else:
            continue
        pieces.append(second)
    rng.shuffle(pieces)
    return [(t0, t1, o1 - o0) for t0, t1, o0, o1 in pieces]


def random_lifetimes(n, seed):
    rng = random.Random(seed)
    steps = n // 2
    rows = []
    for _ in range(n):
        lower = rng.randrange(steps)
        length = max(1, int(rng.paretovariate(1.2) * 3)) if rng.random() < 0.9 else rng.randrange(1, steps // 4)
        rows.append((lower, min(steps, lower + length), int(rng.lognormvariate(10, 1.5)) // 64 * 64 + 64))
    return rows


def instance(work, kind, n):
    path = os.path.join(work, f"{kind}-{n}.csv")
    if not os.path.exists(path):
        rows = (perfect_packing if kind == "perfect" else random_lifetimes)(n, seed=n)
        write_atomically(path, "id,lower,upper,size\n" + "".join(f"{i},{a},{b},{s}\n" for i, (a, b, s) in enumerate(rows)))
    return path


def planned(fraglab, path, limit, work):
    """fraglab plan's row, with the planner's peak memory in MB."""
    memory = os.path.join(work, "plan.rss")
    command = ["/usr/bin/time", "-f", "%M", "-o", memory, fraglab, "plan", path, "--time-limit", limit, "--format", "csv"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"offline_scale.py: `{' '.join(command)}` exited {done.returncode}:\n{done.stderr}")
    row = next(csv.DictReader(done.stdout.splitlines()))
    with open(memory) as f:
        row["peak_mb"] = f"{int(f.read().split()[-1]) / 1024:.0f}"
    return row


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "offline_scale")
    args = parser.parse_args(argv)
    work = args.work_dir + ("-quick" if args.quick else "")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out_dir, exist_ok=True)
    sizes, limits = (QUICK_SIZES, QUICK_LIMITS) if args.quick else (SIZES, LIMITS)

    rows = []
    for kind, ns in sizes.items():
        for n in ns:
            path = instance(work, kind, n)
            for limit in limits:
                r = planned(args.fraglab, path, limit, work)
                rows.append([kind, n, limit, r["load_bytes"], r["lower_bound_bytes"], r["heuristic"], r["heuristic_bytes"],
                             r["height_bytes"], r["found_by"], r["gap_to_lower"], r["seconds_to_best"], r["search_nodes"],
                             r["peak_mb"]])
                print(f"{kind}-{n} at {limit} s: planned", file=sys.stderr)

    columns = ["kind", "buffers", "time_limit_s", "load_bytes", "lower_bound_bytes", "heuristic", "heuristic_bytes",
               "height_bytes", "found_by", "gap_to_lower", "seconds_to_best", "search_nodes", "peak_mb"]
    header = provenance("offline_scale.py", argv, [("instances", "generated by the script (seed: the buffer count)")])
    write_csv(os.path.join(args.out_dir, "offline_scale.csv"), header, columns, rows)
    table = [[r[0], r[1], r[2], r[3], r[4], f"{r[6]} ({r[5]})", percent(int(r[6]) / int(r[4]) - 1), r[7],
              percent(r[9]), r[10], r[12]] for r in rows]
    write_markdown(os.path.join(args.out_dir, "offline_scale.md"), "The offline planner at compiler scale", "offline_scale.py",
                   header, [[
                       "`fraglab plan INSTANCE --time-limit S` on generated instances above the exact search's 4,000 "
                       "buffers, where the reorder search improves the best heuristic (docs/offline.md). For perfect "
                       "packings the optimum is LOAD; elsewhere it lies between the lower bound and the height. "
                       "`above lower` is the height over the lower bound, minus 1.", ""] +
                       markdown_table(["kind", "buffers", "limit (s)", "LOAD", "lower bound", "best heuristic",
                                       "heuristic above lower (%)", "height", "above lower (%)", "time to best (s)",
                                       "peak memory (MB)"], table)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
