#!/usr/bin/python3
"""The GPU speed table: fraglab's presets over real device memory against CUDA's and
PyTorch's own allocators, on the PyTorch snapshots replayed through the device.

    experiments/scripts/device/gpu_speed_table.py [--build DIR] [--out-dir results] [--iterations N] [--min-events N]
                                   [--rounds N] [--snapshot S.pickle]...

Needs a CUDA device (experiments/scripts/device/run_on_gpu.sh runs it where one is lent). Subjects,
each on the same event sequences:

  tf_bfc, pytorch_caching, tlsf   fraglab presets over the cuda backend (cudaMalloc'd regions),
                                  through the replay loop of `fraglab replay` (bench_allocators)
  cudaMalloc, cudaMallocAsync     CUDA's own, per event (benchmarks/cuda_runtime_allocators.hpp)
  torch                           PyTorch's caching allocator through torch.cuda.caching_allocator_alloc
                                  (benchmarks/bench_torch_allocator.py); Python calls, so its
                                  python_call_ns column gives the interpreter's share
  tf_bfc, pytorch_caching, tlsf   again over the host backend, in a table of their own: the
  (fraglab over host)             difference is the cost of the cuda backend's cudaMalloc and
                                  cudaFree where a snapshot grows or releases segments
  tf_bfc@address, ...             the presets over both backends freed by address (--free-by
                                  address), as the PyTorch plug-in and cudaFree free: by pointer,
                                  through the engine's address map, not by the allocation's record

ns/op is host-side time per event after a warm-up pass. Writes OUT/gpu_speed.csv and
OUT/gpu_speed.md, which name the device.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# The modules the results scripts share (experiments/scripts/reproduce/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reproduce"))
from results_io import (ROOT, SHARED_TRACES, at_least_one, file_digest, input_file, markdown_table, output_dir,
                        provenance, repeated_trace_name, run, trace_name, write_csv, write_markdown)
from speed_measurement import bench, fmt, preload_env

PRESETS = ["tf_bfc", "pytorch_caching", "tlsf"]
CUDA_OWN = ["cudaMalloc", "cudaMallocAsync"]


def torch_rows(traces, fraglab, scratch, iterations):
    """{trace: row} of bench_torch_allocator.py, or {} (with the reason) where PyTorch cannot run."""
    texts = []
    for name, path in traces.items():
        text = os.path.join(scratch, name + ".trace")
        run([fraglab, "convert", path, text, "--to", "text"])
        texts.append(text)
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "bench_torch_allocator.py"), "--iterations",
           str(iterations)] + texts
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 77:
        print(f"gpu_speed_table.py: no PyTorch column: {done.stderr.strip()}", file=sys.stderr)
        return {}, done.stderr.strip()
    if done.returncode != 0:
        sys.exit(f"gpu_speed_table.py: {' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["trace"]: r for r in rows}, f"torch {rows[0]['torch']}" if rows else ""


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the Meson build, with CUDA")
    parser.add_argument("--out-dir", type=output_dir, default=os.path.join(ROOT, "results"))
    parser.add_argument("--iterations", type=at_least_one, default=5)
    parser.add_argument("--min-events", type=at_least_one, default=200_000,
                        help="more passes where a trace is short: a 4k-event snapshot's 5 passes time a few "
                             "milliseconds, which the host's noise swamps (cudaMalloc's passes take ~50 us an event)")
    parser.add_argument("--rounds", type=at_least_one, default=3,
                        help="rounds of every measurement; a subject's ns/op is its minimum over them, the "
                             "estimate of the unloaded time (the GPU machine's host side is noisy)")
    parser.add_argument("--snapshot", action="append", default=[], type=input_file,
                        help="another snapshot to replay (repeatable)")
    args = parser.parse_args(argv)
    bench_bin = os.path.join(args.build, "benchmarks", "bench_allocators")
    fraglab = os.path.join(args.build, "experiments", "fraglab")
    for b in (bench_bin, fraglab):
        if not os.path.exists(b):
            sys.exit(f"gpu_speed_table.py: {b} is missing: build with `meson compile -C {args.build}`")

    folder = os.path.join(SHARED_TRACES, "pytorch")
    snapshots = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".pickle")) \
        if os.path.isdir(folder) else []
    clash = repeated_trace_name(snapshots + args.snapshot)
    if clash:
        sys.exit(f"gpu_speed_table.py: {clash}")
    traces = {trace_name(p): p for p in snapshots + args.snapshot}
    if not traces:
        sys.exit("gpu_speed_table.py: no snapshots: ../shared/traces/pytorch is empty and no --snapshot was given")
    inputs = [(f"input {n}", f"{os.path.basename(p)}, sha256 {file_digest(p)}") for n, p in traces.items()]

    def fastest(runs):
        """{name: row} with each benchmark's row of least ns/op over the rounds."""
        return {k: min((r[k] for r in runs), key=lambda row: row["ns_per_op"]) for k in runs[0]}

    cuda_runs, host_runs, torch_runs = [], [], []
    address_runs = {"cuda": [], "host": []}
    with tempfile.TemporaryDirectory(prefix="gpu_speed_table.") as scratch:
        def presets(*options):
            """bench_allocators' rows for the presets on every snapshot, with these options."""
            return bench(bench_bin, list(options) + ["--policies", ",".join(PRESETS), "--patterns", "none",
                                                     "--iterations", str(args.iterations), "--min-events",
                                                     str(args.min_events)] + list(traces.values()),
                         preload_env(None), scratch)

        for r in range(args.rounds):
            cuda_runs.append(presets("--backend", "cuda", "--cuda-baselines"))
            with open(os.path.join(scratch, "bench.json")) as f:
                device = json.load(f)["context"].get("cuda_device", "unknown")
            # The same presets over host memory, on the same machine: what the cuda backend adds.
            host_runs.append(presets("--backend", "host"))
            for backend, runs in address_runs.items():
                runs.append(presets("--backend", backend, "--free-by", "address"))
            torch_run, torch_version = torch_rows(traces, fraglab, scratch, args.iterations)
            torch_runs.append(torch_run)
            print(f"gpu_speed_table.py: round {r + 1} of {args.rounds} measured", file=sys.stderr)
    results, host = fastest(cuda_runs), fastest(host_runs)
    torch = fastest(torch_runs) if torch_runs[0] else {}
    by_address = {backend: fastest(runs) for backend, runs in address_runs.items()}

    rows, table, host_table, address_table = [], [], [], []
    for name in traces:
        ns = {s: results[f"replay/{name}/{s}"]["ns_per_op"] for s in PRESETS + CUDA_OWN}

        def bench_row(subject, kind, r):
            """A CSV row of one bench_allocators measurement, its ratio to this trace's cudaMalloc."""
            rows.append([name, subject, kind, int(r["events"]), fmt(r["ns_per_op"], 1),
                         fmt(r["ns_per_op"] / ns["cudaMalloc"], 3), fmt(r["failed_allocs"], 0), ""])

        for s in PRESETS + CUDA_OWN:
            bench_row(s, "fraglab over cuda" if s in PRESETS else "CUDA", results[f"replay/{name}/{s}"])
        for s in PRESETS:
            bench_row(s, "fraglab over host", host[f"replay/{name}/{s}"])
        host_table.append([name] + [fmt(host[f"replay/{name}/{s}"]["ns_per_op"]) for s in PRESETS])
        address_row = [name]
        for backend, measured in by_address.items():
            for s in PRESETS:
                r = measured[f"replay/{name}/{s}@address"]
                bench_row(f"{s}@address", f"fraglab over {backend}, freed by address", r)
                address_row.append(fmt(r["ns_per_op"]))
        address_table.append(address_row)
        t = torch.get(name)
        if t:
            rows.append([name, "torch", "PyTorch (Python calls)", t["events"], fmt(t["ns_per_op"], 1),
                         fmt(t["ns_per_op"] / ns["cudaMalloc"], 3), t["failed"], fmt(t["python_call_ns"], 1)])
        table.append([name] + [fmt(ns[s]) for s in PRESETS + CUDA_OWN] +
                     [f"{t['ns_per_op']:.1f} ({t['python_call_ns']:.1f} in Python)" if t else "not run"])

    # A pack (experiments/scripts/device/pack_prebuilt.sh) names the commit its programs were built
    # at, which can differ from the checkout's.
    packed = os.path.join(args.build, "commit")
    binaries = f"built in {args.build}"
    if os.path.exists(packed):
        with open(packed) as f:
            binaries = f"prebuilt at commit {f.read().strip()}"
    header = provenance("gpu_speed_table.py", argv, [("device", device), ("binaries", binaries),
                                                      ("pytorch", torch_version or "not run")] + inputs)
    columns = ["trace", "subject", "kind", "events", "ns_per_op", "ratio_to_cudaMalloc", "failed_allocs", "python_call_ns"]
    os.makedirs(args.out_dir, exist_ok=True)
    write_csv(os.path.join(args.out_dir, "gpu_speed.csv"), header, columns, rows)
    write_markdown(os.path.join(args.out_dir, "gpu_speed.md"), f"GPU speed on {device}", "gpu_speed_table.py", header, [
        [f"The minimum of {args.rounds} rounds. Host-side ns per allocation or free, after one warm-up pass, on PyTorch snapshots replayed through real "
         "device memory. fraglab's presets acquire their regions with cudaMalloc (the cuda backend); cudaMalloc and "
         "cudaMallocAsync are called for every event."],
        ["## ns per operation", ""] + markdown_table(["trace"] + PRESETS + CUDA_OWN + ["torch"], table),
        ["## The same presets over host memory", "",
         "The host backend, in the same run: the difference from the table above is what acquiring and releasing "
         "regions with cudaMalloc and cudaFree costs where a snapshot grows or releases its segments.", ""] +
        markdown_table(["trace"] + PRESETS, host_table),
        ["## Freed by address", "",
         "The presets again, in the same run, freed by address as the PyTorch plug-in frees them (a pointer, "
         "which the engine looks up in its address map) instead of by the record each allocation returned; "
         "the tables above free by record.", ""] +
        markdown_table(["trace"] + [f"{s} {backend}" for backend in by_address for s in PRESETS], address_table),
    ])
    print(f"wrote {args.out_dir}/gpu_speed.csv and gpu_speed.md ({device})", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
