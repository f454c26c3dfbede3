#!/usr/bin/env python3
"""PyTorch's own CUDA caching allocator on the same event sequences as bench_allocators.

    python3 benchmarks/bench_torch_allocator.py [--iterations N] TRACE.trace...

Each TRACE is a native text trace (`fraglab convert SNAPSHOT.pickle TRACE.trace --to text`).
Every event goes through torch.cuda.caching_allocator_alloc / caching_allocator_delete on
the current stream, after one untimed warm-up pass (so the cache is warm, as
bench_allocators keeps its subjects warm). These are Python calls: the time per operation
includes the interpreter's cost of a call, which the script measures on its own with a loop
calling a no-op function over the same events and reports beside it (python_call_ns), so
that the allocator's share can be read as the difference.

Prints one JSON object per trace: trace, events, failed, ns_per_op, python_call_ns,
device, torch. Exit status: 0, 2 bad arguments or trace, 77 no PyTorch or no GPU here.
"""

import argparse
import json
import os
import sys
import time


def read_events(path):
    """[(kind, id, size, stream)] of a native text trace ('a', 'f' or 'r'), with FILE:LINE errors."""
    events = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            try:
                if fields[0] == "a" and 3 <= len(fields) <= 5:
                    events.append(("a", int(fields[1]), int(fields[2]), int(fields[4]) if len(fields) == 5 else 0))
                elif fields[0] == "f" and len(fields) == 2:
                    events.append(("f", int(fields[1]), 0, 0))
                elif fields[0] == "r" and len(fields) == 1:
                    events.append(("r", 0, 0, 0))  # the program emptied the cache
                else:
                    raise ValueError
            except ValueError:
                sys.exit(f"{path}:{number}: expected `a ID SIZE [ALIGN] [STREAM]`, `f ID` or `r`, got {line.strip()!r}")
    return events


def one_pass(events, alloc, free, release):
    """Seconds for one pass, and the allocations that failed; blocks left live are freed after."""
    live, failed = {}, 0
    start = time.perf_counter_ns()
    for kind, ident, size, _ in events:
        if kind == "a":
            try:
                live[ident] = alloc(size)
            except RuntimeError:  # torch.OutOfMemoryError
                failed += 1
        elif kind == "r":
            release()
        elif ident in live:
            free(live.pop(ident))
    elapsed = time.perf_counter_ns() - start
    for p in live.values():
        free(p)
    return elapsed, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()
    traces = [(os.path.basename(path).split(".")[0], read_events(path)) for path in args.traces]  # bad input first
    try:
        import torch
    except ImportError:
        print("bench_torch_allocator.py: PyTorch is not installed here", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("bench_torch_allocator.py: no CUDA device here", file=sys.stderr)
        return 77
    device = torch.cuda.current_device()
    stream = torch.cuda.current_stream()

    def alloc(size):
        return torch.cuda.caching_allocator_alloc(size, device, stream)

    def noop(*_):
        return 1

    for name, events in traces:
        one_pass(events, alloc, torch.cuda.caching_allocator_delete, torch.cuda.empty_cache)  # warm-up
        timed, failed = [], 0
        for _ in range(args.iterations):
            ns, failed = one_pass(events, alloc, torch.cuda.caching_allocator_delete, torch.cuda.empty_cache)
            timed.append(ns)
        baseline = min(one_pass(events, noop, noop, noop)[0] for _ in range(args.iterations))
        torch.cuda.empty_cache()
        print(json.dumps({"trace": name, "events": len(events), "failed": failed,
                          "ns_per_op": sorted(timed)[len(timed) // 2] / len(events),
                          "python_call_ns": baseline / len(events),
                          "device": torch.cuda.get_device_name(device), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
