#!/usr/bin/python3
"""How far is each allocator from the best offline placement? Every preset's peak reserved
bytes over the best placement `fraglab plan` finds for the same buffers (every lifetime
known in advance), on the host traces, the PyTorch snapshots and the generated deep-learning
workloads; the planner itself on MiniMalloc's challenging benchmarks; and the planner beside
XLA's own buffer assignment of real JAX models.

    experiments/scripts/reproduce/offline_gap.py [--fraglab PATH] [--out-dir results] [--work-dir DIR]
                               [--time-limit S] [--jax-python PY] [--quick]

gap_to_offline = peak reserved / offline best - 1 (docs/offline.md). Every preset runs on the
simulated backend (separate segments, as a GPU's), so the rows compare like with like; the
offline best is the planner's lowest placement in --time-limit seconds, with its proven
lower bound beside it (where the two meet, the best is optimal).

XLA: each model of experiments/scripts/reproduce/xla_models.py is compiled by JAX on the CPU (PY: a
Python with JAX, default the project's .venv), its buffer assignment read by xla_buffers.py
(every value XLA places, and the preallocated temp allocation alone), and planned by
`fraglab plan --lifetimes inclusive`; both placements are checked by
tests/policies/offline/check_placement.py.

Writes OUT/offline_gap.csv (every row), offline_xla.csv (the XLA rows), .md (the tables) and
.svg (the gap per preset).
"""

import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys

import dl_workloads
import program_traces
import xla_buffers
from results_io import ROOT, SHARED_TRACES, VENV_PYTHON, common_arguments, figures, file_digest, fraglab_rows, \
    markdown_table, percent, provenance, run, write_csv, write_markdown

PRESETS = ["tf_bfc", "pytorch_caching", "pytorch_expandable", "dlmalloc", "tlsf", "rmm_pool", "best_fit", "first_fit",
           "first_fit_lifo", "first_fit_fifo", "next_fit", "worst_fit", "buddy", "segregated_pow2"]

# MiniMalloc's challenging benchmarks (../shared/traces/offline/README.md): LOAD, and the
# least height MiniMalloc found (its README: within 60 s for D and J, optimal elsewhere).
MINIMALLOC = {"A": 1048576, "B": 1048576, "C": 1039360, "D": 1045504, "E": 1048576, "F": 1048576, "G": 1048576,
              "H": 1048576, "I": 1048576, "J": 1041408, "K": 1048576}
CAPACITY = 1048576
# The models --quick compiles (at a tenth of their width): a loop and a training step.
XLA_QUICK = "mlp_training_step,lstm_scan_training_step"
XLA_COLUMNS = ["model", "kind", "scope", "buffers", "xla_values", "xla_allocations", "load_bytes", "lower_bound_bytes",
               "xla_height_bytes", "fraglab_height_bytes", "optimal", "xla_above_lower", "fraglab_vs_xla",
               "seconds_to_best"]
CHECK_PLACEMENT = os.path.join(ROOT, "tests", "policies", "offline", "check_placement.py")


def ratio(a, b):
    return f"{int(a) / int(b) - 1:.4f}"


