#!/usr/bin/python3
"""Measuring allocators' speed, shared by the speed scripts (speed_table.py, host_ratios.py,
compare_builds.py, gpu_speed_table.py, check_instructions.py): the benchmark suite's subjects
run under Google Benchmark (benchmarks/bench_allocators), each general-purpose allocator
preloaded as it is deployed, and instruction counts under callgrind (docs/performance.md, "How
to measure").
"""

import json
import os
import re
import subprocess
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu"
# (name, library preloaded; None: the process's own glibc malloc), from Debian's
# libjemalloc2, libmimalloc2.0 and libtcmalloc-minimal4.
GENERAL_PURPOSE = [("glibc", None), ("jemalloc", "libjemalloc.so.2"), ("mimalloc", "libmimalloc.so.2"),
                   ("tcmalloc", "libtcmalloc_minimal.so.4")]
TARGETS = ["tf_bfc", "best_fit", "tlsf", "first_fit"]  # within TARGET_RATIO of the fastest general-purpose allocator
TARGET_RATIO = 3.0
BY_ADDRESS_KIND = "fraglab freed by address"  # their `kind` in speed.csv and speed_instructions.csv


def preload_env(library, libdir=LIBDIR):
    env = dict(os.environ)
    # Each allocator as deployed: no preload but its own, and no glibc debugging (meson test
    # sets MALLOC_PERTURB_, which makes glibc fill every block, gigabytes for the GPU traces).
    for debugging in ("LD_PRELOAD", "MALLOC_PERTURB_", "MALLOC_CHECK_"):
        env.pop(debugging, None)
    if library:
        path = os.path.join(libdir, library)
        if not os.path.exists(path):
            sys.exit(f"{os.path.basename(sys.argv[0])}: {path} is missing: run .ci/install-deps")
        env["LD_PRELOAD"] = path
    # tcmalloc reports every allocation above 1 GiB on stderr; the GPU traces make many.
    env["TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD"] = str(1 << 62)
    return env


def bench(binary, args, env, scratch):
    """The benchmarks' JSON rows: {name: row}."""
    out = os.path.join(scratch, "bench.json")
    cmd = [binary, "--benchmark_format=json", f"--benchmark_out={out}", "--benchmark_out_format=json"] + args
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    with open(out) as f:
        rows = json.load(f)["benchmarks"]
    # Google Benchmark appends /iterations:N and /manual_time to the registered names.
    return {re.sub(r"(/iterations:\d+)?/manual_time$", "", r["name"]): r for r in rows}


def instructions(binary, subject_args, trace, env, scratch):
    """(instructions per operation, operations) of one subject under callgrind."""
    out = os.path.join(scratch, "callgrind.out")
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}", binary] + \
        subject_args + [trace]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    ops = int(next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("ops ")))
    with open(out) as f:
        total = int(next(line.split()[1] for line in f if line.startswith(("totals:", "summary:"))))
    return total / ops, ops


def check_served(name, library, measured):
    """Exits unless the preloaded library is what served malloc in `measured`."""
    served = {n.split("/")[2] if n.startswith("replay/") else n.split("/")[1] for n in measured}
    if name not in served:
        sys.exit(f"{os.path.basename(sys.argv[0])}: LD_PRELOAD={library} did not serve malloc (served: {sorted(served)})")


def measure_subjects(bench_bin, subject_args, policies, by_address, scratch, libdir=LIBDIR, specs=()):
    """{benchmark name: row} of every general-purpose allocator, `policies` with the floor, and
    `by_address` freed by address, each given `subject_args`. `specs` are further policies
    run beside `policies`, each passed whole (a compose: spec keeps its commas) and named by
    its spec.

    Every general-purpose allocator runs in a process of its own, glibc included, so that no
    allocator's heap carries another subject's history: glibc's time depends on it
    (eor-nn-snapshot: 146-980 ns/op after all of fraglab's policies in its process; on its
    own, 3.8 with Google Benchmark's console output and 4,200 with the JSON output read
    here, with the same page faults and system calls). `policies` and the floor share
    another process."""
    measured = {}
    for name, library in GENERAL_PURPOSE:
        served = bench(bench_bin, ["--policies", "none", "--malloc"] + subject_args, preload_env(library, libdir), scratch)
        check_served(name, library, served)
        measured |= served
    whole = [arg for spec in specs for arg in ("--policy", spec)]
    measured |= bench(bench_bin, ["--policies", ",".join(policies), "--floor"] + whole + subject_args,
                      preload_env(None), scratch)
    if by_address:
        measured |= bench(bench_bin, ["--policies", ",".join(by_address), "--free-by", "address"] + subject_args,
                          preload_env(None), scratch)
    return measured


def worst_and_within(ratios):
    """(trace, ratio, count) of {trace: ratio}: the worst ratio, where it is, and how many
    traces are within TARGET_RATIO (host_ratios.py's summary reads the same)."""
    worst = max(ratios, key=ratios.get)
    return worst, ratios[worst], sum(r <= TARGET_RATIO for r in ratios.values())


def fmt(x, digits=1):
    return f"{x:.{digits}f}"
