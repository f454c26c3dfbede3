#!/usr/bin/python3
"""The Python module's overhead, measured side by side in one run (docs/python.md):

  PYTHONPATH=build/experiments/python benchmarks/python_overhead.py [--events N] [--policy P] [--rounds R]

Builds a trace of N events (default 10M: N/2 allocations of log-uniform sizes, each freed
1-2000 allocations later) from numpy arrays, timing Trace.from_arrays; writes it as native
binary; then replays that file under P through the module and through the command line in
turn, R rounds, and prints the best of each and their ratio. Compare only within one run.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import fraglab

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--policy", default="tlsf")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fraglab", default=os.path.join(ROOT, "build", "experiments", "fraglab"))
    args = parser.parse_args()
    n = args.events // 2
    rng = np.random.default_rng(1)
    size = (2 ** rng.uniform(4, 14, n)).astype(np.uint64)
    freed = np.arange(n) + rng.integers(1, 2000, n)
    order = np.argsort(np.concatenate([2.0 * np.arange(n), 2.0 * freed + 1]), kind="stable")
    kind = np.repeat(np.array([fraglab.ALLOC, fraglab.FREE], np.uint8), n)[order]
    ids = np.concatenate([np.arange(n), np.arange(n)])[order]
    sizes = np.concatenate([size, size])[order]
    built = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        trace = fraglab.Trace.from_arrays(kind, ids, sizes, name="overhead.fbin")
        built.append(time.perf_counter() - start)
    print(f"Trace.from_arrays, {trace.events} events: {min(built):.3f} s (best of {args.rounds})")
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "overhead.fbin")
        trace.write(path)
        on_file = fraglab.read_trace(path)
        api, cli = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            fraglab.replay(on_file, args.policy, repeat=1)
            api.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([args.fraglab, "replay", path, "-p", args.policy, "--repeat", "1"], check=True, capture_output=True)
            cli.append(time.perf_counter() - start)
    print(f"replay under {args.policy}: module {min(api):.3f} s, command line {min(cli):.3f} s "
          f"(best of {args.rounds}), ratio {min(api) / min(cli):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
