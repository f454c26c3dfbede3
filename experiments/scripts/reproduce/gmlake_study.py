#!/usr/bin/python3
"""GMLake's virtual memory stitching against PyTorch's caching allocator, with and without
expandable segments: peak reserved, frag4, GMLake's utilization and the smallest device.

    experiments/scripts/reproduce/gmlake_study.py [--fraglab PATH] [--out-dir results] [--work-dir DIR] [--quick]

Workloads: transformer training with variable sequence lengths (`fraglab gen transformer`,
where PyTorch's allocator fragments: the largest activations change size every iteration),
and the PyTorch snapshots in ../shared/traces/pytorch and pytorch-cases when present.
Policies: pytorch_caching, pytorch_expandable, gmlake at its defaults (stitching requests of
512 MiB and more) and gmlake stitching from 64 MiB (GMLake's authors lower fragLimit for
smaller models).

Writes OUT/gmlake.csv, .md and .svg (frag4 per workload).
"""

import argparse
import os
import sys

import dl_workloads
from results_io import common_arguments, figures, fraglab_rows, markdown_table, provenance, write_csv, write_markdown

POLICIES = ["pytorch_caching", "pytorch_expandable", "gmlake", "gmlake:frag_limit=64MiB@gmlake-64MiB"]
GiB = 1 << 30

# (name, gen arguments, quick gen arguments): GPT-2 small and medium shapes, long-tailed and
# uniform sequence lengths, with and without activation checkpointing.
GENERATED = [
    ("gpt2-longtail", ["transformer", "--seq-dist", "long-tail", "--seq-len", "128", "--seq-len-max", "2048",
                       "--iterations", "8"],
     ["transformer", "--layers", "2", "--seq-dist", "long-tail", "--seq-len", "128", "--seq-len-max", "2048"]),
    ("gpt2-uniform", ["transformer", "--seq-dist", "uniform", "--seq-len", "256", "--seq-len-max", "1024",
                      "--batch", "16", "--iterations", "8"],
     ["transformer", "--layers", "2", "--seq-dist", "uniform", "--seq-len", "256", "--seq-len-max", "1024"]),
    ("gpt2-medium-longtail-ckpt", ["transformer", "--layers", "24", "--hidden", "1024", "--heads", "16",
                                   "--seq-dist", "long-tail", "--seq-len", "128", "--seq-len-max", "2048",
                                   "--checkpointing", "true", "--iterations", "8"],
     ["transformer", "--layers", "2", "--hidden", "1024", "--heads", "16", "--seq-dist", "long-tail",
      "--seq-len", "128", "--seq-len-max", "2048", "--checkpointing", "true"]),
]


def gib(x):
    return f"{int(x) / GiB:.2f}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "gmlake")
    args = parser.parse_args(argv)

    traces, inputs = dl_workloads.workloads(args.fraglab, args.work_dir + ("-quick" if args.quick else ""), args.quick,
                                            GENERATED, ("pytorch", "pytorch-cases"))
    policies = ",".join(POLICIES)
    rows = []
    for name, path in traces.items():
        replayed = fraglab_rows(args.fraglab, ["replay", path, "-p", policies, "--jobs", args.jobs])
        capacity = {(r["trace"], r["policy"]): r for r in fraglab_rows(args.fraglab, ["capacity", path, "-p", policies,
                                                                                     "--jobs", args.jobs])}
        for r in replayed:
            # A snapshot of several devices replays as one row per device (TRACE@cuda:N).
            label = name + r["trace"][len(os.path.basename(path)):]
            rows.append([label, r["policy"], r["events"], r["peak_live_bytes"], r["peak_reserved_bytes"], r["frag4"],
                         r["utilization"], capacity[(r["trace"], r["policy"])]["min_capacity_bytes"]])
        print(f"{name}: replayed", file=sys.stderr)

    columns = ["workload", "policy", "events", "peak_live_bytes", "peak_reserved_bytes", "frag4", "utilization",
               "min_capacity_bytes"]
    header = provenance("gmlake_study.py", argv, [(f"input {k}", v) for k, v in inputs.items()])
    os.makedirs(args.out_dir, exist_ok=True)
    write_csv(os.path.join(args.out_dir, "gmlake.csv"), header, columns, rows)

    workloads_seen = list(dict.fromkeys(r[0] for r in rows))
    sections = [["Sizes in GiB. frag4 = peak reserved / peak live - 1; utilization = peak allocated / peak "
                 "reserved (GMLake's measure); min capacity = the smallest device on which no allocation fails "
                 "(bisection to 2 MiB). Every policy replays on the simulated device backend; gmlake's reserved "
                 "bytes are physical pages, its stitched ranges' virtual bytes are not counted in them. A "
                 "snapshot that holds a recorded state and no events after it (the `-state` cases) compares "
                 "pytorch_caching's restored segments, the layout its history left, with the others' fresh "
                 "placement of the same live blocks: there the rows differ by history, not by policy."]]
    for name in workloads_seen:
        cells = [r for r in rows if r[0] == name]
        table = [[r[1], gib(r[4]), f"{100 * float(r[5]):.1f}", f"{100 * float(r[6]):.1f}", gib(r[7])] for r in cells]
        source = inputs.get(name, inputs.get(name.split("@")[0], ""))
        sections.append([f"## {name} ({source}; peak live {gib(cells[0][3])} GiB)", ""] + markdown_table(
            ["policy", "peak reserved", "frag4 %", "utilization %", "min capacity"], table))
    summary = []
    for name in workloads_seen:
        by = {r[1]: r for r in rows if r[0] == name}
        base = int(by["pytorch_caching"][4])
        summary.append([name] + [f"{100 * (int(by[p][4]) / base - 1):+.1f}" if base else "-"
                                 for p in ("pytorch_expandable", "gmlake", "gmlake-64MiB")])
    sections.append(["## Peak reserved against pytorch_caching (%)", ""] + markdown_table(
        ["workload", "pytorch_expandable", "gmlake", "gmlake-64MiB"], summary))
    write_markdown(os.path.join(args.out_dir, "gmlake.md"), "GMLake's stitching against PyTorch's allocator",
                   "gmlake_study.py", header, sections + [["![frag4 per workload](gmlake.svg)"]])

    figures(args.out_dir, ["trace", "policy", "frag4"], [[r[0], r[1], r[5]] for r in rows],
            [("bars", "gmlake.svg", ["-y", "frag4"])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
