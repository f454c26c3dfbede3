#!/usr/bin/python3
"""bench_allocators as a GPU machine's would answer, on a machine without one, for testing
experiments/scripts/device/gpu_speed_table.py: runs the real bench_allocators ($REAL_BENCH) with the cuda
backend replaced by the host backend and --cuda-baselines dropped, then adds cudaMalloc and
cudaMallocAsync rows (copies of tlsf's, 1000x slower) and a device name to its JSON output.
The numbers mean nothing; the table's shape, names and arithmetic are what is tested."""

import copy
import json
import os
import subprocess
import sys

args = sys.argv[1:]
baselines = "--cuda-baselines" in args
args = ["host" if a == "cuda" else a for a in args if a != "--cuda-baselines"]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
done = subprocess.run([os.environ["REAL_BENCH"]] + args)
if done.returncode != 0:
    sys.exit(done.returncode)
with open(out) as f:
    result = json.load(f)
if baselines:
    for row in list(result["benchmarks"]):
        if row["name"].split("/")[2] == "tlsf":
            for subject in ("cudaMalloc", "cudaMallocAsync"):
                fake = copy.deepcopy(row)
                fake["name"] = row["name"].replace("/tlsf", "/" + subject)
                fake["ns_per_op"] = row["ns_per_op"] * 1000
                result["benchmarks"].append(fake)
    result["context"]["cuda_device"] = "stand-in device"
with open(out, "w") as f:
    json.dump(result, f)