def xla_rows(fraglab, python, work, limit, quick):
    """One row a model and scope: XLA's height for its buffers beside the planner's (XLA_COLUMNS);
    and the JAX version that compiled them."""
    dumps = os.path.join(work, "xla-dumps")
    shutil.rmtree(dumps, ignore_errors=True)  # a dump left from another run would be read as this one's
    run([python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_models.py"), dumps] +
        (["--quick", "--only", XLA_QUICK] if quick else []))
    with open(os.path.join(dumps, "models.csv")) as f:
        models = list(csv.DictReader(f))
    rows = []
    for m in models:
        for scope in ("assigned", "temp"):
            buffers, xla = xla_buffers.problem(os.path.join(dumps, m["model"]), temp_only=scope == "temp")
            if not buffers:
                continue
            stem = os.path.join(dumps, f"{m['model']}.{scope}")
            xla_buffers.write(stem + ".csv", buffers, False)
            xla_buffers.write(stem + ".xla.csv", buffers, True)
            r = fraglab_rows(fraglab, ["plan", stem + ".csv", "--lifetimes", "inclusive", "--time-limit", limit,
                                       "--placement", stem + ".fraglab.csv"])[0]
            for placement in (stem + ".xla.csv", stem + ".fraglab.csv"):
                run(["/usr/bin/python3", CHECK_PLACEMENT, placement, "--inclusive"])
            rows.append([m["model"], m["kind"], scope, len(buffers), xla["xla_values"], xla["xla_allocations"],
                         r["load_bytes"], r["lower_bound_bytes"], xla["xla_height_bytes"], r["height_bytes"],
                         r["optimal"], ratio(xla["xla_height_bytes"], r["lower_bound_bytes"]),
                         ratio(r["height_bytes"], xla["xla_height_bytes"]), r["seconds_to_best"]])
        print(f"XLA {m['model']}: planned", file=sys.stderr)
    return rows, models[0]["jax"] if models else ""


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    common_arguments(parser, "dl")
    parser.add_argument("--time-limit", default=None, help="seconds of planning per trace (default 10; 1 with --quick)")
    parser.add_argument("--jax-python", default=VENV_PYTHON, help="a Python with JAX (default: the project's .venv)")
    args = parser.parse_args(argv)
    if not os.path.exists(args.jax_python):
        sys.exit(f"offline_gap.py: no Python at {args.jax_python}: bash .ci/install-deps tests makes .venv, or give "
                 "--jax-python")
    limit = args.time_limit or ("1" if args.quick else "10")

    traces, inputs = dl_workloads.workloads(args.fraglab, args.work_dir + ("-quick" if args.quick else ""), args.quick)
    host, checksums = program_traces.host_traces(args.quick)
    traces |= host
    inputs |= checksums

    rows = []
    for name, path in traces.items():
        results = fraglab_rows(args.fraglab, ["replay", path, "-p", ",".join(PRESETS), "--backend", "simulated",
                                              "--repeat", "0", "--offline", "--offline-time-limit", limit,
                                              "--jobs", args.jobs])
        for r in results:
            rows.append([name, r["trace"], r["policy"], r["peak_live_bytes"], r["peak_reserved_bytes"],
                         r["offline_best_bytes"], r["offline_lower_bytes"], r["offline_optimal"], r["gap_to_offline"],
                         r["failed_allocs"]])
        print(f"{name}: replayed and planned", file=sys.stderr)

    bench = []
    folder = os.path.join(SHARED_TRACES, "offline", "minimalloc-challenging")
    if os.path.isdir(folder) and not args.quick:
        for label in MINIMALLOC:
            path = os.path.join(folder, f"{label}.{CAPACITY}.csv")
            # MiniMalloc's question first: a placement within the capacity, and when it was
            # found; then, where none was, the lowest height without one.
            command = [args.fraglab, "plan", path, "--time-limit", limit, "--format", "csv"]
            done = subprocess.run(command + ["--capacity", str(CAPACITY)], capture_output=True, text=True)
            if done.returncode not in (0, 1):
                sys.exit(f"offline_gap.py: `{' '.join(command)}` exited {done.returncode}:\n{done.stderr}")
            fit = next(csv.DictReader(io.StringIO(done.stdout))) if done.returncode == 0 else None
            r = fit or fraglab_rows(args.fraglab, ["plan", path, "--time-limit", limit])[0]
            bench.append([label, r["buffers"], r["load_bytes"], r["height_bytes"], r["lower_bound_bytes"], r["optimal"],
                          MINIMALLOC[label], fit["seconds_to_fit"] if fit else "none found", r["heuristic"],
                          r["heuristic_bytes"]])
            inputs[f"{label}.{CAPACITY}.csv"] = f"sha256 {file_digest(path)}"
            print(f"MiniMalloc {label}: planned", file=sys.stderr)

    try:
        xla, jax_version = xla_rows(args.fraglab, args.jax_python, args.work_dir + ("-quick" if args.quick else ""), limit,
                                    args.quick)
    except xla_buffers.DumpError as e:
        sys.exit(f"offline_gap.py: {e}")
    inputs["XLA models"] = f"experiments/scripts/reproduce/xla_models.py{' --quick' if args.quick else ''}, JAX {jax_version} on the CPU"

    columns = ["workload", "trace", "policy", "peak_live_bytes", "peak_reserved_bytes", "offline_best_bytes",
               "offline_lower_bytes", "offline_optimal", "gap_to_offline", "failed_allocs"]
    header = provenance("offline_gap.py", argv, [("offline time limit", f"{limit} s")] +
                        [(f"input {k}", v) for k, v in inputs.items()])
    os.makedirs(args.out_dir, exist_ok=True)
    write_csv(os.path.join(args.out_dir, "offline_gap.csv"), header, columns, rows)

    traces_seen = list(dict.fromkeys(r[1] for r in rows))
    value = {(r[1], r[2]): r for r in rows}
    table = []
    for preset in PRESETS:
        gaps = [float(value[(t, preset)][8]) for t in traces_seen if (t, preset) in value and value[(t, preset)][9] == "0"]
        table.append([preset] + [percent(value[(t, preset)][8]) if (t, preset) in value else "" for t in traces_seen] +
                     [percent(statistics.median(gaps)) if gaps else ""])
    table.sort(key=lambda row: float(row[-1]) if row[-1] else float("inf"))
    bests = [[t, value[(t, PRESETS[0])][5], value[(t, PRESETS[0])][6], value[(t, PRESETS[0])][7],
              value[(t, PRESETS[0])][3]] for t in traces_seen]
    sections = [[
        "gap_to_offline in percent: a preset's peak reserved bytes over the best placement the offline planner "
        "found for the trace's buffers, minus 1 (lower is better; 0 is as good as knowing every lifetime in "
        f"advance). Every preset on the simulated backend; the planner had {limit} s a trace. Presets sorted "
        "by their median over the traces."],
        ["## Gap to the offline best (%)", ""] + markdown_table(["preset"] + traces_seen + ["median"], table),
        ["## The offline best of each trace", "",
         "LOAD (peak live bytes) is the floor no placement goes below; the lower bound is LOAD or what the "
         "planner's search proved above it; optimal where the best meets it."] + [""] +
        markdown_table(["trace", "offline best (bytes)", "lower bound (bytes)", "optimal", "LOAD (bytes)"], bests)]
    if bench:
        sections.append(["## The planner on MiniMalloc's challenging benchmarks", "",
                         f"`fraglab plan X.{CAPACITY}.csv --capacity {CAPACITY} --time-limit {limit}` on MiniMalloc's "
                         "eleven challenging benchmarks (../shared/traces/offline): `within capacity` is when the "
                         "first placement within the capacity was found, and the height the lowest found in the time; "
                         "where none fitted, the height is that of the same command without --capacity. MiniMalloc's "
                         "heights are those ../shared/traces/offline/README.md states: all within the capacity, in "
                         "0.7-6.4 s of CPU each on this kind of machine.", ""] +
                        markdown_table(["benchmark", "buffers", "LOAD", "height", "lower bound", "optimal",
                                        "MiniMalloc's height", f"within {CAPACITY} (s)", "best heuristic",
                                        "its height"], bench))
    write_csv(os.path.join(args.out_dir, "offline_xla.csv"), header, XLA_COLUMNS, xla)
    sections.append(["## The planner beside XLA's buffer assignment", "",
                     "JAX compiled each model on the CPU (experiments/scripts/reproduce/xla_models.py); its buffer assignment "
                     "and live ranges, read by experiments/scripts/reproduce/xla_buffers.py, give the buffers XLA places and "
                     "where it places them. `assigned`: every value XLA assigns outside the entry parameters, "
                     "constants and thread-local allocations, its allocations laid end to end; `temp`: the "
                     "preallocated temp allocation alone, which XLA's heap simulator packs. Values XLA shares in "
                     "place are one buffer. Lifetimes are XLA's, inclusive of their last step (`fraglab plan "
                     f"--lifetimes inclusive --time-limit {limit}`); both placements pass "
                     "tests/policies/offline/check_placement.py. `XLA above lower` is XLA's height over the proven "
                     "lower bound, minus 1; `fraglab vs XLA` the planner's height over XLA's, minus 1.", ""] +
                    markdown_table(["model", "kind", "scope", "buffers", "LOAD", "lower bound", "XLA's height",
                                    "fraglab's height", "optimal", "XLA above lower (%)", "fraglab vs XLA (%)"],
                                   [[r[0], r[1], r[2], r[3], r[6], r[7], r[8], r[9], r[10], percent(r[11]),
                                     percent(r[12])] for r in xla]))
    write_markdown(os.path.join(args.out_dir, "offline_gap.md"), "Every preset's distance to the best offline placement",
                   "offline_gap.py", header, sections + [["![gap to the offline best](offline_gap.svg)"]])
    figures(args.out_dir, ["trace", "policy", "gap_to_offline"], [[r[1], r[2], r[8]] for r in rows],
            [("bars", "offline_gap.svg", ["-y", "gap_to_offline"])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
