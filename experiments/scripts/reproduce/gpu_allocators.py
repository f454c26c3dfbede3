#!/usr/bin/python3
"""Table 2: GPU allocators on deep-learning workloads: peak reserved, frag4, external
fragmentation and the smallest device that runs the workload.

    experiments/scripts/reproduce/gpu_allocators.py [--fraglab PATH] [--out-dir results] [--work-dir DIR] [--quick]

Workloads (experiments/scripts/reproduce/dl_workloads.py): GPT-2-small training with fixed, long-tailed and
checkpointed sequences; Llama-3-8B-shaped serving with contiguous and paged KV caches; the
PyTorch snapshots in ../shared/traces/pytorch when present. Policies: the tf_bfc,
pytorch_caching, pytorch_expandable and rmm_pool presets, and tlsf, best_fit and
first_fit growing by exact acquisitions of the simulated device (what cudaMalloc of each
shortfall would do).

Writes OUT/gpu_allocators.csv, .md and .svg (frag4 per workload).
"""

import argparse
import os
import sys

import dl_workloads
from results_io import common_arguments, figures, fraglab_rows, markdown_table, provenance, write_csv, write_markdown

POLICIES = ["tf_bfc", "pytorch_caching", "pytorch_expandable", "rmm_pool", "tlsf", "best_fit", "first_fit"]
GiB = 1 << 30


def gib(x):
    return f"{int(x) / GiB:.2f}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "dl")
    args = parser.parse_args(argv)

    traces, inputs = dl_workloads.workloads(args.fraglab, args.work_dir + ("-quick" if args.quick else ""), args.quick)
    policies = ",".join(POLICIES)
    rows = []
    for name, path in traces.items():
        replayed = fraglab_rows(args.fraglab, ["replay", path, "-p", policies, "--backend", "simulated",
                                               "--jobs", args.jobs])
        capacity = {r["policy"]: r for r in fraglab_rows(args.fraglab, ["capacity", path, "-p", policies,
                                                                        "--backend", "simulated"])}
        for r in replayed:
            rows.append([name, r["policy"], r["events"], r["peak_live_bytes"], r["peak_reserved_bytes"], r["frag4"],
                         r["ext_frag_at_peak"], r["ext_frag_avg"], capacity[r["policy"]]["min_capacity_bytes"]])
        print(f"{name}: replayed", file=sys.stderr)

    columns = ["workload", "policy", "events", "peak_live_bytes", "peak_reserved_bytes", "frag4", "ext_frag_at_peak",
               "ext_frag_avg", "min_capacity_bytes"]
    header = provenance("gpu_allocators.py", argv, [(f"input {k}", v) for k, v in inputs.items()])
    os.makedirs(args.out_dir, exist_ok=True)
    write_csv(os.path.join(args.out_dir, "gpu_allocators.csv"), header, columns, rows)

    sections = [["Sizes in GiB. frag4 = peak reserved / peak live - 1; external fragmentation is TF's "
                 "(free - largest free) / free, at peak reserved and averaged over the run; min capacity is "
                 "the smallest device (bisection, to the backend's granularity) on which no allocation fails. "
                 "Every policy replays on the simulated device backend."]]
    for name in traces:
        table = [[r[1], gib(r[4]), f"{100 * float(r[5]):.1f}", f"{100 * float(r[6]):.1f}", f"{100 * float(r[7]):.1f}",
                  gib(r[8])] for r in rows if r[0] == name]
        live = next(r[3] for r in rows if r[0] == name)
        sections.append([f"## {name} ({inputs[name]}; peak live {gib(live)} GiB)", ""] + markdown_table(
            ["policy", "peak reserved", "frag4 %", "ext frag at peak %", "ext frag avg %", "min capacity"], table))
    best = {}
    for name in traces:
        cells = [r for r in rows if r[0] == name]
        best[name] = min(cells, key=lambda r: int(r[8]))[1]
    sections.append(["## Smallest device per workload", ""] + markdown_table(
        ["workload", "policy needing the least memory"], [[n, p] for n, p in best.items()]))
    write_markdown(os.path.join(args.out_dir, "gpu_allocators.md"), "GPU allocators on deep-learning workloads",
                   "gpu_allocators.py", header, sections + [["![frag4 per workload](gpu_allocators.svg)"]])

    figures(args.out_dir, ["trace", "policy", "frag4"], [[r[0], r[1], r[5]] for r in rows],
            [("bars", "gpu_allocators.svg", ["-y", "frag4"])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
