"""The interpreter's lock is released while C++ runs, so Python threads run meanwhile and
replays in threads give the results they give alone; Ctrl-C stops a replay."""
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

from conftest import fraglab


def workload(n, seed):
    """n allocations of log-uniform sizes, each freed a random number of allocations later."""
    rng = np.random.default_rng(seed)
    sizes = (2 ** rng.uniform(4, 16, n)).astype(np.uint64)
    death = np.arange(n) + rng.integers(1, 2000, n)
    time_of = np.concatenate([np.arange(n) * 2.0, death * 2.0 + 1])
    order = np.argsort(time_of, kind="stable")
    kind = np.concatenate([np.zeros(n, np.uint8), np.ones(n, np.uint8)])[order]
    ids = np.concatenate([np.arange(n), np.arange(n)])[order]
    return fraglab.Trace.from_arrays(kind, ids, np.concatenate([sizes, sizes])[order], name=f"w{seed}")


def test_python_threads_run_while_a_replay_runs():
    t = workload(200_000, 1)
    ticks = []
    running = threading.Event()
    done = threading.Event()

    def ticker():  # needs the lock for every tick
        running.set()
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    running.wait()
    before = len(ticks)
    fraglab.replay(t, "best_fit,tlsf,first_fit", repeat=3)
    during = len(ticks) - before
    done.set()
    thread.join()
    # Held through the replay, the lock would let the ticker tick once or twice at most.
    assert during >= 10, during


def test_replays_in_threads_equal_replays_alone():
    traces = [workload(30_000, s) for s in range(4)]
    alone = [fraglab.replay(t, "best_fit,tlsf", repeat=0) for t in traces]
    together = [None] * len(traces)

    def run(i):
        together[i] = fraglab.replay(traces[i], "best_fit,tlsf", repeat=0)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(traces))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for a, b in zip(alone, together):
        assert a.drop(columns=["ns_per_op"]).equals(b.drop(columns=["ns_per_op"]))


def test_ctrl_c_stops_a_replay(tmp_path):
    # A replay of more timed passes than could finish in hours, interrupted by a real SIGINT
    # after it started: it must raise KeyboardInterrupt, and the process must go on.
    script = textwrap.dedent("""
        import os, signal, sys, threading
        import numpy as np
        import fraglab
        n = 100_000
        kind = np.tile(np.array([0, 1], np.uint8), n)
        ids = np.repeat(np.arange(n), 2)
        t = fraglab.Trace.from_arrays(kind, ids, np.full(2 * n, 64))
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        for jobs in (1, 2):
            try:
                fraglab.replay(t, ["best_fit", "tlsf"], repeat=10**7, jobs=jobs)
                print("finished")
            except KeyboardInterrupt:
                print("interrupted", jobs)
            if jobs == 1:
                threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        print(fraglab.replay(t, "best_fit", repeat=0)["allocs"][0])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["interrupted", "1", "interrupted", "2", "100000"], done.stdout + done.stderr


def test_the_overhead_benchmark_runs():
    from conftest import FRAGLAB
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "python_overhead.py"
    done = subprocess.run([sys.executable, str(script), "--events", "20000", "--rounds", "1", "--fraglab", FRAGLAB],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Trace.from_arrays, 20000 events:" in done.stdout and "ratio" in done.stdout
