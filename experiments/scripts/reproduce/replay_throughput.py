#!/usr/bin/python3
"""Replay throughput per policy, and replay memory, on the host traces and a 10M-event trace.

    experiments/scripts/reproduce/replay_throughput.py [--fraglab PATH] [--repeat N] [--policies P,P...]
                                     [--allocations N] [--out-dir results] [--work-dir DIR]

For every policy `fraglab policies --names` lists (or --policies), replays each trace in
../shared/traces/host and a generated trace of 2 x --allocations events (default 10M),
stored in the native binary format so that it is streamed, once per process:

  events_per_s   1e9 / ns_per_op, where ns_per_op is fraglab's median of --repeat timed
                 passes; the clock runs around the allocator's work only (docs/metrics.md)
  peak_rss_kib   the replaying process's peak resident set (GNU time's %M)

Writes OUT_DIR/replay_throughput.csv and .md, each headed by the command, commit, machine
and date that produced them. Timings on a shared machine are noisy: compare ratios within
one run.
"""

import argparse
import csv
import io
import os
import subprocess
import sys

from results_io import (ROOT, DEFAULT_FRAGLAB, SHARED_TRACES, at_least_one, distinct_names, markdown_table, output_dir,
                        program_file, provenance, run, write_csv, write_markdown)


def replay(fraglab, trace, policy, repeat):
    """(row dict of fraglab's CSV, peak RSS in KiB) for one replay in its own process.

    GNU time measures the RSS: Linux carries a process's peak RSS across fork and exec, so a
    child forked from this interpreter would report at least the interpreter's own.
    """
    rss_file = f"/tmp/replay_throughput.rss.{os.getpid()}"
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file,
           fraglab, "replay", trace, "-p", policy, "--repeat", str(repeat), "--format", "csv"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"replay_throughput.py: {' '.join(cmd)} failed:\n{done.stderr}")
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
    os.remove(rss_file)
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    return rows[0], rss


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--fraglab", default=DEFAULT_FRAGLAB, type=program_file)
    parser.add_argument("--repeat", type=at_least_one, default=3)
    parser.add_argument("--policies", type=distinct_names, help="comma-separated (default: every policy)")
    parser.add_argument("--allocations", type=at_least_one, default=5_000_000)
    parser.add_argument("--out-dir", type=output_dir, default=os.path.join(ROOT, "results"))
    parser.add_argument("--work-dir", default=os.path.join(ROOT, "build", "data"))
    args = parser.parse_args(argv)

    fraglab = args.fraglab
    policies = args.policies or run([fraglab, "policies", "--names"]).split()
    host = os.path.join(SHARED_TRACES, "host")
    traces = sorted(os.path.join(host, f) for f in os.listdir(host) if f.endswith(".csv")) if os.path.isdir(host) else []
    data = args.work_dir
    os.makedirs(data, exist_ok=True)
    generated = os.path.join(data, f"random-{2 * args.allocations}.fbin")
    if not os.path.exists(generated):
        run([fraglab, "gen", "random", "--seed", "1", "--allocations", str(args.allocations), "-o", generated])
    traces.append(generated)
    # The same events as native text, which is read into memory: the contrast that shows
    # what streaming saves. Replayed under one policy only.
    as_text = generated[: -len(".fbin")] + ".txt"
    if not os.path.exists(as_text):
        run([fraglab, "convert", generated, as_text])
    contrast_policy = "tlsf" if "tlsf" in policies else policies[0]

    columns = ["trace", "policy", "events", "ns_per_op", "events_per_s", "peak_rss_kib", "peak_live_bytes",
               "peak_reserved_bytes", "index_steps_per_op"]
    rows = []
    for trace, policy in [(t, p) for t in traces for p in policies] + [(as_text, contrast_policy)]:
        r, rss = replay(fraglab, trace, policy, args.repeat)
        ns = float(r["ns_per_op"])
        rows.append([r["trace"], policy, r["events"], r["ns_per_op"], f"{1e9 / ns:.0f}" if ns > 0 else "0", str(rss),
                     r["peak_live_bytes"], r["peak_reserved_bytes"], r["index_steps_per_op"]])
        print(f"{r['trace']:28} {policy:20} {r['ns_per_op']:>8} ns/event {rss:>8} KiB", file=sys.stderr)

    header = provenance("replay_throughput.py", argv)
    os.makedirs(args.out_dir, exist_ok=True)
    write_csv(os.path.join(args.out_dir, "replay_throughput.csv"), header, columns, rows)
    write_markdown(os.path.join(args.out_dir, "replay_throughput.md"), "Replay throughput", "replay_throughput.py", header, [
        ["Events per second = 1e9 / ns_per_op (median of the timed passes, allocator work only); "
         "peak RSS of the whole `fraglab replay` process. The generated trace is native binary and "
         "streamed, so its RSS reflects live blocks, not its length; the last row replays the same "
         "events from native text, which is read into memory, for contrast."],
        markdown_table(columns, rows)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
